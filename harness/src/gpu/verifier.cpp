// The trusted verifier: one evaluation in the order of docs/architecture.md, contract 3
// (correctness before timing, timing only of correct candidates, re-check after timing), with the
// candidate in the runner. Its result line is the evaluation's verdict; the runner's line only adds
// what it observed of itself (its launch audit, resources), which can make a verdict worse, never
// better.
#include "verifier.h"

#include "candidate.h"
#include "cuda_util.h"
#include "device_environment.h"
#include "gemm_bench.h"
#include "json.h"
#include "nvml.h"
#include "peaks.h"
#include "remote_candidate.h"
#include "roofline.h"
#include "runner_link.h"
#include "task.h"
#include "tensor_op_bench.h"
#include "timer.h"
#include "timing_claims.h"
#include "tolerance.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kev::gpu {

namespace {

using Clock = std::chrono::steady_clock;

int g_resultFd = 3;

std::string takeToken() {
    char* value = std::getenv("KEVOLVE_RESULT_TOKEN");
    if (!value) {
        return {};
    }
    std::string token = value;
    unsetenv("KEVOLVE_RESULT_TOKEN");
    return token;
}

bool parentAlive() {
    const char* expected = std::getenv("KEVOLVE_PARENT_PID");
    if (expected && *expected) {
        return getppid() == static_cast<pid_t>(std::atol(expected));
    }
    return getppid() != 1;
}

void writeLine(const json::Value& v) {
    std::string line = v.dump();
    line.push_back('\n');
    link::writeAll(g_resultFd, line, 30.0);
}

void progress(const char* stage, const std::string& message, double fraction) {
    json::Value v = json::Value::object();
    v["type"] = "progress";
    v["stage"] = stage;
    v["message"] = message;
    v["fraction"] = fraction;
    writeLine(v);
}

struct Stages {
    Clock::time_point start = Clock::now();
    Clock::time_point mark = start;
    json::Value values = json::Value::object();
    void lap(const char* name) {
        const auto now = Clock::now();
        values[name] = std::chrono::duration<double>(now - mark).count();
        mark = now;
    }
};

struct Outcome {
    std::string status = "ok";
    std::string message;
    json::Value error;
    bool suspicious = false;
};

bool haveDevice() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return count > 0;
}

std::string shapeText(const Shape& s) {
    std::string text;
    for (const auto& [name, value] : s.dims) {
        text += (text.empty() ? "" : "x") + std::to_string(value);
    }
    return text;
}

std::unique_ptr<OpBench> makeBench(const Task& task, cudaStream_t stream, cublasHandle_t cublas,
                                   const KevolveDevice& device) {
    if (task.op == "gemm") {
        return std::make_unique<GemmBench>(task, stream, cublas, device);
    }
    return std::make_unique<TensorOpBench>(task, stream, cublas, device);
}

bool harnessKernelReference(const Task& task) {
    return task.reference.kind == Reference::Kind::Cublas && task.op != "gemm" && task.op != "gemv";
}

json::Value errorJson(const tolerance::ErrorStats& e, bool withChecksum) {
    json::Value v = json::Value::object();
    v["rel_fro"] = e.relFro;
    v["max_scaled"] = e.maxScaled;
    v["nan_count"] = e.nanCount;
    v["inf_count"] = e.infCount;
    if (withChecksum) {
        v["checksum"] = e.checksum;
    }
    return v;
}

// A seed that survives every JSON reader exactly (53 bits), drawn here and never written where
// the runner can read it.
uint64_t freshSeed() {
    const uint64_t s = link::secureRandom64() & ((uint64_t{1} << 53) - 1);
    return s == 0 ? 1 : s;
}

class Verifier {
public:
    Verifier(const json::Value& job, const Task& task, link::RunnerLink& link, bool holdTiming)
        : m_job(job)
        , m_task(task)
        , m_link(link)
        , m_holdTiming(holdTiming) {}
    json::Value run();

private:
    void setUpDevice();
    void prepareShape(const Shape& shape);
    void callCandidate(int set, const char* when);
    double sampleCandidate(int set, bool audited, double* wallMs);
    json::Value trial(const char* phase, const Shape& shape, const InputCase& inputCase,
                      uint64_t seed, TrialCheck* check);
    bool validate(const char* phase, const std::vector<Shape>& shapes,
                  const std::vector<InputCase>& cases, json::Value& trials,
                  TrialCheck* first = nullptr);
    void addCheck(const std::string& name, bool ok, const std::string& evidence);
    void headlineFloor(double percentOfFloor, json::Value& result);
    void roomBelowTheRoof(const roofline::Result& r, json::Value& result) const;
    // firstAttempt: the figures of a measurement whose medians alone failed the rule, taken
    // again (null when the first measurement is the one judged).
    void timingClaims(const ClaimsVerdict& v, json::Value firstAttempt);
    void endRunner();
    json::Value environment() const;
    double replyTimeout() const { return m_kernelTimeout + 30.0; }

