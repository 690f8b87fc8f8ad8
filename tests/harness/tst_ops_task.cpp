// Task files of the ops beyond GEMM: params (declared keys, types, defaults), custom tasks (every
// malformed field named), counts, the normalised round trip, and the custom elementwise rule.
#include "ops/ops.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <functional>
#include <limits>

namespace json = kev::json;
namespace ops = kev::ops;
using kev::Dtype;
using kev::Task;
using kev::TaskError;

namespace {

const char* kCustom = R"({
  "name": "rmsnorm",
  "op": "custom",
  "dims": ["M", "N"],
  "shape": {"M": 64, "N": 1000},
  "validation_shapes": [{"N": 8, "M": 3}],
  "tensors": [
    {"name": "X", "shape": ["M", "N"], "dtype": "f16", "distribution": "normal"},
    {"name": "Y", "shape": ["M", "N"], "dtype": "f32", "output": true},
    {"name": "W", "shape": ["N"], "dtype": "f16", "distribution": "positive"}
  ],
  "params": {"epsilon": 1e-6, "gain": 2},
  "scalars": ["epsilon", "gain"],
  "alignment": {"leading_dim_multiple": 8},
  "reference": {"file": "/abs/ref.cu"},
  "tolerance": {"atol": 1e-3, "rtol": 1e-2},
  "counts": {"flops": 256000, "min_bytes": 388000}
})";

const char* kLayernorm = R"({
  "name": "ln",
  "op": "layernorm",
  "dtypes": {"X": "bf16", "W": "bf16", "B": "bf16", "Y": "bf16"},
  "shape": {"M": 16, "N": 4096},
  "params": {"epsilon": 1e-5}
})";

std::string rejection(const char* base, const std::function<void(json::Value&)>& mutate) {
    json::Value v = json::parse(base);
    mutate(v);
    try {
        kev::parseTask(v);
    } catch (const TaskError& e) {
        return e.what();
    }
    return "(accepted)";
}

} // namespace

TEST(OpsTask, ParamsTakeDefaultsAndReachTheScalars) {
    const Task t = kev::parseTask(json::parse(
        R"({"name":"r","op":"reduce","dtypes":{"X":"f16","Y":"f32"},"shape":{"M":4,"N":9}})"));
    ASSERT_EQ(t.params.size(), 1u);
    EXPECT_EQ(t.params[0].first, "reduction");
    EXPECT_EQ(t.param("reduction").choice, "sum");
    EXPECT_EQ(t.leadingDimMultiple, 8);
    EXPECT_DOUBLE_EQ(t.flops(t.shape), 36.0);
    EXPECT_DOUBLE_EQ(t.minBytes(t.shape), 36.0 * 2 + 4 * 4);

    const Task ln = kev::parseTask(json::parse(kLayernorm));
    EXPECT_DOUBLE_EQ(ln.param("epsilon").number, 1e-5);
    EXPECT_DOUBLE_EQ(ln.flops(ln.shape), 8.0 * 16 * 4096);
    EXPECT_DOUBLE_EQ(ln.minBytes(ln.shape), 16.0 * 4096 * 4 + 4096.0 * 4);

    const Task silu = kev::parseTask(json::parse(
        R"({"name":"e","op":"elementwise","dtypes":{"X":"f16","Y":"f16"},"shape":{"N":100},
            "params":{"function":"silu"}})"));
    EXPECT_DOUBLE_EQ(silu.flops(silu.shape), 400.0);
    const Task gemv = kev::parseTask(json::parse(
        R"({"name":"g","op":"gemv","dtypes":{"A":"f16","x":"f16","y":"f32"},
            "shape":{"M":10,"N":30},"params":{"transpose":true}})"));
    EXPECT_TRUE(gemv.param("transpose").flag);
    EXPECT_DOUBLE_EQ(gemv.minBytes(gemv.shape), 300.0 * 2 + 10 * 2 + 30 * 4);
}

