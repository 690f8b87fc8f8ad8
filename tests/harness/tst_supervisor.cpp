// The supervisor's GPU path without a GPU: a fake NVML reports one device, a fake nvcc copies a
// prebuilt object, and a script stands in for the `run-one` child, speaking its fd-3 protocol (or
// crashing, hanging, tripping the sandbox). What is tested is how the real `serve` turns each
// child outcome into a report.
#include "compile.h"
#include "gpu_lock.h"
#include "task.h"
#include "serve_client.h"

#include "temp_dir.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>
#include <fstream>
#include <map>
#include <sys/stat.h>

using kev::json::Value;
using kev::test::request;
using kev::test::ServeClient;
namespace fs = std::filesystem;

namespace {

const char* kClean = R"(#include <kevolve/abi.h>
__global__ void zero(float* c) { c[threadIdx.x] = 0.f; }
extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* a, cudaStream_t s) {
    zero<<<1, 32, 0, s>>>(static_cast<float*>(a->outputs[0].data));
    return cudaGetLastError() != cudaSuccess;
}
)";

// clang-format off
// Stands in for nvcc: copies the prebuilt object to the -o path.
const char* kFakeNvcc = R"SH(#!/bin/sh
if [ "$1" = "--version" ]; then echo "Cuda compilation tools, release 13.0, V13.0.88"; exit 0; fi
out=""
while [ $# -gt 0 ]; do
    if [ "$1" = "-o" ]; then out="$2"; shift; fi
    shift
done
echo "ptxas info    : Compiling entry function '_Z4zeroPf' for 'sm_90a'"
env > "$KEV_JOB_DIR/nvcc.env"
cp "$KEV_PREBUILT" "$out"
)SH";

// Stands in for both GPU children. `verify --result-fd 3 --runner-in R --runner-out W
// [--hold-timing]` (job on stdin) writes the verdict; `run-one --job JOB --result-fd 3 --peer-in ..`
// is the runner, which writes only its own observations; `run-one ... --profile` the profiling
// child. What each does depends on the evaluation's id.
const char* kFakeChild = R"SH(#!/bin/sh
tok() { sed "s/\"type\":\"result\"/&,\"token\":\"$KEVOLVE_RESULT_TOKEN\"/"; }
result='{"type":"result","role":"verifier","status":"ok","message":"correct; 0.93x cuBLAS","suspicious":false,"environment":{"gpu":{"name":"Child H200","sm_count":132},"cuda_runtime_version":13000},"correctness":{"ok":true,"trials":[]},"timing":{"median_ms":0.2145,"speedup_vs_reference":0.93},"checks":[{"name":"inputs_unchanged","ok":true,"evidence":"12 calls"}],"stages":{"validate_s":0.4,"time_s":1.6}}'
if [ "$1" = "verify" ]; then
    read -r jobline
    id=$(printf '%s\n' "$jobline" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p')
    printf '%s\n' "$jobline" > "$KEV_JOB_DIR/$id.verifier.json"
    rin="$5"
    # Held until the profiling child is ready: record what released it, and when.
    if [ "$8" = "--hold-timing" ]; then
        read -r hold
        echo "$hold $(date +%s%N)" > "$KEV_JOB_DIR/$id.hold"
    fi
    case "$id" in
    profiled|profiled_again|profiled_late|profiled_crash|ok|violation|runner_forged|runner_two|runner_silent)
        echo '{"type":"progress","stage":"time","message":"round 1","fraction":0.5}' >&3
        echo "$result" | tok >&3 ;;
    garbage)
        echo 'this is not json' >&3
        echo "$result" | tok >&3 ;;
    sigsys|crash)
        # Like the real verifier: the runner's pipe ends when the runner dies.
        cat "/proc/self/fd/$rin" > /dev/null
        echo '{"type":"result","role":"verifier","status":"runtime_error","message":"the runner ended during '"'call'"' (no reply)","error":{"stage":"run","message":"the runner ended"}}' | tok >&3 ;;
    hang)
        sleep 100 ;;
    escape)
        # Leaves its process group for the supervisor's, then hangs: the time-out must still end it.
        exec perl -e 'setpgrp(0, getpgrp(getppid())) or exit 9; print STDERR "escaped\n"; sleep' ;;
    two)
        echo "$result" | tok >&3
        echo "$result" | tok >&3 ;;
    forged)
        echo "$result" >&3 ;;
    flood)
        echo "$result" | tok >&3
        head -c 80000000 /dev/zero | tr '\0' J >&3 ;;
    trailing)
        echo "$result" | tok >&3
        echo '{"type":"progress","stage":"x"}' >&3 ;;
    silent)
        exit 0 ;;
    esac
    exit 0
