// The GPU child's sandbox (gpu/sandbox.h), exercised without a GPU in forked children: threads
// still work, sockets fail, new processes, exec, leaving the process group and signals to other
// processes kill the process with SIGSYS (which the supervisor reports as a rule violation), and
// with Landlock the process writes nowhere but its scratch folder.
#include "gpu/sandbox.h"

#include "temp_dir.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sched.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

namespace fs = std::filesystem;
using kev::gpu::sandbox::Options;
using kev::gpu::sandbox::Report;

namespace {

// Runs `body` in a child process (forked before any filter exists) and returns its wait status.
template <typename F> int inChild(F body, const Options& options = {}) {
    const pid_t pid = fork();
    if (pid == 0) {
        const Report r = kev::gpu::sandbox::install(options);
        if (!r.seccomp) {
            _exit(90);
        }
        body();
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
}

bool killedBySigsys(int status) {
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS;
}

int landlockAbi() {
    return static_cast<int>(syscall(444 /* landlock_create_ruleset */, nullptr, 0, 1u));
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

// Threads that existed before the filter (the CUDA runtime's) are filtered too.
TEST(Sandbox, ThreadsStartedBeforeTheFilterAreFiltered) {
    const pid_t pid = fork();
    if (pid == 0) {
        std::atomic<int> stage{0};
        std::thread early([&stage] {
            while (stage.load() == 0) {
                std::this_thread::yield();
            }
            stage.store(socket(AF_INET, SOCK_STREAM, 0) < 0 && errno == EPERM ? 2 : 3);
        });
        const Report r = kev::gpu::sandbox::install({});
        stage.store(1);
        early.join();
        _exit(!r.seccompAllThreads ? 91 : stage.load() == 2 ? 0 : 5);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(Sandbox, ForkKillsTheProcess) {
    EXPECT_TRUE(killedBySigsys(inChild([] {
        const pid_t p = fork();
        if (p == 0) {
            _exit(0);
        }
        _exit(5);
    })));
}

TEST(Sandbox, ExecKillsTheProcess) {
    EXPECT_TRUE(killedBySigsys(inChild([] {
        char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
        execv("/bin/true", argv);
        _exit(6);
    })));
}

// Class 7 of THREAT_MODEL.md: signal 0 probes without harm, so a filter that failed to stop these
// leaves the test process alive to report it.
TEST(Sandbox, SignalsToOtherProcessesKillTheProcess) {
    EXPECT_TRUE(killedBySigsys(inChild([] { kill(getppid(), 0); })));
    EXPECT_TRUE(killedBySigsys(inChild([] { kill(0, 0); })));  // the own group
    EXPECT_TRUE(killedBySigsys(inChild([] { kill(-1, 0); }))); // every process
    EXPECT_TRUE(killedBySigsys(inChild([] { kill(-getpgrp(), 0); })));
    EXPECT_TRUE(killedBySigsys(inChild([] { syscall(SYS_tgkill, getppid(), getppid(), 0); })));
    EXPECT_TRUE(killedBySigsys(inChild([] { syscall(SYS_tkill, getppid(), 0); })));
    EXPECT_TRUE(killedBySigsys(inChild([] { syscall(434 /* pidfd_open */, getppid(), 0); })));
}

TEST(Sandbox, SignalsToItselfStillWork) {
    const int status = inChild([] {
        static volatile sig_atomic_t got = 0;
        std::signal(SIGUSR1, [](int) { got = 1; });
        if (kill(getpid(), 0) != 0 || raise(SIGUSR1) != 0 || got != 1) {
            _exit(7);
        }
    });
    ASSERT_TRUE(WIFEXITED(status)) << status;
    EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(Sandbox, LeavingTheProcessGroupKillsTheProcess) {
    EXPECT_TRUE(killedBySigsys(inChild([] { setpgid(0, 0); })));
    EXPECT_TRUE(killedBySigsys(inChild([] { setsid(); })));
}

// Class 6: the process writes beneath its scratch folder and nowhere else.
TEST(Sandbox, LandlockLimitsWritesToTheScratchFolder) {
    if (landlockAbi() < 1) {
        GTEST_SKIP() << "this kernel has no Landlock";
    }
    const kev::test::TempDir tmp("kev_sandbox_landlock");
    const fs::path scratch = tmp / "scratch";
    fs::create_directories(scratch);
    const fs::path cache = tmp / "peaks.json";
    std::ofstream(cache) << R"({"dram_gbps": 4800})";
    const pid_t pid = fork();
    if (pid == 0) {
        Options o;
        o.scratchDir = scratch.string();
        const Report r = kev::gpu::sandbox::install(o);
        if (!r.landlock || r.landlockAbi < 1) {
            _exit(92);
        }
        std::ofstream inside(scratch / "out.txt");
        inside << "fine";
        inside.close();
        if (!inside) {
            _exit(10);
        }
        // Rewriting the cache, creating a file next to it, removing it, /proc/self/mem.
        if (open(cache.c_str(), O_WRONLY | O_TRUNC) >= 0 || errno != EACCES) {
            _exit(11);
        }
        if (open((tmp / "new.txt").c_str(), O_WRONLY | O_CREAT, 0644) >= 0) {
            _exit(12);
        }
        if (unlink(cache.c_str()) == 0 || rename(cache.c_str(), (scratch / "x").c_str()) == 0) {
            _exit(13);
        }
        if (open("/proc/self/mem", O_RDWR) >= 0) {
            _exit(14);
        }
        if (open("/dev/null", O_WRONLY) < 0) {
            _exit(15);
        }
        if (r.evidence().find("Landlock ABI") == std::string::npos) {
            _exit(16);
        }
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status)) << status;
    EXPECT_EQ(WEXITSTATUS(status), 0);
    EXPECT_EQ(kev::test::readFile(cache), R"({"dram_gbps": 4800})");
    EXPECT_TRUE(fs::exists(scratch / "out.txt"));
}

// With Landlock's signal scope (ABI 6) a signal to the supervisor fails even without seccomp.
TEST(Sandbox, LandlockScopesSignals) {
    if (landlockAbi() < 6) {
        GTEST_SKIP() << "Landlock ABI " << landlockAbi() << " has no signal scope";
    }
    const pid_t pid = fork();
    if (pid == 0) {
        Report r;
        kev::gpu::sandbox::installLandlock({}, r);
        if (!r.landlock) {
            _exit(92);
        }
        _exit(kill(getppid(), 0) != 0 && errno == EPERM ? 0 : 20);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status)) << status;
    EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(Sandbox, ReportSaysWhatIsActive) {
    Report r;
    r.seccomp = true;
    r.seccompAllThreads = true;
    r.landlockAbi = 7;
    r.landlock = true;
    r.writable = "beneath /w/scratch";
    EXPECT_NE(r.evidence().find("on every thread"), std::string::npos);
    EXPECT_NE(r.evidence().find("Landlock ABI 7 active: writable only beneath /w/scratch"),
              std::string::npos);
    Report none;
    none.seccompWhy = "x";
    none.landlockWhy = "this kernel has no Landlock";
    EXPECT_NE(none.evidence().find("Landlock not active: this kernel has no Landlock"),
              std::string::npos);
}

namespace {
// The capability sets of this process, from /proc/self/status ("CapEff" -> hex mask).
std::string capabilityLine(const char* name) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(name, 0) == 0) {
            return line;
        }
    }
    return {};
}
} // namespace

// A child running as root keeps no capability (CAP_SYS_PTRACE would open a non-dumpable process's
// memory through /proc).
TEST(Sandbox, EveryCapabilityIsDropped) {
    const pid_t pid = fork();
    if (pid == 0) {
        std::string why;
        if (!kev::gpu::sandbox::dropCapabilities(&why)) {
            _exit(30);
        }
        for (const char* set : {"CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:"}) {
            const std::string line = capabilityLine(set);
            if (line.empty() ||
                line.find_first_not_of("0\t ", std::strlen(set)) != std::string::npos) {
                _exit(31);
            }
        }
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status)) << status;
    EXPECT_EQ(WEXITSTATUS(status), 0) << "a capability set is not empty";
}

// Other processes' /proc entries (the verifier's, the supervisor's) are unreadable; the process's
// own and ordinary files stay readable.
TEST(Sandbox, OtherProcessesProcEntriesAreUnreadable) {
    if (landlockAbi() < 1) {
        GTEST_SKIP() << "this kernel has no Landlock";
    }
    const std::string parent = "/proc/" + std::to_string(getpid());
    const pid_t pid = fork();
    if (pid == 0) {
        Report r;
        kev::gpu::sandbox::installLandlock({}, r);
        if (!r.landlock) {
            _exit(92);
        }
        for (const char* entry : {"/status", "/mem", "/environ", "/maps", "/fd"}) {
            if (open((parent + entry).c_str(), O_RDONLY) >= 0) {
                _exit(40);
            }
        }
        if (open("/proc/self/status", O_RDONLY) < 0 ||
            open("/proc/thread-self/stat", O_RDONLY) < 0 || open("/proc/meminfo", O_RDONLY) < 0 ||
            open("/etc/passwd", O_RDONLY) < 0) {
            _exit(41);
        }
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status)) << status;
    EXPECT_EQ(WEXITSTATUS(status), 0);
}

