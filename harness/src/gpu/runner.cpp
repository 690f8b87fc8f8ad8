#include "runner.h"

#include "candidate.h"
#include "cuda_util.h"
#include "cupti_activity.h"
#include "device_kernels.h"
#include "launch_hooks.h"
#include "op_references.h"
#include "profiler.h"
#include "metrics_kernels.h"
#include "runner_link.h"
#include "sandbox.h"
#include "task.h"
#include "timer.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kev::gpu {

namespace {

int g_peerOut = -1;
int g_resultFd = 3;
std::string g_token;
bool g_ended = false;

struct RuleViolation : std::runtime_error {
    using std::runtime_error::runtime_error;
};

void reply(const link::Reply& r) {
    link::writeAll(g_peerOut, link::formatReply(r) + "\n", 30.0);
}

void replyFail(const std::string& status, const std::string& message, bool sticky = false) {
    link::Reply r;
    r.kind = link::Reply::Kind::Fail;
    r.status = status;
    r.message = message;
    r.sticky = sticky;
    reply(r);
}

// exit() from the candidate's host code still runs atexit handlers: tell the verifier why the
// runner is going away.
void onExit() {
    const char* activity = candidateActivity();
    if (!activity || g_ended) {
        return;
    }
    replyFail("runtime_error",
              std::string("the candidate ended the process (exit) during ") + activity);
}

cudaDataType_t cudaType(int dtype) {
    switch (dtype) {
    case KEVOLVE_F16:
        return CUDA_R_16F;
    case KEVOLVE_BF16:
        return CUDA_R_16BF;
    default:
        return CUDA_R_32F;
    }
}

class Runner {
public:
    Runner(const json::Value& job, const RunnerOptions& options)
        : m_job(job)
        , m_options(options) {}
    [[noreturn]] void run();

private:
    void setUp();
    void handle(const std::string& line);
    KevolveArgs decode(const std::string& hex, bool withData);
    void launch(const KevolveArgs& a);
    void launchReference(const KevolveArgs& a);
    double timedCall(const KevolveArgs& a, bool audited);
    [[noreturn]] void end();
    void addCheck(const std::string& name, bool ok, const std::string& evidence);

    struct Mapping {
        void* base = nullptr;
        char* data = nullptr;
        uint64_t bytes = 0;
    };

