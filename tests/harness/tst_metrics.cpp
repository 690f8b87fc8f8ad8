// Metric lists as data: the default list, names checked for shape, lists from JSON arrays or
// strings, the profiling options (always, improved, never) and the derived shared-memory ratios.
#include "metrics.h"

#include <gtest/gtest.h>

#include <set>

using namespace kev;
using namespace kev::metrics;

namespace {

std::string errorOf(const json::Value& v, const std::string& field) {
    try {
        parseList(v, field);
    } catch (const MetricListError& e) {
        return e.what();
    }
    return {};
}

} // namespace

TEST(Metrics, DefaultListHasTheIssuesCountersOnceEach) {
    const std::vector<std::string>& list = defaultList();
    const std::set<std::string> unique(list.begin(), list.end());
    EXPECT_EQ(unique.size(), list.size());
    for (const char* name :
         {"sm__warps_active.avg.pct_of_peak_sustained_active",
          "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
          "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
          "smsp__inst_executed_op_shared_ld.sum",
          "dram__throughput.avg.pct_of_peak_sustained_elapsed", "dram__bytes_read.sum",
          "dram__bytes_write.sum",
          "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
          "lts__t_sector_hit_rate.pct", "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum"}) {
        EXPECT_EQ(unique.count(name), 1u) << name;
    }
    for (const std::string& name : list) {
        EXPECT_TRUE(isMetricName(name)) << name;
    }
}

TEST(Metrics, NameShape) {
    EXPECT_TRUE(isMetricName("dram__bytes_read.sum"));
    EXPECT_TRUE(isMetricName("sm__throughput.avg.pct_of_peak_sustained_elapsed"));
    EXPECT_TRUE(isMetricName("lts__t_sector_hit_rate.pct"));
    EXPECT_FALSE(isMetricName("dram__bytes_read"));       // no rollup
    EXPECT_FALSE(isMetricName("dram_bytes_read.sum"));    // no unit separator
    EXPECT_FALSE(isMetricName("__bytes.sum"));            // no unit
    EXPECT_FALSE(isMetricName("DRAM__bytes.sum"));        // upper case
    EXPECT_FALSE(isMetricName("dram__bytes..sum"));       // empty part
    EXPECT_FALSE(isMetricName("dram__bytes.sum."));       // trailing dot
    EXPECT_FALSE(isMetricName("dram__bytes.sum;rm -rf")); // anything else
    EXPECT_FALSE(isMetricName(""));
}

TEST(Metrics, ParsesArraysAndStringsDroppingDuplicates) {
    json::Value a = json::Value::array();
    a.push("dram__bytes_read.sum");
    a.push("lts__t_sector_hit_rate.pct");
    a.push("dram__bytes_read.sum");
    EXPECT_EQ(parseList(a, "options.metrics"),
              (std::vector<std::string>{"dram__bytes_read.sum", "lts__t_sector_hit_rate.pct"}));
    EXPECT_EQ(parseList(json::Value("dram__bytes_read.sum, lts__t_sector_hit_rate.pct\n"
                                    "  sm__throughput.avg.pct_of_peak_sustained_elapsed"),
                        "options.metrics"),
              (std::vector<std::string>{"dram__bytes_read.sum", "lts__t_sector_hit_rate.pct",
                                        "sm__throughput.avg.pct_of_peak_sustained_elapsed"}));
}

TEST(Metrics, RejectionsNameTheFieldAndTheElement) {
    json::Value a = json::Value::array();
    a.push("dram__bytes_read.sum");
    a.push("dram__bytes");
    std::string e = errorOf(a, "options.metrics");
    EXPECT_NE(e.find("options.metrics[1]"), std::string::npos) << e;
    EXPECT_NE(e.find("dram__bytes"), std::string::npos) << e;

    json::Value b = json::Value::array();
    b.push(3);
    e = errorOf(b, "options.metrics");
    EXPECT_NE(e.find("options.metrics[0]: expected a metric name"), std::string::npos) << e;

    e = errorOf(json::Value::array(), "options.metrics");
    EXPECT_NE(e.find("empty"), std::string::npos) << e;
    e = errorOf(json::Value(" , "), "options.metrics");
    EXPECT_NE(e.find("empty"), std::string::npos) << e;
    e = errorOf(json::Value(true), "options.metrics");
    EXPECT_NE(e.find("expected an array"), std::string::npos) << e;
}

TEST(Metrics, OptionsDefaultToProfilingEveryCorrectCandidate) {
    const ProfileOptions p = parseOptions(nullptr);
    EXPECT_EQ(p.when, When::Always);
    EXPECT_EQ(p.metrics, defaultList());
    EXPECT_TRUE(shouldProfile(p, "ok", 0.5));
    EXPECT_FALSE(shouldProfile(p, "incorrect", 0));
    EXPECT_FALSE(shouldProfile(p, "unstable", 1.0));
}