// Class 7: the supervisor's resource limits and scheduling are out of reach; the child's own stay
// its to change.
TEST(Sandbox, OtherProcessesLimitsAndSchedulingAreOutOfReach) {
    EXPECT_TRUE(killedBySigsys(inChild([] {
        rlimit none{0, 0};
        syscall(SYS_prlimit64, getppid(), RLIMIT_NOFILE, nullptr, &none); // only reads
    })));
    const int status = inChild([] {
        rlimit mine{};
        if (getrlimit(RLIMIT_NOFILE, &mine) != 0 || setrlimit(RLIMIT_NOFILE, &mine) != 0) {
            _exit(50);
        }
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(0, &one);
        if (sched_setaffinity(getppid(), sizeof one, &one) == 0 || errno != EPERM) {
            _exit(51);
        }
        if (setpriority(PRIO_PROCESS, static_cast<id_t>(getppid()), 19) == 0 || errno != EPERM) {
            _exit(52);
        }
        if (setpriority(PRIO_PGRP, 0, 19) == 0 || errno != EPERM) {
            _exit(53);
        }
        errno = 0;
        const int nice = getpriority(PRIO_PROCESS, 0);
        if (errno != 0 || setpriority(PRIO_PROCESS, 0, nice < 19 ? nice + 1 : 19) != 0) {
            _exit(54);
        }
        if (prctl(PR_GET_DUMPABLE) != 0) {
            _exit(55);
        }
    });
    ASSERT_TRUE(WIFEXITED(status)) << status;
    EXPECT_EQ(WEXITSTATUS(status), 0);
}

