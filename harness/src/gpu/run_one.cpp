// The untrusted GPU child, `run-one`: the runner of an evaluation (runner.cpp, driven by the
// verifier over --peer-in/--peer-out), or with --profile the counters of one candidate and one
// reference launch. Either way it writes one JSON result line on the result descriptor, and
// neither decides a verdict (THREAT_MODEL.md).
#include "run_one.h"

#include "runner.h"
#include "runner_link.h"

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
// --peer-in/--peer-out: the runner's pipe from and to the verifier.
int g_peerIn = -1;
int g_peerOut = -1;

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

bool haveDevice() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return count > 0;
}

// `run-one --profile`: counters of one candidate and one reference launch in this process. Never a
// verdict: the profile only adds metrics to a report whose status the verifier decided.
class Evaluation {
public:
    Evaluation(const json::Value& job, const Task& task)
        : m_job(job)
        , m_task(task) {}
    json::Value profile();

private:
    void setUpDevice();
    void loadCandidate();
    // loadCandidate in two steps: the sandbox and the task's reference, then the candidate.
    void installSandboxAndReference();
    void loadCandidateLibrary();
    void launchCandidate(int set);
    void syncCandidate(const char* what);
    uint64_t workspaceFor(const Shape& shape);
    void addCheck(const std::string& name, bool ok, const std::string& evidence);

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
    double m_kernelTimeout = 10.0;
    int m_launchCount = 0;
    cudaEvent_t m_done = nullptr;
    std::vector<hooks::LaunchRecord> m_lastLaunches;
};

std::unique_ptr<OpBench> makeBench(const Task& task, cudaStream_t stream, cublasHandle_t cublas,
                                   const KevolveDevice& device) {
    if (task.op == "gemm") {
        return std::make_unique<GemmBench>(task, stream, cublas, device);
    }
    return std::make_unique<TensorOpBench>(task, stream, cublas, device);
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
            m_bench->fill(0, InputCase{}, link::secureRandom64() & ((uint64_t{1} << 53) - 1));
            m_bench->poison(Side::Reference);
            KEV_CUDA(cudaStreamSynchronize(m_stream));
            // Unprofiled first: this child loads modules lazily (supervisor.cpp), and a module
            // load inside the profiled range would be counted as the reference's.
            reference();
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
        // Any inputs do for counters; drawn here, so nothing the candidate reads predicts them.
        m_bench->fill(0, InputCase{}, link::secureRandom64() & ((uint64_t{1} << 53) - 1));
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
            candidate(); // unprofiled first, like the reference's
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
        } else if (a == "--peer-in" && i + 1 < argc) {
            g_peerIn = std::atoi(argv[++i]);
        } else if (a == "--peer-out" && i + 1 < argc) {
            g_peerOut = std::atoi(argv[++i]);
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
    if (jobPath.empty() || (!g_profile && (g_peerIn < 0 || g_peerOut < 0))) {
        std::fprintf(stderr, "usage: kevolve-harness run-one --job JOB.json [--result-fd N] "
                             "(--peer-in FD --peer-out FD | --profile ...)\n");
        return 2;
    }
    if (!g_profile) {
        signal(SIGPIPE, SIG_IGN);
        json::Value job;
        try {
            job = json::parse(readFile(jobPath));
        } catch (const std::exception& e) {
            job = json::Value::object();
        }
        RunnerOptions options;
        options.peerIn = g_peerIn;
        options.peerOut = g_peerOut;
        options.resultFd = g_resultFd;
        options.token = g_token;
        options.noCupti = g_noCupti;
        runRunner(job, options);
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
        result = eval->profile();
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
