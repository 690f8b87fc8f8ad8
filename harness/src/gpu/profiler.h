#pragma once
// Hardware counters through the CUPTI Range Profiler (cupti_range_profiler.h with
// cupti_profiler_host.h), auto ranges with kernel replay: every kernel launched while profiling is
// one range, replayed as often as the metric list needs. It runs in the `run-one --profile` child,
// with tracing off. Also the static resources of each kernel the candidate launched (registers,
// shared and local memory, theoretical occupancy from the occupancy API).
#include "json.h"
#include "launch_hooks.h"

#include <cuda_runtime.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace kev::gpu::profiler {

struct Range {
    std::string name; // the kernel's name
    std::map<std::string, double> values;
};

class RangeProfiler {
public:
    RangeProfiler() = default;
    ~RangeProfiler();
    RangeProfiler(const RangeProfiler&) = delete;
    RangeProfiler& operator=(const RangeProfiler&) = delete;

    // Initialises CUPTI's profiler for `device` (current context) and builds the configuration for
    // `metrics`; a metric the chip does not know goes to unavailable(). Call before the sandbox.
    // False with the reason (privileges, another profiler attached, unsupported device).
    bool prepare(int device, const std::vector<std::string>& metrics, std::string* why);

    // Profiles every kernel `launch` enqueues (it must leave the device idle when it returns).
    // Empty with `why` on failure.
    std::vector<Range> profile(const std::function<void()>& launch, std::string* why);

    const std::vector<std::string>& metrics() const { return m_metrics; }
    const std::map<std::string, std::string>& unavailable() const { return m_unavailable; }
    size_t passes() const { return m_passes; }

    // Kernel names in launch order, from CUPTI's launch callbacks (auto ranges are named by index).
    void recordLaunch(const char* name) { m_launchNames.emplace_back(name ? name : ""); }
    int& runtimeLaunchDepth() { return m_runtimeDepth; }

private:
    void* m_host = nullptr;       // CUpti_Profiler_Host_Object*
    void* m_subscriber = nullptr; // CUpti_SubscriberHandle
    std::vector<std::string> m_launchNames;
    int m_runtimeDepth = 0;
    void* m_context = nullptr;
    std::vector<uint8_t> m_config;
    std::vector<std::string> m_metrics;
    std::map<std::string, std::string> m_unavailable;
    size_t m_passes = 0;
};

// The range to report for a launch: the longest (gpu__time_duration.sum), else the first.
const Range* mainRange(const std::vector<Range>& ranges);

// {name: value} of a range plus the derived values of metrics::derive.
json::Value rangeJson(const Range& range);

// The report's `metrics`: {available, metric_list, unavailable_metrics, passes, candidate,
// reference (the main range's values), candidate_kernels, reference_kernels (every range), errors}.
json::Value metricsJson(const RangeProfiler& profiler, const std::vector<Range>& candidate,
                        const std::string& candidateError, const std::vector<Range>& reference,
                        const std::string& referenceError);
// {available: false, reason}.
json::Value metricsUnavailable(const std::string& reason);

// Per distinct kernel of `launches`: name, registers, static and dynamic shared bytes, local bytes
// per thread, max threads per block, block and grid, blocks per SM and theoretical occupancy (%).
json::Value staticResources(const std::vector<hooks::LaunchRecord>& launches,
                            const cudaDeviceProp& props);

} // namespace kev::gpu::profiler
