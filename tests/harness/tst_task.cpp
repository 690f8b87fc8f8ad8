#include "task.h"

#include "temp_dir.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

using kev::Dtype;
using kev::Task;
using kev::TaskError;
namespace json = kev::json;

namespace {

const char* kHeadline = R"({
  "schema_version": 1,
  "name": "gemm_fp16_fp32_4096",
  "description": "headline",
  "op": "gemm",
  "dtypes": {"A": "f16", "B": "f16", "C": "f32", "accumulate": "f32"},
  "layout": {"A": "row", "B": "row", "C": "row"},
  "shape": {"M": 4096, "N": 4096, "K": 4096},
  "validation_shapes": [{"M": 1000, "N": 1064, "K": 904}, {"M": 257, "N": 392, "K": 520}],
  "alignment": {"leading_dim_multiple": 8},
  "reference": "cublas",
  "tolerance": {"multiple": 8.0},
  "timing": {"budget_s": 3.0, "target_half_width": 0.005, "rounds": 3, "max_round_spread": 0.15}
})";

std::string rejection(const std::function<void(json::Value&)>& mutate) {
    json::Value v = json::parse(kHeadline);
    mutate(v);
    try {
        kev::parseTask(v);
    } catch (const TaskError& e) {
        return e.what();
    }
    return "(accepted)";
}

std::vector<std::filesystem::path> taskFiles() {
    std::vector<std::filesystem::path> files;
    for (const auto& entry :
         std::filesystem::directory_iterator(std::string(KEVOLVE_SOURCE_DIR) + "/resources/tasks"))
        if (entry.path().extension() == ".json")
            files.push_back(entry.path());
    return files;
}

} // namespace

TEST(Task, HeadlineParses) {
    const Task t = kev::parseTask(json::parse(kHeadline));
    EXPECT_EQ(t.name, "gemm_fp16_fp32_4096");
    EXPECT_EQ(t.op, "gemm");
    EXPECT_EQ(t.dtype("A"), Dtype::F16);
    EXPECT_EQ(t.dtype("C"), Dtype::F32);
    EXPECT_EQ(t.accumulate, Dtype::F32);
    EXPECT_EQ(t.shape.dim("K"), 4096);
    ASSERT_EQ(t.shape.dims.size(), 3u);
    EXPECT_EQ(t.shape.dims[0].first, "M");
    EXPECT_EQ(t.validationShapes.size(), 2u);
    EXPECT_EQ(t.validationShapes[1].dim("M"), 257);
    EXPECT_EQ(t.leadingDimMultiple, 8);
    EXPECT_EQ(t.reference.kind, kev::Reference::Kind::Cublas);
    EXPECT_DOUBLE_EQ(t.toleranceMultiple, 8.0);
    EXPECT_EQ(t.timing.rounds, 3);
    EXPECT_TRUE(t.tensor("C").output);
    EXPECT_FALSE(t.tensor("A").output);
    EXPECT_DOUBLE_EQ(t.flops(t.shape), 2.0 * 4096.0 * 4096.0 * 4096.0);
    EXPECT_DOUBLE_EQ(t.minBytes(t.shape), 4096.0 * 4096.0 * (2 + 2 + 4));
    EXPECT_EQ(t.opSpec().kevolveOp, 1);
}

TEST(Task, DefaultsFillIn) {
    const Task t = kev::parseTask(json::parse(
        R"({"name":"t","op":"gemm","dtypes":{"A":"bf16","B":"bf16","C":"bf16"},
            "shape":{"M":1,"N":8,"K":8}})"));
    EXPECT_EQ(t.accumulate, Dtype::F32);
    EXPECT_EQ(t.leadingDimMultiple, 8);
    EXPECT_DOUBLE_EQ(t.toleranceMultiple, 8.0);
    EXPECT_DOUBLE_EQ(t.timing.budgetS, 3.0);
    EXPECT_DOUBLE_EQ(t.timing.targetHalfWidth, 0.005);
    EXPECT_EQ(t.timing.rounds, 3);
    EXPECT_DOUBLE_EQ(t.timing.maxRoundSpread, 0.15);
    EXPECT_FALSE(t.counts.has_value());
    EXPECT_TRUE(t.validationShapes.empty());
}

