#pragma once
// The launch audit's judgement on activity records (CUPTI's kernel, memcpy and memset records of
// one audited sample, gpu/cupti_activity.cpp collects them). Host-only, so it is tested on
// synthetic and recorded records without a GPU.
//
// An audited sample is traced from just before the start event to well after the candidate's
// work has drained. Inside it the harness launches only two marker kernels on its stream: one
// before kevolve_launch is called and one right after it returns. Correlation ids grow with every
// API call, so a kernel's correlation id says when it was launched relative to the markers.
// Rules: between the markers only kernels of the candidate's module, on the harness stream; no
// memcpy or memset at all (the harness issues none while tracing); no kernel of the candidate
// launched after the end marker (after kevolve_launch returned); no kernel from any other module
// (a library's, such as cuBLAS). The event time of the sample is cross-checked against the
// activity durations; a large disagreement is reported (not a violation by itself).
#include "json.h"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace kev::audit {

enum class Kind { Kernel, Memcpy, Memset };

struct ActivityRecord {
    Kind kind = Kind::Kernel;
    std::string name; // kernels: the (mangled) function name; copies: the copy kind ("DtoD")
    uint32_t streamId = 0;
    uint32_t correlationId = 0;
    uint64_t startNs = 0;
    uint64_t endNs = 0;
    uint64_t bytes = 0; // copies and sets
    bool deviceLaunched = false;
    bool accessPolicyWindow = false;
    int gridX = 0, gridY = 0, gridZ = 0;
    int blockX = 0, blockY = 0, blockZ = 0;
};

// What the harness knows about one audited sample.
struct Sample {
    uint32_t harnessStreamId = 0;
    std::string markerName;                 // the harness's marker kernel
    std::set<std::string> candidateKernels; // names registered by the candidate's library
    std::set<std::string> harnessKernels;   // names registered by kevolve-harness itself
    double eventMs = 0;                     // the start/stop events around kevolve_launch
};

struct CrossCheck {
    double eventMs = 0;
    double busyMs = 0; // sum of the candidate's kernel durations
    double spanMs = 0; // first start to last end of the candidate's kernels
    bool ok = true;
    std::string note;
};

struct Verdict {
    // False when the trace cannot be judged (the markers are missing): not the candidate's fault.
    bool complete = true;
    std::string incomplete;
    std::vector<std::string> violations; // one line of evidence each
    int candidateKernels = 0;            // kernels of the candidate between the markers
    CrossCheck crossCheck;
    std::vector<std::string> kernelNames; // distinct, in launch order
};

// Events may exceed the kernels' span by launch gaps; they may not fall short of the work they
// enclose. `slackMs` absorbs timer granularity.
struct Tolerance {
    double shortFraction = 0.90; // event < busy * this: work escaped the event window
    double longFactor = 1.5;     // event > span * this + slackMs: large host or idle gaps
    double slackMs = 0.02;
};

Verdict judge(const std::vector<ActivityRecord>& records, const Sample& sample,
              const Tolerance& tolerance = {});

// Records as JSON (for recorded fixtures and the report's evidence) and back; fromJson throws
// std::runtime_error naming the field.
json::Value toJson(const ActivityRecord& record);
ActivityRecord recordFromJson(const json::Value& value);
json::Value toJson(const Sample& sample);
Sample sampleFromJson(const json::Value& value);
json::Value toJson(const Verdict& verdict);

const char* toString(Kind kind);

} // namespace kev::audit