TEST(OpsTask, ParamsErrorsNameTheKey) {
    struct Case {
        const char* expected;
        std::function<void(json::Value&)> mutate;
    };
    const Case cases[] = {
        {"task.params.eps: unknown parameter (layernorm takes epsilon)",
         [](json::Value& v) { v["params"]["eps"] = 1e-5; }},
        {"task.params.epsilon: 0 must be greater than 0",
         [](json::Value& v) { v["params"]["epsilon"] = 0; }},
        {"task.params.epsilon: expected a number, got \"small\"",
         [](json::Value& v) { v["params"]["epsilon"] = "small"; }},
        {"task.params: expected an object, got [1]",
         [](json::Value& v) { v["params"] = json::parse("[1]"); }},
        {"task.dtypes.W: \"f32\" differs from dtypes.X (\"bf16\"); W and X must have one dtype",
         [](json::Value& v) { v["dtypes"]["W"] = "f32"; }},
        {"task.tensors: only a custom op declares its tensors (layernorm's are fixed; give "
         "their dtypes in task.dtypes)",
         [](json::Value& v) { v["tensors"] = json::Value::array(); }},
        {"task.tolerance.atol: unknown field", [](json::Value& v) { v["tolerance"]["atol"] = 1; }},
    };
    for (const auto& c : cases)
        EXPECT_EQ(rejection(kLayernorm, c.mutate), c.expected);

    const auto reduce = [](const char* params) {
        try {
            kev::parseTask(json::parse(std::string(R"({"name":"r","op":"reduce","dtypes":{"X":"f32",
                "Y":"f32"},"shape":{"M":4,"N":9},"params":)") +
                                       params + "}"));
        } catch (const TaskError& e) {
            return std::string(e.what());
        }
        return std::string("(accepted)");
    };
    EXPECT_EQ(reduce(R"({"reduction":"mean"})"),
              "task.params.reduction: \"mean\" is not one of sum, max");
    EXPECT_EQ(reduce(R"({"reduction":1})"), "task.params.reduction: expected a string, got 1");
    EXPECT_EQ(rejection(R"({"name":"g","op":"gemv","dtypes":{"A":"f16","x":"f16","y":"f16"},
                           "shape":{"M":10,"N":30}})",
                        [](json::Value& v) { v["params"]["transpose"] = 1; }),
              "task.params.transpose: expected true or false, got 1");
    EXPECT_EQ(rejection(R"({"name":"g","op":"gemm","dtypes":{"A":"f16","B":"f16","C":"f16"},
                           "shape":{"M":8,"N":8,"K":8}})",
                        [](json::Value& v) { v["params"]["alpha"] = 2; }),
              "task.params.alpha: unknown parameter (gemm takes no parameters)");
    EXPECT_EQ(rejection(R"({"name":"s","op":"softmax","dtypes":{"X":"f16","Y":"f16"},
                           "shape":{"M":8,"N":8}})",
                        [](json::Value& v) { v["params"]["axis"] = 1; }),
              "task.params.axis: unknown parameter (softmax takes no parameters)");
    EXPECT_EQ(rejection(R"({"name":"s","op":"reduce","dtypes":{"X":"f16","Y":"f16"},
                           "shape":{"M":8,"N":8}})",
                        [](json::Value&) {}),
              "task.dtypes.Y: \"f16\" is not supported; reductions write f32");
}