    const json::Value& m_job;
    RunnerOptions m_options;
    Task m_task;
    bool m_selfCheck = false;
    double m_kernelTimeout = 10.0;
    cudaDeviceProp m_props{};
    cudaStream_t m_stream = nullptr;
    cudaEvent_t m_start = nullptr, m_stop = nullptr;
    volatile int* m_flag = nullptr;
    int* m_flagDevice = nullptr;
    bool m_persistingReset = true;
    void* m_flush = nullptr;
    size_t m_flushBytes = 0;
    uint64_t m_flushCounter = 0;
    unsigned* m_sink = nullptr;
    cublasHandle_t m_cublas = nullptr;
    CandidateLibrary m_library;
    bool m_useLibrary = false;
    std::map<uint64_t, Mapping> m_mappings;
    std::optional<activity::LaunchAudit> m_audit;
    std::vector<hooks::LaunchRecord> m_lastLaunches;
    std::vector<std::string> m_violations;
    json::Value m_checks = json::Value::array();
    int m_calls = 0;
    int m_audited = 0;
    std::string m_startError;
};

void Runner::addCheck(const std::string& name, bool ok, const std::string& evidence) {
    json::Value c = json::Value::object();
    c["name"] = name;
    c["ok"] = ok;
    c["evidence"] = evidence;
    m_checks.push(std::move(c));
}

void Runner::setUp() {
    const json::Value* task = m_job.isObject() ? m_job.find("task") : nullptr;
    if (!task) {
        throw std::runtime_error("the job has no task");
    }
    m_task = parseTask(*task);
    m_selfCheck = m_job.find("self_check") && m_job.find("self_check")->asBool();
    if (const json::Value* o = m_job.find("options")) {
        if (const json::Value* t = o->find("kernel_timeout_s")) {
            m_kernelTimeout = t->asDouble();
        }
    }
    const int device = m_job.find("device") ? static_cast<int>(m_job.find("device")->asInt()) : 0;
    KEV_CUDA(cudaSetDevice(device));
    KEV_CUDA(cudaFree(nullptr));
    KEV_CUDA(cudaGetDeviceProperties(&m_props, device));
    KEV_CUDA(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking));
    KEV_CUDA(cudaEventCreate(&m_start));
    KEV_CUDA(cudaEventCreate(&m_stop));
    void* host = nullptr;
    KEV_CUDA(cudaHostAlloc(&host, 2 * sizeof(int), cudaHostAllocMapped));
    m_flag = static_cast<volatile int*>(host);
    void* dev = nullptr;
    KEV_CUDA(cudaHostGetDevicePointer(&dev, host, 0));
    m_flagDevice = static_cast<int*>(dev);
    // The same flush as the verifier's Timer: 2 x L2, at least 64 MiB.
    m_flushBytes = std::max<size_t>(2 * static_cast<size_t>(m_props.l2CacheSize), 64u << 20);
    KEV_CUDA(cudaMalloc(&m_flush, m_flushBytes));
    void* sink = nullptr;
    KEV_CUDA(cudaMalloc(&sink, sizeof(unsigned)));
    m_sink = static_cast<unsigned*>(sink);
    if (m_selfCheck) {
        KEV_CUDA(cublasCreate(&m_cublas));
        KEV_CUDA(cublasSetStream(m_cublas, m_stream));
        if (m_task.tensors.at(0).dtype == Dtype::F32) {
            KEV_CUDA(cublasSetMathMode(m_cublas, CUBLAS_PEDANTIC_MATH));
        }
    } else if (!m_options.noCupti) {
        m_audit.emplace(m_stream);
        std::string why;
        if (!m_audit->prepare(&why)) {
            addCheck("activity_audit", true, "not run: " + why);
        }
    }
    // The candidate may write only beneath the scratch folder the supervisor made for it, and a
    // harness run as root hands it no capability (CAP_SYS_PTRACE would open the verifier's
    // memory): sandbox.h.
    sandbox::Options sandboxOptions;
    if (const json::Value* scratch = m_job.find("scratch"); scratch && scratch->isString()) {
        sandboxOptions.scratchDir = scratch->asString();
    }
    const sandbox::Report report = sandbox::install(sandboxOptions);
    if (!report.capabilitiesDropped) {
        throw std::runtime_error("the runner could not drop its capabilities: " +
                                 report.capabilitiesWhy);
    }
    addCheck("sandbox", true, report.evidence());
    std::string error;
    const json::Value* library = m_job.find(m_selfCheck ? "reference_library" : "library");
    if (library && library->isString()) {
        // The A/A self-check runs the task's own reference here when it is a library.
        enterCandidate("library load (static initialisers)");
        const bool ok = m_library.load(library->asString(), &error);
        leaveCandidate();
        if (!ok) {
            throw std::runtime_error(error);
        }
        m_useLibrary = true;
    } else if (!m_selfCheck) {
        throw std::runtime_error("the job names no candidate library");
    }
    if (m_audit && m_audit->available() && m_useLibrary) {
        m_audit->setKernels(
            activity::kernelsRegisteredBy(reinterpret_cast<const void*>(m_library.launch())),
            activity::kernelsRegisteredBy(reinterpret_cast<const void*>(&launchAuditMarker)));
    }
}

KevolveArgs Runner::decode(const std::string& hex, bool withData) {
    KevolveArgs a{};
    if (!link::fromHex(hex, &a, sizeof a)) {
        throw std::runtime_error("a malformed argument block from the verifier");
    }
    const auto resolve = [this, withData](void*& p) {
        uint64_t id = 0;
        std::memcpy(&id, &p, sizeof id);
        if (id == 0 || !withData) {
            p = nullptr;
            return;
        }
        const auto it = m_mappings.find(id);
        if (it == m_mappings.end()) {
            throw std::runtime_error("the verifier named buffer " + std::to_string(id) +
                                     ", which is not mapped");
        }
        p = it->second.data;
    };
    for (int i = 0; i < KEVOLVE_MAX_TENSORS; ++i) {
        resolve(a.inputs[i].data);
        resolve(a.outputs[i].data);
    }
    resolve(a.workspace);
    a.services = services();
    return a;
}

void Runner::launchReference(const KevolveArgs& a) {
    if (a.op != KEVOLVE_OP_GEMM) {
        launchOpReference(a, m_cublas, m_stream);
        return;
    }
    const float alpha = 1.0f, beta = 0.0f;
    const int m = static_cast<int>(a.dims[0]), n = static_cast<int>(a.dims[1]),
              k = static_cast<int>(a.dims[2]);
    // Row-major C = A B is column-major C^T = B^T A^T, exactly as the verifier's reference.
    KEV_CUDA(cublasGemmEx(m_cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, a.inputs[1].data,
                          cudaType(a.inputs[1].dtype), n, a.inputs[0].data,
                          cudaType(a.inputs[0].dtype), k, &beta, a.outputs[0].data,
                          cudaType(a.outputs[0].dtype), n, CUBLAS_COMPUTE_32F,
                          CUBLAS_GEMM_DEFAULT));
}

