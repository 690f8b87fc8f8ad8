#include "cupti_activity.h"

#include "cuda_util.h"
#include "metrics_kernels.h"
#include "timer.h"

#include <cupti.h>

#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace kev::gpu::activity {

namespace {

struct Registration {
    std::string name;
    const void* objectBase = nullptr;
};

// Function-local statics: registrations run from static initialisers, possibly before this file's
// own globals are constructed.
std::mutex& registryMutex() {
    static std::mutex m;
    return m;
}

std::vector<Registration>& registry() {
    static std::vector<Registration> r;
    return r;
}

const void* objectBaseOf(const void* address) {
    Dl_info info{};
    if (address && dladdr(address, &info) != 0) {
        return info.dli_fbase;
    }
    return nullptr;
}

std::mutex g_recordsMutex;
std::vector<audit::ActivityRecord> g_records;
size_t g_dropped = 0;

constexpr size_t kBufferBytes = 8u << 20;

void CUPTIAPI bufferRequested(uint8_t** buffer, size_t* size, size_t* maxNumRecords) {
    void* p = nullptr;
    if (posix_memalign(&p, 8, kBufferBytes) != 0) {
        p = nullptr;
    }
    *buffer = static_cast<uint8_t*>(p);
    *size = p ? kBufferBytes : 0;
    *maxNumRecords = 0;
}

const char* copyKindName(uint8_t kind) {
    switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
        return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
        return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
        return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
        return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
        return "PtoP";
    default:
        return "array";
    }
}

void CUPTIAPI bufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t validSize) {
    std::vector<audit::ActivityRecord> parsed;
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, validSize, &record) == CUPTI_SUCCESS) {
        audit::ActivityRecord r;
        if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
            record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
            const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
            r.kind = audit::Kind::Kernel;
            r.name = k->name ? k->name : "";
            r.streamId = k->streamId;
            r.correlationId = k->correlationId;
            r.startNs = k->start;
            r.endNs = k->end;
            r.gridX = k->gridX;
            r.gridY = k->gridY;
            r.gridZ = k->gridZ;
            r.blockX = k->blockX;
            r.blockY = k->blockY;
            r.blockZ = k->blockZ;
            r.deviceLaunched = k->isDeviceLaunched != 0;
            r.accessPolicyWindow =
                k->pAccessPolicyWindow != nullptr && k->pAccessPolicyWindow->num_bytes > 0;
        } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
            const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
            r.kind = audit::Kind::Memcpy;
            r.name = copyKindName(m->copyKind);
            r.streamId = m->streamId;
            r.correlationId = m->correlationId;
            r.startNs = m->start;
            r.endNs = m->end;
            r.bytes = m->bytes;
        } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
            const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
            r.kind = audit::Kind::Memset;
            r.name = "value " + std::to_string(m->value);
            r.streamId = m->streamId;
            r.correlationId = m->correlationId;
            r.startNs = m->start;
            r.endNs = m->end;
            r.bytes = m->bytes;
        } else {
            continue;
        }
        parsed.push_back(std::move(r));
    }
    size_t dropped = 0;
    cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped);
    std::free(buffer);
    std::lock_guard<std::mutex> lock(g_recordsMutex);
    g_dropped += dropped;
    for (audit::ActivityRecord& r : parsed) {
        g_records.push_back(std::move(r));
    }
}

std::string cuptiError(CUptiResult r, const char* call) {
    const char* text = nullptr;
    cuptiGetResultString(r, &text);
    return std::string(call) + " failed: " + (text ? text : "unknown CUPTI error");
}

const CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                     CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET};

} // namespace

std::set<std::string> kernelsRegisteredBy(const void* address) {
    const void* base = objectBaseOf(address);
    std::set<std::string> out;
    std::lock_guard<std::mutex> lock(registryMutex());
    for (const Registration& r : registry()) {
        if (base && r.objectBase == base) {
            out.insert(r.name);
        }
    }
    return out;
}

LaunchAudit::LaunchAudit(cudaStream_t stream)
    : m_stream(stream) {
    m_sample.markerName = auditMarkerName();
}

void LaunchAudit::setKernels(std::set<std::string> candidateKernels,
                             std::set<std::string> harnessKernels) {
    m_sample.candidateKernels = std::move(candidateKernels);
    m_sample.harnessKernels = std::move(harnessKernels);
}

LaunchAudit::~LaunchAudit() {
    if (m_endMarkerDone) {
        cudaEventDestroy(m_endMarkerDone);
    }
}

bool LaunchAudit::prepare(std::string* why) {
    const CUptiResult r = cuptiActivityRegisterCallbacks(bufferRequested, bufferCompleted);
    if (r != CUPTI_SUCCESS) {
        m_reason = cuptiError(r, "cuptiActivityRegisterCallbacks");
        *why = m_reason;
        return false;
    }
    // Enabling once here loads CUPTI's tracing machinery before the sandbox is in place.
    for (CUpti_ActivityKind kind : kKinds) {
        const CUptiResult e = cuptiActivityEnable(kind);
        if (e != CUPTI_SUCCESS) {
            m_reason = cuptiError(e, "cuptiActivityEnable");
            *why = m_reason;
            return false;
        }
    }
    for (CUpti_ActivityKind kind : kKinds) {
        cuptiActivityDisable(kind);
    }
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    {
        std::lock_guard<std::mutex> lock(g_recordsMutex);
        g_records.clear();
    }
    KEV_CUDA(cudaEventCreateWithFlags(&m_endMarkerDone, cudaEventDisableTiming));
    m_available = true;
    return true;
}