// The registry op that docs/adding-an-op.md walks through: two inputs (no bias), one epsilon.
TEST(OpsTask, RmsnormTakesXAndWAndOneEpsilon) {
    const char* base = R"({"name":"rms","op":"rmsnorm","dtypes":{"X":"bf16","W":"bf16","Y":"bf16"},
                           "shape":{"M":16,"N":4096}})";
    const Task t = kev::parseTask(json::parse(base));
    EXPECT_DOUBLE_EQ(t.param("epsilon").number, 1e-6);
    EXPECT_EQ(t.leadingDimMultiple, 8);
    EXPECT_DOUBLE_EQ(t.flops(t.shape), 4.0 * 16 * 4096);
    EXPECT_DOUBLE_EQ(t.minBytes(t.shape), 16.0 * 4096 * 4 + 4096.0 * 2);
    const std::array<double, 4> sc = ops::scalars(t);
    EXPECT_DOUBLE_EQ(sc[0], 1e-6);
    const json::Value normalised = kev::toJson(t);
    EXPECT_EQ(normalised.find("params")->dump(), R"({"epsilon":1e-06})");
    EXPECT_TRUE(kev::parseTask(json::parse(normalised.dump())) == t);

    struct Case {
        const char* expected;
        std::function<void(json::Value&)> mutate;
    };
    const Case cases[] = {
        {"task.dtypes.B: unknown field (rmsnorm has tensors X, W, Y and accumulate)",
         [](json::Value& v) { v["dtypes"]["B"] = "bf16"; }},
        {"task.dtypes.W: missing", [](json::Value& v) { v["dtypes"].erase("W"); }},
        {"task.dtypes.W: \"f32\" differs from dtypes.X (\"bf16\"); W and X must have one dtype",
         [](json::Value& v) { v["dtypes"]["W"] = "f32"; }},
        {"task.dtypes.Y: \"f16\" differs from dtypes.X (\"bf16\"); Y and X must have one dtype",
         [](json::Value& v) { v["dtypes"]["Y"] = "f16"; }},
        {"task.dtypes.X: \"i8\" is not one of f16, bf16, f32",
         [](json::Value& v) { v["dtypes"]["X"] = "i8"; }},
        {"task.params.epsilon: 0 must be greater than 0",
         [](json::Value& v) { v["params"]["epsilon"] = 0; }},
        {"task.params.epsilon: 2 must be at most 1",
         [](json::Value& v) { v["params"]["epsilon"] = 2; }},
        {"task.params.epsilon: expected a number, got \"1e-6\"",
         [](json::Value& v) { v["params"]["epsilon"] = "1e-6"; }},
        {"task.params.eps: unknown parameter (rmsnorm takes epsilon)",
         [](json::Value& v) { v["params"]["eps"] = 1e-6; }},
        {"task.shape.K: unknown field (rmsnorm has dimensions M, N)",
         [](json::Value& v) { v["shape"]["K"] = 8; }},
        {"(accepted)", [](json::Value& v) { v["params"]["epsilon"] = 1; }},
    };
    for (const auto& c : cases)
        EXPECT_EQ(rejection(base, c.mutate), c.expected);
}

TEST(OpsTask, CustomTaskParses) {
    const Task t = kev::parseTask(json::parse(kCustom));
    EXPECT_TRUE(t.isCustom());
    EXPECT_EQ(t.dims, (std::vector<std::string>{"M", "N"}));
    ASSERT_EQ(t.tensors.size(), 3u);
    EXPECT_EQ(t.tensors[0].name, "X");
    EXPECT_EQ(t.tensors[1].name, "W") << "inputs first, in the task's order";
    EXPECT_EQ(t.tensors[2].name, "Y");
    EXPECT_TRUE(t.tensors[2].output);
    EXPECT_EQ(t.tensors[1].distribution, "positive");
    EXPECT_EQ(t.tensors[1].dims, (std::vector<std::string>{"N"}));
    EXPECT_EQ(t.validationShapes[0].dims[0].first, "M") << "normalised to the timed order";
    EXPECT_DOUBLE_EQ(t.elementwiseTolerance->rtol, 1e-2);
    EXPECT_DOUBLE_EQ(t.flops(t.shape), 256000.0);
    EXPECT_DOUBLE_EQ(t.flops(t.validationShapes[0]), 256000.0 * (24 + 8 + 24) / (64000 * 2 + 1000));
    EXPECT_DOUBLE_EQ(t.minBytes(t.validationShapes[0]), 24 * 2 + 8 * 2 + 24 * 4);

    const auto s = ops::scalars(t);
    EXPECT_DOUBLE_EQ(s[0], 1e-6);
    EXPECT_DOUBLE_EQ(s[1], 2.0);
    const KevolveArgs a = ops::shapeArgs(t, t.shape);
    EXPECT_EQ(a.op, static_cast<uint32_t>(KEVOLVE_OP_CUSTOM));
    EXPECT_EQ(a.num_inputs, 2);
    EXPECT_EQ(a.num_outputs, 1);
    EXPECT_EQ(a.dims[1], 1000);
    EXPECT_EQ(a.inputs[1].rank, 1);
    EXPECT_EQ(a.outputs[0].dtype, KEVOLVE_F32);
    EXPECT_EQ(ops::distributions(t).size(), 1u);
    EXPECT_FALSE(ops::hasHostTruth(t));

    const json::Value normalised = kev::toJson(t);
    const Task back = kev::parseTask(json::parse(normalised.dump()));
    EXPECT_TRUE(back == t);
    EXPECT_EQ(kev::toJson(back), normalised);
}

