#include "profiler.h"

#include "metrics.h"

#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <cuda.h>

#include <algorithm>
#include <cstdio>

namespace kev::gpu::profiler {

namespace {

constexpr size_t kMaxRanges = 64;

// CUPTI's parameter structs: zeroed, with their size set.
template <typename T> T params(size_t structSize) {
    T p{};
    p.structSize = structSize;
    return p;
}

std::string cuptiError(CUptiResult r, const char* call) {
    const char* text = nullptr;
    cuptiGetResultString(r, &text);
    std::string s = std::string(call) + " failed: " + (text ? text : "unknown CUPTI error");
    if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
        s += " (performance counters are restricted to administrators: load the driver with "
             "NVreg_RestrictProfilingToAdminUsers=0 or run as root)";
    }
    return s;
}

CUcontext currentContext(std::string* why) {
    using Fn = CUresult (*)(CUcontext*);
    void* p = nullptr;
    cudaDriverEntryPointQueryResult status{};
    if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &p, 12000, cudaEnableDefault,
                                         &status) != cudaSuccess ||
        status != cudaDriverEntryPointSuccess || !p) {
        *why = "cuCtxGetCurrent is not available from the driver";
        return nullptr;
    }
    CUcontext ctx = nullptr;
    if (reinterpret_cast<Fn>(p)(&ctx) != CUDA_SUCCESS || !ctx) {
        *why = "no current CUDA context";
        return nullptr;
    }
    return ctx;
}

std::vector<const char*> cNames(const std::vector<std::string>& names) {
    std::vector<const char*> out;
    for (const std::string& n : names) {
        out.push_back(n.c_str());
    }
    return out;
}

// A runtime launch reaches the driver too; only the outermost API call names the kernel.
void CUPTIAPI onLaunch(void* user, CUpti_CallbackDomain domain, CUpti_CallbackId,
                       const void* data) {
    auto* self = static_cast<RangeProfiler*>(user);
    const auto* info = static_cast<const CUpti_CallbackData*>(data);
    int& depth = self->runtimeLaunchDepth();
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
        if (info->callbackSite == CUPTI_API_ENTER) {
            if (depth++ == 0) {
                self->recordLaunch(info->symbolName);
            }
        } else {
            --depth;
        }
    } else if (info->callbackSite == CUPTI_API_ENTER && depth == 0) {
        self->recordLaunch(info->symbolName);
    }
}

// Subscribes `self` to the launch callbacks; without them ranges keep their index as name.
void* subscribeLaunches(RangeProfiler* self) {
    CUpti_SubscriberHandle sub = nullptr;
    if (cuptiSubscribe(&sub, onLaunch, self) != CUPTI_SUCCESS) {
        return nullptr;
    }
    for (CUpti_CallbackId id : {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                                CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
                                CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
                                CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
                                CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
                                CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000}) {
        cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API, id);
    }
    for (CUpti_CallbackId id :
         {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
          CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
          CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
          CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
          CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid, CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync}) {
        cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, id);
    }
    return sub;
}

} // namespace