    const json::Value& m_job;
    const Task& m_task;
    link::RunnerLink& m_link;
    bool m_holdTiming = false;
    bool m_selfCheck = false;
    bool m_runnerUsable = true;
    int m_device = 0;
    cudaDeviceProp m_props{};
    KevolveDevice m_kdev{};
    cudaStream_t m_stream = nullptr;
    cublasHandle_t m_cublas = nullptr;
    std::optional<nvml::Device> m_nvml;
    std::string m_pciBusId;
    std::unique_ptr<OpBench> m_bench;
    std::unique_ptr<ExportedBuffers> m_exported;
    std::unique_ptr<InputGuard> m_guard;
    json::Value m_checks = json::Value::array();
    std::vector<std::string> m_violations;
    Stages m_stages;
    Outcome m_outcome;
    uint64_t m_seed = 0;
    double m_kernelTimeout = 10.0;
    double m_startTimeout = 120.0;
    int64_t m_lastLaunches = -1;
    int m_calls = 0;
    std::optional<roofline::Peaks> m_peaks;
    std::string m_peaksNote;
    json::Value m_timingCheck;
};

void Verifier::addCheck(const std::string& name, bool ok, const std::string& evidence) {
    json::Value c = json::Value::object();
    c["name"] = name;
    c["ok"] = ok;
    c["evidence"] = evidence;
    m_checks.push(std::move(c));
}

void Verifier::setUpDevice() {
    KEV_CUDA(cudaSetDevice(m_device));
    KEV_CUDA(cudaFree(nullptr));
    KEV_CUDA(cudaGetDeviceProperties(&m_props, m_device));
    char bus[64] = {0};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, m_device) == cudaSuccess) {
        m_pciBusId = bus;
        m_nvml = nvml::Device::openByPciBusId(m_pciBusId);
    }
    m_kdev.ordinal = m_device;
    m_kdev.cc_major = m_props.major;
    m_kdev.cc_minor = m_props.minor;
    m_kdev.sm_count = m_props.multiProcessorCount;
    m_kdev.max_smem_per_block_optin = static_cast<int32_t>(m_props.sharedMemPerBlockOptin);
    m_kdev.smem_per_sm = static_cast<int32_t>(m_props.sharedMemPerMultiprocessor);
    m_kdev.regs_per_sm = m_props.regsPerMultiprocessor;
    m_kdev.l2_bytes = m_props.l2CacheSize;
    KEV_CUDA(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking));
    KEV_CUDA(cublasCreate(&m_cublas));
    KEV_CUDA(cublasSetStream(m_cublas, m_stream));
    if (m_task.tensors.at(0).dtype == Dtype::F32) {
        KEV_CUDA(cublasSetMathMode(m_cublas, CUBLAS_PEDANTIC_MATH));
    }
}

// The runner closes its mappings before the bench frees anything, sizes the workspace through the
// candidate's kevolve_workspace_bytes, and maps the new buffers.
void Verifier::prepareShape(const Shape& shape) {
    m_exported->unmapAll();
    m_bench->setShape(shape, 0);
    const KevolveArgs a = m_bench->shapeArgs();
    link::LinkFailure failure;
    const std::optional<link::Reply> r =
        m_link.call("workspace " + m_exported->encode(a), link::Reply::Kind::Workspace,
                    replyTimeout(), &failure);
    if (!r) {
        throw RunnerFailure(failure);
    }
    if (r->count > (64ull << 30)) {
        throw std::runtime_error("kevolve_workspace_bytes asked for " + std::to_string(r->count) +
                                 " bytes (more than 64 GiB)");
    }
    if (r->count > 0) {
        m_bench->setShape(shape, r->count);
    }
    m_exported->exportFor(*m_bench);
}