fi
job="$3"
id=$(sed -n 's/^  "id": "\(.*\)",$/\1/p' "$job")
if [ "$6" = "--profile" ]; then
    # Started next to the evaluation: it waits for the supervisor's go and records it.
    if [ "$7" = "--wait-go" ]; then
        sleep 0.3
        date +%s%N > "$KEV_JOB_DIR/$id.ready"
        echo '{"type":"ready"}' >&3
        read -r go || exit 0
        echo "$go" > "$KEV_JOB_DIR/$id.go"
    fi
    case "$id" in
    profiled|profiled_again|profiled_late)
        # The reference's counters, before the candidate is loaded (not for profiled_late, whose
        # only copy comes in the result, after the candidate ran).
        if [ "$go" = "go" ] && [ "$id" != profiled_late ]; then
            echo '{"type":"reference_metrics","metrics":{"available":true,"reference":{"sm__throughput.avg.pct_of_peak_sustained_elapsed":86.5},"reference_kernel":"nvjet_fake","reference_kernels":[]}}' >&3
        fi
        if [ "$go" = "go candidate-only" ]; then
            echo '{"type":"result","status":"ok","message":"profiled","metrics":{"available":true,"candidate":{"sm__throughput.avg.pct_of_peak_sustained_elapsed":85.9}}}' | tok >&3
        else
            echo '{"type":"result","status":"ok","message":"profiled","metrics":{"available":true,"candidate":{"sm__throughput.avg.pct_of_peak_sustained_elapsed":85.9},"reference":{"sm__throughput.avg.pct_of_peak_sustained_elapsed":86.5},"reference_kernel":"nvjet_fake","reference_kernels":[]}}' | tok >&3
        fi ;;
    profiled_crash) exit 7 ;;
    esac
    exit 0
fi
# The runner.
cp "$job" "$KEV_JOB_DIR/$id.json"
env > "$KEV_JOB_DIR/$id.env"
runner='{"type":"result","role":"runner","calls":12,"checks":[{"name":"sandbox","ok":true,"evidence":"seccomp"},{"name":"launch_audit","ok":true,"evidence":"3 launches"}],"resources":{"kernels":[]}}'
case "$id" in
sigsys)
    echo 'the candidate tries fork' >&2
    kill -SYS $$ ;;
crash)
    echo 'boom: segmentation fault in kevolve_launch' >&2
    exit 3 ;;
violation)
    echo '{"type":"result","role":"runner","violations":["kernel launched on stream 0x1234, not the harness stream"],"checks":[{"name":"launch_audit","ok":false,"evidence":"1 launch on 0x1234"}]}' | tok >&3 ;;
runner_forged)
    echo '{"type":"result","role":"runner","checks":[]}' >&3 ;;
runner_two)
    echo "$runner" | tok >&3
    echo "$runner" | tok >&3 ;;
runner_silent)
    exit 0 ;;
*)
    echo "$runner" | tok >&3 ;;
esac
)SH";
// clang-format on

class Supervisor : public ::testing::Test {
protected:
    static void TearDownTestSuite() {
        std::error_code ec;
        fs::remove_all(s_dir, ec);
    }

    static void SetUpTestSuite() {
        s_dir = fs::temp_directory_path() / ("kev_supervisor_test_" + std::to_string(::getpid()));
        fs::remove_all(s_dir);
        fs::create_directories(s_dir / "jobs");
        std::ofstream(s_dir / "clean.cu") << kClean;
        kev::compile::Options o;
        o.source = (s_dir / "clean.cu").string();
        o.output = (s_dir / "clean.so").string();
        o.timeoutS = 300;
        s_prebuilt = kev::compile::compile(o).ok;
        for (const auto& [name, text] :
             {std::pair<const char*, const char*>{"nvcc", kFakeNvcc}, {"child.sh", kFakeChild}}) {
            std::ofstream(s_dir / name) << text;
            ::chmod((s_dir / name).c_str(), 0755);
        }
    }

