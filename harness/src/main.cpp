// kevolve-harness: the referee's command line (harness/PROTOCOL.md).
#include "kevolve/harness_version.h"
#include "process.h"
#include "serve.h"
#include "supervisor.h"

#include "gpu/run_one.h"
#include "gpu/verifier.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <initializer_list>
#include <iostream>
#include <string>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

namespace {

const char* kUsage = R"(usage: kevolve-harness COMMAND [OPTIONS]

Commands:
  probe [--json]              JSON describing each CUDA device (via NVML)
  eval --task T.json --kernel K.cu [--device N] [--out R.json] [--self-check] [--no-lint]
       [--arch A] [--keep-dir] [--compile-timeout S] [--run-timeout S] [--time-budget S]
                              one report on stdout (or --out); exit 0 whenever a report
                              was produced, 2 for a usage error or malformed task, 3 for
                              an internal failure
  serve [--device N] [--arch A]
                              the JSON-lines protocol on stdin/stdout
  run-one --job J.json [--result-fd N] (--peer-in FD --peer-out FD | --profile)
                              internal: the untrusted GPU child (loads the candidate)
  verify --runner-in FD --runner-out FD [--result-fd N] < JOB
                              internal: the trusted GPU child (inputs, checks, verdict)
  exec-guard [--keep-fd N] -- PROG ARGS...
                              internal: exec PROG so that it dies with its parent
  --help, --version
)";

int usageError(const std::string& message) {
    std::cerr << "kevolve-harness: " << message << "\n"
              << "Run 'kevolve-harness --help' for usage.\n";
    return 2;
}

bool parseInt(const std::string& text, int& out) {
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(text.c_str(), &end, 10);
    if (errno != 0 || end == text.c_str() || *end != '\0' || v < 0 || v > 1 << 20)
        return false;
    out = static_cast<int>(v);
    return true;
}

bool parseSeconds(const std::string& text, double& out) {
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(text.c_str(), &end);
    if (errno != 0 || end == text.c_str() || *end != '\0' || !(v > 0) || v > 3600)
        return false;
    out = v;
    return true;
}

// Every descriptor above stderr except `keep` is closed: the supervisor may hold descriptors that
// are not close-on-exec (NVML's, a test runner's) and a child must not inherit them.
void closeDescriptors(int keep) {
#ifdef SYS_close_range
    if (keep < 3) {
        if (::syscall(SYS_close_range, 3u, ~0u, 0u) == 0)
            return;
    } else {
        bool ok = true;
        if (keep > 3)
            ok = ::syscall(SYS_close_range, 3u, static_cast<unsigned>(keep - 1), 0u) == 0;
        if (ok && ::syscall(SYS_close_range, static_cast<unsigned>(keep + 1), ~0u, 0u) == 0)
            return;
    }
#endif
    std::vector<int> fds;
    if (DIR* dir = ::opendir("/proc/self/fd")) {
        const int own = ::dirfd(dir);
        while (const dirent* entry = ::readdir(dir)) {
            const int fd = std::atoi(entry->d_name);
            if (fd > 2 && fd != keep && fd != own)
                fds.push_back(fd);
        }
        ::closedir(dir);
    }
    for (int fd : fds)
        ::close(fd);
}

// Every descriptor above stderr except those in `keep` (the result channel, the runner <-> verifier
// pipes) is closed.
[[maybe_unused]] void closeDescriptorsExcept(const std::vector<int>& keep) {
    std::vector<int> fds;
    if (DIR* dir = ::opendir("/proc/self/fd")) {
        const int own = ::dirfd(dir);
        while (const dirent* entry = ::readdir(dir)) {
            const int fd = std::atoi(entry->d_name);
            if (fd > 2 && fd != own && std::find(keep.begin(), keep.end(), fd) == keep.end())
                fds.push_back(fd);
        }
        ::closedir(dir);
    }
    for (int fd : fds)
        ::close(fd);
}

// The descriptors named by `flags` (each followed by a number) on the command line, to keep open.
[[maybe_unused]] std::vector<int>
descriptorArgs(int argc, char** argv, std::initializer_list<const char*> flags, int resultFd) {
    std::vector<int> keep{resultFd};
    for (int i = 2; i + 1 < argc; ++i) {
        for (const char* flag : flags) {
            int fd = -1;
            if (std::strcmp(argv[i], flag) == 0 && parseInt(argv[i + 1], fd))
                keep.push_back(fd);
        }
    }
    return keep;
}

// False when the process that started us is gone. $KEVOLVE_PARENT_PID names it; without it, being
// adopted by init is the sign.
bool parentAlive() {
    const char* expected = std::getenv("KEVOLVE_PARENT_PID");
    if (expected && *expected) {
        char* end = nullptr;
        const long pid = std::strtol(expected, &end, 10);
        if (*end == '\0' && pid > 0)
            return ::getppid() == pid;
    }
    return ::getppid() != 1;
}