// One validation call: every write the verifier made is on the device before the runner starts,
// and the inputs are compared with their pristine copies once the runner says it is done.
void Verifier::callCandidate(int set, const char* when) {
    m_guard->snapshot(*m_bench, set);
    KEV_CUDA(cudaStreamSynchronize(m_stream));
    link::LinkFailure failure;
    const std::optional<link::Reply> r =
        m_link.call("call " + m_exported->encode(m_bench->args(set)), link::Reply::Kind::Done,
                    replyTimeout(), &failure);
    if (!r) {
        throw RunnerFailure(failure);
    }
    ++m_calls;
    m_lastLaunches = static_cast<int64_t>(r->count);
    m_guard->verify(*m_bench, set, when);
}

double Verifier::sampleCandidate(int set, bool audited, double* wallMs) {
    // The verifier's own work for this sample (the input snapshot, refresh, poison) ends before
    // the runner's timed window opens: overlapping it would slow the candidate's samples alone.
    KEV_CUDA(cudaStreamSynchronize(m_stream));
    link::LinkFailure failure;
    const std::optional<link::Reply> r = m_link.call(
        std::string(audited ? "audit " : "sample ") + m_exported->encode(m_bench->args(set)),
        link::Reply::Kind::Sample, replyTimeout(), &failure);
    if (!r) {
        throw RunnerFailure(failure);
    }
    ++m_calls;
    *wallMs = m_link.lastWallS() * 1e3;
    return r->ms;
}

json::Value Verifier::trial(const char* phase, const Shape& shape, const InputCase& inputCase,
                            uint64_t seed, TrialCheck* check) {
    OpBench& b = *m_bench;
    b.fill(0, inputCase, seed);
    b.poison(Side::Candidate);
    b.workspace().poison(m_stream);
    // The candidate runs first: no correct output for these inputs exists anywhere yet.
    callCandidate(
        0,
        (std::string("a ") + phase + " validation call on " + inputCase.name + " inputs").c_str());
    b.poison(Side::Reference);
    b.launchReference(0, false);
    *check = b.judge(m_task.toleranceMultiple);
    // Again once the reference and the truth have read the inputs: work the candidate left
    // running past its reply (a side stream, a late launch) cannot have changed them meanwhile
    // and gone unseen.
    m_guard->verify(b, 0,
                    std::string("the reference and the truth read the inputs of a ") + phase +
                        " validation call on " + inputCase.name + " inputs");
    b.poison(Side::Reference);
    const tolerance::Verdict& verdict = check->verdict;
    json::Value t = json::Value::object();
    t["phase"] = phase;
    t["shape"] = shape.toJson();
    t["distribution"] = toString(inputCase.distribution);
    if (inputCase.edgeCase >= 0) {
        t["edge_case"] = inputCase.name;
    }
    t["seed"] = seed;
    t["candidate"] = errorJson(check->candidate, true);
    t["reference"] = errorJson(check->reference, false);
    json::Value bound = json::Value::object();
    bound["rel_fro"] = verdict.bound.relFro;
    bound["max_scaled"] = verdict.bound.maxScaled;
    t["bound"] = bound;
    t["margin"] = verdict.margin;
    t["pass"] = verdict.pass;
    if (!verdict.pass) {
        t["reason"] = verdict.reason;
    }
    return t;
}

bool Verifier::validate(const char* phase, const std::vector<Shape>& shapes,
                        const std::vector<InputCase>& cases, json::Value& trials,
                        TrialCheck* first) {
    bool allPass = true;
    for (const Shape& shape : shapes) {
        prepareShape(shape);
        for (const InputCase& c : cases.empty() ? m_bench->validationCases() : cases) {
            TrialCheck check;
            json::Value t = trial(phase, shape, c, m_seed++, &check);
            if (first && trials.size() == 0) {
                *first = check;
            }
            if (!check.verdict.pass && allPass) {
                m_outcome.status = "incorrect";
                m_outcome.message = "incorrect on " + shapeText(shape) + " (" + c.name +
                                    (c.edgeCase >= 0 ? "" : " inputs") + ", " + phase +
                                    "): " + check.verdict.reason;
                allPass = false;
            }
            trials.push(std::move(t));
        }
    }
    return allPass;
}

