#pragma once
// Paired timing of a candidate against the reference, in one place (like nvbench's measure_cold):
// per sample, fresh inputs, a poisoned output, an L2 flush and persisting-L2 reset outside the
// event window, a blocking kernel so that the entry point's host work is not timed, CUDA events on
// the harness stream, and a full-output check afterwards. Samples are ABBA quads (ABAB when the
// candidate runs in another process); a round stops at
// the target interval half-width or its time budget; three rounds must agree.
#include "op_bench.h"
#include "json.h"
#include "nvml.h"
#include "stats.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kev::gpu {

struct TimingOptions {
    int rounds = 3;
    double budgetSeconds = 3.0; // all rounds together
    double targetHalfWidth = 0.005;
    double maxRoundSpread = 0.15;
    int warmupQuads = 2;
    double kernelTimeoutSeconds = 10.0;
    double checkBound = 0.0; // per-sample output check: relative error allowed
    uint64_t seed = 0;
};

struct QuadRecord {
    int round = 0;
    int index = 0;
    bool warmup = false;
    int inputSet = 0;
    double c[2] = {0, 0};
    double r[2] = {0, 0};
    // Wall-clock ms the verifier saw around each sample (THREAT_MODEL.md, "Timing claims").
    double cWall[2] = {0, 0};
    double rWall[2] = {0, 0};
    double checkCandidate = 0;
    double checkReference = 0;
    unsigned smMhz = 0, memMhz = 0;
    unsigned long long reasons = 0;
    bool discarded = false;
    std::string why;
    double ratio() const { return (r[0] + r[1]) / (c[0] + c[1]); }
};

struct RoundResult {
    stats::Interval interval;
    stats::StopReason stoppedBy = stats::StopReason::None;
    double seconds = 0;
};

struct TimingResult {
    bool stable = true;
    int reruns = 0;
    stats::Interval ratio; // over every kept quad of the accepted rounds
    double candidateMedianMs = 0;
    double referenceMedianMs = 0;
    double roundSpread = 0;
    std::vector<RoundResult> rounds;
    std::vector<QuadRecord> quads;
    int discarded = 0;
    // Set when a timed output failed its check: the evaluation is then `incorrect`.
    std::optional<std::string> failedCheck;
    size_t flushBytes = 0;
    bool persistingResetSupported = true;
    bool inputsRefreshed = true;
    // "ABBA" in one process; "ABAB" with the candidate in the runner (timer.cpp says why).
    std::string pairing = "ABBA";
    json::Value toJson(double flops) const;
};

// Thrown when one launch does not finish within kernelTimeoutSeconds.
struct KernelTimeout : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Waits for `event` with a deadline; throws KernelTimeout naming `what`.
void waitFor(cudaEvent_t event, double timeoutSeconds, const char* what);

// Called around the event window of an audited sample (see Timer::audit).
struct AuditHooks {
    std::function<void()> begin;       // after the blocking kernel, before the start event
    std::function<void()> afterLaunch; // after the launch returned and the stop event is queued
    std::function<void(double eventMs)> end; // after the stop event completed
};

// The candidate in another process (the untrusted runner): the verifier prepares every sample
// here (fresh inputs, poisoned output, L2 flush, all finished on the device) and the runner only
// times the call.
struct RemoteCandidate {
    // The sample's inputs are final: keep their pristine copies.
    std::function<void(int set)> beforeCall;
    // The runner's timed call on input set `set` (`audited`: traced by its activity audit);
    // returns the runner's claimed ms and sets *wallMs to the verifier's round trip.
    std::function<double(int set, bool audited, double* wallMs)> sample;
    // Throws when the candidate changed its inputs.
    std::function<void(int set)> afterCall;
};

class Timer {
public:
    // `candidate(set)` enqueues the candidate on the harness stream for input set `set` (and
    // throws on a rule or launch failure); `reference(set)` the reference.
    using Launch = std::function<void(int set)>;

    Timer(OpBench& bench, cudaStream_t stream, const nvml::Device* nvmlDevice, size_t l2Bytes);
    ~Timer();
    Timer(const Timer&) = delete;
    Timer& operator=(const Timer&) = delete;

    TimingResult run(const Launch& candidate, const Launch& reference,
                     const TimingOptions& options);
    // Candidate samples go to `remote` instead of the candidate Launch (which is then unused).
    void setRemote(const RemoteCandidate* remote) { m_remote = remote; }

    // `count` extra candidate samples, exactly like timed ones but traced through `hooks` and
    // part of no statistic (tracing perturbs timing). Returns the worst output check.
    double audit(const Launch& candidate, int count, const TimingOptions& options,
                 const AuditHooks& hooks);

private:
    double sample(const Launch& launch, bool isCandidate, int set, uint64_t seed,
                  const TimingOptions& options, double* check, bool* expired, double* wallMs,
                  const AuditHooks* hooks = nullptr);
    void flushL2();
    RoundResult runRound(int round, const Launch& candidate, const Launch& reference,
                         const TimingOptions& options, double budget, TimingResult& result);

    OpBench& m_bench;
    cudaStream_t m_stream;
    const nvml::Device* m_nvml;
    DeviceBuffer m_flush;
    size_t m_flushBytes;
    volatile int* m_flag = nullptr;
    int* m_flagDevice = nullptr;
    int* m_expired = nullptr;
    cudaEvent_t m_start = nullptr, m_stop = nullptr;
    uint64_t m_sampleCounter = 0;
    bool m_persistingReset = true;
    const RemoteCandidate* m_remote = nullptr;
};

} // namespace kev::gpu
