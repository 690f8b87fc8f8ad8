// The runner's capability drop without a GPU: a process that dropped everything holds no
// capability, and cannot open the memory of a non-dumpable process of the same user (the
// verifier), even when it started as root.
#include "gpu/sandbox.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace {

// Runs `body` in a forked child; its exit code (0 is success).
template <typename F> int inChild(F body) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::_exit(body());
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

} // namespace

TEST(Capabilities, NoneSurviveTheDrop) {
    EXPECT_EQ(inChild([] {
                  std::string why;
                  if (!kev::gpu::sandbox::dropCapabilities(&why)) {
                      return 1;
                  }
                  __user_cap_header_struct h{_LINUX_CAPABILITY_VERSION_3, 0};
                  __user_cap_data_struct d[2] = {};
                  if (::syscall(SYS_capget, &h, d) != 0) {
                      return 2;
                  }
                  for (const auto& x : d) {
                      if (x.effective || x.permitted || x.inheritable) {
                          return 3;
                      }
                  }
                  return 0;
              }),
              0);
}

TEST(Capabilities, ANonDumpableSiblingsMemoryStaysClosed) {
    const pid_t verifier = ::fork();
    if (verifier == 0) {
        ::prctl(PR_SET_DUMPABLE, 0);
        ::pause();
        ::_exit(0);
    }
    ::usleep(50 * 1000); // until the sibling has made itself non-dumpable (harmless if longer)
    const std::string mem = "/proc/" + std::to_string(verifier) + "/mem";
    EXPECT_EQ(inChild([&mem] {
                  std::string why;
                  if (!kev::gpu::sandbox::dropCapabilities(&why)) {
                      return 1;
                  }
                  const int fd = ::open(mem.c_str(), O_RDONLY);
                  return fd < 0 ? 0 : 4;
              }),
              0);
    ::kill(verifier, SIGKILL);
    ::waitpid(verifier, nullptr, 0);
}

TEST(Capabilities, OneCanBeKept) {
    EXPECT_EQ(inChild([] {
                  std::string why;
                  if (!kev::gpu::sandbox::dropCapabilities(&why, CAP_SYS_ADMIN)) {
                      return 1;
                  }
                  __user_cap_header_struct h{_LINUX_CAPABILITY_VERSION_3, 0};
                  __user_cap_data_struct d[2] = {};
                  ::syscall(SYS_capget, &h, d);
                  const bool ptrace =
                      d[CAP_SYS_PTRACE / 32].effective & (1u << (CAP_SYS_PTRACE % 32));
                  return ptrace ? 5 : 0;
              }),
              0);
}