void Verifier::headlineFloor(double percentOfFloor, json::Value& result) {
    const std::string prefix = "correct; ";
    if (m_outcome.status == "ok" && m_outcome.message.rfind(prefix, 0) == 0) {
        char share[64];
        std::snprintf(share, sizeof share, "%.1f%% of the DRAM floor; ", percentOfFloor);
        result["message"] = prefix + share + m_outcome.message.substr(prefix.size());
    }
    if (harnessKernelReference(m_task)) {
        result["suspicious"] = !m_selfCheck && percentOfFloor > 110.0;
    }
}

// A library reference well below the roofline leaves room (roofline::ratioSuspicionStands).
void Verifier::roomBelowTheRoof(const roofline::Result& r, json::Value& result) const {
    if (!harnessKernelReference(m_task) && m_outcome.suspicious)
        result["suspicious"] = roofline::ratioSuspicionStands(r);
}

// The runner's claims judged (timing_claims.h); a violation joins the verdict.
void Verifier::timingClaims(const ClaimsVerdict& v, json::Value firstAttempt) {
    m_timingCheck = v.toJson(std::move(firstAttempt));
    if (v.problem) {
        m_violations.push_back(*v.problem);
    }
    addCheck("timing_claims", !v.problem,
             v.problem ? *v.problem
                       : "every candidate time the runner claimed fits the wall-clock time the "
                         "verifier waited for it and the roofline's floor");
}

// The runner writes its own observations to the supervisor and leaves; a runner that cannot is
// already judged by the failure that made it unusable.
void Verifier::endRunner() {
    if (!m_runnerUsable) {
        return;
    }
    link::LinkFailure failure;
    if (!m_link.call("end", link::Reply::Kind::Bye, 10.0, &failure) && m_outcome.status == "ok") {
        m_outcome.status = failure.status;
        m_outcome.message = failure.message;
    }
}

json::Value Verifier::environment() const {
    return deviceEnvironment(m_device, m_props, m_pciBusId, m_nvml ? &*m_nvml : nullptr);
}

