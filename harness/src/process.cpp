#include "process.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace kev::process {

namespace {

// How long a killed child may take to be collected before it is left to reapStragglers().
constexpr auto kReapDeadline = std::chrono::seconds(3);

std::vector<pid_t>& stragglers() {
    static std::vector<pid_t> pids;
    return pids;
}

bool hasPrefix(const std::string& s, const char* prefix) {
    return s.compare(0, std::strlen(prefix), prefix) == 0;
}

// The supervisor's variables a child may see: what locates tools and libraries, the locale, CUDA's
// and the container runtime's device selection, and the harness's own settings.
const char* const kInheritedNames[] = {
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM",
    "LD_LIBRARY_PATH", "XDG_CACHE_HOME",
    // The harness's own settings (PROTOCOL.md); the result token and parent pid are set per child.
    "KEVOLVE_CACHE_DIR", "KEVOLVE_NVML_LIBRARY", "KEVOLVE_NVCC", "KEVOLVE_ARCH",
    "KEVOLVE_HARNESS_INCLUDE", "KEVOLVE_HOST_THREADS", "KEVOLVE_TEST_CHILD",
    "KEVOLVE_SANDBOX_READS"};
const char* const kInheritedPrefixes[] = {"LC_", "CUDA_", "NVIDIA_"};
const char* const kSecretWords[] = {"KEY",    "TOKEN",      "SECRET", "PASSWORD",
                                    "PASSWD", "CREDENTIAL", "AUTH",   "COOKIE"};

bool listedIn(const std::string& name, const char* list) {
    if (!list)
        return false;
    const std::string text = list;
    size_t start = 0;
    while (start <= text.size()) {
        size_t end = text.find_first_of(", :", start);
        if (end == std::string::npos)
            end = text.size();
        if (end > start && text.compare(start, end - start, name) == 0)
            return true;
        start = end + 1;
    }
    return false;
}

constexpr int kChannelFd = 3;

std::string errnoText(const char* what, int err) {
    return std::string(what) + ": " + std::strerror(err);
}

double secondsSince(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

void closeFd(int& fd) {
    if (fd >= 0) {
        ::close(fd);
        fd = -1;
    }
}

// Moves `fd` above the standard descriptors and the channel, so a dup2 onto 0-3 never finds its
// source already there (dup2 onto itself would keep close-on-exec set).
int lift(int fd) {
    if (fd > kChannelFd)
        return fd;
    const int lifted = ::fcntl(fd, F_DUPFD_CLOEXEC, kChannelFd + 1);
    ::close(fd);
    return lifted;
}

bool makePipe(int fds[2]) {
    if (::pipe2(fds, O_CLOEXEC) != 0)
        return false;
    fds[0] = lift(fds[0]);
    fds[1] = lift(fds[1]);
    return fds[0] >= 0 && fds[1] >= 0;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
    std::vector<char*> out;
    out.reserve(strings.size() + 1);
    for (auto& s : strings)
        out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

} // namespace

bool looksSecret(const std::string& name) {
    std::string upper = name;
    for (char& c : upper)
        c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    for (const char* word : kSecretWords) {
        if (upper.find(word) != std::string::npos)
            return true;
    }
    return false;
}

bool inheritable(const std::string& name) {
    if (name.empty() || looksSecret(name))
        return false;
    for (const char* n : kInheritedNames) {
        if (name == n)
            return true;
    }
    for (const char* p : kInheritedPrefixes) {
        if (hasPrefix(name, p))
            return true;
    }
    return listedIn(name, std::getenv("KEVOLVE_PASS_ENV"));
}

std::vector<std::string> environmentFor(const Spec& spec) {
    std::vector<std::string> env;
    if (spec.inheritEnv) {
        for (char** e = environ; e && *e; ++e) {
            const std::string entry = *e;
            const size_t eq = entry.find('=');
            if (eq != std::string::npos && inheritable(entry.substr(0, eq)))
                env.push_back(entry);
        }
    }
    for (const auto& [name, value] : spec.env) {
        const std::string prefix = name + "=";
        bool replaced = false;
        for (auto& entry : env) {
            if (entry.compare(0, prefix.size(), prefix) == 0) {
                entry = prefix + value;
                replaced = true;
            }
        }
        if (!replaced)
            env.push_back(prefix + value);
    }
    return env;
}

void replaceWith(char* const argv[]) {
    ::execvp(argv[0], argv);
}

size_t reapStragglers() {
    auto& pids = stragglers();
    pids.erase(std::remove_if(pids.begin(), pids.end(),
                              [](pid_t pid) {
                                  int status = 0;
                                  const pid_t r = ::waitpid(pid, &status, WNOHANG);
                                  return r == pid || (r < 0 && errno == ECHILD);
                              }),
               pids.end());
    return pids.size();
}

void BoundedBuffer::append(const char* data, size_t n) {
    const size_t headLimit = m_limit / 2;
    if (m_head.size() < headLimit) {
        const size_t take = std::min(n, headLimit - m_head.size());
        m_head.append(data, take);
        data += take;
        n -= take;
    }
    if (n == 0)
        return;
    const size_t tailLimit = m_limit - headLimit;
    m_tail.append(data, n);
    // Trim in batches so a stream of small writes costs amortised linear time.
    if (m_tail.size() > 2 * tailLimit + 4096) {
        const size_t cut = m_tail.size() - tailLimit;
        m_tail.erase(0, cut);
        m_dropped += cut;
    }
}

std::string BoundedBuffer::text() const {
    const size_t tailLimit = m_limit - m_limit / 2;
    size_t dropped = m_dropped;
    std::string tail = m_tail;
    if (tail.size() > tailLimit) {
        dropped += tail.size() - tailLimit;
        tail.erase(0, tail.size() - tailLimit);
    }
    if (dropped == 0)
        return m_head + tail;
    return m_head + "\n[... " + std::to_string(dropped) + " bytes omitted ...]\n" + tail;
}

std::string trimMiddle(const std::string& text, size_t limit) {
    if (text.size() <= limit)
        return text;
    BoundedBuffer buffer(limit);
    buffer.append(text.data(), text.size());
    return buffer.text();
}

Process::Process(Spec spec)
    : m_spec(std::move(spec))
    , m_out(m_spec.maxCapture)
    , m_err(m_spec.maxCapture)
    , m_chan(m_spec.channelLimits) {}

Process::~Process() {
    if (m_started && !m_finished) {
        killGroup();
        reapWithDeadline();
    }
    closeFd(m_outFd);
    closeFd(m_errFd);
    closeFd(m_chanFd);
    closeFd(m_inFd);
}

std::string findInPath(const std::string& name) {
    if (name.find('/') != std::string::npos)
        return ::access(name.c_str(), X_OK) == 0 ? name : std::string();
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
    size_t start = 0;
    while (start <= dirs.size()) {
        size_t end = dirs.find(':', start);
        if (end == std::string::npos)
            end = dirs.size();
        std::string dir = dirs.substr(start, end - start);
        if (dir.empty())
            dir = ".";
        const std::string candidate = dir + "/" + name;
        struct stat st {};
        if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
            ::access(candidate.c_str(), X_OK) == 0)
            return candidate;
        start = end + 1;
    }
    return {};
}

bool Process::start() {
    m_startTime = std::chrono::steady_clock::now();
    if (m_spec.argv.empty()) {
        m_result.spawnError = "no program to run";
        m_finished = true;
        return false;
    }
    const std::string program = findInPath(m_spec.argv[0]);
    if (program.empty()) {
        m_result.spawnError = m_spec.argv[0] + ": not found or not executable";
        m_finished = true;
        return false;
    }

    int outPipe[2] = {-1, -1}, errPipe[2] = {-1, -1}, chanPipe[2] = {-1, -1}, inPipe[2] = {-1, -1};
    const auto closeAll = [&] {
        for (int* p : {outPipe, errPipe, chanPipe, inPipe}) {
            closeFd(p[0]);
            closeFd(p[1]);
        }
    };
    if (!makePipe(outPipe) || !makePipe(errPipe) || (m_spec.channel && !makePipe(chanPipe)) ||
        (m_spec.stdinPipe && !makePipe(inPipe))) {
        m_result.spawnError = errnoText("pipe", errno);
        closeAll();
        m_finished = true;
        return false;
    }

    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
    if (m_spec.stdinPipe)
        posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0);
    else
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1);
    posix_spawn_file_actions_adddup2(&actions, m_spec.mergeStderr ? outPipe[1] : errPipe[1], 2);
    if (m_spec.channel)
        posix_spawn_file_actions_adddup2(&actions, chanPipe[1], kChannelFd);
    if (!m_spec.cwd.empty())
        posix_spawn_file_actions_addchdir_np(&actions, m_spec.cwd.c_str());

    // Own group (so a kill reaches grandchildren), default signal dispositions (the supervisor
    // ignores SIGPIPE, and ignored signals survive exec), nothing blocked.
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
                                        POSIX_SPAWN_SETSIGMASK);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setsigmask(&attr, &none);

    std::vector<std::string> args = m_spec.argv;
    std::vector<std::string> env = environmentFor(m_spec);
    std::vector<char*> argPtrs = pointers(args);
    std::vector<char*> envPtrs = pointers(env);
    const int rc =
        ::posix_spawn(&m_pid, program.c_str(), &actions, &attr, argPtrs.data(), envPtrs.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    closeFd(outPipe[1]);
    closeFd(errPipe[1]);
    closeFd(chanPipe[1]);
    closeFd(inPipe[0]);
    if (rc != 0) {
        m_result.spawnError = errnoText(("spawn " + program).c_str(), rc);
        closeAll();
        m_finished = true;
        return false;
    }
    m_outFd = outPipe[0];
    m_errFd = errPipe[0];
    m_chanFd = chanPipe[0];
    m_inFd = inPipe[1];
    for (int fd : {m_outFd, m_errFd, m_chanFd}) {
        if (fd >= 0)
            ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    }
    m_started = true;
    m_result.started = true;
    m_deadline = m_startTime + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                   std::chrono::duration<double>(m_spec.timeoutS));
    return true;
}

