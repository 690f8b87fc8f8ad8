// The real `kevolve-harness serve` and `eval`, driven as clients drive them (PROTOCOL.md).
#include "serve_client.h"
#include "task.h"

#include "temp_dir.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

using kev::json::Value;
using kev::test::request;
using kev::test::ServeClient;
namespace fs = std::filesystem;

namespace {

const char* kCompileError = R"(#include <kevolve/abi.h>
extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* a, cudaStream_t s) {
    int broken = ;
    return 0;
}
)";

const char* kCallsCublas = R"(#include <kevolve/abi.h>
#include <cublas_v2.h>
extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* a, cudaStream_t s) {
    static cublasHandle_t h;
    return cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, nullptr, nullptr, CUDA_R_16F, 1,
                        nullptr, CUDA_R_16F, 1, nullptr, nullptr, CUDA_R_32F, 1,
                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS;
}
)";

const char* kClean = R"(#include <kevolve/abi.h>
__global__ void zero(float* c, long n) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i < n) c[i] = 0.f;
}
extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* a, cudaStream_t s) {
    long n = KEVOLVE_GEMM_M(a) * KEVOLVE_GEMM_N(a);
    zero<<<unsigned((n + 255) / 256), 256, 0, s>>>(static_cast<float*>(a->outputs[0].data), n);
    return cudaGetLastError() != cudaSuccess;
}
)";

Value headlineTask() {
    const std::string text = kev::test::readFile(std::string(KEVOLVE_SOURCE_DIR) +
                                                 "/resources/tasks/gemm_fp16_fp32_4096.json");
    return kev::json::parse(text);
}

Value evalRequest(const std::string& id, const std::string& source, const std::string& name) {
    Value r = request("eval", id);
    r["task"] = headlineTask();
    r["kernel"]["language"] = "cuda";
    r["kernel"]["source"] = source;
    r["kernel"]["name"] = name;
    r["options"]["compile_timeout_s"] = 300;
    return r;
}

std::string str(const Value* v) {
    return v && v->isString() ? v->asString() : std::string("<missing>");
}

// A server that does not answer the probe is a failure, not "no GPU": a crash on `probe` once
// read as a machine without a GPU and skipped the GPU tests silently (issue 24).
bool hasGpu() {
    ServeClient probe;
    probe.send(request("probe", "p"));
    auto e = probe.waitFor("probe", Value("p"), 60);
    if (!e || !e->find("devices") || !e->find("devices")->isArray()) {
        ADD_FAILURE() << "the server did not answer probe";
        return false;
    }
    return e->find("devices")->size() > 0;
}

} // namespace