TEST(Metrics, OptionsLimitProfilingToImprovements) {
    const json::Value o = json::parse(
        R"({"profile":"improved","profile_best_speedup":0.8,"metrics":["dram__bytes_read.sum"]})");
    const ProfileOptions p = parseOptions(&o);
    EXPECT_EQ(p.when, When::Improved);
    EXPECT_EQ(p.metrics, std::vector<std::string>{"dram__bytes_read.sum"});
    EXPECT_FALSE(shouldProfile(p, "ok", 0.75));
    EXPECT_FALSE(shouldProfile(p, "ok", 0.8));
    EXPECT_TRUE(shouldProfile(p, "ok", 0.85));

    const json::Value off = json::parse(R"({"profile":false})");
    EXPECT_FALSE(shouldProfile(parseOptions(&off), "ok", 2.0));
    const json::Value never = json::parse(R"({"profile":"never"})");
    EXPECT_EQ(parseOptions(&never).when, When::Never);
}

TEST(Metrics, BadOptionsNameTheField) {
    const json::Value o = json::parse(R"({"profile":"sometimes"})");
    try {
        parseOptions(&o);
        FAIL() << "accepted profile: sometimes";
    } catch (const MetricListError& e) {
        EXPECT_NE(std::string(e.what()).find("options.profile"), std::string::npos) << e.what();
    }
    const json::Value s = json::parse(R"({"profile_best_speedup":-1})");
    EXPECT_THROW(parseOptions(&s), MetricListError);
    const json::Value m = json::parse(R"({"metrics":["nope"]})");
    EXPECT_THROW(parseOptions(&m), MetricListError);
}

TEST(Metrics, WavefrontsPerInstruction) {
    // A 4-way conflicted kernel: 4 wavefronts per shared load and store.
    std::map<std::string, double> v = {
        {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", 4000},
        {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", 400},
        {"smsp__inst_executed_op_shared_ld.sum", 1000},
        {"smsp__inst_executed_op_shared_st.sum", 100},
        {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", 3000},
        {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", 300},
    };
    const std::map<std::string, double> d = derive(v);
    EXPECT_DOUBLE_EQ(d.at("smem_wavefronts_per_instruction"), 4.0);
    EXPECT_DOUBLE_EQ(d.at("smem_wavefronts_per_instruction_ld"), 4.0);
    EXPECT_DOUBLE_EQ(d.at("smem_wavefronts_per_instruction_st"), 4.0);
    EXPECT_DOUBLE_EQ(d.at("smem_bank_conflicts_per_instruction"), 3.0);
}

TEST(Metrics, DerivedValuesNeedTheirInputs) {
    // No shared instructions at all: no ratio, rather than a division by zero.
    std::map<std::string, double> v = {
        {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", 0},
        {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", 0},
        {"smsp__inst_executed_op_shared_ld.sum", 0},
        {"smsp__inst_executed_op_shared_st.sum", 0},
    };
    EXPECT_TRUE(derive(v).empty());
    v.erase("smsp__inst_executed_op_shared_st.sum");
    v["smsp__inst_executed_op_shared_ld.sum"] = 10;
    v["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] = 12;
    const auto d = derive(v);
    EXPECT_DOUBLE_EQ(d.at("smem_wavefronts_per_instruction_ld"), 1.2);
    EXPECT_EQ(d.count("smem_wavefronts_per_instruction"), 0u);
}

// A cached reference any process could have written is used only when its counters could be real.
TEST(Metrics, ImplausibleCountersAreNamed) {
    const kev::json::Value ok = kev::json::parse(
        R"({"reference":{"sm__throughput.avg.pct_of_peak_sustained_elapsed":86.5,"dram__bytes.sum":1e9},"reference_kernel":"nvjet"})");
    EXPECT_EQ(kev::metrics::implausible(ok), "");
    const kev::json::Value pct = kev::json::parse(
        R"({"reference":{"sm__throughput.avg.pct_of_peak_sustained_elapsed":4000}})");
    EXPECT_NE(kev::metrics::implausible(pct).find(
                  "metrics.reference.sm__throughput.avg.pct_of_peak_sustained_elapsed"),
              std::string::npos);
    const kev::json::Value negative =
        kev::json::parse(R"({"reference":{"dram__bytes.sum":-5},"reference_kernels":[]})");
    EXPECT_NE(kev::metrics::implausible(negative).find("not negative"), std::string::npos);
}