std::vector<int> Process::openFds() const {
    std::vector<int> fds;
    for (int fd : {m_outFd, m_errFd, m_chanFd}) {
        if (fd >= 0)
            fds.push_back(fd);
    }
    return fds;
}

void Process::Lines::append(const char* data, size_t n, size_t maxLine) {
    size_t start = 0;
    for (size_t i = 0; i < n; ++i) {
        if (data[i] != '\n')
            continue;
        if (!skipping && partial.size() + (i - start) > maxLine) {
            overflow = true;
        } else if (!skipping) {
            partial.append(data + start, i - start);
            complete.push_back(std::move(partial));
        }
        partial.clear();
        skipping = false;
        start = i + 1;
    }
    if (!skipping)
        partial.append(data + start, n - start);
    if (partial.size() > maxLine) {
        partial.clear();
        skipping = true;
        overflow = true;
    }
}

void Process::Lines::flush() {
    // A final line without '\n' still counts: the child may have been cut off mid-write.
    if (!partial.empty() && !skipping)
        complete.push_back(std::move(partial));
    partial.clear();
}

void Process::readFrom(int& fd, int which) {
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n > 0) {
            const auto len = static_cast<size_t>(n);
            if (which == 1 && m_spec.stdoutLines)
                m_outLines.append(buf, len, m_spec.maxChannelLine);
            else if (which == 1)
                m_out.append(buf, len);
            else if (which == 2)
                m_err.append(buf, len);
            else
                m_chan.feed(buf, len);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        closeFd(fd); // end of file or a read error: nothing more will come
        return;
    }
}