RangeProfiler::~RangeProfiler() {
    if (m_subscriber) {
        cuptiUnsubscribe(static_cast<CUpti_SubscriberHandle>(m_subscriber));
    }
    if (m_host) {
        auto p = params<CUpti_Profiler_Host_Deinitialize_Params>(
            CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
        p.pHostObject = static_cast<CUpti_Profiler_Host_Object*>(m_host);
        cuptiProfilerHostDeinitialize(&p);
    }
}

bool RangeProfiler::prepare(int device, const std::vector<std::string>& metrics, std::string* why) {
    CUcontext ctx = currentContext(why);
    if (!ctx) {
        return false;
    }
    m_context = ctx;
    auto init =
        params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    if (CUptiResult r = cuptiProfilerInitialize(&init); r != CUPTI_SUCCESS) {
        *why = cuptiError(r, "cuptiProfilerInitialize");
        return false;
    }
    auto supported = params<CUpti_Profiler_DeviceSupported_Params>(
        CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
    supported.cuDevice = device;
    supported.api = CUPTI_PROFILER_RANGE_PROFILING;
    if (CUptiResult r = cuptiProfilerDeviceSupported(&supported); r != CUPTI_SUCCESS) {
        *why = cuptiError(r, "cuptiProfilerDeviceSupported");
        return false;
    }
    if (supported.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
        *why = "the Range Profiler does not support this device or configuration (architecture " +
               std::to_string(supported.architecture) + ", virtualisation " +
               std::to_string(supported.vGpu) + ", confidential compute " +
               std::to_string(supported.confidentialCompute) + ", MIG " +
               std::to_string(supported.cmp) + ", WSL " + std::to_string(supported.wsl) + ")";
        return false;
    }
    auto chip =
        params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
    chip.deviceIndex = static_cast<size_t>(device);
    if (CUptiResult r = cuptiDeviceGetChipName(&chip); r != CUPTI_SUCCESS) {
        *why = cuptiError(r, "cuptiDeviceGetChipName");
        return false;
    }
    auto avail = params<CUpti_Profiler_GetCounterAvailability_Params>(
        CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
    avail.ctx = ctx;
    if (CUptiResult r = cuptiProfilerGetCounterAvailability(&avail); r != CUPTI_SUCCESS) {
        *why = cuptiError(r, "cuptiProfilerGetCounterAvailability");
        return false;
    }
    std::vector<uint8_t> availability(avail.counterAvailabilityImageSize);
    avail.pCounterAvailabilityImage = availability.data();
    if (CUptiResult r = cuptiProfilerGetCounterAvailability(&avail); r != CUPTI_SUCCESS) {
        *why = cuptiError(r, "cuptiProfilerGetCounterAvailability");
        return false;
    }
    auto host = params<CUpti_Profiler_Host_Initialize_Params>(
        CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
    host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    host.pChipName = chip.pChipName;
    host.pCounterAvailabilityImage = availability.data();
    if (CUptiResult r = cuptiProfilerHostInitialize(&host); r != CUPTI_SUCCESS) {
        *why = cuptiError(r, "cuptiProfilerHostInitialize");
        return false;
    }
    m_host = host.pHostObject;
    // One metric at a time, so that a name this chip does not know is reported, not fatal.
    for (const std::string& name : metrics) {
        const char* one[] = {name.c_str()};
        auto add = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
            CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
        add.pHostObject = host.pHostObject;
        add.ppMetricNames = one;
        add.numMetrics = 1;
        if (CUptiResult r = cuptiProfilerHostConfigAddMetrics(&add); r != CUPTI_SUCCESS) {
            m_unavailable[name] = cuptiError(r, "cuptiProfilerHostConfigAddMetrics");
        } else {
            m_metrics.push_back(name);
        }
    }
    if (m_metrics.empty()) {
        *why = "none of the " + std::to_string(metrics.size()) + " metrics is known on chip " +
               chip.pChipName;
        return false;
    }
    auto size = params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
        CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
    size.pHostObject = host.pHostObject;
    if (CUptiResult r = cuptiProfilerHostGetConfigImageSize(&size); r != CUPTI_SUCCESS) {
        *why = cuptiError(r, "cuptiProfilerHostGetConfigImageSize");
        return false;
    }
    m_config.resize(size.configImageSize);
    auto image = params<CUpti_Profiler_Host_GetConfigImage_Params>(
        CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
    image.pHostObject = host.pHostObject;
    image.pConfigImage = m_config.data();
    image.configImageSize = m_config.size();
    if (CUptiResult r = cuptiProfilerHostGetConfigImage(&image); r != CUPTI_SUCCESS) {
        *why = cuptiError(r, "cuptiProfilerHostGetConfigImage");
        return false;
    }
    m_subscriber = subscribeLaunches(this);
    auto passes = params<CUpti_Profiler_Host_GetNumOfPasses_Params>(
        CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
    passes.pConfigImage = m_config.data();
    passes.configImageSize = m_config.size();
    if (cuptiProfilerHostGetNumOfPasses(&passes) == CUPTI_SUCCESS) {
        m_passes = passes.numOfPasses;
    }
    return true;
}

std::vector<Range> RangeProfiler::profile(const std::function<void()>& launch, std::string* why) {
    std::vector<Range> out;
    if (!m_host) {
        *why = "the profiler was not prepared";
        return out;
    }
    auto enable =
        params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
    enable.ctx = static_cast<CUcontext>(m_context);
    if (CUptiResult r = cuptiRangeProfilerEnable(&enable); r != CUPTI_SUCCESS) {
        *why = cuptiError(r, "cuptiRangeProfilerEnable");
        return out;
    }
    CUpti_RangeProfiler_Object* object = enable.pRangeProfilerObject;
    // Disables the profiler on every path out.
    struct Disabler {
        CUpti_RangeProfiler_Object* object;
        ~Disabler() {
            auto d = params<CUpti_RangeProfiler_Disable_Params>(
                CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
            d.pRangeProfilerObject = object;
            cuptiRangeProfilerDisable(&d);
        }
    } disabler{object};

    std::vector<const char*> names = cNames(m_metrics);
    auto size = params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
        CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
    size.pRangeProfilerObject = object;
    size.pMetricNames = names.data();
    size.numMetrics = names.size();
    size.maxNumOfRanges = kMaxRanges;
    size.maxNumRangeTreeNodes = kMaxRanges;
    if (CUptiResult r = cuptiRangeProfilerGetCounterDataSize(&size); r != CUPTI_SUCCESS) {
        *why = cuptiError(r, "cuptiRangeProfilerGetCounterDataSize");
        return out;
    }
    std::vector<uint8_t> counterData(size.counterDataSize);
    auto init = params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
    init.pRangeProfilerObject = object;
    init.counterDataSize = counterData.size();
    init.pCounterData = counterData.data();
    if (CUptiResult r = cuptiRangeProfilerCounterDataImageInitialize(&init); r != CUPTI_SUCCESS) {
        *why = cuptiError(r, "cuptiRangeProfilerCounterDataImageInitialize");
        return out;
    }
    auto config = params<CUpti_RangeProfiler_SetConfig_Params>(
        CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
    config.pRangeProfilerObject = object;
    config.configSize = m_config.size();
    config.pConfig = m_config.data();
    config.counterDataImageSize = counterData.size();
    config.pCounterDataImage = counterData.data();
    config.range = CUPTI_AutoRange;
    config.replayMode = CUPTI_KernelReplay;
    config.maxRangesPerPass = kMaxRanges;
    config.numNestingLevels = 1;
    config.minNestingLevel = 1;
    config.passIndex = 0;
    config.targetNestingLevel = 1;
    if (CUptiResult r = cuptiRangeProfilerSetConfig(&config); r != CUPTI_SUCCESS) {
        *why = cuptiError(r, "cuptiRangeProfilerSetConfig");
        return out;
    }
    auto start =
        params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
    start.pRangeProfilerObject = object;
    if (CUptiResult r = cuptiRangeProfilerStart(&start); r != CUPTI_SUCCESS) {
        *why = cuptiError(r, "cuptiRangeProfilerStart");
        return out;
    }
    m_launchNames.clear();
    m_runtimeDepth = 0;
    launch();
    auto stop =
        params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    stop.pRangeProfilerObject = object;
    if (CUptiResult r = cuptiRangeProfilerStop(&stop); r != CUPTI_SUCCESS) {
        *why = cuptiError(r, "cuptiRangeProfilerStop");
        return out;
    }
    auto decode = params<CUpti_RangeProfiler_DecodeData_Params>(
        CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
    decode.pRangeProfilerObject = object;
    if (CUptiResult r = cuptiRangeProfilerDecodeData(&decode); r != CUPTI_SUCCESS) {
        *why = cuptiError(r, "cuptiRangeProfilerDecodeData");
        return out;
    }
    auto info = params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
        CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
    info.pCounterDataImage = counterData.data();
    info.counterDataImageSize = counterData.size();
    if (CUptiResult r = cuptiRangeProfilerGetCounterDataInfo(&info); r != CUPTI_SUCCESS) {
        *why = cuptiError(r, "cuptiRangeProfilerGetCounterDataInfo");
        return out;
    }
    if (info.numTotalRanges == 0) {
        *why = "the profiler recorded no kernel";
        return out;
    }
    std::vector<double> values(names.size());
    for (size_t i = 0; i < info.numTotalRanges; ++i) {
        Range range;
        auto rangeInfo = params<CUpti_RangeProfiler_CounterData_GetRangeInfo_Params>(
            CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE);
        rangeInfo.pCounterDataImage = counterData.data();
        rangeInfo.counterDataImageSize = counterData.size();
        rangeInfo.rangeIndex = i;
        rangeInfo.rangeDelimiter = "/";
        if (m_launchNames.size() == info.numTotalRanges && !m_launchNames[i].empty()) {
            range.name = m_launchNames[i];
        } else if (cuptiRangeProfilerCounterDataGetRangeInfo(&rangeInfo) == CUPTI_SUCCESS &&
                   rangeInfo.rangeName) {
            range.name = rangeInfo.rangeName;
        }
        auto eval = params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
            CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
        eval.pHostObject = static_cast<CUpti_Profiler_Host_Object*>(m_host);
        eval.pCounterDataImage = counterData.data();
        eval.counterDataImageSize = counterData.size();
        eval.rangeIndex = i;
        eval.ppMetricNames = names.data();
        eval.numMetrics = names.size();
        eval.pMetricValues = values.data();
        if (CUptiResult r = cuptiProfilerHostEvaluateToGpuValues(&eval); r != CUPTI_SUCCESS) {
            *why = cuptiError(r, "cuptiProfilerHostEvaluateToGpuValues");
            return {};
        }
        for (size_t m = 0; m < names.size(); ++m) {
            range.values[m_metrics[m]] = values[m];
        }
        out.push_back(std::move(range));
    }
    return out;
}

const Range* mainRange(const std::vector<Range>& ranges) {
    const Range* best = ranges.empty() ? nullptr : &ranges.front();
    for (const Range& r : ranges) {
        const auto a = r.values.find("gpu__time_duration.sum");
        const auto b = best->values.find("gpu__time_duration.sum");
        if (a != r.values.end() && b != best->values.end() && a->second > b->second) {
            best = &r;
        }
    }
    return best;
}

json::Value rangeJson(const Range& range) {
    json::Value v = json::Value::object();
    for (const auto& [name, value] : range.values) {
        v[name] = value;
    }
    for (const auto& [name, value] : metrics::derive(range.values)) {
        v[name] = value;
    }
    return v;
}

json::Value metricsJson(const RangeProfiler& profiler, const std::vector<Range>& candidate,
                        const std::string& candidateError, const std::vector<Range>& reference,
                        const std::string& referenceError) {
    json::Value v = json::Value::object();
    v["available"] = !candidate.empty() || !reference.empty();
    json::Value list = json::Value::array();
    for (const std::string& m : profiler.metrics()) {
        list.push(m);
    }
    v["metric_list"] = list;
    json::Value missing = json::Value::object();
    for (const auto& [name, why] : profiler.unavailable()) {
        missing[name] = why;
    }
    v["unavailable_metrics"] = missing;
    v["passes"] = static_cast<uint64_t>(profiler.passes());
    v["replay"] = "kernel";
    const auto side = [&v](const char* key, const std::vector<Range>& ranges,
                           const std::string& error) {
        if (const Range* main = mainRange(ranges)) {
            v[key] = rangeJson(*main);
            v[std::string(key) + "_kernel"] = main->name;
        }
        json::Value all = json::Value::array();
        for (const Range& r : ranges) {
            json::Value o = json::Value::object();
            o["name"] = r.name;
            o["values"] = rangeJson(r);
            all.push(std::move(o));
        }
        v[std::string(key) + "_kernels"] = all;
        if (!error.empty()) {
            v[std::string(key) + "_error"] = error;
        }
    };
    side("candidate", candidate, candidateError);
    side("reference", reference, referenceError);
    if (!v.find("available")->asBool()) {
        v["reason"] = !candidateError.empty() ? candidateError : referenceError;
    }
    return v;
}

json::Value metricsUnavailable(const std::string& reason) {
    json::Value v = json::Value::object();
    v["available"] = false;
    v["reason"] = reason;
    return v;
}

json::Value staticResources(const std::vector<hooks::LaunchRecord>& launches,
                            const cudaDeviceProp& props) {
    json::Value out = json::Value::array();
    std::vector<const void*> seen;
    for (const hooks::LaunchRecord& l : launches) {
        if (!l.func || std::find(seen.begin(), seen.end(), l.func) != seen.end()) {
            continue;
        }
        seen.push_back(l.func);
        json::Value k = json::Value::object();
        const char* name = nullptr;
        if (cudaFuncGetName(&name, l.func) == cudaSuccess && name) {
            k["name"] = name;
        }
        cudaFuncAttributes attr{};
        if (cudaFuncGetAttributes(&attr, l.func) != cudaSuccess) {
            cudaGetLastError();
            k["error"] = "cudaFuncGetAttributes failed for this kernel";
            out.push(std::move(k));
            continue;
        }
        const unsigned threads = l.block.x * l.block.y * l.block.z;
        k["registers"] = attr.numRegs;
        k["shared_static_bytes"] = static_cast<uint64_t>(attr.sharedSizeBytes);
        k["shared_dynamic_bytes"] = static_cast<uint64_t>(l.sharedBytes);
        k["local_bytes_per_thread"] = static_cast<uint64_t>(attr.localSizeBytes);
        k["max_threads_per_block"] = attr.maxThreadsPerBlock;
        json::Value block = json::Value::array();
        block.push(l.block.x);
        block.push(l.block.y);
        block.push(l.block.z);
        k["block"] = block;
        json::Value grid = json::Value::array();
        grid.push(l.grid.x);
        grid.push(l.grid.y);
        grid.push(l.grid.z);
        k["grid"] = grid;
        if (l.clusterX * l.clusterY * l.clusterZ > 1) {
            json::Value c = json::Value::array();
            c.push(l.clusterX);
            c.push(l.clusterY);
            c.push(l.clusterZ);
            k["cluster"] = c;
        }
        int blocks = 0;
        if (threads > 0 &&
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                &blocks, l.func, static_cast<int>(threads), l.sharedBytes) == cudaSuccess) {
            const int warpsPerBlock = static_cast<int>((threads + 31) / 32);
            const int maxWarps = props.maxThreadsPerMultiProcessor / 32;
            k["blocks_per_sm"] = blocks;
            k["theoretical_occupancy_pct"] =
                maxWarps > 0 ? 100.0 * blocks * warpsPerBlock / maxWarps : 0.0;
        } else {
            cudaGetLastError();
        }
        out.push(std::move(k));
    }
    return out;
}

} // namespace kev::gpu::profiler
