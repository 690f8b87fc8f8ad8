#include "timer.h"

#include "runner_link.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

namespace kev::gpu {

namespace {
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}
} // namespace

void waitFor(cudaEvent_t event, double timeoutSeconds, const char* what) {
    const auto t0 = Clock::now();
    for (;;) {
        const cudaError_t e = cudaEventQuery(event);
        if (e == cudaSuccess) {
            return;
        }
        if (e != cudaErrorNotReady) {
            KEV_CUDA(e);
        }
        if (secondsSince(t0) > timeoutSeconds) {
            throw KernelTimeout(std::string(what) + " did not finish within " +
                                std::to_string(timeoutSeconds) + " s");
        }
        std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
}

Timer::Timer(OpBench& bench, cudaStream_t stream, const nvml::Device* nvmlDevice, size_t l2Bytes)
    : m_bench(bench)
    , m_stream(stream)
    , m_nvml(nvmlDevice)
    , m_flushBytes(std::max<size_t>(2 * l2Bytes, 64u << 20)) {
    m_flush = DeviceBuffer(m_flushBytes);
    void* host = nullptr;
    KEV_CUDA(cudaHostAlloc(&host, 2 * sizeof(int), cudaHostAllocMapped));
    m_flag = static_cast<volatile int*>(host);
    void* dev = nullptr;
    KEV_CUDA(cudaHostGetDevicePointer(&dev, host, 0));
    m_flagDevice = static_cast<int*>(dev);
    m_expired = m_flagDevice + 1;
    KEV_CUDA(cudaEventCreate(&m_start));
    KEV_CUDA(cudaEventCreate(&m_stop));
}

Timer::~Timer() {
    cudaEventDestroy(m_start);
    cudaEventDestroy(m_stop);
    cudaFreeHost(const_cast<int*>(m_flag));
}

void Timer::flushL2() {
    // A different byte each time, so no layer can skip it as redundant.
    KEV_CUDA(cudaMemsetAsync(m_flush.data(), static_cast<int>(m_sampleCounter++ & 0x7F),
                             m_flushBytes, m_stream));
    // Then the first half read back (device_kernels.h, readSectors): L2 holds clean lines, so the
    // timed kernel does not pay for the memset's write-backs (for a memory-bound kernel an L2's
    // worth of DRAM writes: about a third of a 100 MB kernel's time on the H200). The sink is the
    // buffer's last word, outside the half that is read.
    unsigned* sink = m_flush.as<unsigned>() + m_flushBytes / sizeof(unsigned) - 1;
    KEV_CUDA(readSectors(m_flush.data(), m_flushBytes / 2, sink, m_stream));
}

double Timer::sample(const Launch& launch, bool isCandidate, int set, uint64_t seed,
                     const TimingOptions& options, double* check, bool* expired, double* wallMs,
                     const AuditHooks* hooks) {
    const Side side = isCandidate ? Side::Candidate : Side::Reference;
    const bool remote = isCandidate && m_remote;
    // Fresh inputs every sample: an entry point that caches results by pointer or by content
    // gains nothing, and the rotated buffers change the pointers too.
    m_bench.refresh(set, seed);
    m_bench.poison(side);
    if (remote) {
        m_remote->beforeCall(set);
    }
    float ms = 0;
    // Wall-clock from the start of the sample's procedure to the end of its output check, for
    // both sides alike: a runner that answers before the candidate's work is done gains nothing,
    // because the check cannot pass before the output exists (THREAT_MODEL.md, "Timing claims").
    double t0 = 0;
    if (remote) {
        // L2 is the device's, not the context's: this flush holds for the runner's call whatever
        // the runner does. The runner flushes again in its own context (runner.cpp: symmetry).
        flushL2();
        KEV_CUDA(cudaStreamSynchronize(m_stream));
        t0 = link::monotonicSeconds();
        double roundTripMs = 0;
        ms = static_cast<float>(m_remote->sample(set, hooks != nullptr, &roundTripMs));
        *expired = false;
    } else {
        // The same steps as the runner's from here: its preparation finished, the flush in the
        // timing process, the blocking kernel.
        KEV_CUDA(cudaStreamSynchronize(m_stream));
        t0 = link::monotonicSeconds();
        flushL2();
        if (m_persistingReset && cudaCtxResetPersistingL2Cache() != cudaSuccess) {
            cudaGetLastError();
            m_persistingReset = false;
        }
        m_flag[0] = 0;
        m_flag[1] = 0;
        KEV_CUDA(blockStream(m_flagDevice, 2'000'000'000ull, m_expired, m_stream));
        if (hooks) {
            hooks->begin();
        }
        KEV_CUDA(cudaEventRecord(m_start, m_stream));
        launch(set);
        KEV_CUDA(cudaEventRecord(m_stop, m_stream));
        if (hooks) {
            hooks->afterLaunch();
        }
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        m_flag[0] = 1;
        waitFor(m_stop, options.kernelTimeoutSeconds,
                isCandidate ? "the candidate" : "the reference");
        KEV_CUDA(cudaEventElapsedTime(&ms, m_start, m_stop));
        *expired = m_flag[1] != 0;
        if (hooks) {
            hooks->end(ms);
        }
    }
    // The check's randomness (GEMM's sign vector) is drawn now that the output exists, from
    // getrandom: nothing that ran before could know it.
    *check = m_bench.outputCheck(set, side, link::secureRandom64());
    *wallMs = (link::monotonicSeconds() - t0) * 1e3;
    if (remote) {
        // Inputs last, outside the wall-clock span (the verifier's own samples have no such
        // step).
        m_remote->afterCall(set);
    }
    if (!isCandidate) {
        // Nothing correct is left lying around for a candidate to find.
        m_bench.poison(side);
    }
    return ms;
}

RoundResult Timer::runRound(int round, const Launch& candidate, const Launch& reference,
                            const TimingOptions& options, double budget, TimingResult& result) {
    stats::StopRule rule;
    rule.targetHalfWidth = options.targetHalfWidth;
    rule.budgetSeconds = budget;
    std::vector<double> ratios;
    const auto t0 = Clock::now();
    RoundResult rr;
    for (int q = 0;; ++q) {
        QuadRecord rec;
        rec.round = round;
        rec.index = q;
        rec.warmup = q < options.warmupQuads;
        rec.inputSet = q % OpBench::kInputSets;
        const uint64_t base =
            options.seed + (static_cast<uint64_t>(round) << 32) + static_cast<uint64_t>(q) * 4;
        bool expired[4] = {false, false, false, false};
        double checks[4] = {0, 0, 0, 0};
        const auto candidateSample = [&](int i, int slot) {
            rec.c[i] = sample(candidate, true, rec.inputSet, base + slot, options, &checks[slot],
                              &expired[slot], &rec.cWall[i]);
        };
        const auto referenceSample = [&](int i, int slot) {
            rec.r[i] = sample(reference, false, rec.inputSet, base + slot, options, &checks[slot],
                              &expired[slot], &rec.rWall[i]);
        };
        candidateSample(0, 0);
        referenceSample(0, 1);
        if (m_remote) {
            // Two processes: every sample must follow a switch between their GPU contexts. In
            // ABBA order the second reference sample was the only one that did not, and it ran
            // 0.5-1.1% faster than the first in 20 of 20 A/A evaluations on the H200 (session 7,
            // docs/benchmarks.md): the A/A ratio read 0.99. Alternating keeps them alike; the
            // drift over one quad (about 2 ms) is far below the noise.
            candidateSample(1, 3);
            referenceSample(1, 2);
        } else {
            referenceSample(1, 2);
            candidateSample(1, 3);
        }
        rec.checkCandidate = std::max(checks[0], checks[3]);
        rec.checkReference = std::max(checks[1], checks[2]);
        if (m_nvml) {
            const nvml::ClockSample cs = m_nvml->sample();
            if (cs.ok) {
                rec.smMhz = cs.smMhz;
                rec.memMhz = cs.memMhz;
                rec.reasons = cs.reasons;
            }
        }
        if (!(rec.checkCandidate <= options.checkBound) && !result.failedCheck) {
            char buf[256];
            std::snprintf(buf, sizeof buf,
                          "timed output (round %d, quad %d) failed the output check: relative "
                          "error %.3g, bound %.3g",
                          round, q, rec.checkCandidate, options.checkBound);
            result.failedCheck = buf;
        }
        if (expired[0] || expired[1] || expired[2] || expired[3]) {
            rec.discarded = true;
            rec.why = "the blocking kernel timed out before the launch was queued";
        } else if (nvml::disqualifying(rec.reasons)) {
            rec.discarded = true;
            rec.why = "thermal or hardware slowdown";
        }
        if (rec.warmup) {
            rec.discarded = true;
            rec.why = "warm-up";
        }
        if (!rec.discarded) {
            ratios.push_back(rec.ratio());
        } else if (!rec.warmup) {
            ++result.discarded;
        }
        result.quads.push_back(rec);
        if (result.failedCheck) {
            break;
        }
        const stats::StopReason why = stats::shouldStop(ratios, secondsSince(t0), rule);
        if (why != stats::StopReason::None) {
            rr.stoppedBy = why;
            break;
        }
        // A round that only ever discards cannot go on for ever.
        if (secondsSince(t0) > 4 * budget + 5) {
            rr.stoppedBy = stats::StopReason::TimeLimit;
            break;
        }
    }
    rr.interval = stats::medianInterval(ratios);
    rr.seconds = secondsSince(t0);
    return rr;
}

TimingResult Timer::run(const Launch& candidate, const Launch& reference,
                        const TimingOptions& options) {
    TimingResult result;
    result.flushBytes = m_flushBytes;
    result.inputsRefreshed = m_bench.refreshesContents();
    result.pairing = m_remote ? "ABAB" : "ABBA";
    const double budget = options.budgetSeconds / std::max(1, options.rounds);
    for (int attempt = 0; attempt < 2; ++attempt) {
        result.rounds.clear();
        result.quads.clear();
        result.discarded = 0;
        std::vector<double> medians;
        for (int r = 0; r < options.rounds; ++r) {
            TimingOptions o = options;
            o.seed = options.seed + static_cast<uint64_t>(attempt) * 0x9E3779B9ull;
            // Only the first round of an attempt needs warming up; later rounds follow it directly.
            o.warmupQuads = r == 0 ? options.warmupQuads : 0;
            result.rounds.push_back(runRound(r, candidate, reference, o, budget, result));
            medians.push_back(result.rounds.back().interval.median);
            if (result.failedCheck) {
                return result;
            }
        }
        result.roundSpread = stats::spread(medians);
        result.reruns = attempt;
        if (result.roundSpread <= options.maxRoundSpread) {
            result.stable = true;
            break;
        }
        result.stable = false;
    }
    std::vector<double> ratios, cand, ref;
    for (const QuadRecord& q : result.quads) {
        if (q.discarded) {
            continue;
        }
        ratios.push_back(q.ratio());
        cand.push_back(q.c[0]);
        cand.push_back(q.c[1]);
        ref.push_back(q.r[0]);
        ref.push_back(q.r[1]);
    }
    result.ratio = stats::medianInterval(ratios);
    result.candidateMedianMs = stats::median(cand);
    result.referenceMedianMs = stats::median(ref);
    result.persistingResetSupported = m_persistingReset;
    return result;
}

double Timer::audit(const Launch& candidate, int count, const TimingOptions& options,
                    const AuditHooks& hooks) {
    double worst = 0;
    for (int i = 0; i < count; ++i) {
        double check = 0;
        bool expired = false;
        double wallMs = 0;
        sample(candidate, true, i % OpBench::kInputSets, options.seed + 0xa0d17ull + i, options,
               &check, &expired, &wallMs, &hooks);
        worst = std::max(worst, check);
    }
    return worst;
}

json::Value TimingResult::toJson(double flops) const {
    json::Value t = json::Value::object();
    t["median_ms"] = candidateMedianMs;
    t["reference_median_ms"] = referenceMedianMs;
    t["speedup_vs_reference"] = ratio.median;
    json::Value ci = json::Value::array();
    ci.push(ratio.lo);
    ci.push(ratio.hi);
    t["ci95"] = ci;
    t["half_width_rel"] = ratio.relHalfWidth();
    t["pairs"] = ratio.n;
    t["tflops"] = candidateMedianMs > 0 ? flops / (candidateMedianMs * 1e-3) / 1e12 : 0.0;
    t["reference_tflops"] = referenceMedianMs > 0 ? flops / (referenceMedianMs * 1e-3) / 1e12 : 0.0;
    json::Value rs = json::Value::array();
    for (const RoundResult& r : rounds) {
        json::Value o = json::Value::object();
        o["pairs"] = r.interval.n;
        o["median_ratio"] = r.interval.median;
        json::Value rci = json::Value::array();
        rci.push(r.interval.lo);
        rci.push(r.interval.hi);
        o["ci95"] = rci;
        o["stopped_by"] = stats::toString(r.stoppedBy);
        o["seconds"] = r.seconds;
        rs.push(std::move(o));
    }
    t["rounds"] = rs;
    t["round_spread"] = roundSpread;
    t["reruns"] = reruns;
    t["stable"] = stable;
    t["discarded_pairs"] = discarded;
    json::Value m = json::Value::object();
    m["pairing"] = pairing;
    m["l2_flush_bytes"] = static_cast<uint64_t>(flushBytes);
    m["persisting_l2_reset"] = persistingResetSupported;
    m["blocking_kernel"] = true;
    m["input_sets"] = OpBench::kInputSets;
    m["inputs_refreshed_per_sample"] = inputsRefreshed;
    m["output_poisoned_per_sample"] = true;
    m["output_checked_per_sample"] = true;
    t["method"] = m;
    json::Value samples = json::Value::array();
    for (const QuadRecord& q : quads) {
        json::Value s = json::Value::object();
        s["round"] = q.round;
        s["pair"] = q.index;
        s["ratio"] = q.ratio();
        json::Value c = json::Value::array();
        c.push(q.c[0]);
        c.push(q.c[1]);
        s["candidate_ms"] = c;
        json::Value cw = json::Value::array();
        cw.push(q.cWall[0]);
        cw.push(q.cWall[1]);
        s["candidate_wall_ms"] = cw;
        json::Value rw = json::Value::array();
        rw.push(q.rWall[0]);
        rw.push(q.rWall[1]);
        s["reference_wall_ms"] = rw;
        json::Value r = json::Value::array();
        r.push(q.r[0]);
        r.push(q.r[1]);
        s["reference_ms"] = r;
        s["input_set"] = q.inputSet;
        s["sm_mhz"] = q.smMhz;
        s["mem_mhz"] = q.memMhz;
        json::Value th = json::Value::array();
        for (const std::string& n : nvml::reasonNames(q.reasons)) {
            th.push(n);
        }
        s["throttle"] = th;
        s["discarded"] = q.discarded;
        if (!q.why.empty()) {
            s["why"] = q.why;
        }
        s["output_check"] = q.checkCandidate;
        s["reference_output_check"] = q.checkReference;
        samples.push(std::move(s));
    }
    t["samples"] = samples;
    return t;
}

} // namespace kev::gpu