void Process::drainAndClose() {
    if (m_outFd >= 0)
        readFrom(m_outFd, 1);
    if (m_errFd >= 0)
        readFrom(m_errFd, 2);
    if (m_chanFd >= 0)
        readFrom(m_chanFd, 3);
    // A child that ended on its own must have ended its last line; one killed mid-write (a
    // time-out, a crash) already has a verdict that is not ok.
    if (m_result.exited)
        m_chan.close();
    m_outLines.flush();
    if (m_spec.channel) {
        m_result.channelRefused = !m_chan.ok();
        m_result.channel = m_chan.toJson();
    }
    closeFd(m_outFd);
    closeFd(m_errFd);
    closeFd(m_chanFd);
    closeFd(m_inFd);
}

void Process::killGroup() {
    // By group (what the child started) and by pid: a child that left its group (setpgid) is not
    // reached by the first.
    if (m_pid > 0) {
        ::kill(-m_pid, SIGKILL);
        ::kill(m_pid, SIGKILL);
    }
}

void Process::reapWithDeadline() {
    const auto deadline = std::chrono::steady_clock::now() + kReapDeadline;
    for (;;) {
        int status = 0;
        const pid_t r = ::waitpid(m_pid, &status, WNOHANG);
        if (r == m_pid || (r < 0 && errno != EINTR))
            return;
        if (std::chrono::steady_clock::now() >= deadline) {
            stragglers().push_back(m_pid);
            return;
        }
        ::usleep(5000);
    }
}