// Qt's QJsonObject (core) sorts an object's keys and other tools may reorder them too, so the
// order of args->dims and args->scalars comes from the "dims" and "scalars" lists, never from the
// order of the keys in "shape" or "params".
TEST(OpsTask, CustomOrderComesFromTheListsNotTheKeys) {
    json::Value v = json::parse(kCustom);
    v["dims"] = json::Value::array();
    v["dims"].push("N");
    v["dims"].push("M");
    v["scalars"] = json::Value::array();
    v["scalars"].push("gain");
    v["scalars"].push("epsilon");
    const Task t = kev::parseTask(v);
    EXPECT_EQ(t.dims, (std::vector<std::string>{"N", "M"}));
    const KevolveArgs a = ops::shapeArgs(t, t.shape);
    EXPECT_EQ(a.dims[0], 1000);
    EXPECT_EQ(a.dims[1], 64);
    const KevolveArgs small = ops::shapeArgs(t, t.validationShapes[0]);
    EXPECT_EQ(small.dims[0], 8);
    EXPECT_EQ(small.dims[1], 3);
    const auto s = ops::scalars(t);
    EXPECT_DOUBLE_EQ(s[0], 2.0);
    EXPECT_DOUBLE_EQ(s[1], 1e-6);

    // The normalised task says the order explicitly, so it survives a reader that sorts keys.
    const json::Value normalised = kev::toJson(t);
    EXPECT_EQ(normalised.find("dims")->dump(), R"(["N","M"])");
    EXPECT_EQ(normalised.find("scalars")->dump(), R"(["gain","epsilon"])");
    EXPECT_TRUE(kev::parseTask(json::parse(normalised.dump())) == t);
}

TEST(OpsTask, OnlyCustomTasksNameTheirDimsAndScalars) {
    EXPECT_EQ(rejection(kLayernorm, [](json::Value& l) { l["dims"] = json::Value::array(); }),
              "task.dims: only a custom op names its dimensions (layernorm's are M, N)");
    EXPECT_EQ(rejection(kLayernorm, [](json::Value& l) { l["scalars"] = json::Value::array(); }),
              "task.scalars: only a custom op orders its params (layernorm's order is fixed; see "
              "PROTOCOL.md)");
}

