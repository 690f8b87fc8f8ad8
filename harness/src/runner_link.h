#pragma once
// The pipe between the trusted verifier (`kevolve-harness verify`) and the untrusted runner
// (`kevolve-harness run-one`, which loads the candidate). The verifier owns every input, truth,
// check and verdict; the runner only opens the device buffers it is given (CUDA IPC), calls the
// candidate on them and says how long a timed call took. Everything the runner writes is the
// candidate's to forge, so the verifier reads it strictly: one short line per command, of the one
// kind the command expects, within a deadline; anything else ends the evaluation with a verdict
// that is never `ok` (THREAT_MODEL.md, "The verifier"). No CUDA here: unit-tested without a GPU.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kev::link {

// The longest line either side writes (a command carries one KevolveArgs in hex, ~3 KB).
constexpr size_t kMaxLine = 16u << 10;

// Runner -> verifier.
struct Reply {
    enum class Kind { Ready, Mapped, Unmapped, Workspace, Done, Sample, Fail, Bye };
    Kind kind = Kind::Ready;
    uint64_t count = 0;  // mapped: buffer id; workspace: bytes; done: launches
    double ms = 0;       // sample: the runner's event time of the candidate's call
    std::string status;  // fail: runtime_error | rule_violation | timeout
    std::string message; // fail: the runner's evidence
    bool sticky = false; // fail: the runner's CUDA context is unusable
};
const char* toString(Reply::Kind kind);

// Strict: the keyword, then exactly its fields; numbers in range and finite; messages printable.
// nullopt with `error` naming the problem otherwise.
std::optional<Reply> parseReply(const std::string& line, std::string* error);
std::string formatReply(const Reply& reply);

// Reads lines from a descriptor with a deadline, never more than kMaxLine bytes per line.
class LineReader {
public:
    enum class Status { Line, Eof, Timeout, TooLong, Error };
    explicit LineReader(int fd)
        : m_fd(fd) {}
    // The next line (without '\n') into *line.
    Status next(double timeoutS, std::string* line);
    // Whether bytes beyond the last line returned are already buffered or waiting on the
    // descriptor (a runner that says more than asked).
    bool pending();

private:
    int m_fd;
    std::string m_buffer;
    bool m_eof = false;
};

// Writes all of `data` within `timeoutS`; false when the reader is gone or too slow.
bool writeAll(int fd, const std::string& data, double timeoutS);

// Why the verifier stopped trusting the runner's answer to a command.
struct LinkFailure {
    std::string status;    // timeout | runtime_error | rule_violation
    std::string message;   // names the command and what came instead
    bool reported = false; // the runner's own `fail` reply: it still follows the protocol
};

// The verifier's end: one command, one reply of the expected kind.
class RunnerLink {
public:
    RunnerLink(int readFd, int writeFd)
        : m_reader(readFd)
        , m_writeFd(writeFd) {}
    // Sends `command` (one line) and waits up to timeoutS for a reply of kind `expected`. A `fail`
    // reply (the runner's own report of an error) and every protocol failure come back as
    // LinkFailure in *failure; the runner's fail status is kept (it can only hurt itself).
    std::optional<Reply> call(const std::string& command, Reply::Kind expected, double timeoutS,
                              LinkFailure* failure);
    // Waits for the runner's first line (`ready`).
    std::optional<Reply> expect(Reply::Kind expected, const std::string& during, double timeoutS,
                                LinkFailure* failure);
    // Wall-clock seconds of the last call, from the write to the reply: what the verifier saw.
    double lastWallS() const { return m_lastWallS; }

private:
    LineReader m_reader;
    int m_writeFd;
    double m_lastWallS = 0;
};

// Hex of raw bytes and back (the KevolveArgs the runner receives); false on a malformed text.
std::string toHex(const void* data, size_t bytes);
bool fromHex(const std::string& text, void* data, size_t bytes);

// The cross-check of the runner's timing claims against what the verifier saw.
// Per candidate sample: the runner's claimed event time and the verifier's wall-clock round trip
// (command written to reply read). Per reference sample (the verifier's own, same procedure in
// its own process): event time and wall-clock from the start of the same procedure. The excess
// (wall - claim) of the candidate's samples is the round trip's overhead; the reference's excess
// calibrates what that overhead is without a pipe. A runner that claims less than it took shows
// an excess above the calibration by the time it hid.
struct TimingClaim {
    double claimedMs = 0;
    double wallMs = 0;
};
struct PlausibilityRule {
    // Pipe round trip, two process wake-ups, the GPU's switch between the two processes'
    // contexts and the candidate's host code: 0.3-0.55 ms for honest kernels on the H200, so
    // about twice that.
    double absoluteSlackMs = 1.0;
    double relativeSlack = 0.10; // of the claimed time
    double clockSlackMs = 0.05;  // host clock vs GPU events: a claim above the wall clock
};
// The evidence when the claims are implausible, else nullopt. `candidate`: every candidate
// sample; `reference`: the verifier's own samples; floorMs: the roofline's minimum time (0 when
// unknown).
// The medians the rule compares, for the report (so that the slack can be judged on real data).
struct TimingFigures {
    double claimMs = 0;       // median claimed candidate time
    double excessMs = 0;      // median wall - claim of the candidate's samples
    double calibrationMs = 0; // median wall - event time of the verifier's own samples
    double hiddenMs = 0;      // excessMs - calibrationMs
    double allowedMs = 0;     // absoluteSlackMs + relativeSlack * claimMs
    // True when the evidence is the medians' comparison alone (hiddenMs > allowedMs): host CPU
    // contention (compiles running beside the timing) delays the runner's wake-ups too, so the
    // caller measures once more before it judges. A claim above the wall clock or under half
    // the floor is evidence on its own.
    bool statistical = false;
};
std::optional<std::string> implausibleTiming(const std::vector<TimingClaim>& candidate,
                                             const std::vector<TimingClaim>& reference,
                                             double floorMs, const PlausibilityRule& rule = {},
                                             TimingFigures* figures = nullptr);

// Seconds of CLOCK_MONOTONIC.
double monotonicSeconds();
// 64 bits from getrandom (never from a file or the job): seeds and check vectors.
uint64_t secureRandom64();

} // namespace kev::link