    static std::vector<std::pair<std::string, std::string>> env() {
        return {{"KEVOLVE_NVML_LIBRARY", KEVOLVE_FAKE_NVML},
                {"KEVOLVE_NVCC", (s_dir / "nvcc").string()},
                {"KEVOLVE_TEST_CHILD", (s_dir / "child.sh").string()},
                {"KEV_PREBUILT", (s_dir / "clean.so").string()},
                {"KEV_JOB_DIR", (s_dir / "jobs").string()},
                {"KEVOLVE_CACHE_DIR", (s_dir / "cache").string()},
                // The per-GPU lock of this suite only: other suites use the same fake GPU.
                {"KEVOLVE_LOCK_DIR", (s_dir / "locks").string()},
                // The stand-ins' own settings pass by the operator's explicit choice; the keys
                // must reach neither nvcc nor the GPU child.
                {"KEVOLVE_PASS_ENV", "KEV_PREBUILT,KEV_JOB_DIR"},
                {"OPENAI_API_KEY", "sk-test-openai-secret"},
                {"KEVOLVE_API_KEY", "kv-test-kevolve-secret"},
                {"SOME_SERVICE_TOKEN", "tok-test-secret"}};
    }

    static Value eval(const std::string& id, double runTimeout = 60) {
        Value r = request("eval", id);
        r["task_path"] =
            std::string(KEVOLVE_SOURCE_DIR) + "/resources/tasks/gemm_fp16_fp32_4096.json";
        r["kernel"]["source"] = kClean;
        r["kernel"]["name"] = id + ".cu";
        r["options"]["run_timeout_s"] = runTimeout;
        r["options"]["time_budget_s"] = 1.5;
        // Profiling (a second child, run-one --profile) runs only for the ids that ask for it.
        r["options"]["self_check"] = id.rfind("profiled", 0) != 0;
        return r;
    }

    // Runs evaluations with these ids through one server; their reports by id.
    static std::map<std::string, Value> reports(const std::vector<std::string>& ids,
                                                double runTimeout = 60) {
        ServeClient server(env());
        for (const auto& id : ids)
            server.send(eval(id, runTimeout));
        std::map<std::string, Value> out;
        for (const auto& id : ids) {
            auto r = server.waitFor("result", Value(id), 120);
            if (r)
                out[id] = *r->find("report");
        }
        s_history = server.history();
        server.send(request("shutdown", "s"));
        server.waitFor("bye", Value("s"), 30);
        return out;
    }

    static fs::path s_dir;
    static bool s_prebuilt;
    static std::vector<Value> s_history;
};

fs::path Supervisor::s_dir;
bool Supervisor::s_prebuilt = false;
std::vector<Value> Supervisor::s_history;

std::string str(const Value* v) {
    return v && v->isString() ? v->asString() : std::string("<missing>");
}

} // namespace