TEST(OpsTask, MalformedCustomTasksNameTheField) {
    struct Case {
        const char* expected;
        std::function<void(json::Value&)> mutate;
    };
    const Case cases[] = {
        {"task.tensors: missing (a custom op lists its inputs and outputs)",
         [](json::Value& v) { v.erase("tensors"); }},
        {"task.tensors: expected an array, got {}",
         [](json::Value& v) { v["tensors"] = json::Value::object(); }},
        {"task.tensors[1]: expected an object, got \"Y\"",
         [](json::Value& v) { v["tensors"].at(1) = "Y"; }},
        {"task.tensors[0].name: missing", [](json::Value& v) { v["tensors"].at(0).erase("name"); }},
        {"task.tensors[0].name: \"1x\" must be 1-32 letters, digits or '_', not starting with a "
         "digit",
         [](json::Value& v) { v["tensors"].at(0)["name"] = "1x"; }},
        {"task.tensors[2].name: \"X\" is already the name of task.tensors[0]",
         [](json::Value& v) { v["tensors"].at(2)["name"] = "X"; }},
        {"task.tensors[0].shape: missing",
         [](json::Value& v) { v["tensors"].at(0).erase("shape"); }},
        {"task.tensors[0].shape: expected an array of dimension names, got \"M\"",
         [](json::Value& v) { v["tensors"].at(0)["shape"] = "M"; }},
        {"task.tensors[0].shape: a tensor has 1 to 4 dimensions, got 0",
         [](json::Value& v) { v["tensors"].at(0)["shape"] = json::Value::array(); }},
        {"task.tensors[0].shape[1]: \"K\" is not a dimension of task.shape (M, N)",
         [](json::Value& v) { v["tensors"].at(0)["shape"].at(1) = "K"; }},
        {"task.tensors[0].shape[0]: expected a string, got 4",
         [](json::Value& v) { v["tensors"].at(0)["shape"].at(0) = 4; }},
        {"task.tensors[0].dtype: missing",
         [](json::Value& v) { v["tensors"].at(0).erase("dtype"); }},
        {"task.tensors[0].dtype: \"i8\" is not one of f16, bf16, f32",
         [](json::Value& v) { v["tensors"].at(0)["dtype"] = "i8"; }},
        {"task.tensors[1].output: expected true or false, got \"yes\"",
         [](json::Value& v) { v["tensors"].at(1)["output"] = "yes"; }},
        {"task.tensors[1].distribution: an output is written by the kernel, not drawn; remove the "
         "field",
         [](json::Value& v) { v["tensors"].at(1)["distribution"] = "normal"; }},
        {"task.tensors[0].distribution: \"gauss\" is not one of normal, uniform, positive, "
         "shifted, large",
         [](json::Value& v) { v["tensors"].at(0)["distribution"] = "gauss"; }},
        {"task.tensors[0].layout: unknown field",
         [](json::Value& v) { v["tensors"].at(0)["layout"] = "row"; }},
        {"task.tensors: no output (mark at least one tensor \"output\": true)",
         [](json::Value& v) { v["tensors"].at(1)["output"] = false; }},
        {"task.dims[2]: \"K\" is not a dimension of any tensor in task.tensors",
         [](json::Value& v) {
             v["dims"].push("K");
             v["shape"]["K"] = 4;
             v["validation_shapes"].at(0)["K"] = 4;
         }},
        {"task.dims: missing (a custom op lists its dimension names in args->dims order, e.g. "
         "[\"M\", \"N\"]; task.shape gives their sizes)",
         [](json::Value& v) { v.erase("dims"); }},
        {"task.dims: expected an array of dimension names, got {}",
         [](json::Value& v) { v["dims"] = json::Value::object(); }},
        {"task.dims: a custom op needs at least one dimension",
         [](json::Value& v) { v["dims"] = json::Value::array(); }},
        {"task.dims[1]: \"M\" is named twice", [](json::Value& v) { v["dims"].at(1) = "M"; }},
        {"task.dims[0]: \"2d\" is not a dimension name (1-32 letters, digits or '_', not "
         "starting with a digit)",
         [](json::Value& v) { v["dims"].at(0) = "2d"; }},
        {"task.shape.K: unknown field (custom has dimensions M, N)",
         [](json::Value& v) { v["shape"]["K"] = 4; }},
        {"task.shape.N: missing", [](json::Value& v) { v["shape"].erase("N"); }},
        {"task.scalars: missing (a custom op with params lists their names in args->scalars "
         "order, e.g. [\"epsilon\"])",
         [](json::Value& v) { v.erase("scalars"); }},
        {"task.scalars: expected an array of parameter names, got \"epsilon\"",
         [](json::Value& v) { v["scalars"] = "epsilon"; }},
        {"task.scalars[1]: \"gian\" is not a key of task.params",
         [](json::Value& v) { v["scalars"].at(1) = "gian"; }},
        {"task.scalars[1]: \"epsilon\" is named twice",
         [](json::Value& v) { v["scalars"].at(1) = "epsilon"; }},
        {"task.params.gain: not named in task.scalars (which gives their order)",
         [](json::Value& v) {
             v["scalars"] = json::Value::array();
             v["scalars"].push("epsilon");
         }},
        {"task.validation_shapes[0].K: unknown field (custom has dimensions M, N)",
         [](json::Value& v) { v["validation_shapes"].at(0)["K"] = 4; }},
        {"task.validation_shapes[0].N: missing",
         [](json::Value& v) { v["validation_shapes"].at(0).erase("N"); }},
        {"task.dtypes.X: unknown field (a custom op gives each tensor's dtype in task.tensors)",
         [](json::Value& v) { v["dtypes"]["X"] = "f16"; }},
        {"task.params.mode: expected a number, got \"fast\" (custom parameters become "
         "args->scalars)",
         [](json::Value& v) { v["params"]["mode"] = "fast"; }},
        {"task.params: 5 parameters; at most 4 (each becomes one args->scalars entry)",
         [](json::Value& v) {
             v["params"]["a"] = 1;
             v["params"]["b"] = 2;
             v["params"]["c"] = 3;
         }},
        {"task.reference: missing (a custom op needs {\"file\": \"ref.cu\"}, a reference "
         "implementing the candidate ABI)",
         [](json::Value& v) { v.erase("reference"); }},
        {"task.reference: a custom op needs its own reference: {\"file\": \"ref.cu\"}",
         [](json::Value& v) { v["reference"] = "cublas"; }},
        {"task.tolerance: missing (a custom op is judged by |y - ref| <= atol + rtol |ref|; give "
         "{\"atol\": ..., \"rtol\": ...})",
         [](json::Value& v) { v.erase("tolerance"); }},
        {"task.tolerance.rtol: missing", [](json::Value& v) { v["tolerance"].erase("rtol"); }},
        {"task.tolerance.atol: -1 must be at least 0",
         [](json::Value& v) { v["tolerance"]["atol"] = -1; }},
        {"task.tolerance.multiple: unknown field",
         [](json::Value& v) { v["tolerance"]["multiple"] = 8; }},
        {"task.counts: missing (a custom op gives {\"flops\": F, \"min_bytes\": B} for its timed "
         "shape; the harness cannot count an op it does not know)",
         [](json::Value& v) { v.erase("counts"); }},
        {"task.counts.min_bytes: missing", [](json::Value& v) { v["counts"].erase("min_bytes"); }},
        {"task.layout.Z: unknown field (custom has tensors X, W, Y)",
         [](json::Value& v) { v["layout"]["Z"] = "row"; }},
    };
    for (const auto& c : cases)
        EXPECT_EQ(rejection(kCustom, c.mutate), c.expected);
}

