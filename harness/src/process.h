#pragma once
// Child processes for the supervisor. The supervisor may hold GPU-adjacent state (NVML) and must
// never fork: children start with posix_spawn, each in its own process group so a time-out or a
// cancel kills everything the child started. Nothing blocks: the supervisor polls every child's
// pipes together with its own stdin.
//
// Children never see the supervisor's whole environment: only allowlisted names (PATH, locale,
// CUDA_*, the harness's own KEVOLVE_* settings, ...; see inheritable()) plus what the Spec sets, so
// a user's API keys and tokens never reach nvcc or a candidate. Every wait has a deadline: a child
// is killed by pid and by group, and one that does not die is left to be reaped later, never
// waited for without bound.
#include "result_channel.h"

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace kev::process {

struct Spec {
    std::vector<std::string> argv; // argv[0] is looked up in PATH when it has no '/'
    // Set on top of the allowlisted part of the supervisor's environment (or of an empty one when
    // inheritEnv is false). These are the harness's own values: the allowlist does not apply.
    std::vector<std::pair<std::string, std::string>> env;
    bool inheritEnv = true;
    std::string cwd;              // empty: the supervisor's
    bool channel = false;         // an extra pipe the child writes on fd 3
    bool mergeStderr = false;     // stderr into stdout, so a log keeps its order
    bool stdinPipe = false;       // the parent feeds stdin (writeStdin, closeStdin)
    bool stdoutLines = false;     // stdout arrives as lines (takeStdoutLines) instead of captured
    double timeoutS = 0;          // 0: no limit
    size_t maxCapture = 4u << 20; // per stream; the middle of longer output is dropped
    size_t maxChannelLine = 64u << 20; // for stdoutLines
    // The fd-3 channel is read strictly (result_channel.h): the first byte outside its framing
    // refuses it, and a refused channel ends the child (its whole group is killed).
    channel::Limits channelLimits;
};

struct Result {
    bool started = false;
    std::string spawnError;
    bool exited = false; // exited normally: exitCode is valid
    int exitCode = -1;
    int signal = 0; // the signal that ended it, 0 if none
    bool timedOut = false;
    bool cancelled = false;
    std::string out;
    std::string err;
    bool channelRefused = false; // the channel broke its framing (a running child is killed)
    json::Value channel;         // channel::LineReader::toJson() when the Spec had a channel
    double seconds = 0;
};

// Bytes kept from a stream: the head and the tail, with a marker where the middle was dropped.
class BoundedBuffer {
public:
    explicit BoundedBuffer(size_t limit)
        : m_limit(limit) {}
    void append(const char* data, size_t n);
    std::string text() const;
    size_t dropped() const { return m_dropped; }

private:
    size_t m_limit;
    std::string m_head;
    std::string m_tail;
    size_t m_dropped = 0;
};

// Trims `text` to at most `limit` bytes, keeping its head and tail around a marker line.
std::string trimMiddle(const std::string& text, size_t limit);

class Process {
public:
    explicit Process(Spec spec);
    ~Process(); // kills the group of a child still running and reaps it
    Process(const Process&) = delete;
    Process& operator=(const Process&) = delete;

    bool start();
    pid_t pid() const { return m_pid; }
    bool running() const { return m_started && !m_finished; }
    bool finished() const { return m_finished; }

    // Pipe ends still open, to poll for POLLIN.
    std::vector<int> openFds() const;
    // Reads what is available, enforces the deadline and reaps; returns true once finished.
    bool service();
    // Milliseconds until the deadline (0 when past it), or -1 without one.
    int msUntilDeadline() const;
    // SIGKILL to the whole group; the result says cancelled.
    void cancel();
    // Complete lines the child wrote on the channel since the last call, without '\n'.
    std::vector<std::string> takeChannelLines();
    // The channel's reader: a layer above may refuse a line's content through it (refuse()),
    // which ends the child at the next service().
    channel::LineReader& channelReader() { return m_chan; }
    std::vector<std::string> takeStdoutLines();
    // Blocking write of `data` to the child's stdin; false once the child closed it.
    bool writeStdin(const std::string& data);
    void closeStdin();
    const Result& result() const { return m_result; }

private:
    void readFrom(int& fd, int which);
    void drainAndClose();
    void killGroup();
    void finish(int status);
    void reapWithDeadline();

    Spec m_spec;
    Result m_result;
    pid_t m_pid = -1;
    bool m_started = false;
    bool m_finished = false;
    int m_outFd = -1;
    int m_errFd = -1;
    int m_chanFd = -1;
    BoundedBuffer m_out;
    BoundedBuffer m_err;
    channel::LineReader m_chan;
    // Splits stdout into lines, dropping any line longer than the limit.
    struct Lines {
        std::string partial;
        bool skipping = false;
        bool overflow = false;
        std::vector<std::string> complete;
        void append(const char* data, size_t n, size_t maxLine);
        void flush();
    };
    Lines m_outLines;
    int m_inFd = -1;
    std::chrono::steady_clock::time_point m_startTime;
    std::chrono::steady_clock::time_point m_deadline;
};

// Starts `spec` and waits for it (polling its pipes); for one-shot commands and tests.
Result run(const Spec& spec, std::vector<std::string>* channelLines = nullptr);

// The signal's name ("SIGSEGV"), or "signal N".
std::string signalName(int sig);

// Locates an executable in PATH; empty when not found.
std::string findInPath(const std::string& name);

// Whether a variable of the supervisor's environment may pass to a child: the allowlist (PATH,
// HOME, USER, LANG, LC_*, TZ, TMPDIR, TERM, LD_LIBRARY_PATH, XDG_CACHE_HOME, CUDA_*, NVIDIA_*, the
// harness's KEVOLVE_* settings) and the names in $KEVOLVE_PASS_ENV (comma-separated, the
// operator's explicit choice), never a name that looks like a secret (KEY, TOKEN, SECRET,
// PASSWORD, PASSWD, CREDENTIAL, AUTH, COOKIE, in any case), whatever the lists say.
bool inheritable(const std::string& name);
bool looksSecret(const std::string& name);
// The environment `spec` gives its child, as NAME=value strings.
std::vector<std::string> environmentFor(const Spec& spec);

// Replaces the process with `argv` (looked up in PATH) and the current environment; returns only
// on failure, with errno set. The one exec of the harness outside posix_spawn (exec-guard).
void replaceWith(char* const argv[]);

// Children killed whose end could not be collected within the kill deadline (stuck in the
// kernel): reaped here without blocking; returns how many are still pending.
size_t reapStragglers();

} // namespace kev::process