TEST(Protocol, FramingErrorsDoNotEndTheServer) {
    ServeClient server;
    ASSERT_TRUE(server.send(request("hello", "h1")));
    auto hello = server.waitFor("hello", Value("h1"), 30);
    ASSERT_TRUE(hello);
    EXPECT_EQ(hello->find("protocol")->asInt(), 1);
    EXPECT_EQ(hello->find("v")->asInt(), 1);
    EXPECT_FALSE(str(hello->find("harness_version")).empty());
    EXPECT_TRUE(hello->find("devices")->isArray());

    server.sendLine("this is not json");
    auto e = server.next(10);
    ASSERT_TRUE(e);
    EXPECT_EQ(str(e->find("event")), "error");
    EXPECT_EQ(str(e->find("code")), "bad_request");
    EXPECT_TRUE(e->find("id")->isNull());
    EXPECT_NE(str(e->find("message")).find("not JSON"), std::string::npos);

    server.sendLine("[1, 2, 3]");
    e = server.next(10);
    ASSERT_TRUE(e);
    EXPECT_EQ(str(e->find("code")), "bad_request");
    EXPECT_EQ(str(e->find("message")), "a request must be a JSON object, got an array");

    server.sendLine(R"({"v": 2, "id": "old", "op": "hello"})");
    e = server.next(10);
    ASSERT_TRUE(e);
    EXPECT_EQ(str(e->find("code")), "unsupported_version");
    EXPECT_EQ(str(e->find("id")), "old");

    server.sendLine(R"({"v": 1, "id": "noop"})");
    e = server.next(10);
    ASSERT_TRUE(e);
    EXPECT_EQ(str(e->find("code")), "bad_request");
    EXPECT_EQ(str(e->find("id")), "noop");

    server.sendLine(R"({"v": 1, "id": "what", "op": "frobnicate"})");
    e = server.next(10);
    ASSERT_TRUE(e);
    EXPECT_EQ(str(e->find("message")), "unknown op \"frobnicate\"");

    Value cancelUnknown = request("cancel", "c0");
    cancelUnknown["target"] = "nobody";
    server.send(cancelUnknown);
    e = server.next(10);
    ASSERT_TRUE(e);
    EXPECT_EQ(str(e->find("code")), "unknown_id");
    EXPECT_EQ(str(e->find("id")), "c0");

    Value badTask = evalRequest("bt", kClean, "k.cu");
    badTask["task"]["shape"]["K"] = 4100;
    server.send(badTask);
    e = server.waitFor("error", Value("bt"), 10);
    ASSERT_TRUE(e);
    EXPECT_EQ(str(e->find("code")), "bad_task");
    EXPECT_EQ(str(e->find("message")),
              "task.shape.K: 4100 is not a multiple of alignment.leading_dim_multiple (8)");

    Value badOption = evalRequest("bo", kClean, "k.cu");
    badOption["options"]["warp_speed"] = true;
    server.send(badOption);
    e = server.waitFor("error", Value("bo"), 10);
    ASSERT_TRUE(e);
    EXPECT_EQ(str(e->find("message")), "options.warp_speed: unknown option");

    ASSERT_TRUE(server.send(request("hello", "h2")));
    EXPECT_TRUE(server.waitFor("hello", Value("h2"), 30));
    server.send(request("shutdown", "s1"));
    EXPECT_TRUE(server.waitFor("bye", Value("s1"), 30));
    const auto& result = server.wait(30);
    EXPECT_TRUE(result.exited);
    EXPECT_EQ(result.exitCode, 0);
    for (const auto& line : server.rawLines()) {
        auto v = kev::json::tryParse(line, nullptr);
        ASSERT_TRUE(v && v->isObject()) << line;
        EXPECT_EQ(v->find("v")->asInt(), 1) << line;
    }
}

TEST(Protocol, EndOfInputSaysBye) {
    ServeClient server;
    server.send(request("hello", "h"));
    server.closeInput();
    EXPECT_TRUE(server.waitFor("hello", Value("h"), 30));
    auto bye = server.next(30);
    ASSERT_TRUE(bye);
    EXPECT_EQ(str(bye->find("event")), "bye");
    EXPECT_TRUE(bye->find("id")->isNull());
    EXPECT_EQ(server.wait(30).exitCode, 0);
}