// The profiling child keeps one capability (CAP_SYS_ADMIN for counters) and no other.
TEST(Sandbox, OneCapabilityCanBeKept) {
    const pid_t pid = fork();
    if (pid == 0) {
        std::string why;
        if (!kev::gpu::sandbox::dropCapabilities(&why, CAP_SYS_ADMIN)) {
            _exit(60);
        }
        const std::string eff = capabilityLine("CapEff:");
        const std::string bnd = capabilityLine("CapBnd:");
        const unsigned long long want = 1ull << CAP_SYS_ADMIN;
        const auto mask = [](const std::string& line) {
            return std::stoull(line.substr(line.find(':') + 1), nullptr, 16);
        };
        // Without CAP_SYS_ADMIN to start with (not root), nothing is kept at all.
        const bool hadIt = mask(bnd) != 0;
        _exit((hadIt ? mask(eff) == want && mask(bnd) == want : mask(eff) == 0) ? 0 : 61);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status)) << status;
    EXPECT_EQ(WEXITSTATUS(status), 0);
}

// Modes, owners and times of files are out of reach (a harness binary made non-executable would
// stop every later evaluation), and so are signals by I/O readiness to another process.
TEST(Sandbox, FileModesAndSignalOwnersAreRefused) {
    const kev::test::TempDir tmp("kev_sandbox_chmod");
    const fs::path file = tmp / "harness-like";
    std::ofstream(file) << "x";
    const int status = inChild([file] {
        if (chmod(file.c_str(), 0) == 0 || errno != EPERM) {
            _exit(70);
        }
        if (chown(file.c_str(), 0, 0) == 0 || errno != EPERM) {
            _exit(71);
        }
        if (utimensat(AT_FDCWD, file.c_str(), nullptr, 0) == 0 || errno != EPERM) {
            _exit(72);
        }
        int fds[2];
        if (pipe(fds) != 0) {
            _exit(73);
        }
        if (fcntl(fds[0], F_SETOWN, getppid()) == 0 || errno != EPERM) {
            _exit(74);
        }
        if (fcntl(fds[0], F_SETSIG, SIGKILL) == 0 || errno != EPERM) {
            _exit(75);
        }
        if (fcntl(fds[0], F_SETOWN, getpid()) != 0 || fcntl(fds[0], F_GETFL) < 0) {
            _exit(76);
        }
        int owner = getppid();
        if (ioctl(fds[0], FIOSETOWN, &owner) == 0 || errno != EPERM) {
            _exit(77);
        }
    });
    ASSERT_TRUE(WIFEXITED(status)) << status;
    EXPECT_EQ(WEXITSTATUS(status), 0);
    EXPECT_EQ(fs::status(file).permissions() & fs::perms::owner_read, fs::perms::owner_read);
}

