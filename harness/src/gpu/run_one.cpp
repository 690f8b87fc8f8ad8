// The GPU child: one evaluation of one candidate, in the order of DESIGN.md §3 (correctness before
// timing, timing only of correct candidates, re-check after timing). Everything it measures goes
// out as one JSON result line on the result descriptor; the supervisor merges it into the report.
#include "run_one.h"

#include "candidate.h"
#include "cuda_util.h"
#include "cupti_activity.h"
#include "gemm_bench.h"
#include "json.h"
#include "launch_hooks.h"
#include "metrics.h"
#include "metrics_kernels.h"
#include "nvml.h"
#include "peaks.h"
#include "profiler.h"
#include "roofline.h"
#include "sandbox.h"
#include "task.h"
#include "tensor_op_bench.h"
#include "timer.h"
#include "tolerance.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace kev::gpu {

namespace {

using Clock = std::chrono::steady_clock;

int g_resultFd = 3;
// The supervisor's token for this child: echoed in the result line so that a line the candidate
// writes on the result descriptor is recognised as forged.
std::string g_token;

// Takes the token out of the environment, overwriting the original bytes too: the kernel exposes
// the initial environment block in /proc/self/environ, which unsetenv alone leaves intact.
std::string takeToken() {
    char* value = std::getenv("KEVOLVE_RESULT_TOKEN");
    if (!value) {
        return {};
    }
    std::string token = value;
    std::memset(value, 'x', token.size());
    unsetenv("KEVOLVE_RESULT_TOKEN");
    return token;
}

// Whether the process that started us is still there: $KEVOLVE_PARENT_PID names it (the
// supervisor may itself be PID 1 in a container); without it, adoption by init is the sign.
bool parentAlive() {
    const char* expected = std::getenv("KEVOLVE_PARENT_PID");
    if (expected && *expected) {
        return getppid() == static_cast<pid_t>(std::atol(expected));
    }
    return getppid() != 1;
}
bool g_resultWritten = false;
// run-one --profile: counters of one candidate and one reference launch instead of an evaluation;
// --profile-only: the same launches without the sandbox; --no-cupti: CUPTI untouched, so that an
// external profiler (Nsight Compute) can attach to these launches.
bool g_profile = false;
bool g_profileOnly = false;
bool g_noCupti = false;
// --wait-go: start CUDA and the profiler, then wait for "go" (or "go candidate-only") on stdin, so
// that the supervisor can start this child while the evaluation runs; --candidate-only: the
// reference's counters are cached, profile the candidate alone.
bool g_waitGo = false;
bool g_candidateOnly = false;
// --hold-timing: a profiling child started next to this one may still be starting CUDA; wait for
// the supervisor's line on stdin (sent once that child is ready or gone) before the first timed
// sample, so that no other process initialises the GPU while this one times. End of input also
// releases the hold.
bool g_holdTiming = false;

void writeLine(const json::Value& v) {
    std::string line = v.dump();
    line.push_back('\n');
    const char* p = line.data();
    size_t left = line.size();
    while (left > 0) {
        const ssize_t n = ::write(g_resultFd, p, left);
        if (n <= 0) {
            return;
        }
        p += n;
        left -= static_cast<size_t>(n);
    }
}

void progress(const char* stage, const std::string& message, double fraction) {
    json::Value v = json::Value::object();
    v["type"] = "progress";
    v["stage"] = stage;
    v["message"] = message;
    v["fraction"] = fraction;
    writeLine(v);
}

// exit() from the candidate's host code still runs atexit handlers: leave the evidence.
void onExit() {
    const char* activity = candidateActivity();
    if (!activity || g_resultWritten) {
        return;
    }
    json::Value v = json::Value::object();
    v["type"] = "result";
    v["status"] = "runtime_error";
    v["message"] = std::string("the candidate ended the process (exit) during ") + activity;
    json::Value err = json::Value::object();
    err["stage"] = "run";
    err["message"] = v["message"];
    v["error"] = err;
    v["token"] = g_token;
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

// Whether the runtime sees any CUDA device; the failed query's error is cleared.
bool haveDevice() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return count > 0;
}

class Evaluation {
public:
    Evaluation(const json::Value& job, const Task& task)
        : m_job(job)
        , m_task(task) {}
    json::Value run();
    json::Value profile();

private:
    void setUpDevice();
    void loadCandidate();
    // loadCandidate in two steps: the sandbox and the task's reference, then the candidate.
    void installSandboxAndReference();
    void loadCandidateLibrary();
    void launchCandidate(int set);
    void syncCandidate(const char* what);
    json::Value trial(const char* phase, const Shape& shape, const InputCase& inputCase,
                      uint64_t seed, TrialCheck* check);
    // Every shape with every case; `cases` empty means the bench's validation cases. The first
    // trial's check (the timed shape's normal inputs) goes to *first when given.
    bool validate(const char* phase, const std::vector<Shape>& shapes,
                  const std::vector<InputCase>& cases, json::Value& trials,
                  TrialCheck* first = nullptr);
    uint64_t workspaceFor(const Shape& shape);
    void addCheck(const std::string& name, bool ok, const std::string& evidence);
    void headlineFloor(double percentOfFloor, json::Value& result);
    json::Value environment() const;