TEST(Protocol, EvaluationsEndInTheirStatus) {
    const bool gpu = hasGpu();
    ServeClient server;
    server.send(evalRequest("ce", kCompileError, "broken.cu"));
    server.send(evalRequest("cb", kCallsCublas, "cublas.cu"));
    server.send(evalRequest("ok", kClean, "clean.cu"));
    server.send(evalRequest("xx", kClean, "cancelled.cu"));
    server.send(evalRequest("ok", kClean, "again.cu")); // the id is in flight
    auto dup = server.waitFor("error", Value("ok"), 30);
    ASSERT_TRUE(dup);
    EXPECT_EQ(str(dup->find("message")), "id \"ok\" is already in flight");
    Value cancel = request("cancel", "c1");
    cancel["target"] = "xx";
    server.send(cancel);
    auto cancelled = server.waitFor("cancelled", Value("xx"), 30);
    ASSERT_TRUE(cancelled);

    auto ce = server.waitFor("result", Value("ce"), 600);
    ASSERT_TRUE(ce);
    const Value& ceReport = *ce->find("report");
    EXPECT_EQ(str(ceReport.find("status")), "compile_error");
    EXPECT_NE(str(ceReport.find("compile")->find("log"))
                  .find("broken.cu(3): error: expected an "
                        "expression"),
              std::string::npos)
        << ceReport.dump(2);
    EXPECT_NE(str(ceReport.find("message")).find("expected an expression"), std::string::npos);
    EXPECT_EQ(str(ceReport.find("kernel")->find("name")), "broken.cu");
    EXPECT_EQ(ceReport.find("kernel")->find("bytes")->asInt(),
              static_cast<int64_t>(std::string(kCompileError).size()));

    auto cb = server.waitFor("result", Value("cb"), 600);
    ASSERT_TRUE(cb);
    const Value& cbReport = *cb->find("report");
    EXPECT_EQ(str(cbReport.find("status")), "rule_violation");
    EXPECT_NE(str(cbReport.find("message")).find("cublasGemmEx"), std::string::npos);
    EXPECT_FALSE(cbReport.find("rules")->find("ok")->asBool());
    EXPECT_NE(cbReport.find("rules")->find("violations")->dump().find("cublasGemmEx"),
              std::string::npos);

    auto ok = server.waitFor("result", Value("ok"), 900);
    ASSERT_TRUE(ok);
    const Value& okReport = *ok->find("report");
    const std::string status = str(okReport.find("status"));
    if (!gpu) {
        EXPECT_EQ(status, "no_device") << okReport.dump(2);
        EXPECT_EQ(okReport.find("correctness"), nullptr) << "no measurement without a GPU";
        EXPECT_EQ(okReport.find("timing"), nullptr) << "no measurement without a GPU";
    }
    EXPECT_TRUE(okReport.find("rules")->find("ok")->asBool()) << okReport.dump(2);
    EXPECT_EQ(okReport.find("schema_version")->asInt(), 1);
    EXPECT_EQ(str(okReport.find("kind")), "kevolve.report");
    EXPECT_EQ(str(okReport.find("reverify")),
              "kevolve-harness eval --task gemm_fp16_fp32_4096.json --kernel clean.cu");
    EXPECT_EQ(str(okReport.find("task")->find("name")), "gemm_fp16_fp32_4096");
    EXPECT_TRUE(okReport.find("stages")->find("compile_s")->isNumber());
    EXPECT_TRUE(okReport.find("stages")->find("total_s")->isNumber());
    EXPECT_EQ(str(okReport.find("environment")->find("arch")).substr(0, 3), "sm_");

    // Each evaluation was accepted and reported progress; the cancelled one never got a result.
    bool acceptedOk = false, compileProgress = false;
    for (const auto& ev : server.history()) {
        const std::string name = str(ev.find("event"));
        if (name == "accepted" && str(ev.find("id")) == "ok")
            acceptedOk = true;
        if (name == "progress" && str(ev.find("stage")) == "compile")
            compileProgress = true;
        EXPECT_FALSE(name == "result" && str(ev.find("id")) == "xx");
    }
    EXPECT_TRUE(acceptedOk);
    EXPECT_TRUE(compileProgress);

    server.send(request("hello", "h"));
    EXPECT_TRUE(server.waitFor("hello", Value("h"), 30));
    server.send(request("shutdown", "bye"));
    EXPECT_TRUE(server.waitFor("bye", Value("bye"), 30));
    EXPECT_EQ(server.wait(30).exitCode, 0);
}

namespace {

kev::process::Result runEval(const std::vector<std::string>& args) {
    kev::process::Spec s;
    s.argv = {KEVOLVE_HARNESS_EXE, "eval"};
    s.argv.insert(s.argv.end(), args.begin(), args.end());
    return kev::process::run(s);
}

} // namespace

TEST(EvalCommand, ExitCodes) {
    const kev::test::TempDir tmp("kev_eval_command");
    const fs::path& dir = tmp.path();
    Value task = headlineTask();
    task["shape"]["K"] = 4100;
    std::ofstream(dir / "bad.json") << task.dump(2);
    std::ofstream(dir / "broken.cu") << kCompileError;
    const std::string good =
        std::string(KEVOLVE_SOURCE_DIR) + "/resources/tasks/gemm_fp16_fp32_4096.json";

    auto r =
        runEval({"--task", (dir / "bad.json").string(), "--kernel", (dir / "broken.cu").string()});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(
        r.err.find("task.shape.K: 4100 is not a multiple of alignment.leading_dim_multiple (8)"),
        std::string::npos)
        << r.err;

    r = runEval({"--kernel", (dir / "broken.cu").string()});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("--task is required"), std::string::npos) << r.err;

    r = runEval({"--task", good, "--kernel", (dir / "missing.cu").string()});
    EXPECT_EQ(r.exitCode, 2);

    r = runEval({"--task", good, "--kernel", (dir / "broken.cu").string(), "--frobnicate"});
    EXPECT_EQ(r.exitCode, 2);

    // A compile error is a report, so exit 0.
    r = runEval({"--task", good, "--kernel", (dir / "broken.cu").string(), "--compile-timeout",
                 "300", "--out", (dir / "report.json").string()});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    const std::string text = kev::test::readFile(dir / "report.json");
    const Value report = kev::json::parse(text);
    EXPECT_EQ(str(report.find("status")), "compile_error");
    EXPECT_EQ(str(report.find("reverify")),
              "kevolve-harness eval --task gemm_fp16_fp32_4096.json --kernel broken.cu");
}

