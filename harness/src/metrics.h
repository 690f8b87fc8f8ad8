#pragma once
// The hardware metrics a review sees, as data: the default list (issue 3's counters), the
// options that override it or limit profiling to candidates that improve, and the metrics derived
// from raw counters (shared-memory wavefronts per instruction). Host-only; the GPU child's Range
// Profiler (gpu/profiler.cpp) collects whatever list this gives it.
#include "json.h"

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace kev::metrics {

// A rejected metric list or profiling option. The message starts with the field path, e.g.
// "options.metrics[3]: \"dram__bytes\" is not a metric name (unit__counter.rollup[.submetric])".
class MetricListError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Issue 3's list, valid on GH100: occupancy, shared-memory wavefronts, conflicts and
// instructions, DRAM, SM, tensor and FMA pipes, L2 hit rate, local-memory traffic, the main
// warp-stall reasons, and the kernel's duration (to name the main kernel of a multi-kernel
// candidate). A metric the device does not know is reported as unavailable, not fatal.
const std::vector<std::string>& defaultList();

// Whether `name` has the shape of a Perfworks metric: lower-case unit, "__", counter, then one or
// more ".rollup" or ".submetric" parts (e.g. dram__bytes_read.sum, lts__t_sector_hit_rate.pct).
bool isMetricName(const std::string& name);

// A metric list from JSON: an array of names, or one string of names separated by commas or
// white space. Duplicates are dropped (first kept); an empty list, a non-string element or a
// malformed name throws MetricListError naming `field` and the element.
std::vector<std::string> parseList(const json::Value& value, const std::string& field);

enum class When { Always, Improved, Never };

struct ProfileOptions {
    When when = When::Always;
    // With When::Improved: profile only a candidate whose speedup over the reference exceeds this
    // (the engine passes the best speedup so far).
    double bestSpeedup = 0;
    std::vector<std::string> metrics = defaultList();
};

// From the job's options object (null or absent fields keep the defaults):
//   "profile": "always" | "improved" | "never" (or true / false),
//   "profile_best_speedup": number (with "improved"),
//   "metrics": list as parseList accepts.
ProfileOptions parseOptions(const json::Value* options);

// Whether a candidate with this status and speedup is profiled.
bool shouldProfile(const ProfileOptions& options, const std::string& status, double speedup);

// Derived values from raw metrics: smem_wavefronts_per_instruction (loads and stores together),
// and its _ld and _st parts, smem_bank_conflicts_per_instruction. A value whose inputs are
// missing or whose instruction count is zero is absent.
std::map<std::string, double> derive(const std::map<std::string, double>& values);

const char* toString(When when);

// Whether cached counters could be real (THREAT_MODEL.md, class 6): every number finite and not
// negative, every percentage ("pct" in its name) at most 100.5. Empty when so; otherwise names the
// first value that is not.
std::string implausible(const json::Value& metrics, const std::string& path = "metrics");

} // namespace kev::metrics