TEST_F(Supervisor, ChildResultIsMergedIntoTheReport) {
    ASSERT_TRUE(s_prebuilt);
    auto r = reports({"ok", "garbage"});
    ASSERT_EQ(r.count("ok"), 1u);
    const Value& ok = r["ok"];
    EXPECT_EQ(str(ok.find("status")), "ok") << ok.dump(2);
    EXPECT_EQ(str(ok.find("message")), "correct; 0.93x cuBLAS");
    // The child's environment extends and overrides the supervisor's.
    const Value& env = *ok.find("environment");
    EXPECT_EQ(str(env.find("gpu")->find("name")), "Child H200");
    EXPECT_EQ(env.find("gpu")->find("sm_count")->asInt(), 132);
    EXPECT_EQ(str(env.find("gpu")->find("uuid")), "GPU-00000000-fake"); // from NVML
    EXPECT_EQ(str(env.find("driver_version")), "999.99.99");
    EXPECT_EQ(str(env.find("nvcc")), "13.0.88");
    EXPECT_EQ(str(env.find("arch")), "sm_90a");
    EXPECT_EQ(env.find("cuda_runtime_version")->asInt(), 13000);
    EXPECT_DOUBLE_EQ(ok.find("timing")->find("speedup_vs_reference")->asDouble(), 0.93);
    EXPECT_TRUE(ok.find("correctness")->find("ok")->asBool());
    // Lint checks first, then the runner's, then the verifier's, then the channels'.
    const Value& checks = *ok.find("rules")->find("checks");
    ASSERT_GE(checks.size(), 5u) << checks.dump();
    const size_t n = checks.size();
    EXPECT_EQ(str(checks.at(0).find("name")), "undefined_symbols");
    EXPECT_EQ(str(checks.at(n - 4).find("name")), "sandbox");
    EXPECT_EQ(str(checks.at(n - 3).find("name")), "launch_audit");
    EXPECT_EQ(str(checks.at(n - 2).find("name")), "inputs_unchanged");
    EXPECT_EQ(str(checks.at(n - 1).find("name")), "result_channel");
    EXPECT_NE(ok.find("resources"), nullptr) << "the runner's resources reach the report";
    EXPECT_TRUE(ok.find("rules")->find("ok")->asBool());
    const Value& stages = *ok.find("stages");
    for (const char* k : {"compile_s", "lint_s", "gpu_s", "validate_s", "time_s", "total_s"})
        EXPECT_TRUE(stages.find(k) && stages.find(k)->isNumber()) << k;
    EXPECT_EQ(str(ok.find("reverify")),
              "kevolve-harness eval --task gemm_fp16_fp32_4096.json --kernel ok.cu --self-check");

    bool forwarded = false;
    for (const auto& e : s_history) {
        if (str(e.find("event")) == "progress" && str(e.find("stage")) == "time" &&
            str(e.find("message")) == "round 1")
            forwarded = true;
    }
    EXPECT_TRUE(forwarded) << "the child's progress is forwarded";

    // A line outside the protocol is not ignored: the channel is refused with the evidence.
    ASSERT_EQ(r.count("garbage"), 1u);
    EXPECT_EQ(str(r["garbage"].find("status")), "rule_violation");
    EXPECT_NE(str(r["garbage"].find("message")).find("line 1 is not JSON"), std::string::npos)
        << r["garbage"].dump(2);
    EXPECT_EQ(str(r["garbage"].find("error")->find("channel")->find("violation")->find("excerpt")),
              "this is not json");

    // The job file the child was given.
    const std::string text = kev::test::readFile(s_dir / "jobs" / "ok.json");
    const Value job = kev::json::parse(text);
    EXPECT_EQ(job.find("v")->asInt(), 1);
    EXPECT_EQ(str(job.find("id")), "ok");
    EXPECT_EQ(job.find("device")->asInt(), 0);
    EXPECT_EQ(str(job.find("pci_bus_id")), "00000000:19:00.0");
    EXPECT_TRUE(job.find("self_check")->asBool());
    EXPECT_TRUE(job.find("lint")->asBool());
    // No seed anywhere the runner can read (the verifier draws its own from getrandom).
    EXPECT_EQ(job.find("seed"), nullptr) << text;
    EXPECT_EQ(text.find("seed"), std::string::npos) << text;
    // The verifier got the same job on its stdin, not through a file.
    const Value vjob = kev::json::parse(kev::test::readFile(s_dir / "jobs" / "ok.verifier.json"));
    EXPECT_EQ(str(vjob.find("id")), "ok");
    EXPECT_EQ(vjob.find("seed"), nullptr);
    EXPECT_EQ(str(job.find("library")), str(job.find("workdir")) + "/cand.so");
    EXPECT_DOUBLE_EQ(job.find("task")->find("timing")->find("budget_s")->asDouble(), 1.5)
        << "time_budget_s overrides the task's budget for the child";
    EXPECT_DOUBLE_EQ(job.find("options")->find("run_timeout_s")->asDouble(), 60.0);
    EXPECT_FALSE(fs::exists(str(job.find("workdir")))) << "the work dir is removed";
}

