#pragma once
// The launch audit through the CUPTI Activity API. A few extra candidate samples after timing are
// traced (kernels, memcpy, memset), each bracketed by the harness's marker kernels, and judged by
// audit::judge (audit.h): only the candidate's kernels, on the harness stream, launched while
// kevolve_launch ran; no copies or sets; the event time agrees with the kernels' durations.
//
// Kernels are attributed to their module by name: kevolve-harness exports
// __cudaRegisterFunction (launch_hooks.list), so every kernel registration of the candidate's
// library passes through here and is remembered with the object that registered it.
#include "audit.h"
#include "json.h"

#include <cuda_runtime.h>

#include <set>
#include <string>
#include <vector>

namespace kev::gpu::activity {

// Names of the kernels registered by the shared object (or executable) containing `address`.
std::set<std::string> kernelsRegisteredBy(const void* address);

class LaunchAudit {
public:
    explicit LaunchAudit(cudaStream_t stream);
    ~LaunchAudit();
    LaunchAudit(const LaunchAudit&) = delete;
    LaunchAudit& operator=(const LaunchAudit&) = delete;

    // Registers the activity buffers with CUPTI. Call before the sandbox is installed; false with
    // the reason when CUPTI cannot trace (another tool holds it, no library).
    bool prepare(std::string* why);
    // The kernel names of the candidate's module and of the harness's, once the candidate is
    // loaded.
    void setKernels(std::set<std::string> candidateKernels, std::set<std::string> harnessKernels);

    // Around one audited sample: begin() after the blocking kernel is queued (enables tracing and
    // queues the begin marker), afterLaunch() once kevolve_launch returned and the stop event is
    // queued (queues the end marker), end() once the stop event completed.
    void begin();
    void afterLaunch();
    void end(double eventMs, double timeoutSeconds);

    // Evidence lines of every violation over all samples.
    std::vector<std::string> violations() const;
    // {available, reason?, samples: [verdict], violations, cross_check_ok, kernels}
    json::Value toJson() const;
    bool available() const { return m_available; }

private:
    cudaStream_t m_stream;
    audit::Sample m_sample;
    bool m_available = false;
    bool m_tracing = false;
    std::string m_reason;
    cudaEvent_t m_endMarkerDone = nullptr;
    std::vector<audit::Verdict> m_verdicts;
    std::vector<std::string> m_errors;
};

} // namespace kev::gpu::activity