TEST(Task, CountsOverrideTheTimedShapeOnly) {
    const Task t = kev::parseTask(json::parse(
        R"({"name":"t","op":"gemm","dtypes":{"A":"f32","B":"f32","C":"f32"},
            "shape":{"M":16,"N":16,"K":16},"validation_shapes":[{"M":8,"N":8,"K":8}],
            "counts":{"flops":123,"min_bytes":456}})"));
    EXPECT_DOUBLE_EQ(t.flops(t.shape), 123.0);
    EXPECT_DOUBLE_EQ(t.minBytes(t.shape), 456.0);
    EXPECT_DOUBLE_EQ(t.flops(t.validationShapes[0]), 1024.0);
}

TEST(Task, EveryResourceTaskParsesAndRoundTrips) {
    const auto files = taskFiles();
    ASSERT_GE(files.size(), 5u);
    for (const auto& file : files) {
        SCOPED_TRACE(file.string());
        const Task t = kev::loadTaskFile(file.string());
        EXPECT_EQ(t.name, file.stem().string()) << "a task file is named after its task";
        const json::Value normalised = kev::toJson(t);
        const Task back = kev::parseTask(json::parse(normalised.dump()));
        EXPECT_TRUE(back == t);
        EXPECT_EQ(kev::toJson(back), normalised);
    }
}

TEST(Task, FileErrorsNameTheFile) {
    try {
        kev::loadTaskFile("/nonexistent/task.json");
        FAIL();
    } catch (const TaskError& e) {
        EXPECT_EQ(std::string(e.what()), "/nonexistent/task.json: cannot read the task file (no "
                                         "such file)");
    }
    const kev::test::TempDir tmp("kev_task_test");
    const auto& dir = tmp.path();
    const auto bad = dir / "bad.json";
    std::ofstream(bad) << "{\n \"name\": \"x\",\n}";
    try {
        kev::loadTaskFile(bad.string());
        FAIL();
    } catch (const TaskError& e) {
        EXPECT_EQ(std::string(e.what()), bad.string() + ":3:1: expected a string key, got '}'");
    }
    const auto malformed = dir / "malformed.json";
    std::ofstream(malformed) << R"({"name":"x","op":"gemm","dtypes":{"A":"f16","B":"f16","C":"f32"},
        "shape":{"M":1,"N":8,"K":9}})";
    try {
        kev::loadTaskFile(malformed.string());
        FAIL();
    } catch (const TaskError& e) {
        EXPECT_EQ(std::string(e.what()),
                  malformed.string() +
                      ": task.shape.K: 9 is not a multiple of alignment.leading_dim_multiple (8)");
    }
}

TEST(Task, ReferenceFileResolvesAgainstTheTaskFile) {
    const kev::test::TempDir tmp("kev_task_ref");
    const auto& dir = tmp.path();
    std::ofstream(dir / "ref.cu") << "// reference\n";
    const auto taskPath = dir / "t.json";
    std::ofstream(taskPath) << R"({"name":"t","op":"gemm","dtypes":{"A":"f16","B":"f16","C":"f32"},
        "shape":{"M":1,"N":8,"K":8},"reference":{"file":"ref.cu"}})";
    const Task t = kev::loadTaskFile(taskPath.string());
    EXPECT_EQ(t.reference.kind, kev::Reference::Kind::File);
    EXPECT_EQ(t.reference.file, (std::filesystem::absolute(dir) / "ref.cu").string());

    std::filesystem::remove(dir / "ref.cu");
    try {
        kev::loadTaskFile(taskPath.string());
        FAIL();
    } catch (const TaskError& e) {
        EXPECT_NE(std::string(e.what()).find("task.reference.file: no such file"),
                  std::string::npos)
            << e.what();
    }
}