TEST_F(Supervisor, ProfilingChildAddsMetricsWithoutChangingTheVerdict) {
    ASSERT_TRUE(s_prebuilt);
    auto r = reports({"profiled", "profiled_crash"});
    ASSERT_EQ(r.size(), 2u);
    const Value& p = r["profiled"];
    EXPECT_EQ(str(p.find("status")), "ok") << p.dump(2);
    ASSERT_NE(p.find("metrics"), nullptr) << p.dump(2);
    EXPECT_TRUE(p.find("metrics")->find("available")->asBool());
    EXPECT_DOUBLE_EQ(p.find("metrics")
                         ->find("candidate")
                         ->find("sm__throughput.avg.pct_of_peak_sustained_elapsed")
                         ->asDouble(),
                     85.9);
    EXPECT_TRUE(p.find("stages")->find("profile_s")->isNumber());
    // A profiling child that dies leaves the reason, and the evaluation's verdict stands.
    const Value& c = r["profiled_crash"];
    EXPECT_EQ(str(c.find("status")), "ok") << c.dump(2);
    EXPECT_FALSE(c.find("metrics")->find("available")->asBool());
    EXPECT_NE(str(c.find("metrics")->find("reason")).find("exited with code 7"), std::string::npos);
}

// The profiling child starts with the evaluation and waits for its go; the reference's counters
// are profiled once and then come from the cache, the child profiling the candidate alone.
TEST_F(Supervisor, ProfilingChildIsStartedEarlyAndTheReferenceIsCached) {
    ASSERT_TRUE(s_prebuilt);
    fs::remove_all(s_dir / "cache");
    auto first = reports({"profiled"});
    auto second = reports({"profiled_again"});
    ASSERT_EQ(first.size(), 1u);
    ASSERT_EQ(second.size(), 1u);
    const Value& a = first["profiled"];
    const Value& b = second["profiled_again"];
    std::string go;
    std::getline(std::ifstream(s_dir / "jobs" / "profiled.go"), go);
    EXPECT_EQ(go, "go");
    std::getline(std::ifstream(s_dir / "jobs" / "profiled_again.go"), go);
    EXPECT_EQ(go, "go candidate-only");
    EXPECT_EQ(str(a.find("metrics")->find("reference_source"))
                  .rfind("profiled before the candidate was loaded (cached at ", 0),
              0u)
        << a.dump(2);
    EXPECT_EQ(str(b.find("metrics")->find("reference_source")).rfind("cache ", 0), 0u) << b.dump(2);
    EXPECT_EQ(str(b.find("metrics")->find("reference_kernel")), "nvjet_fake");
    EXPECT_DOUBLE_EQ(b.find("metrics")
                         ->find("reference")
                         ->find("sm__throughput.avg.pct_of_peak_sustained_elapsed")
                         ->asDouble(),
                     86.5);
    EXPECT_TRUE(b.find("stages")->find("profile_hidden_s")->isNumber());
    // The evaluation's timing was held until the profiling child had started.
    std::string released;
    long long releasedAt = 0, readyAt = 0;
    std::ifstream(s_dir / "jobs" / "profiled.hold") >> released >> releasedAt;
    std::ifstream(s_dir / "jobs" / "profiled.ready") >> readyAt;
    EXPECT_EQ(released, "time");
    EXPECT_GT(readyAt, 0);
    EXPECT_GE(releasedAt, readyAt);
}

// Class 6: reference counters that only the result carried (after the candidate ran in that
// process) are shown but never cached.
TEST_F(Supervisor, ReferenceCountersFromAfterTheCandidateAreNotCached) {
    ASSERT_TRUE(s_prebuilt);
    fs::remove_all(s_dir / "cache");
    auto first = reports({"profiled_late"});
    ASSERT_EQ(first.count("profiled_late"), 1u);
    const Value& a = first["profiled_late"];
    EXPECT_EQ(str(a.find("metrics")->find("reference_source")).rfind("profiled (not cached", 0), 0u)
        << a.dump(2);
    bool cached = false;
    if (fs::exists(s_dir / "cache")) {
        for (const auto& f : fs::directory_iterator(s_dir / "cache"))
            cached = cached || f.path().filename().string().rfind("reference-metrics-", 0) == 0;
    }
    EXPECT_FALSE(cached);
    std::string go;
    std::getline(std::ifstream(s_dir / "jobs" / "profiled_late.go"), go);
    EXPECT_EQ(go, "go");
}

