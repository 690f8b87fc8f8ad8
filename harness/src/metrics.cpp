#include "metrics.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace kev::metrics {

namespace {

const char* const kSmemWavefrontsLd = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum";
const char* const kSmemWavefrontsSt = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum";
// The hardware instruction counters, not smsp__sass_inst_executed_op_shared_*: through the Range
// Profiler on GH100 the SASS-patched store count came back equal to the load count (H200,
// 2026-11-29: 6.04e8 shared stores where Nsight Compute counted 7.55e7).
const char* const kSmemInstLd = "smsp__inst_executed_op_shared_ld.sum";
const char* const kSmemInstSt = "smsp__inst_executed_op_shared_st.sum";
const char* const kSmemConflictsLd = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum";
const char* const kSmemConflictsSt = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum";

bool isLowerWordChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

std::string quoted(const std::string& s) {
    std::string out;
    json::appendQuoted(out, s);
    return out;
}

void addName(std::vector<std::string>& out, const std::string& name, const std::string& where) {
    if (!isMetricName(name)) {
        throw MetricListError(where + ": " + quoted(name) +
                              " is not a metric name (unit__counter.rollup[.submetric], e.g. "
                              "dram__bytes_read.sum)");
    }
    if (std::find(out.begin(), out.end(), name) == out.end()) {
        out.push_back(name);
    }
}

std::optional<double> get(const std::map<std::string, double>& values, const char* key) {
    const auto it = values.find(key);
    if (it == values.end() || !std::isfinite(it->second)) {
        return std::nullopt;
    }
    return it->second;
}

} // namespace

const std::vector<std::string>& defaultList() {
    static const std::vector<std::string> list = {
        "gpu__time_duration.sum",
        "sm__warps_active.avg.pct_of_peak_sustained_active",
        kSmemConflictsLd,
        kSmemConflictsSt,
        kSmemWavefrontsLd,
        kSmemWavefrontsSt,
        kSmemInstLd,
        kSmemInstSt,
        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        "dram__bytes_read.sum",
        "dram__bytes_write.sum",
        "sm__throughput.avg.pct_of_peak_sustained_elapsed",
        "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
        "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
        "lts__t_sector_hit_rate.pct",
        "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum",
        "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum",
        "smsp__warp_issue_stalled_barrier_per_warp_active.pct",
        "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct",
        "smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct",
        "smsp__warp_issue_stalled_wait_per_warp_active.pct",
        "smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct",
        "smsp__warp_issue_stalled_math_pipe_throttle_per_warp_active.pct",
        // Shared-memory conflicts of wgmma operand reads, where the chip has the counter.
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma.sum",
    };
    return list;
}

bool isMetricName(const std::string& name) {
    const size_t sep = name.find("__");
    if (sep == std::string::npos || sep == 0) {
        return false;
    }
    for (size_t i = 0; i < sep; ++i) {
        if (!isLowerWordChar(name[i]) || name[i] == '_') {
            return false;
        }
    }
    const size_t dot = name.find('.', sep + 2);
    if (dot == std::string::npos || dot == sep + 2) {
        return false;
    }
    for (size_t i = sep + 2; i < dot; ++i) {
        if (!isLowerWordChar(name[i])) {
            return false;
        }
    }
    // Every part after the counter is a non-empty word.
    size_t start = dot + 1;
    for (;;) {
        size_t end = name.find('.', start);
        if (end == std::string::npos) {
            end = name.size();
        }
        if (end == start) {
            return false;
        }
        for (size_t i = start; i < end; ++i) {
            if (!isLowerWordChar(name[i])) {
                return false;
            }
        }
        if (end == name.size()) {
            return true;
        }
        start = end + 1;
    }
}

std::vector<std::string> parseList(const json::Value& value, const std::string& field) {
    std::vector<std::string> out;
    if (value.isString()) {
        const std::string& text = value.asString();
        std::string current;
        int index = 0;
        auto flush = [&] {
            if (!current.empty()) {
                addName(out, current, field + " (name " + std::to_string(index) + ")");
                ++index;
                current.clear();
            }
        };
        for (char c : text) {
            if (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r') {
                flush();
            } else {
                current.push_back(c);
            }
        }
        flush();
    } else if (value.isArray()) {
        for (size_t i = 0; i < value.size(); ++i) {
            const std::string where = field + "[" + std::to_string(i) + "]";
            const json::Value& e = value.at(i);
            if (!e.isString()) {
                throw MetricListError(where + ": expected a metric name (string), got " + e.dump());
            }
            addName(out, e.asString(), where);
        }
    } else {
        throw MetricListError(field + ": expected an array of metric names or a string, got " +
                              value.dump());
    }
    if (out.empty()) {
        throw MetricListError(field +
                              ": the metric list is empty (use \"profile\": \"never\" to turn "
                              "profiling off)");
    }
    return out;
}