    const json::Value& m_job;
    const Task& m_task;
    bool m_selfCheck = false;
    int m_device = 0;
    cudaDeviceProp m_props{};
    KevolveDevice m_kdev{};
    cudaStream_t m_stream = nullptr;
    cublasHandle_t m_cublas = nullptr;
    std::optional<nvml::Device> m_nvml;
    std::string m_pciBusId;
    CandidateLibrary m_library;
    CandidateLibrary m_reference; // the task's own reference, when it names a .cu file
    std::unique_ptr<OpBench> m_bench;
    std::vector<std::string> m_violations;
    json::Value m_checks = json::Value::array();
    Stages m_stages;
    Outcome m_outcome;
    uint64_t m_seed = 0;
    double m_kernelTimeout = 10.0;
    int m_launchCount = 0;
    cudaEvent_t m_done = nullptr;
    std::vector<hooks::LaunchRecord> m_lastLaunches;
    std::optional<activity::LaunchAudit> m_audit;
    std::optional<roofline::Peaks> m_peaks;
    std::string m_peaksNote;
};

// "1000x1064x904": the shape's dimensions in the op's order.
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

// The op's reference is one of the harness's own untuned kernels (op_references.h), not a library
// or the task's file.
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

void Evaluation::addCheck(const std::string& name, bool ok, const std::string& evidence) {
    json::Value c = json::Value::object();
    c["name"] = name;
    c["ok"] = ok;
    c["evidence"] = evidence;
    m_checks.push(std::move(c));
}

void Evaluation::setUpDevice() {
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
    // A non-blocking stream: work a candidate puts on the legacy default stream is not ordered
    // with the harness's, and the launch audit names it.
    KEV_CUDA(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking));
    KEV_CUDA(cudaEventCreateWithFlags(&m_done, cudaEventDisableTiming));
    KEV_CUDA(cublasCreate(&m_cublas));
    KEV_CUDA(cublasSetStream(m_cublas, m_stream));
    // GEMM and GEMV in f32 with pedantic math: no TF32.
    if (m_task.tensors.at(0).dtype == Dtype::F32) {
        KEV_CUDA(cublasSetMathMode(m_cublas, CUBLAS_PEDANTIC_MATH));
    }
}

void Evaluation::loadCandidate() {
    installSandboxAndReference();
    if (!m_selfCheck) {
        loadCandidateLibrary();
    }
}