TEST_F(Supervisor, ChildFailuresBecomeStatuses) {
    ASSERT_TRUE(s_prebuilt);
    auto r = reports({"sigsys", "crash", "two", "silent", "violation", "forged"});
    ASSERT_EQ(r.size(), 6u);

    EXPECT_EQ(str(r["sigsys"].find("status")), "rule_violation");
    EXPECT_EQ(str(r["sigsys"].find("message")),
              "the sandbox killed the candidate: forbidden system call");
    EXPECT_NE(r["sigsys"].find("rules")->find("violations")->dump().find("SIGSYS"),
              std::string::npos);
    EXPECT_EQ(str(r["sigsys"].find("error")->find("signal_name")), "SIGSYS");
    EXPECT_NE(str(r["sigsys"].find("error")->find("stderr")).find("tries fork"), std::string::npos);

    EXPECT_EQ(str(r["crash"].find("status")), "runtime_error");
    EXPECT_EQ(str(r["crash"].find("message")), "the runner ended during 'call' (no reply)");
    EXPECT_EQ(r["crash"].find("error")->find("exit_code")->asInt(), 3);
    EXPECT_EQ(str(r["crash"].find("error")->find("process")), "runner");
    EXPECT_NE(str(r["crash"].find("error")->find("stderr")).find("boom"), std::string::npos);
    EXPECT_EQ(r["crash"].find("correctness"), nullptr);

    EXPECT_EQ(str(r["two"].find("status")), "rule_violation");
    EXPECT_NE(str(r["two"].find("message")).find("line 2 follows the result line"),
              std::string::npos)
        << r["two"].dump(2);

    EXPECT_EQ(str(r["silent"].find("status")), "runtime_error");

    // A well-formed result without the child's token was written by someone else on its fd.
    EXPECT_EQ(str(r["forged"].find("status")), "rule_violation");
    EXPECT_NE(str(r["forged"].find("message")).find("forged"), std::string::npos);

    const Value& v = r["violation"];
    EXPECT_EQ(str(v.find("status")), "rule_violation");
    EXPECT_FALSE(v.find("rules")->find("ok")->asBool());
    EXPECT_NE(v.find("rules")->find("violations")->dump().find("not the harness stream"),
              std::string::npos);
}

// The verifier's ok is the only ok: what the runner (the candidate's process) adds can only make
// the verdict worse.
TEST_F(Supervisor, RunnerCanOnlyWorsenTheVerdict) {
    ASSERT_TRUE(s_prebuilt);
    auto r = reports({"runner_forged", "runner_two", "runner_silent"});
    ASSERT_EQ(r.size(), 3u);
    EXPECT_EQ(str(r["runner_forged"].find("status")), "rule_violation")
        << r["runner_forged"].dump(2);
    EXPECT_NE(str(r["runner_forged"].find("message")).find("the runner's result channel"),
              std::string::npos);
    EXPECT_NE(str(r["runner_forged"].find("message")).find("forged"), std::string::npos);
    EXPECT_EQ(str(r["runner_two"].find("status")), "rule_violation");
    EXPECT_NE(str(r["runner_two"].find("message")).find("line 2 follows the result line"),
              std::string::npos)
        << r["runner_two"].dump(2);
    EXPECT_EQ(str(r["runner_silent"].find("status")), "runtime_error");
    EXPECT_NE(str(r["runner_silent"].find("message")).find("runner ended without"),
              std::string::npos);
}

// Class 8 of THREAT_MODEL.md: junk on the result channel after a well-formed result is a
// violation with evidence (an 80 MB flood is not dropped silently), and the server lives on.
TEST_F(Supervisor, ResultChannelFloodIsARuleViolation) {
    ASSERT_TRUE(s_prebuilt);
    auto r = reports({"flood", "trailing", "ok"});
    ASSERT_EQ(r.size(), 3u);
    EXPECT_EQ(str(r["flood"].find("status")), "rule_violation") << r["flood"].dump(2);
    EXPECT_NE(str(r["flood"].find("message")).find("result channel"), std::string::npos);
    const Value* channel = r["flood"].find("error")->find("channel");
    ASSERT_NE(channel, nullptr);
    EXPECT_FALSE(channel->find("ok")->asBool());
    // The junk after the result never got a newline within the line limit.
    EXPECT_EQ(str(channel->find("violation")->find("kind")), "line_too_long");
    EXPECT_EQ(str(channel->find("violation")->find("excerpt")).substr(0, 8), "JJJJJJJJ");
    EXPECT_EQ(str(r["trailing"].find("status")), "rule_violation");
    EXPECT_NE(str(r["trailing"].find("message")).find("line 2 follows the result line"),
              std::string::npos)
        << r["trailing"].dump(2);
    EXPECT_EQ(str(r["ok"].find("status")), "ok") << "the server is alive after the flood";
}