TEST(Cli, HelpVersionAndProbe) {
    kev::process::Spec s;
    s.argv = {KEVOLVE_HARNESS_EXE, "--version"};
    auto r = kev::process::run(s);
    EXPECT_EQ(r.exitCode, 0);
    EXPECT_EQ(r.out.rfind("kevolve-harness ", 0), 0u);
    s.argv = {KEVOLVE_HARNESS_EXE, "--help"};
    EXPECT_NE(kev::process::run(s).out.find("serve"), std::string::npos);
    s.argv = {KEVOLVE_HARNESS_EXE, "nonsense"};
    EXPECT_EQ(kev::process::run(s).exitCode, 2);

    s.argv = {KEVOLVE_HARNESS_EXE, "probe", "--json"};
    s.env = {{"KEVOLVE_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"}};
    r = kev::process::run(s);
    EXPECT_EQ(r.exitCode, 0);
    const Value probe = kev::json::parse(r.out);
    EXPECT_EQ(probe.find("devices")->size(), 0u);
    EXPECT_FALSE(probe.find("nvml")->asBool());
    EXPECT_NE(str(probe.find("reason")).find("/nonexistent/libnvidia-ml.so.1"), std::string::npos);

    s.env = {{"KEVOLVE_NVML_LIBRARY", KEVOLVE_FAKE_NVML}};
    r = kev::process::run(s);
    const Value fake = kev::json::parse(r.out);
    ASSERT_EQ(fake.find("devices")->size(), 1u) << r.out;
    EXPECT_EQ(str(fake.find("devices")->at(0).find("name")), "Fake H200");
    EXPECT_EQ(str(fake.find("devices")->at(0).find("cc")), "9.0");
    EXPECT_EQ(str(fake.find("driver_version")), "999.99.99");
    EXPECT_EQ(fake.find("cuda_driver_version")->asInt(), 13000);
    EXPECT_GE(fake.find("cuda_runtime_version")->asInt(), 12040);
    EXPECT_TRUE(fake.find("nvml")->asBool());
    EXPECT_EQ(fake.find("reason"), nullptr);
}

TEST(Cli, ExecGuardClosesDescriptorsAndDiesWithItsParent) {
    kev::process::Spec s;
    s.argv = {KEVOLVE_HARNESS_EXE,
              "exec-guard",
              "--keep-fd",
              "3",
              "--",
              "/bin/sh",
              "-c",
              "ls /proc/self/fd; grep -q '^SigQ' /proc/self/status && echo alive"};
    s.channel = true;
    const auto r = kev::process::run(s);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    // ls itself opens one directory descriptor (the lowest free one, 4): nothing else is left.
    EXPECT_EQ(r.out, "0\n1\n2\n3\n4\nalive\n");

    s.argv = {KEVOLVE_HARNESS_EXE, "exec-guard", "--", "/bin/sh", "-c", "ls /proc/self/fd"};
    s.channel = false;
    EXPECT_EQ(kev::process::run(s).out, "0\n1\n2\n3\n");

    s.argv = {KEVOLVE_HARNESS_EXE, "exec-guard", "--", "/nonexistent/prog"};
    EXPECT_EQ(kev::process::run(s).exitCode, 127);

    // Started by a supervisor that is already gone: the program never runs.
    s.argv = {KEVOLVE_HARNESS_EXE, "exec-guard", "--", "/bin/echo", "ran"};
    s.env = {{"KEVOLVE_PARENT_PID", std::to_string(::getpid())}};
    EXPECT_EQ(kev::process::run(s).out, "ran\n");
    s.env = {{"KEVOLVE_PARENT_PID", "999999999"}};
    const auto orphan = kev::process::run(s);
    EXPECT_EQ(orphan.exitCode, 1);
    EXPECT_EQ(orphan.out, "");
}