void Evaluation::installSandboxAndReference() {
    // The candidate may write only beneath the scratch folder the supervisor made for it.
    sandbox::Options sandboxOptions;
    if (const json::Value* scratch = m_job.find("scratch"); scratch && scratch->isString()) {
        sandboxOptions.scratchDir = scratch->asString();
    }
    if (g_profile) {
        // The driver may reserve performance counters to CAP_SYS_ADMIN (the profile never decides
        // a verdict); every other capability goes.
        sandboxOptions.keepCapability = CAP_SYS_ADMIN;
    }
    addCheck("sandbox", true,
             g_profileOnly ? std::string("no sandbox: run-one --profile-only")
                           : sandbox::install(sandboxOptions).evidence());
    std::string error;
    if (const json::Value* ref = m_job.find("reference_library"); ref && ref->isString()) {
        if (!m_reference.load(ref->asString(), &error)) {
            throw std::runtime_error("the task's reference library: " + error);
        }
        m_bench->setReferenceLibrary(m_reference.launch(), m_reference.workspace());
    }
}

void Evaluation::loadCandidateLibrary() {
    std::string error;
    enterCandidate("library load (static initialisers)");
    const bool ok = m_library.load(m_job.find("library")->asString(), &error);
    leaveCandidate();
    if (!ok) {
        throw std::runtime_error(error);
    }
}

uint64_t Evaluation::workspaceFor(const Shape& shape) {
    if (m_selfCheck || !m_library.workspace()) {
        return 0;
    }
    m_bench->setShape(shape, 0);
    const KevolveArgs a = m_bench->shapeArgs();
    enterCandidate("kevolve_workspace_bytes");
    const uint64_t bytes = m_library.workspace()(&a);
    leaveCandidate();
    if (bytes > (64ull << 30)) {
        throw std::runtime_error("kevolve_workspace_bytes asked for " + std::to_string(bytes) +
                                 " bytes (more than 64 GiB)");
    }
    return bytes;
}

struct RuleViolation : std::runtime_error {
    using std::runtime_error::runtime_error;
};

void Evaluation::launchCandidate(int set) {
    if (m_selfCheck) {
        m_bench->launchReference(set, true);
        return;
    }
    const KevolveArgs& a = m_bench->args(set);
    hooks::arm(m_stream);
    enterCandidate("kevolve_launch");
    const int rc = m_library.launch()(&a, m_stream);
    leaveCandidate();
    const std::vector<hooks::LaunchRecord> records = hooks::disarm();
    m_launchCount = static_cast<int>(records.size());
    m_lastLaunches = records;
    const std::vector<std::string> bad = hooks::violations(records, m_stream);
    if (!bad.empty()) {
        m_violations.insert(m_violations.end(), bad.begin(), bad.end());
        throw RuleViolation(bad.front());
    }
    if (rc != 0) {
        throw std::runtime_error("kevolve_launch returned " + std::to_string(rc));
    }
    const cudaError_t last = cudaGetLastError();
    if (last != cudaSuccess) {
        KEV_CUDA(last);
    }
}

void Evaluation::syncCandidate(const char* what) {
    KEV_CUDA(cudaEventRecord(m_done, m_stream));
    waitFor(m_done, m_kernelTimeout, what);
}