ProfileOptions parseOptions(const json::Value* options) {
    ProfileOptions p;
    if (!options || options->isNull()) {
        return p;
    }
    if (!options->isObject()) {
        throw MetricListError("options: expected an object");
    }
    if (const json::Value* w = options->find("profile"); w && !w->isNull()) {
        if (w->isBool()) {
            p.when = w->asBool() ? When::Always : When::Never;
        } else if (w->isString() && w->asString() == "always") {
            p.when = When::Always;
        } else if (w->isString() && w->asString() == "improved") {
            p.when = When::Improved;
        } else if (w->isString() && w->asString() == "never") {
            p.when = When::Never;
        } else {
            throw MetricListError(
                "options.profile: " + w->dump() +
                " is not one of \"always\", \"improved\", \"never\", true, false");
        }
    }
    if (const json::Value* b = options->find("profile_best_speedup"); b && !b->isNull()) {
        if (!b->isNumber() || !(b->asDouble() >= 0) || !std::isfinite(b->asDouble())) {
            throw MetricListError("options.profile_best_speedup: expected a non-negative number, "
                                  "got " +
                                  b->dump());
        }
        p.bestSpeedup = b->asDouble();
    }
    if (const json::Value* m = options->find("metrics"); m && !m->isNull()) {
        p.metrics = parseList(*m, "options.metrics");
    }
    return p;
}

bool shouldProfile(const ProfileOptions& options, const std::string& status, double speedup) {
    if (status != "ok") {
        return false;
    }
    switch (options.when) {
    case When::Always:
        return true;
    case When::Improved:
        return speedup > options.bestSpeedup;
    case When::Never:
        return false;
    }
    return false;
}

std::map<std::string, double> derive(const std::map<std::string, double>& values) {
    std::map<std::string, double> out;
    const auto wfLd = get(values, kSmemWavefrontsLd);
    const auto wfSt = get(values, kSmemWavefrontsSt);
    const auto inLd = get(values, kSmemInstLd);
    const auto inSt = get(values, kSmemInstSt);
    const auto cfLd = get(values, kSmemConflictsLd);
    const auto cfSt = get(values, kSmemConflictsSt);
    if (wfLd && inLd && *inLd > 0) {
        out["smem_wavefronts_per_instruction_ld"] = *wfLd / *inLd;
    }
    if (wfSt && inSt && *inSt > 0) {
        out["smem_wavefronts_per_instruction_st"] = *wfSt / *inSt;
    }
    if (wfLd && wfSt && inLd && inSt && *inLd + *inSt > 0) {
        out["smem_wavefronts_per_instruction"] = (*wfLd + *wfSt) / (*inLd + *inSt);
    }
    if (cfLd && cfSt && inLd && inSt && *inLd + *inSt > 0) {
        out["smem_bank_conflicts_per_instruction"] = (*cfLd + *cfSt) / (*inLd + *inSt);
    }
    return out;
}

const char* toString(When when) {
    switch (when) {
    case When::Always:
        return "always";
    case When::Improved:
        return "improved";
    case When::Never:
        return "never";
    }
    return "always";
}

std::string implausible(const json::Value& metrics, const std::string& path) {
    if (metrics.isNumber()) {
        const double v = metrics.asDouble();
        if (!std::isfinite(v) || v < 0)
            return path + " = " + metrics.dump() + " (a counter is finite and not negative)";
        if (path.find("pct") != std::string::npos && v > 100.5)
            return path + " = " + metrics.dump() + " (a percentage of a peak is at most 100)";
        return {};
    }
    if (metrics.isObject()) {
        for (const auto& [key, value] : metrics.members()) {
            if (std::string why = implausible(value, path + "." + key); !why.empty())
                return why;
        }
    } else if (metrics.isArray()) {
        for (size_t i = 0; i < metrics.size(); ++i) {
            if (std::string why = implausible(metrics.at(i), path + "[" + std::to_string(i) + "]");
                !why.empty())
                return why;
        }
    }
    return {};
}

} // namespace kev::metrics