void LaunchAudit::begin() {
    if (!m_available) {
        return;
    }
    {
        std::lock_guard<std::mutex> lock(g_recordsMutex);
        g_records.clear();
        g_dropped = 0;
    }
    for (CUpti_ActivityKind kind : kKinds) {
        cuptiActivityEnable(kind);
    }
    m_tracing = true;
    KEV_CUDA(launchAuditMarker(m_stream));
}

void LaunchAudit::afterLaunch() {
    if (!m_tracing) {
        return;
    }
    KEV_CUDA(launchAuditMarker(m_stream));
    KEV_CUDA(cudaEventRecord(m_endMarkerDone, m_stream));
}

void LaunchAudit::end(double eventMs, double timeoutSeconds) {
    if (!m_tracing) {
        return;
    }
    waitFor(m_endMarkerDone, timeoutSeconds, "the audit's end marker");
    // A launch the candidate defers (a thread, a callback) has a moment to land in the trace.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    for (CUpti_ActivityKind kind : kKinds) {
        cuptiActivityDisable(kind);
    }
    m_tracing = false;
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    std::vector<audit::ActivityRecord> records;
    size_t dropped = 0;
    {
        std::lock_guard<std::mutex> lock(g_recordsMutex);
        records.swap(g_records);
        dropped = g_dropped;
    }
    // The markers run on the harness stream: their stream id is the harness stream's.
    for (const audit::ActivityRecord& r : records) {
        if (r.kind == audit::Kind::Kernel && r.name == m_sample.markerName) {
            m_sample.harnessStreamId = r.streamId;
        }
    }
    m_sample.eventMs = eventMs;
    audit::Verdict v = audit::judge(records, m_sample);
    if (dropped > 0 && v.complete) {
        v.complete = false;
        v.incomplete = std::to_string(dropped) + " activity records were dropped";
    }
    m_verdicts.push_back(std::move(v));
}

std::vector<std::string> LaunchAudit::violations() const {
    std::vector<std::string> out;
    for (const audit::Verdict& v : m_verdicts) {
        for (const std::string& s : v.violations) {
            if (std::find(out.begin(), out.end(), s) == out.end()) {
                out.push_back(s);
            }
        }
    }
    return out;
}

json::Value LaunchAudit::toJson() const {
    json::Value o = json::Value::object();
    o["available"] = m_available;
    if (!m_available) {
        o["reason"] = m_reason.empty() ? std::string("not prepared") : m_reason;
        return o;
    }
    json::Value samples = json::Value::array();
    bool crossOk = true;
    bool complete = !m_verdicts.empty();
    for (const audit::Verdict& v : m_verdicts) {
        samples.push(audit::toJson(v));
        crossOk = crossOk && v.crossCheck.ok;
        complete = complete && v.complete;
    }
    o["samples"] = samples;
    o["complete"] = complete;
    o["cross_check_ok"] = crossOk;
    json::Value viol = json::Value::array();
    for (const std::string& s : violations()) {
        viol.push(s);
    }
    o["violations"] = viol;
    json::Value names = json::Value::array();
    for (const std::string& n : m_sample.candidateKernels) {
        names.push(n);
    }
    o["candidate_module_kernels"] = names;
    return o;
}

} // namespace kev::gpu::activity

extern "C" void __cudaRegisterFunction(void** fatCubinHandle, const char* hostFun, char* deviceFun,
                                       const char* deviceName, int threadLimit, uint3* tid,
                                       uint3* bid, dim3* bDim, dim3* gDim, int* wSize) {
    using Fn =
        void (*)(void**, const char*, char*, const char*, int, uint3*, uint3*, dim3*, dim3*, int*);
    static const Fn real = [] {
        char version[32];
        std::snprintf(version, sizeof version, "libcudart.so.%d", CUDART_VERSION / 1000);
        void* p = dlvsym(RTLD_NEXT, "__cudaRegisterFunction", version);
        if (!p) {
            p = dlsym(RTLD_NEXT, "__cudaRegisterFunction");
        }
        return reinterpret_cast<Fn>(p);
    }();
    if (deviceName) {
        kev::gpu::activity::Registration r;
        r.name = deviceName;
        r.objectBase = kev::gpu::activity::objectBaseOf(hostFun);
        std::lock_guard<std::mutex> lock(kev::gpu::activity::registryMutex());
        kev::gpu::activity::registry().push_back(std::move(r));
    }
    if (real) {
        real(fatCubinHandle, hostFun, deviceFun, deviceName, threadLimit, tid, bid, bDim, gDim,
             wSize);
    }
}