// Ways around the filter: io_uring (system calls the filter never sees), bpf, fanotify; the
// keyrings are refused.
TEST(Sandbox, WaysAroundTheFilterAreClosed) {
    EXPECT_TRUE(killedBySigsys(inChild([] { syscall(425 /* io_uring_setup */, 8, nullptr); })));
    EXPECT_TRUE(killedBySigsys(inChild([] { syscall(SYS_bpf, 0, nullptr, 0); })));
    EXPECT_TRUE(killedBySigsys(inChild([] { syscall(SYS_fanotify_init, 0, 0); })));
    const int status = inChild([] {
        if (syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3, 0) >= 0 || errno != EPERM) {
            _exit(80);
        }
    });
    ASSERT_TRUE(WIFEXITED(status)) << status;
    EXPECT_EQ(WEXITSTATUS(status), 0);
}

// Where Landlock is not active the filter itself keeps every file as it is: opens for writing,
// creating, renaming and removing fail; reading and descriptors opened before still work.
TEST(Sandbox, WithoutLandlockNoFileChanges) {
    const kev::test::TempDir tmp("kev_sandbox_nowrite");
    const fs::path cache = tmp / "peaks.json";
    std::ofstream(cache) << "{}";
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    Options o;
    o.landlock = false;
    o.dropCapabilities = false;
    const int status = inChild(
        [&] {
            const std::string c = cache.string();
            const std::string other = (tmp / "new").string();
            if (open(c.c_str(), O_WRONLY) >= 0 || errno != EACCES) {
                _exit(90 + 1);
            }
            if (open(c.c_str(), O_RDONLY | O_APPEND) >= 0 || errno != EACCES) {
                _exit(90 + 2);
            }
            if (openat(AT_FDCWD, other.c_str(), O_RDONLY | O_CREAT, 0644) >= 0 || errno != EACCES) {
                _exit(90 + 3);
            }
            if (unlink(c.c_str()) == 0 || rename(c.c_str(), other.c_str()) == 0 ||
                mkdir(other.c_str(), 0755) == 0 || truncate(c.c_str(), 0) == 0) {
                _exit(90 + 4);
            }
            if (syscall(437 /* openat2 */, AT_FDCWD, c.c_str(), nullptr, 0) >= 0 ||
                errno != ENOSYS) {
                _exit(90 + 5);
            }
            if (open(c.c_str(), O_RDONLY) < 0 || write(fds[1], "x", 1) != 1) {
                _exit(90 + 6);
            }
        },
        o);
    ASSERT_TRUE(WIFEXITED(status)) << status;
    EXPECT_EQ(WEXITSTATUS(status), 0);
    EXPECT_EQ(kev::test::readFile(cache), "{}");
    EXPECT_FALSE(fs::exists(tmp / "new"));
    close(fds[0]);
    close(fds[1]);
}
