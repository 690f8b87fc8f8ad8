// The GPU child's seccomp filter, exercised without a GPU: threads still work, sockets fail, and
// fork kills the process with SIGSYS (which the supervisor reports as a rule violation).
#include "gpu/sandbox.h"

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <thread>

namespace {
// Runs `body` in a child process (forked before any filter exists) and returns its wait status.
template <typename F> int inChild(F body) {
    const pid_t pid = fork();
    if (pid == 0) {
        std::string why;
        if (!kev::gpu::sandbox::install(&why)) {
            _exit(90);
        }
        body();
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
}
} // namespace

TEST(Sandbox, ThreadsStillWork) {
    const int status = inChild([] {
        bool ran = false;
        std::thread t([&ran] { ran = true; });
        t.join();
        if (!ran) {
            _exit(3);
        }
    });
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(Sandbox, SocketsFail) {
    const int status = inChild([] {
        if (socket(AF_INET, SOCK_STREAM, 0) >= 0) {
            _exit(4);
        }
    });
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(Sandbox, ForkKillsTheProcess) {
    const int status = inChild([] {
        const pid_t p = fork();
        if (p == 0) {
            _exit(0);
        }
        _exit(5);
    });
    ASSERT_TRUE(WIFSIGNALED(status));
    EXPECT_EQ(WTERMSIG(status), SIGSYS);
}

TEST(Sandbox, ExecKillsTheProcess) {
    const int status = inChild([] {
        char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
        execv("/bin/true", argv);
        _exit(6);
    });
    ASSERT_TRUE(WIFSIGNALED(status));
    EXPECT_EQ(WTERMSIG(status), SIGSYS);
}