void Runner::launch(const KevolveArgs& a) {
    ++m_calls;
    if (m_selfCheck) {
        if (m_useLibrary) {
            const int rc = m_library.launch()(&a, m_stream);
            if (rc != 0) {
                throw std::runtime_error("the task's reference library returned " +
                                         std::to_string(rc));
            }
        } else {
            launchReference(a);
        }
        KEV_CUDA(cudaGetLastError());
        m_lastLaunches.clear();
        return;
    }
    hooks::arm(m_stream);
    enterCandidate("kevolve_launch");
    const int rc = m_library.launch()(&a, m_stream);
    leaveCandidate();
    const std::vector<hooks::LaunchRecord> records = hooks::disarm();
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

// The verifier has flushed L2 and finished its writes; the same procedure as the verifier's own
// reference samples (timer.cpp) from here on: a blocking kernel so the entry point's host work is
// not timed, CUDA events on the runner's stream.
double Runner::timedCall(const KevolveArgs& a, bool audited) {
    // As the verifier's own samples find them (timer.cpp): the call's pages touched in this
    // context (the verifier's refresh and poison touch them in its), then an L2 flush in this
    // context. The verifier has flushed L2 already; these steps only keep the two sides alike.
    const auto touch = [this](const void* data) {
        for (const auto& [id, m] : m_mappings) {
            if (data && m.data == data) {
                KEV_CUDA(touchPages(m.data, m.bytes, m_sink, m_stream));
            }
        }
    };
    for (int i = 0; i < KEVOLVE_MAX_TENSORS; ++i) {
        touch(a.inputs[i].data);
        touch(a.outputs[i].data);
    }
    touch(a.workspace);
    KEV_CUDA(cudaMemsetAsync(m_flush, static_cast<int>(m_flushCounter++ & 0x7F), m_flushBytes,
                             m_stream));
    KEV_CUDA(readSectors(m_flush, m_flushBytes / 2, m_sink, m_stream)); // L2 left clean
    if (m_persistingReset && cudaCtxResetPersistingL2Cache() != cudaSuccess) {
        cudaGetLastError();
        m_persistingReset = false;
    }
    m_flag[0] = 0;
    m_flag[1] = 0;
    KEV_CUDA(blockStream(m_flagDevice, 2'000'000'000ull, m_flagDevice + 1, m_stream));
    const bool trace = audited && m_audit && m_audit->available();
    if (trace) {
        m_audit->begin();
    }
    KEV_CUDA(cudaEventRecord(m_start, m_stream));
    launch(a);
    KEV_CUDA(cudaEventRecord(m_stop, m_stream));
    if (trace) {
        m_audit->afterLaunch();
    }
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    m_flag[0] = 1;
    waitFor(m_stop, m_kernelTimeout, "the candidate");
    float ms = 0;
    KEV_CUDA(cudaEventElapsedTime(&ms, m_start, m_stop));
    if (trace) {
        m_audit->end(ms, m_kernelTimeout);
        ++m_audited;
    }
    return ms;
}

void Runner::handle(const std::string& line) {
    const size_t space = line.find(' ');
    const std::string verb = line.substr(0, space);
    const std::string rest = space == std::string::npos ? std::string() : line.substr(space + 1);
    if (!m_startError.empty() && verb != "end") {
        throw std::runtime_error(m_startError);
    }
    link::Reply r;
    if (verb == "map") {
        char hex[160] = {0};
        unsigned long long id = 0, offset = 0, bytes = 0;
        if (std::sscanf(rest.c_str(), "%llu %150s %llu %llu", &id, hex, &offset, &bytes) != 4) {
            throw std::runtime_error("a malformed map command");
        }
        cudaIpcMemHandle_t handle{};
        if (!link::fromHex(hex, &handle, sizeof handle)) {
            throw std::runtime_error("a malformed IPC handle");
        }
        void* base = nullptr;
        KEV_CUDA(cudaIpcOpenMemHandle(&base, handle, cudaIpcMemLazyEnablePeerAccess));
        m_mappings[id] = {base, static_cast<char*>(base) + offset, bytes};
        r.kind = link::Reply::Kind::Mapped;
        r.count = id;
    } else if (verb == "unmap") {
        KEV_CUDA(cudaStreamSynchronize(m_stream));
        for (const auto& [id, m] : m_mappings) {
            KEV_CUDA(cudaIpcCloseMemHandle(m.base));
        }
        m_mappings.clear();
        r.kind = link::Reply::Kind::Unmapped;
    } else if (verb == "workspace") {
        const KevolveArgs a = decode(rest, false);
        r.kind = link::Reply::Kind::Workspace;
        if (m_useLibrary && m_library.workspace()) {
            enterCandidate("kevolve_workspace_bytes");
            r.count = m_library.workspace()(&a);
            leaveCandidate();
        }
    } else if (verb == "call") {
        const KevolveArgs a = decode(rest, true);
        launch(a);
        cudaEvent_t done = m_stop;
        KEV_CUDA(cudaEventRecord(done, m_stream));
        waitFor(done, m_kernelTimeout, "the candidate");
        r.kind = link::Reply::Kind::Done;
        r.count = m_selfCheck ? 1 : m_lastLaunches.size();
    } else if (verb == "sample" || verb == "audit") {
        const KevolveArgs a = decode(rest, true);
        r.kind = link::Reply::Kind::Sample;
        r.ms = timedCall(a, verb == "audit");
    } else if (verb == "end") {
        end();
    } else {
        throw std::runtime_error("an unknown command from the verifier: " + verb);
    }
    reply(r);
}

void Runner::end() {
    if (!m_selfCheck) {
        const std::vector<hooks::LaunchRecord> stray = hooks::strayLaunches();
        if (!stray.empty()) {
            m_violations.push_back(std::to_string(stray.size()) +
                                   " launch(es) from a thread the harness did not start");
        }
        if (m_audit && m_audit->available() && m_audited > 0) {
            const std::vector<std::string> bad = m_audit->violations();
            m_violations.insert(m_violations.end(), bad.begin(), bad.end());
            addCheck("activity_audit", bad.empty(),
                     bad.empty() ? std::to_string(m_audited) +
                                       " traced samples: only the candidate's kernels, on the "
                                       "harness stream, launched within kevolve_launch; no copy "
                                       "or set"
                                 : bad.front());
        }
        addCheck("launch_audit", m_violations.empty(),
                 m_violations.empty()
                     ? std::to_string(m_lastLaunches.size()) +
                           " launch(es) per call, all on the harness stream from the harness "
                           "thread, no L2 access-policy window"
                     : m_violations.front());
    }
    json::Value result = json::Value::object();
    result["type"] = "result";
    result["role"] = "runner";
    result["calls"] = m_calls;
    result["checks"] = m_checks;
    if (!m_violations.empty()) {
        json::Value v = json::Value::array();
        for (const std::string& s : m_violations) {
            v.push(s);
        }
        result["violations"] = v;
    }
    if (!m_lastLaunches.empty()) {
        result["resources"] = profiler::staticResources(m_lastLaunches, m_props);
    }
    if (m_audit) {
        result["audit"] = m_audit->toJson();
    }
    result["token"] = m_options.token;
    std::string text = result.dump();
    text.push_back('\n');
    link::writeAll(g_resultFd, text, 30.0);
    g_ended = true;
    link::Reply bye;
    bye.kind = link::Reply::Kind::Bye;
    reply(bye);
    // Process exit tears the context down (and with it any kernel still running) without the
    // runtime's own teardown, which would also wait for the device.
    _exit(0);
}

void Runner::run() {
    try {
        setUp();
        link::Reply ready;
        ready.kind = link::Reply::Kind::Ready;
        reply(ready);
    } catch (const std::exception& e) {
        m_startError = std::string("the runner could not start: ") + e.what();
        replyFail("runtime_error", m_startError);
    }
    link::LineReader commands(m_options.peerIn);
    for (;;) {
        std::string line;
        const link::LineReader::Status s = commands.next(365.0 * 86400, &line);
        if (s != link::LineReader::Status::Line) {
            // The verifier is gone: nothing here can matter any more.
            _exit(0);
        }
        try {
            handle(line);
        } catch (const RuleViolation& e) {
            replyFail("rule_violation", e.what());
        } catch (const KernelTimeout& e) {
            replyFail("timeout", e.what());
        } catch (const CudaFailure& e) {
            replyFail("runtime_error", e.what(), e.sticky);
        } catch (const std::exception& e) {
            replyFail("runtime_error", e.what());
        }
    }
}

} // namespace

void runRunner(const json::Value& job, const RunnerOptions& options) {
    g_peerOut = options.peerOut;
    g_resultFd = options.resultFd;
    g_token = options.token;
    std::atexit(onExit);
    // Never destroyed: see run_one.cpp.
    auto* runner = new Runner(job, options);
    runner->run();
}

} // namespace kev::gpu