json::Value Evaluation::trial(const char* phase, const Shape& shape, const InputCase& inputCase,
                              uint64_t seed, TrialCheck* check) {
    OpBench& b = *m_bench;
    b.fill(0, inputCase, seed);
    b.poison(Side::Candidate);
    b.workspace().poison(m_stream);
    // The candidate runs first: no correct output for these inputs exists anywhere yet.
    launchCandidate(0);
    syncCandidate("the candidate");
    b.poison(Side::Reference);
    b.launchReference(0, false);
    *check = b.judge(m_task.toleranceMultiple);
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

bool Evaluation::validate(const char* phase, const std::vector<Shape>& shapes,
                          const std::vector<InputCase>& cases, json::Value& trials,
                          TrialCheck* first) {
    bool allPass = true;
    for (const Shape& shape : shapes) {
        m_bench->setShape(shape, workspaceFor(shape));
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

// Memory-bound ops beyond GEMM lead with the share of the DRAM floor they reach (issue 9). Against
// the harness's own untuned kernels a large speed-up is expected: there only running faster than
// the floor allows is suspicious.
void Evaluation::headlineFloor(double percentOfFloor, json::Value& result) {
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

json::Value Evaluation::environment() const {
    json::Value env = json::Value::object();
    json::Value gpu = json::Value::object();
    gpu["index"] = m_device;
    gpu["name"] = m_props.name;
    char cc[16];
    std::snprintf(cc, sizeof cc, "%d.%d", m_props.major, m_props.minor);
    gpu["cc"] = cc;
    gpu["sm_count"] = m_props.multiProcessorCount;
    gpu["l2_bytes"] = m_props.l2CacheSize;
    gpu["memory_bytes"] = static_cast<uint64_t>(m_props.totalGlobalMem);
    gpu["pci_bus_id"] = m_pciBusId;
    gpu["smem_per_block_optin"] = static_cast<uint64_t>(m_props.sharedMemPerBlockOptin);
    if (m_nvml) {
        const nvml::DeviceInfo info = m_nvml->info();
        gpu["uuid"] = info.uuid;
        json::Value clocks = json::Value::object();
        clocks["sm"] = info.smMhz;
        clocks["mem"] = info.memMhz;
        clocks["sm_max"] = info.smMaxMhz;
        clocks["mem_max"] = info.memMaxMhz;
        gpu["clocks_mhz"] = clocks;
        gpu["power_limit_w"] = info.powerLimitW;
        gpu["temperature_c"] = info.temperatureC;
    }
    env["gpu"] = gpu;
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    env["cuda_driver_version"] = driver;
    env["cuda_runtime_version"] = runtime;
    int major = 0, minor = 0, patch = 0;
    cublasGetProperty(MAJOR_VERSION, &major);
    cublasGetProperty(MINOR_VERSION, &minor);
    cublasGetProperty(PATCH_LEVEL, &patch);
    env["cublas_version"] = major * 10000 + minor * 100 + patch;
    env["driver_version"] = nvml::driverVersion();
    return env;
}

json::Value Evaluation::run() {
    m_selfCheck = m_job.find("self_check") && m_job.find("self_check")->asBool();
    m_device = m_job.find("device") ? static_cast<int>(m_job.find("device")->asInt()) : 0;
    m_seed = m_job.find("seed") ? static_cast<uint64_t>(m_job.find("seed")->asInt()) : 1;
    if (const json::Value* o = m_job.find("options")) {
        if (const json::Value* t = o->find("kernel_timeout_s")) {
            m_kernelTimeout = t->asDouble();
        }
    }
    json::Value result = json::Value::object();
    result["type"] = "result";
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
        const Shape& timed = m_task.shape;
        m_bench = makeBench(m_task, m_stream, m_cublas, m_kdev);
        try {
            const std::string uuid = m_nvml ? m_nvml->info().uuid : m_pciBusId;
            m_peaks = devicePeaks(m_props, m_stream, uuid, nvml::driverVersion(), &m_peaksNote);
        } catch (const CudaFailure& e) {
            m_peaksNote = std::string("peaks not measured: ") + e.what();
        }
        m_stages.lap("peaks_s");
        if (!m_selfCheck && !g_noCupti) {
            m_audit.emplace(m_stream);
            std::string why;
            if (!m_audit->prepare(&why)) {
                addCheck("activity_audit", true, "not run: " + why);
            }
        }
        loadCandidate();
        if (m_audit && m_audit->available()) {
            m_audit->setKernels(
                activity::kernelsRegisteredBy(reinterpret_cast<const void*>(m_library.launch())),
                activity::kernelsRegisteredBy(reinterpret_cast<const void*>(&launchAuditMarker)));
        }
        m_stages.lap("gpu_setup_s");

        progress("validate", "correctness on fresh inputs, every shape and distribution", 0.0);
        std::vector<Shape> shapes{timed};
        shapes.insert(shapes.end(), m_task.validationShapes.begin(), m_task.validationShapes.end());
        TrialCheck timedNormal;
        const bool correct = validate("pre", shapes, {}, trials, &timedNormal);
        m_stages.lap("validate_s");

        if (correct) {
            progress("time", "paired ABBA timing against the reference", 0.4);
            m_bench->setShape(timed, workspaceFor(timed));
            TimingOptions opts;
            opts.rounds = m_task.timing.rounds;
            opts.budgetSeconds = m_task.timing.budgetS;
            opts.targetHalfWidth = m_task.timing.targetHalfWidth;
            opts.maxRoundSpread = m_task.timing.maxRoundSpread;
            opts.kernelTimeoutSeconds = m_kernelTimeout;
            // The per-sample check allows a few times the validated error of the timed shape.
            opts.seed = m_seed;
            m_seed += 1u << 20;
            opts.checkBound =
                m_bench->prepareSamples(timedNormal, m_task.toleranceMultiple, opts.seed ^ 0x5e7u);
            double holdS = 0;
            if (g_holdTiming) {
                const auto h0 = Clock::now();
                std::string line;
                std::getline(std::cin, line);
                holdS = std::chrono::duration<double>(Clock::now() - h0).count();
            }
            Timer timer(*m_bench, m_stream, m_nvml ? &*m_nvml : nullptr,
                        static_cast<size_t>(m_props.l2CacheSize));
            const TimingResult tr =
                timer.run([this](int set) { launchCandidate(set); },
                          [this](int set) { m_bench->launchReference(set, false); }, opts);
            timing = tr.toJson(m_bench->flops());
            timing["output_check_bound"] = opts.checkBound;
            if (g_holdTiming) {
                timing["held_for_profiler_s"] = holdS;
            }
            m_stages.lap("time_s");
            if (m_audit && m_audit->available() && !tr.failedCheck) {
                progress("audit", "traced candidate samples (CUPTI activity)", 0.85);
                activity::LaunchAudit& audit = *m_audit;
                AuditHooks hooks;
                hooks.begin = [&audit] { audit.begin(); };
                hooks.afterLaunch = [&audit] { audit.afterLaunch(); };
                hooks.end = [&audit, this](double ms) { audit.end(ms, m_kernelTimeout); };
                timer.audit([this](int set) { launchCandidate(set); }, 2, opts, hooks);
                const std::vector<std::string> bad = audit.violations();
                m_violations.insert(m_violations.end(), bad.begin(), bad.end());
                addCheck("activity_audit", bad.empty(),
                         bad.empty() ? "2 traced samples: only the candidate's kernels, on the "
                                       "harness stream, launched within kevolve_launch; no copy "
                                       "or set"
                                     : bad.front());
                m_stages.lap("audit_s");
            }
            if (tr.failedCheck) {
                m_outcome.status = "incorrect";
                m_outcome.message = *tr.failedCheck;
            } else {
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
        if (!m_selfCheck) {
            const std::vector<hooks::LaunchRecord> stray = hooks::strayLaunches();
            if (!stray.empty()) {
                m_violations.push_back(std::to_string(stray.size()) +
                                       " launch(es) from a thread the harness did not start");
                m_outcome.status = "rule_violation";
                m_outcome.message = m_violations.back();
            }
            if (!m_violations.empty() && m_outcome.status == "ok") {
                m_outcome.status = "rule_violation";
                m_outcome.message = m_violations.front();
            }
            if (m_violations.empty() && m_launchCount == 0 && m_outcome.status == "ok") {
                // Correct output with no launch through the hooks: the work went through a path
                // the audit cannot see (a library's own launcher, the driver API).
                m_violations.push_back("the candidate produced its output without launching a "
                                       "kernel through the CUDA runtime's launch calls (an "
                                       "unaudited launch path, such as a library call)");
                m_outcome.status = "rule_violation";
                m_outcome.message = m_violations.back();
            }
            addCheck("launch_audit", m_violations.empty(),
                     m_violations.empty()
                         ? std::to_string(m_launchCount) +
                               " launch(es) per call, all on the harness stream from the harness "
                               "thread, no L2 access-policy window"
                         : m_violations.front());
        }
    } catch (const RuleViolation& e) {
        m_outcome.status = "rule_violation";
        m_outcome.message = e.what();
        addCheck("launch_audit", false, e.what());
    } catch (const KernelTimeout& e) {
        m_outcome.status = "timeout";
        m_outcome.message = e.what();
        m_outcome.error = json::Value::object();
        m_outcome.error["stage"] = "run";
        m_outcome.error["message"] = e.what();
    } catch (const CudaFailure& e) {
        m_outcome.status = "runtime_error";
        m_outcome.message = e.what();
        m_outcome.error = json::Value::object();
        m_outcome.error["stage"] = "run";
        m_outcome.error["message"] = e.what();
        m_outcome.error["sticky"] = e.sticky;
    } catch (const std::exception& e) {
        m_outcome.status = "runtime_error";
        m_outcome.message = e.what();
        m_outcome.error = json::Value::object();
        m_outcome.error["stage"] = "run";
        m_outcome.error["message"] = e.what();
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
    if (!m_lastLaunches.empty()) {
        result["resources"] = profiler::staticResources(m_lastLaunches, m_props);
    }
    if (m_audit) {
        result["audit"] = m_audit->toJson();
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

json::Value Evaluation::profile() {
    json::Value result = json::Value::object();
    result["type"] = "result";
    if (!haveDevice()) {
        result["status"] = "no_device";
        result["message"] = "no CUDA device";
        return result;
    }
    m_device = m_job.find("device") ? static_cast<int>(m_job.find("device")->asInt()) : 0;
    json::Value timings = json::Value::object();
    const auto t0 = Clock::now();
    auto lap = [&timings, t = t0](const char* name) mutable {
        const auto now = Clock::now();
        timings[name] = std::chrono::duration<double>(now - t).count();
        t = now;
    };
    try {
        const metrics::ProfileOptions options = metrics::parseOptions(m_job.find("options"));
        setUpDevice();
        lap("setup_s");
        profiler::RangeProfiler prof;
        std::string why;
        const bool ready = !g_noCupti && prof.prepare(m_device, options.metrics, &why);
        lap("prepare_s");
        bool profileReference = !g_candidateOnly;
        if (g_waitGo) {
            // Ready: the evaluation next to this child may start timing.
            json::Value readyLine = json::Value::object();
            readyLine["type"] = "ready";
            writeLine(readyLine);
            std::string go;
            if (!std::getline(std::cin, go) || (go != "go" && go != "go candidate-only")) {
                std::_Exit(0); // the evaluation needs no profile
            }
            profileReference = go == "go";
            lap("wait_s");
        }
        m_bench = makeBench(m_task, m_stream, m_cublas, m_kdev);
        installSandboxAndReference();
        const auto reference = [this] {
            m_bench->launchReference(0, false);
            KEV_CUDA(cudaStreamSynchronize(m_stream));
        };
        // The reference's counters come first, on a line written before the candidate's library
        // is loaded: nothing of the candidate has run, so the supervisor may cache them
        // (THREAT_MODEL.md, class 6). The line is written whenever they were asked for, so that
        // no line of the candidate's can take its place.
        std::vector<profiler::Range> r;
        std::string referenceError;
        const bool referenceFirst = ready && !g_noCupti && profileReference;
        if (referenceFirst) {
            m_bench->setShape(m_task.shape, 0);
            m_bench->fill(0, InputCase{}, m_seed);
            m_bench->poison(Side::Reference);
            KEV_CUDA(cudaStreamSynchronize(m_stream));
            r = prof.profile(reference, &referenceError);
            lap("reference_s");
            json::Value line = json::Value::object();
            line["type"] = "reference_metrics";
            line["metrics"] = profiler::metricsJson(prof, {}, "", r, referenceError);
            writeLine(line);
        }
        if (!m_selfCheck) {
            loadCandidateLibrary();
        }
        m_bench->setShape(m_task.shape, workspaceFor(m_task.shape));
        m_bench->fill(0, InputCase{}, m_seed);
        m_bench->poison(Side::Candidate);
        m_bench->poison(Side::Reference);
        KEV_CUDA(cudaStreamSynchronize(m_stream));
        const auto candidate = [this] {
            launchCandidate(0);
            syncCandidate("the candidate");
        };
        if (g_noCupti) {
            candidate();
            reference();
            result["metrics"] = profiler::metricsUnavailable(
                "run-one --no-cupti: CUPTI left to an external profiler");
        } else if (!ready) {
            candidate();
            reference();
            result["metrics"] = profiler::metricsUnavailable(why);
        } else {
            std::string candidateError;
            const std::vector<profiler::Range> c = prof.profile(candidate, &candidateError);
            lap("candidate_s");
            result["metrics"] = profiler::metricsJson(prof, c, candidateError, r, referenceError);
        }
        result["status"] = "ok";
        result["message"] = "profiled";
        result["resources"] = profiler::staticResources(m_lastLaunches, m_props);
    } catch (const std::exception& e) {
        result["status"] = "runtime_error";
        result["message"] = e.what();
        if (!result.find("metrics")) {
            result["metrics"] = profiler::metricsUnavailable(e.what());
        }
    }
    timings["total_s"] = std::chrono::duration<double>(Clock::now() - t0).count();
    if (json::Value* m = result.find("metrics")) {
        (*m)["profile_s"] = timings;
    }
    result["checks"] = m_checks;
    return result;
}

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw std::runtime_error("cannot read " + path);
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

} // namespace

int runOne(int argc, char** argv) {
    std::string jobPath;
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--job" && i + 1 < argc) {
            jobPath = argv[++i];
        } else if (a == "--result-fd" && i + 1 < argc) {
            g_resultFd = std::atoi(argv[++i]);
        } else if (a == "--profile") {
            g_profile = true;
        } else if (a == "--profile-only") {
            g_profile = true;
            g_profileOnly = true;
        } else if (a == "--wait-go") {
            g_waitGo = true;
        } else if (a == "--hold-timing") {
            g_holdTiming = true;
        } else if (a == "--candidate-only") {
            g_candidateOnly = true;
        } else if (a == "--no-cupti") {
            g_noCupti = true;
        }
    }
    // Die with the supervisor, even if it is killed without a chance to clean up.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (!parentAlive()) {
        return 1;
    }
    g_token = takeToken();
    if (fcntl(g_resultFd, F_GETFD) == -1) {
        g_resultFd = STDOUT_FILENO;
    }
    if (jobPath.empty()) {
        std::fprintf(stderr, "usage: kevolve-harness run-one --job JOB.json [--result-fd N]\n");
        return 2;
    }
    std::atexit(onExit);
    json::Value result;
    try {
        const json::Value job = json::parse(readFile(jobPath));
        const json::Value* taskJson = job.find("task");
        if (!taskJson) {
            throw std::runtime_error("job has no task");
        }
        const Task task = parseTask(*taskJson);
        // The evaluation is never destroyed: freeing device memory waits for the device, and a
        // kernel that never ends would then keep the result from being written.
        auto* eval = new Evaluation(job, task);
        result = g_profile ? eval->profile() : eval->run();
    } catch (const std::exception& e) {
        result = json::Value::object();
        result["type"] = "result";
        result["status"] = "runtime_error";
        result["message"] = std::string("harness child failed: ") + e.what();
    }
    result["token"] = g_token;
    writeLine(result);
    g_resultWritten = true;
    // Process exit tears the context down (and with it any kernel still running) without the
    // runtime's own teardown, which would also wait for the device.
    _exit(0);
}

} // namespace kev::gpu