json::Value Verifier::run() {
    m_selfCheck = m_job.find("self_check") && m_job.find("self_check")->asBool();
    m_device = m_job.find("device") ? static_cast<int>(m_job.find("device")->asInt()) : 0;
    m_seed = freshSeed();
    if (const json::Value* o = m_job.find("options")) {
        if (const json::Value* t = o->find("kernel_timeout_s")) {
            m_kernelTimeout = t->asDouble();
        }
        if (const json::Value* t = o->find("run_timeout_s")) {
            m_startTimeout = t->asDouble();
        }
    }
    json::Value result = json::Value::object();
    result["type"] = "result";
    result["role"] = "verifier";
    json::Value correctness = json::Value::object();
    json::Value trials = json::Value::array();
    json::Value timing;
    if (!haveDevice()) {
        result["status"] = "no_device";
        result["message"] = "no CUDA device";
        return result;
    }
    try {
        setUpDevice();
        // CUDA start-up and cuBLAS apart from the peaks, which come from the cache after the
        // first evaluation on a device and driver.
        m_stages.lap("device_s");
        const Shape& timed = m_task.shape;
        m_bench = makeBench(m_task, m_stream, m_cublas, m_kdev);
        if (const json::Value* ref = m_job.find("reference_library"); ref && ref->isString()) {
            // The task author's reference runs here, in the verifier, never in the runner.
            static CandidateLibrary reference;
            std::string error;
            if (!reference.load(ref->asString(), &error)) {
                throw std::runtime_error("the task's reference library: " + error);
            }
            m_bench->setReferenceLibrary(reference.launch(), reference.workspace());
        }
        m_exported = std::make_unique<ExportedBuffers>(m_link, replyTimeout());
        m_guard = std::make_unique<InputGuard>(m_stream);
        try {
            const std::string uuid = m_nvml ? m_nvml->info().uuid : m_pciBusId;
            m_peaks = devicePeaks(m_props, m_stream, uuid, nvml::driverVersion(), &m_peaksNote);
        } catch (const CudaFailure& e) {
            m_peaksNote = std::string("peaks not measured: ") + e.what();
        }
        m_stages.lap("peaks_s");
        {
            link::LinkFailure failure;
            if (!m_link.expect(link::Reply::Kind::Ready, "its start-up (loading the candidate)",
                               m_startTimeout, &failure)) {
                throw RunnerFailure(failure);
            }
        }
        // What the verifier waited for the runner (its CUDA start-up and the candidate's load run
        // in parallel with the verifier's).
        m_stages.lap("gpu_setup_s");

        progress("validate", "correctness on fresh inputs, every shape and distribution", 0.0);
        std::vector<Shape> shapes{timed};
        shapes.insert(shapes.end(), m_task.validationShapes.begin(), m_task.validationShapes.end());
        TrialCheck timedNormal;
        const bool correct = validate("pre", shapes, {}, trials, &timedNormal);
        m_stages.lap("validate_s");

        if (correct) {
            progress("time", "paired ABBA timing against the reference", 0.4);
            prepareShape(timed);
            TimingOptions opts;
            opts.rounds = m_task.timing.rounds;
            opts.budgetSeconds = m_task.timing.budgetS;
            opts.targetHalfWidth = m_task.timing.targetHalfWidth;
            opts.maxRoundSpread = m_task.timing.maxRoundSpread;
            opts.kernelTimeoutSeconds = m_kernelTimeout;
            opts.seed = m_seed;
            m_seed += 1u << 20;
            opts.checkBound =
                m_bench->prepareSamples(timedNormal, m_task.toleranceMultiple, freshSeed());
            double holdS = 0;
            if (m_holdTiming) {
                const auto h0 = Clock::now();
                std::string line;
                std::getline(std::cin, line);
                holdS = std::chrono::duration<double>(Clock::now() - h0).count();
            }
            Timer timer(*m_bench, m_stream, m_nvml ? &*m_nvml : nullptr,
                        static_cast<size_t>(m_props.l2CacheSize));
            RemoteCandidate remote;
            remote.beforeCall = [this](int set) { m_guard->snapshot(*m_bench, set); };
            remote.sample = [this](int set, bool audited, double* wallMs) {
                return sampleCandidate(set, audited, wallMs);
            };
            remote.afterCall = [this](int set) {
                m_guard->verify(*m_bench, set, "a timed sample");
            };
            timer.setRemote(&remote);
            const auto unused = [](int) {
                throw std::logic_error("the candidate runs in the runner, not in the verifier");
            };
            const auto measure = [&] {
                return timer.run(
                    unused, [this](int set) { m_bench->launchReference(set, false); }, opts);
            };
            TimingResult tr = measure();
            // Honest samples can fail the wall-clock rule's medians when the host's CPUs are
            // busy (parallel compiles delay the runner's wake-ups: 1.03 ms against 1.01 ms
            // allowed for a generated layernorm on the H200, 0.37-0.51 ms for its 21 siblings).
            // Such a failure is measured once more and the second measurement is judged; a
            // runner that hides time does so in both.
            json::Value firstAttempt;
            ClaimsVerdict claims = judgeClaims(tr, m_task, m_peaks);
            if (!m_selfCheck && !tr.failedCheck && m_outcome.status == "ok" &&
                claims.worthRemeasuring()) {
                firstAttempt = claims.attemptJson(tr.candidateMedianMs);
                // Fresh inputs: the first measurement's would let a candidate that failed it on
                // purpose replay outputs it cached by their content.
                opts.seed = freshSeed();
                tr = measure();
                claims = judgeClaims(tr, m_task, m_peaks);
            }
            timing = tr.toJson(m_bench->flops());
            timing["output_check_bound"] = opts.checkBound;
            timing["method"]["candidate_process"] = "runner";
            timing["method"]["reference_process"] = "verifier";
            if (m_holdTiming) {
                timing["held_for_profiler_s"] = holdS;
            }
            m_stages.lap("time_s");
            if (!m_selfCheck && !tr.failedCheck) {
                // Traced samples: the runner's activity audit; its outputs are checked here
                // like any other.
                AuditHooks none;
                const double worst = timer.audit(unused, 2, opts, none);
                if (!(worst <= opts.checkBound)) {
                    m_outcome.status = "incorrect";
                    m_outcome.message = "an audited sample's output failed the output check";
                }
                m_stages.lap("audit_s");
            }
            if (tr.failedCheck) {
                m_outcome.status = "incorrect";
                m_outcome.message = *tr.failedCheck;
            } else if (m_outcome.status == "ok") {
                timingClaims(claims, std::move(firstAttempt));
                progress("recheck", "correctness again on fresh inputs after timing", 0.9);
                std::vector<Shape> again{timed};
                if (shapes.size() > 1) {
                    again.push_back(shapes[1]);
                }
                const bool still = validate("post", again, {InputCase{}}, trials);
                m_stages.lap("recheck_s");
                if (still) {
                    const double s = tr.ratio.median;
                    char msg[256];
                    if (!tr.stable) {
                        m_outcome.status = "unstable";
                        std::snprintf(msg, sizeof msg,
                                      "round medians spread %.1f%% (> %.0f%%) twice: do not act "
                                      "on these numbers",
                                      100 * tr.roundSpread, 100 * opts.maxRoundSpread);
                    } else {
                        std::snprintf(msg, sizeof msg,
                                      "correct; %.3fx %s (%.4f ms vs %.4f ms), CI [%.3f, %.3f]", s,
                                      m_selfCheck ? "itself (A/A self-check)" : "reference",
                                      tr.candidateMedianMs, tr.referenceMedianMs, tr.ratio.lo,
                                      tr.ratio.hi);
                    }
                    m_outcome.message = msg;
                    m_outcome.suspicious = !m_selfCheck && s > 1.10;
                }
            }
        }
        if (!m_violations.empty() && (m_outcome.status == "ok" || m_outcome.status == "unstable")) {
            m_outcome.status = "rule_violation";
            m_outcome.message = m_violations.front();
        }
        if (!m_selfCheck && m_violations.empty() && m_lastLaunches == 0 &&
            m_outcome.status == "ok") {
            m_violations.push_back("the candidate produced its output without launching a "
                                   "kernel through the CUDA runtime's launch calls (an "
                                   "unaudited launch path, such as a library call)");
            m_outcome.status = "rule_violation";
            m_outcome.message = m_violations.back();
        }
    } catch (const InputsChanged& e) {
        m_outcome.status = "incorrect";
        m_outcome.message = e.what();
        addCheck("inputs_unchanged", false, e.what());
    } catch (const RunnerFailure& e) {
        m_runnerUsable = e.linkIntact;
        m_outcome.status = e.status;
        m_outcome.message = e.what();
        if (e.status == "rule_violation") {
            m_violations.push_back(e.what());
        } else {
            m_outcome.error = json::Value::object();
            m_outcome.error["stage"] = "run";
            m_outcome.error["message"] = e.what();
        }
    } catch (const KernelTimeout& e) {
        m_outcome.status = "timeout";
        m_outcome.message = std::string("the reference: ") + e.what();
        m_outcome.error = json::Value::object();
        m_outcome.error["stage"] = "run";
        m_outcome.error["message"] = m_outcome.message;
    } catch (const CudaFailure& e) {
        m_outcome.status = "runtime_error";
        m_outcome.message = std::string("the verifier: ") + e.what();
        m_outcome.error = json::Value::object();
        m_outcome.error["stage"] = "run";
        m_outcome.error["message"] = m_outcome.message;
        m_outcome.error["sticky"] = e.sticky;
    } catch (const std::exception& e) {
        m_outcome.status = "runtime_error";
        m_outcome.message = e.what();
        m_outcome.error = json::Value::object();
        m_outcome.error["stage"] = "run";
        m_outcome.error["message"] = e.what();
    }
    endRunner();
    if (m_guard && m_guard->checks() > 0 && m_outcome.status != "incorrect") {
        addCheck("inputs_unchanged", true,
                 std::to_string(m_guard->checks()) +
                     " comparisons (after every candidate call, and after the truth of every "
                     "validation call): every input bit for bit equal to the verifier's "
                     "pristine copy");
    }
    correctness["ok"] = m_outcome.status == "ok" || m_outcome.status == "unstable";
    if (m_bench) {
        correctness["rule"] = m_bench->ruleJson(m_task.toleranceMultiple);
    }
    correctness["trials"] = trials;
    result["status"] = m_outcome.status;
    result["message"] = m_outcome.message;
    result["suspicious"] = m_outcome.suspicious;
    if (m_props.major > 0) {
        result["environment"] = environment();
    }
    result["correctness"] = correctness;
    if (!timing.isNull()) {
        if (!m_timingCheck.isNull()) {
            timing["claims_check"] = m_timingCheck;
        }
        result["timing"] = timing;
        if (m_peaks) {
            try {
                roofline::Result r = roofline::compute(
                    m_task.flops(m_task.shape), m_task.minBytes(m_task.shape),
                    roofline::computePeakTflops(*m_peaks, m_task.tensors.at(0).dtype),
                    m_peaks->dramGbps);
                roofline::addRow(r, "candidate", timing.find("median_ms")->asDouble());
                roofline::addRow(r, "reference", timing.find("reference_median_ms")->asDouble());
                if (m_task.op != "gemm" && r.bound == "memory" && !r.rows.empty()) {
                    headlineFloor(r.rows.front().percentOfFloor, result);
                }
                roomBelowTheRoof(r, result);
                json::Value rj = roofline::toJson(r);
                rj["peaks"] = roofline::toJson(*m_peaks);
                rj["peaks_source"] = m_peaksNote;
                result["roofline"] = rj;
            } catch (const std::invalid_argument& e) {
                result["roofline"] = json::Value::object();
                result["roofline"]["error"] = e.what();
            }
        }
    }
    result["checks"] = m_checks;
    if (!m_violations.empty()) {
        json::Value v = json::Value::array();
        for (const std::string& s : m_violations) {
            v.push(s);
        }
        result["violations"] = v;
    }
    if (!m_outcome.error.isNull()) {
        result["error"] = m_outcome.error;
    }
    m_stages.values["gpu_total_s"] =
        std::chrono::duration<double>(Clock::now() - m_stages.start).count();
    result["stages"] = m_stages.values;
    return result;
}