// Class 9: the user's keys in the supervisor's environment reach neither nvcc nor the child.
TEST_F(Supervisor, SecretsReachNeitherNvccNorTheChild) {
    ASSERT_TRUE(s_prebuilt);
    auto r = reports({"ok"});
    ASSERT_EQ(r.count("ok"), 1u);
    for (const char* file : {"nvcc.env", "ok.env"}) {
        const std::string env = kev::test::readFile(s_dir / "jobs" / file);
        ASSERT_NE(env.find("PATH="), std::string::npos) << file << ":\n" << env;
        for (const char* secret : {"sk-test-openai-secret", "kv-test-kevolve-secret",
                                   "tok-test-secret", "OPENAI_API_KEY", "KEVOLVE_API_KEY"})
            EXPECT_EQ(env.find(secret), std::string::npos) << secret << " leaked into " << file;
    }
    EXPECT_NE(kev::test::readFile(s_dir / "jobs" / "ok.env").find("KEVOLVE_RESULT_TOKEN="),
              std::string::npos);
}

TEST_F(Supervisor, FileReferenceIsCompiledForTheChild) {
    ASSERT_TRUE(s_prebuilt);
    std::ofstream(s_dir / "ref.cu") << kClean;
    Value task = kev::toJson(kev::loadTaskFile(std::string(KEVOLVE_SOURCE_DIR) +
                                               "/resources/tasks/gemm_fp16_fp32_4096.json"));
    task["reference"] = Value::object();
    task["reference"]["file"] = "ref.cu";
    std::ofstream(s_dir / "with_ref.json") << task.dump(2);

    ServeClient server(env());
    Value r = eval("ref");
    r.erase("task_path");
    r["task_path"] = (s_dir / "with_ref.json").string();
    server.send(r);
    Value inlineRelative = eval("inline");
    inlineRelative.erase("task_path");
    inlineRelative["task"] = task;
    server.send(inlineRelative);
    auto bad = server.waitFor("error", Value("inline"), 60);
    ASSERT_TRUE(bad);
    EXPECT_EQ(str(bad->find("code")), "bad_task");
    EXPECT_NE(str(bad->find("message")).find("task.reference.file: ref.cu"), std::string::npos);
    ASSERT_TRUE(server.waitFor("result", Value("ref"), 120));

    const std::string text = kev::test::readFile(s_dir / "jobs" / "ref.json");
    const Value job = kev::json::parse(text);
    EXPECT_EQ(str(job.find("reference_library")), str(job.find("workdir")) + "/ref.so");
    EXPECT_EQ(str(job.find("task")->find("reference")->find("file")), (s_dir / "ref.cu").string());
}

TEST_F(Supervisor, HungChildTimesOut) {
    ASSERT_TRUE(s_prebuilt);
    auto r = reports({"hang", "escape"}, 1.0);
    ASSERT_EQ(r.count("hang"), 1u);
    // Class 7: a child that left its process group is killed by pid at its deadline, and the
    // server goes on to the next evaluation (reports() waits for both).
    ASSERT_EQ(r.count("escape"), 1u);
    EXPECT_EQ(str(r["escape"].find("status")), "timeout") << r["escape"].dump(2);
    EXPECT_NE(str(r["escape"].find("error")->find("stderr")).find("escaped"), std::string::npos)
        << r["escape"].dump(2);
    EXPECT_EQ(str(r["hang"].find("status")), "timeout");
    EXPECT_EQ(str(r["hang"].find("message")),
              "the GPU child did not finish within 1 s (run_timeout_s) and was killed");
    EXPECT_LT(r["hang"].find("stages")->find("gpu_s")->asDouble(), 10.0);
}