int execGuard(int argc, char** argv) {
    int keep = -1;
    int i = 2;
    for (; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--") {
            ++i;
            break;
        }
        if (a == "--keep-fd" && i + 1 < argc && parseInt(argv[i + 1], keep)) {
            ++i;
            continue;
        }
        return usageError("exec-guard: unexpected argument " + a);
    }
    if (i >= argc)
        return usageError("exec-guard: no program after --");
    // Die with the supervisor; if it is already gone, the orphan must not start at all.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (!parentAlive())
        return 1;
    closeDescriptors(keep);
    kev::process::replaceWith(argv + i);
    std::fprintf(stderr, "kevolve-harness exec-guard: cannot run %s: %s\n", argv[i],
                 std::strerror(errno));
    return 127;
}

int probe(int argc, char** argv) {
    for (int i = 2; i < argc; ++i) {
        if (std::strcmp(argv[i], "--json") != 0)
            return usageError(std::string("probe: unexpected argument ") + argv[i]);
    }
    std::cout << kev::probeJson().dump(2) << "\n";
    return 0;
}

int eval(int argc, char** argv) {
    kev::EvalCommand c;
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        const bool hasValue = i + 1 < argc;
        const auto value = [&]() { return std::string(argv[++i]); };
        if (a == "--self-check") {
            c.options.selfCheck = true;
        } else if (a == "--no-lint") {
            c.options.lint = false;
        } else if (a == "--keep-dir") {
            c.options.keepDir = true;
        } else if (!hasValue) {
            return usageError("eval: " + a + " needs a value or is unknown");
        } else if (a == "--task") {
            c.taskPath = value();
        } else if (a == "--kernel") {
            c.kernelPath = value();
        } else if (a == "--out") {
            c.outPath = value();
        } else if (a == "--arch") {
            c.archOverride = value();
        } else if (a == "--device") {
            if (!parseInt(value(), c.options.device))
                return usageError("eval: --device needs a device index");
        } else if (a == "--compile-timeout") {
            if (!parseSeconds(value(), c.options.compileTimeoutS))
                return usageError("eval: --compile-timeout needs seconds (0 < s <= 3600)");
        } else if (a == "--run-timeout") {
            if (!parseSeconds(value(), c.options.runTimeoutS))
                return usageError("eval: --run-timeout needs seconds (0 < s <= 3600)");
        } else if (a == "--time-budget") {
            double s = 0;
            if (!parseSeconds(value(), s) || s > 600)
                return usageError("eval: --time-budget needs seconds (0 < s <= 600)");
            c.options.timeBudgetS = s;
        } else {
            return usageError("eval: unknown option " + a);
        }
    }
    if (c.taskPath.empty())
        return usageError("eval: --task is required");
    if (c.kernelPath.empty())
        return usageError("eval: --kernel is required");
    return kev::evalOnce(c);
}

int serveCommand(int argc, char** argv) {
    int device = 0;
    std::string arch;
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--device" && i + 1 < argc) {
            if (!parseInt(argv[++i], device))
                return usageError("serve: --device needs a device index");
        } else if (a == "--arch" && i + 1 < argc) {
            arch = argv[++i];
        } else {
            return usageError("serve: unexpected argument " + a);
        }
    }
    return kev::serve(device, arch);
}

int runOne(int argc, char** argv) {
    int resultFd = 3;
    for (int i = 2; i + 1 < argc; ++i) {
        if (std::strcmp(argv[i], "--result-fd") == 0)
            parseInt(argv[i + 1], resultFd);
    }
    closeDescriptorsExcept(descriptorArgs(argc, argv, {"--peer-in", "--peer-out"}, resultFd));
    return kev::gpu::runOne(argc, argv);
}

int verifyCommand(int argc, char** argv) {
    int resultFd = 3;
    for (int i = 2; i + 1 < argc; ++i) {
        if (std::strcmp(argv[i], "--result-fd") == 0)
            parseInt(argv[i + 1], resultFd);
    }
    closeDescriptorsExcept(descriptorArgs(argc, argv, {"--runner-in", "--runner-out"}, resultFd));
    return kev::gpu::verify(argc, argv);
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2)
        return usageError("no command");
    const std::string command = argv[1];
    try {
        if (command == "--help" || command == "-h" || command == "help") {
            std::cout << kUsage;
            return 0;
        }
        if (command == "--version") {
            std::cout << "kevolve-harness " << KEVOLVE_HARNESS_VERSION << "\n";
            return 0;
        }
        if (command == "exec-guard")
            return execGuard(argc, argv);
        if (command == "run-one")
            return runOne(argc, argv);
        if (command == "verify")
            return verifyCommand(argc, argv);
        if (command == "probe")
            return probe(argc, argv);
        if (command == "eval")
            return eval(argc, argv);
        if (command == "serve")
            return serveCommand(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "kevolve-harness: internal error: " << e.what() << "\n";
        return 3;
    }
    return usageError("unknown command " + command);
}