void Process::finish(int status) {
    if (WIFEXITED(status)) {
        m_result.exited = true;
        m_result.exitCode = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        m_result.signal = WTERMSIG(status);
    }
    drainAndClose();
    m_result.out = m_out.text();
    m_result.err = m_err.text();
    m_result.seconds = secondsSince(m_startTime);
    m_finished = true;
}

bool Process::service() {
    if (!m_started || m_finished)
        return m_finished;
    if (m_outFd >= 0)
        readFrom(m_outFd, 1);
    if (m_errFd >= 0)
        readFrom(m_errFd, 2);
    if (m_chanFd >= 0)
        readFrom(m_chanFd, 3);

    if (m_spec.channel && !m_chan.ok() && !m_result.channelRefused) {
        m_result.channelRefused = true;
        killGroup();
    }

    if (m_spec.timeoutS > 0 && std::chrono::steady_clock::now() >= m_deadline &&
        !m_result.timedOut && !m_result.cancelled) {
        m_result.timedOut = true;
        killGroup();
    }

    // Peek without reaping so the pid (and with it the group id) stays ours while the rest of the
    // group is killed: a group outlives its leader, and a stray grandchild must not.
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(m_pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
        info.si_pid == 0)
        return false;
    killGroup();
    int status = 0;
    // It has exited (waitid said so): this returns at once.
    while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
    }
    finish(status);
    return true;
}

int Process::msUntilDeadline() const {
    if (m_spec.timeoutS <= 0 || !m_started || m_finished)
        return -1;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          m_deadline - std::chrono::steady_clock::now())
                          .count();
    return left < 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

void Process::cancel() {
    if (!running())
        return;
    m_result.cancelled = true;
    killGroup();
}

std::vector<std::string> Process::takeChannelLines() {
    return m_chan.take();
}

std::vector<std::string> Process::takeStdoutLines() {
    std::vector<std::string> lines;
    lines.swap(m_outLines.complete);
    return lines;
}

bool Process::writeStdin(const std::string& data) {
    size_t done = 0;
    while (m_inFd >= 0 && done < data.size()) {
        const ssize_t n = ::write(m_inFd, data.data() + done, data.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        done += static_cast<size_t>(n);
    }
    return m_inFd >= 0;
}

void Process::closeStdin() {
    closeFd(m_inFd);
}

Result run(const Spec& spec, std::vector<std::string>* channelLines) {
    Process p(spec);
    if (!p.start())
        return p.result();
    while (!p.service()) {
        std::vector<pollfd> fds;
        for (int fd : p.openFds())
            fds.push_back({fd, POLLIN, 0});
        // Reaping is noticed by polling, so wake up regularly even with all pipes quiet.
        int timeout = 50;
        const int untilDeadline = p.msUntilDeadline();
        if (untilDeadline >= 0)
            timeout = std::min(timeout, untilDeadline);
        ::poll(fds.data(), fds.size(), timeout);
        if (channelLines) {
            for (auto& line : p.takeChannelLines())
                channelLines->push_back(std::move(line));
        }
    }
    if (channelLines) {
        for (auto& line : p.takeChannelLines())
            channelLines->push_back(std::move(line));
    }
    return p.result();
}

std::string signalName(int sig) {
    switch (sig) {
    case SIGHUP:
        return "SIGHUP";
    case SIGINT:
        return "SIGINT";
    case SIGQUIT:
        return "SIGQUIT";
    case SIGILL:
        return "SIGILL";
    case SIGTRAP:
        return "SIGTRAP";
    case SIGABRT:
        return "SIGABRT";
    case SIGBUS:
        return "SIGBUS";
    case SIGFPE:
        return "SIGFPE";
    case SIGKILL:
        return "SIGKILL";
    case SIGSEGV:
        return "SIGSEGV";
    case SIGPIPE:
        return "SIGPIPE";
    case SIGALRM:
        return "SIGALRM";
    case SIGTERM:
        return "SIGTERM";
    case SIGSYS:
        return "SIGSYS";
    case SIGXCPU:
        return "SIGXCPU";
    case SIGXFSZ:
        return "SIGXFSZ";
    default:
        return "signal " + std::to_string(sig);
    }
}

} // namespace kev::process