TEST_F(Supervisor, CancelKillsARunningChild) {
    ASSERT_TRUE(s_prebuilt);
    ServeClient server(env());
    server.send(eval("hang", 600));
    ASSERT_TRUE(server.waitFor("progress", Value("hang"), 60)); // compile
    // Wait until the child runs (the "validate" stage starts it), then cancel.
    for (int i = 0; i < 100; ++i) {
        bool started = false;
        for (const auto& e : server.history())
            started = started || str(e.find("stage")) == "validate";
        if (started)
            break;
        server.next(0.1);
    }
    Value cancel = request("cancel", "c");
    cancel["target"] = "hang";
    const auto t0 = std::chrono::steady_clock::now();
    server.send(cancel);
    EXPECT_TRUE(server.waitFor("cancelled", Value("hang"), 30));
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10);
    server.send(request("hello", "h"));
    EXPECT_TRUE(server.waitFor("hello", Value("h"), 30));
    server.send(request("shutdown", "s"));
    EXPECT_TRUE(server.waitFor("bye", Value("s"), 30));
    EXPECT_EQ(server.wait(30).exitCode, 0);
}

TEST_F(Supervisor, HelloNamesTheGpuItMeasuresOn) {
    ServeClient server(env());
    server.send(request("hello", "h"));
    const auto hello = server.waitFor("hello", Value("h"), 30);
    ASSERT_TRUE(hello);
    ASSERT_NE(hello->find("device"), nullptr) << hello->dump();
    EXPECT_EQ(hello->find("device")->asInt(), 0);
    EXPECT_EQ(str(hello->find("device_uuid")), "GPU-00000000-fake");
    server.send(request("shutdown", "s"));
    EXPECT_TRUE(server.waitFor("bye", Value("s"), 30));

    // Under CUDA_VISIBLE_DEVICES=1, CUDA's device 0 is NVML's device 1, which this host lacks.
    auto hidden = env();
    hidden.emplace_back("CUDA_VISIBLE_DEVICES", "1");
    ServeClient other(hidden);
    other.send(request("hello", "h"));
    const auto second = other.waitFor("hello", Value("h"), 30);
    ASSERT_TRUE(second);
    EXPECT_EQ(second->find("device_uuid"), nullptr) << second->dump();
    other.send(request("shutdown", "s"));
    EXPECT_TRUE(other.waitFor("bye", Value("s"), 30));
}

TEST_F(Supervisor, AGpuAnotherHarnessMeasuresOnIsWaitedFor) {
    ASSERT_TRUE(s_prebuilt);
    // This test plays another kevolve-harness process that measures on the fake GPU.
    kev::GpuLock other;
    int holder = 0;
    std::string error;
    ASSERT_TRUE(other.tryAcquire((s_dir / "locks").string(), "GPU-00000000-fake", &holder, &error))
        << error;
    fs::remove(s_dir / "jobs" / "ok.json");
    ServeClient server(env());
    server.send(eval("ok"));
    bool waiting = false;
    while (!waiting) {
        const auto p = server.waitFor("progress", Value("ok"), 120);
        ASSERT_TRUE(p) << "no \"waiting for GPU\" progress";
        const std::string message = str(p->find("message"));
        waiting = message.find("waiting for GPU GPU-00000000-fake") != std::string::npos;
        if (waiting) {
            EXPECT_NE(message.find("(pid " + std::to_string(::getpid()) + ")"), std::string::npos)
                << message;
        }
    }
    // While the lock is held the GPU child never starts (it would leave its job file).
    std::this_thread::sleep_for(std::chrono::seconds(1));
    EXPECT_FALSE(fs::exists(s_dir / "jobs" / "ok.json"));
    other.release();
    const auto result = server.waitFor("result", Value("ok"), 120);
    ASSERT_TRUE(result);
    EXPECT_EQ(str(result->find("report")->find("status")), "ok");
    EXPECT_TRUE(fs::exists(s_dir / "jobs" / "ok.json"));
    server.send(request("shutdown", "s"));
    EXPECT_TRUE(server.waitFor("bye", Value("s"), 30));
}