bool parseFd(const char* text, int* fd) {
    char* end = nullptr;
    const long v = std::strtol(text, &end, 10);
    if (!end || *end || v < 0 || v > 1 << 20) {
        return false;
    }
    *fd = static_cast<int>(v);
    return true;
}

} // namespace

int verify(int argc, char** argv) {
    int runnerIn = -1, runnerOut = -1;
    bool holdTiming = false;
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--result-fd" && i + 1 < argc) {
            parseFd(argv[++i], &g_resultFd);
        } else if (a == "--runner-in" && i + 1 < argc) {
            parseFd(argv[++i], &runnerIn);
        } else if (a == "--runner-out" && i + 1 < argc) {
            parseFd(argv[++i], &runnerOut);
        } else if (a == "--hold-timing") {
            holdTiming = true;
        }
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (!parentAlive()) {
        return 1;
    }
    // Not dumpable: /proc/<verifier>/mem, environ and the like are closed to the runner (same
    // user, no CAP_SYS_PTRACE), so the seeds and truths in this process stay unreadable.
    prctl(PR_SET_DUMPABLE, 0);
    // A runner that stops reading must not kill the verifier with SIGPIPE.
    signal(SIGPIPE, SIG_IGN);
    const std::string token = takeToken();
    if (fcntl(g_resultFd, F_GETFD) == -1) {
        g_resultFd = STDOUT_FILENO;
    }
    if (runnerIn < 0 || runnerOut < 0 || fcntl(runnerIn, F_GETFD) == -1 ||
        fcntl(runnerOut, F_GETFD) == -1) {
        std::fprintf(stderr, "usage: kevolve-harness verify --runner-in FD --runner-out FD "
                             "[--result-fd N] [--hold-timing] < JOB (one JSON line)\n");
        return 2;
    }
    json::Value result;
    try {
        // The job comes on stdin, never from a file the runner could read or rewrite.
        std::string line;
        if (!std::getline(std::cin, line)) {
            throw std::runtime_error("no job on stdin");
        }
        const json::Value job = json::parse(line);
        const json::Value* taskJson = job.find("task");
        if (!taskJson) {
            throw std::runtime_error("job has no task");
        }
        const Task task = parseTask(*taskJson);
        link::RunnerLink runner(runnerIn, runnerOut);
        // Never destroyed: freeing device memory would wait for a runner's kernel that never ends.
        auto* verifier = new Verifier(job, task, runner, holdTiming);
        result = verifier->run();
    } catch (const std::exception& e) {
        result = json::Value::object();
        result["type"] = "result";
        result["role"] = "verifier";
        result["status"] = "runtime_error";
        result["message"] = std::string("the verifier failed: ") + e.what();
    }
    result["token"] = token;
    writeLine(result);
    _exit(0);
}

} // namespace kev::gpu