// One case per rule; each message names the field.
TEST(Task, MalformedTasksAreRejectedNamingTheField) {
    struct Case {
        const char* expected;
        std::function<void(json::Value&)> mutate;
    };
    const Case cases[] = {
        {"task: expected an object, got [1]", [](json::Value& v) { v = json::parse("[1]"); }},
        {"task.frobnicate: unknown field", [](json::Value& v) { v["frobnicate"] = 1; }},
        {"task.schema_version: 2 is not supported (this harness reads version 1)",
         [](json::Value& v) { v["schema_version"] = 2; }},
        {"task.name: missing", [](json::Value& v) { v.erase("name"); }},
        {"task.name: expected a string, got 5", [](json::Value& v) { v["name"] = 5; }},
        {"task.name: \"../x\" must be 1-128 letters, digits, '_', '-' or '.', not starting with "
         "'.' or '-' (it names files)",
         [](json::Value& v) { v["name"] = "../x"; }},
        {"task.description: expected a string, got null",
         [](json::Value& v) { v["description"] = json::Value(); }},
        {"task.op: missing", [](json::Value& v) { v.erase("op"); }},
        {"task.op: \"conv\" is not a registered op (gemm, gemv, softmax, layernorm, reduce, "
         "elementwise, rmsnorm, custom)",
         [](json::Value& v) { v["op"] = "conv"; }},
        {"task.dtypes: missing", [](json::Value& v) { v.erase("dtypes"); }},
        {"task.dtypes: expected an object, got \"f16\"", [](json::Value& v) { v["dtypes"] = "f16"; }},
        {"task.dtypes.A: \"fp8\" is not one of f16, bf16, f32",
         [](json::Value& v) { v["dtypes"]["A"] = "fp8"; }},
        {"task.dtypes.C: \"i8\" is not one of f16, bf16, f32",
         [](json::Value& v) { v["dtypes"]["C"] = "i8"; }},
        {"task.dtypes.B: missing", [](json::Value& v) { v["dtypes"].erase("B"); }},
        {"task.dtypes.D: unknown field (gemm has tensors A, B, C and accumulate)",
         [](json::Value& v) { v["dtypes"]["D"] = "f16"; }},
        {"task.dtypes.accumulate: \"f16\" is not one of f32",
         [](json::Value& v) { v["dtypes"]["accumulate"] = "f16"; }},
        {"task.dtypes.B: \"bf16\" differs from dtypes.A; A and B must have one dtype (\"f16\")",
         [](json::Value& v) { v["dtypes"]["B"] = "bf16"; }},
        {"task.dtypes.C: \"f16\" output with \"f32\" inputs is not supported; use f32 or f32",
         [](json::Value& v) {
             v["dtypes"]["A"] = "f32";
             v["dtypes"]["B"] = "f32";
             v["dtypes"]["C"] = "f16";
         }},
        {"task.layout.A: \"col\" is not supported (only \"row\" in version 1)",
         [](json::Value& v) { v["layout"]["A"] = "col"; }},
        {"task.layout.X: unknown field (gemm has tensors A, B, C)",
         [](json::Value& v) { v["layout"]["X"] = "row"; }},
        {"task.layout: expected an object, got \"row\"", [](json::Value& v) { v["layout"] = "row"; }},
        {"task.shape: missing", [](json::Value& v) { v.erase("shape"); }},
        {"task.shape.K: missing", [](json::Value& v) { v["shape"].erase("K"); }},
        {"task.shape.L: unknown field (gemm has dimensions M, N, K)",
         [](json::Value& v) { v["shape"]["L"] = 4; }},
        {"task.shape.M: 0 must be at least 1", [](json::Value& v) { v["shape"]["M"] = 0; }},
        {"task.shape.M: -4 must be at least 1", [](json::Value& v) { v["shape"]["M"] = -4; }},
        {"task.shape.M: expected an integer, got 4096.5",
         [](json::Value& v) { v["shape"]["M"] = 4096.5; }},
        {"task.shape.M: expected an integer, got \"4096\"",
         [](json::Value& v) { v["shape"]["M"] = "4096"; }},
        {"task.shape.M: 4294967296 is too large (at most 2147483647)",
         [](json::Value& v) { v["shape"]["M"] = int64_t{1} << 32; }},
        {"task.shape.K: 4100 is not a multiple of alignment.leading_dim_multiple (8)",
         [](json::Value& v) { v["shape"]["K"] = 4100; }},
        {"task.shape.N: 4097 is not a multiple of alignment.leading_dim_multiple (8)",
         [](json::Value& v) { v["shape"]["N"] = 4097; }},
        {"task.validation_shapes[1].N: 390 is not a multiple of alignment.leading_dim_multiple (8)",
         [](json::Value& v) { v["validation_shapes"].at(1)["N"] = 390; }},
        {"task.validation_shapes[0].K: missing",
         [](json::Value& v) { v["validation_shapes"].at(0).erase("K"); }},
        {"task.validation_shapes: expected an array, got {}",
         [](json::Value& v) { v["validation_shapes"] = json::Value::object(); }},
        {"task.alignment.leading_dim_multiple: 0 must be at least 1",
         [](json::Value& v) { v["alignment"]["leading_dim_multiple"] = 0; }},
        {"task.alignment.pitch: unknown field", [](json::Value& v) { v["alignment"]["pitch"] = 1; }},
        {"task.reference: \"cudnn\" is not a reference (\"cublas\" or {\"file\": \"ref.cu\"})",
         [](json::Value& v) { v["reference"] = "cudnn"; }},
        {"task.reference: expected \"cublas\" or {\"file\": \"ref.cu\"}, got 3",
         [](json::Value& v) { v["reference"] = 3; }},
        {"task.reference.file: missing",
         [](json::Value& v) { v["reference"] = json::Value::object(); }},
        {"task.reference.file: \"ref.txt\" must name a .cu file",
         [](json::Value& v) {
             v["reference"] = json::Value::object();
             v["reference"]["file"] = "ref.txt";
         }},
        {"task.tolerance.multiple: 0.5 must be at least 1",
         [](json::Value& v) { v["tolerance"]["multiple"] = 0.5; }},
        {"task.tolerance.multiple: expected a number, got true",
         [](json::Value& v) { v["tolerance"]["multiple"] = true; }},
        {"task.tolerance.rtol: unknown field", [](json::Value& v) { v["tolerance"]["rtol"] = 1; }},
        {"task.timing.budget_s: 0 must be greater than 0",
         [](json::Value& v) { v["timing"]["budget_s"] = 0; }},
        {"task.timing.budget_s: 1000 must be at most 600",
         [](json::Value& v) { v["timing"]["budget_s"] = 1000; }},
        {"task.timing.target_half_width: -0.1 must be greater than 0",
         [](json::Value& v) { v["timing"]["target_half_width"] = -0.1; }},
        {"task.timing.rounds: 0 must be at least 1", [](json::Value& v) { v["timing"]["rounds"] = 0; }},
        {"task.timing.max_round_spread: 0 must be greater than 0",
         [](json::Value& v) { v["timing"]["max_round_spread"] = 0; }},
        {"task.timing.warmup: unknown field", [](json::Value& v) { v["timing"]["warmup"] = 5; }},
        {"task.counts.min_bytes: missing",
         [](json::Value& v) { v["counts"]["flops"] = 1e12; }},
        {"task.counts.flops: -1 must be greater than 0",
         [](json::Value& v) {
             v["counts"]["flops"] = -1;
             v["counts"]["min_bytes"] = 1;
         }},
    };
    for (const auto& c : cases)
        EXPECT_EQ(rejection(c.mutate), c.expected);
}