TEST(OpsTask, TheDocumentedExampleParses) {
    const Task t = kev::loadTaskFile(std::string(KEVOLVE_SOURCE_DIR) +
                                     "/resources/examples/custom_op/task.json");
    EXPECT_TRUE(t.isCustom());
    EXPECT_EQ(t.reference.kind, kev::Reference::Kind::File);
    EXPECT_NE(t.reference.file.find("custom_op/ref.cu"), std::string::npos);
    // The counts given are the timed shape's: 4 M N FLOPs, X and Y once in f16, W once.
    EXPECT_DOUBLE_EQ(t.counts->flops, 4.0 * 8192 * 4096);
    EXPECT_DOUBLE_EQ(t.counts->minBytes, t.opSpec().minBytes(t, t.shape));
}

TEST(OpsTask, CustomOutputsAreJudgedElementwiseAgainstTheReference) {
    const Task t = kev::parseTask(json::parse(kCustom));
    const kev::Shape s = t.validationShapes[0];
    std::vector<ops::HostTensor> in;
    ops::generate(t, s, ops::Distribution::Normal, 9, in);
    ASSERT_EQ(in.size(), 2u);
    for (int64_t i = 0; i < in[1].layout.elements(); ++i) {
        EXPECT_GE(in[1].at(i), 0.5);
        EXPECT_LE(in[1].at(i), 2.0);
    }
    std::vector<ops::HostTensor> ref = ops::allocateOutputs(t, s);
    for (int64_t i = 0; i < ref[0].layout.elements(); ++i)
        ref[0].set(i, in[0].at(i) * 3.0);
    ref[0].set(5, std::numeric_limits<double>::quiet_NaN());
    const ops::Truth truth = ops::truthFromOutputs(ref);

    std::vector<ops::HostTensor> close = ref;
    close[0].set(3, ref[0].at(3) * (1 + 0.009) + 0.0009);
    ops::Check c = ops::compare(t, s, in, truth, close, {});
    EXPECT_TRUE(c.verdict.pass) << c.verdict.reason;

    std::vector<ops::HostTensor> far = ref;
    far[0].set(3, ref[0].at(3) * (1 + 0.02) + 0.002);
    c = ops::compare(t, s, in, truth, far, {});
    EXPECT_FALSE(c.verdict.pass);
    EXPECT_NE(c.verdict.reason.find("Y[0, 3]"), std::string::npos) << c.verdict.reason;

    std::vector<ops::HostTensor> noNan = ref;
    noNan[0].set(5, 0.0);
    c = ops::compare(t, s, in, truth, noNan, {});
    EXPECT_FALSE(c.verdict.pass);
    EXPECT_EQ(c.specialMismatches, 1);
    EXPECT_NE(c.verdict.reason.find("Y[0, 5] = 0 where the reference gives nan"), std::string::npos)
        << c.verdict.reason;
    EXPECT_NE(ops::describeRule(t, s).find("0.001 + 0.01 |ref|"), std::string::npos);
    EXPECT_THROW(ops::computeTruth(t, s, in), std::logic_error);
}
