// The task model's accessors and the op registry: each op's dimensions, tensors, dtypes,
// parameters, rules and counts (PROTOCOL.md, "Ops"). New ops join by adding an OpSpec here.
#include "task.h"
#include "task_abi.h"
#include "task_internal.h"

#include <algorithm>
#include <string>
#include <vector>

namespace kev {

namespace task_detail {

void fail(const std::string& path, const std::string& message) {
    throw TaskError(path + ": " + message);
}

std::string quoted(const json::Value& v) {
    std::string s = v.dump();
    if (s.size() > 60)
        s = s.substr(0, 57) + "...";
    return s;
}

std::string join(const std::vector<std::string>& items, const char* sep) {
    std::string out;
    for (const auto& item : items) {
        if (!out.empty())
            out += sep;
        out += item;
    }
    return out;
}

} // namespace task_detail

using namespace task_detail;

namespace {

struct DtypeEntry {
    Dtype dtype;
    const char* name;
    int bytes;
};

constexpr DtypeEntry kDtypes[] = {
    {Dtype::F32, "f32", 4}, {Dtype::F16, "f16", 2}, {Dtype::BF16, "bf16", 2},
    {Dtype::F64, "f64", 8}, {Dtype::I32, "i32", 4}, {Dtype::I8, "i8", 1},
};

void validateGemm(const Task& task) {
    const auto checkShape = [&](const Shape& s, const std::string& path) {
        // Row-major A (M x K), B (K x N) and C (M x N): K and N are the leading dimensions.
        for (const char* dim : {"N", "K"}) {
            const int64_t value = s.dim(dim);
            if (value % task.leadingDimMultiple != 0)
                fail(path + "." + dim,
                     std::to_string(value) +
                         " is not a multiple of alignment.leading_dim_multiple (" +
                         std::to_string(task.leadingDimMultiple) + ")");
        }
    };
    checkShape(task.shape, "task.shape");
    for (size_t i = 0; i < task.validationShapes.size(); ++i)
        checkShape(task.validationShapes[i], "task.validation_shapes[" + std::to_string(i) + "]");

    const Dtype a = task.dtype("A");
    const Dtype b = task.dtype("B");
    const Dtype c = task.dtype("C");
    if (b != a)
        fail("task.dtypes.B", std::string("\"") + dtypeName(b) +
                                  "\" differs from dtypes.A; A and B must have one dtype (\"" +
                                  dtypeName(a) + "\")");
    // cublasGemmEx with CUBLAS_COMPUTE_32F writes fp32 inputs only to fp32, and 16-bit inputs to
    // their own type or fp32.
    if (c != Dtype::F32 && c != a)
        fail("task.dtypes.C", std::string("\"") + dtypeName(c) + "\" output with \"" +
                                  dtypeName(a) + "\" inputs is not supported; use f32 or " +
                                  dtypeName(a));
}

double dimD(const Shape& s, const char* name) {
    return static_cast<double>(s.dim(name));
}

double bytesOf(const Task& t, const char* tensorName) {
    return static_cast<double>(dtypeBytes(t.dtype(tensorName)));
}

// Row-wise ops and GEMV store their rows padded to leading_dim_multiple, so a row length need not
// be a multiple of it; only the dtype combinations the references support are checked.
void requireSameDtype(const Task& task, const char* tensorName, const char* like) {
    const Dtype d = task.dtype(tensorName);
    const Dtype want = task.dtype(like);
    if (d != want)
        fail(std::string("task.dtypes.") + tensorName,
             std::string("\"") + dtypeName(d) + "\" differs from dtypes." + like + " (\"" +
                 dtypeName(want) + "\"); " + tensorName + " and " + like + " must have one dtype");
}

void validateGemv(const Task& task) {
    requireSameDtype(task, "x", "A");
    const Dtype a = task.dtype("A");
    const Dtype y = task.dtype("y");
    if (y != Dtype::F32 && y != a)
        fail("task.dtypes.y", std::string("\"") + dtypeName(y) + "\" output with \"" +
                                  dtypeName(a) + "\" inputs is not supported; use f32 or " +
                                  dtypeName(a));
}

void validateSoftmax(const Task& task) {
    requireSameDtype(task, "Y", "X");
}

void validateLayernorm(const Task& task) {
    requireSameDtype(task, "W", "X");
    requireSameDtype(task, "B", "X");
    requireSameDtype(task, "Y", "X");
}

void validateRmsnorm(const Task& task) {
    requireSameDtype(task, "W", "X");
    requireSameDtype(task, "Y", "X");
}

void validateReduce(const Task& task) {
    if (task.dtype("Y") != Dtype::F32)
        fail("task.dtypes.Y", std::string("\"") + dtypeName(task.dtype("Y")) +
                                  "\" is not supported; reductions write f32");
}

void validateElementwise(const Task& task) {
    requireSameDtype(task, "Y", "X");
}

ParamValue boolParam(bool b) {
    ParamValue v;
    v.kind = ParamValue::Kind::Bool;
    v.flag = b;
    return v;
}

ParamValue numberParam(double d) {
    ParamValue v;
    v.kind = ParamValue::Kind::Number;
    v.number = d;
    return v;
}

ParamValue choiceParam(std::string c) {
    ParamValue v;
    v.kind = ParamValue::Kind::Choice;
    v.choice = std::move(c);
    return v;
}

double customElements(const Task& t, const Shape& s) {
    double total = 0;
    for (const auto& tensor : t.tensors) {
        double n = 1;
        for (const auto& d : tensor.dims)
            n *= static_cast<double>(s.dim(d));
        total += n;
    }
    return total;
}

std::vector<OpSpec> makeRegistry() {
    const std::vector<Dtype> floats = {Dtype::F16, Dtype::BF16, Dtype::F32};
    std::vector<OpSpec> ops;
    OpSpec gemm;
    gemm.name = "gemm";
    gemm.kevolveOp = abi::kOpGemm;
    gemm.dims = {"M", "N", "K"};
    gemm.inputs = {"A", "B"};
    gemm.outputs = {"C"};
    gemm.tensorDtypes = floats;
    gemm.accumulateDtypes = {Dtype::F32};
    gemm.defaultLeadingDimMultiple = 8;
    gemm.validate = validateGemm;
    gemm.flops = [](const Task&, const Shape& s) {
        return 2.0 * dimD(s, "M") * dimD(s, "N") * dimD(s, "K");
    };
    gemm.minBytes = [](const Task& t, const Shape& s) {
        const double m = dimD(s, "M");
        const double n = dimD(s, "N");
        const double k = dimD(s, "K");
        return m * k * bytesOf(t, "A") + k * n * bytesOf(t, "B") + m * n * bytesOf(t, "C");
    };
    ops.push_back(std::move(gemm));

    OpSpec gemv;
    gemv.name = "gemv";
    gemv.kevolveOp = abi::kOpGemv;
    gemv.dims = {"M", "N"};
    gemv.inputs = {"A", "x"};
    gemv.outputs = {"y"};
    gemv.tensorDtypes = floats;
    gemv.accumulateDtypes = {Dtype::F32};
    gemv.defaultLeadingDimMultiple = 8;
    gemv.params = {{"transpose", boolParam(false), {}}};
    gemv.validate = validateGemv;
    gemv.flops = [](const Task&, const Shape& s) { return 2.0 * dimD(s, "M") * dimD(s, "N"); };
    gemv.minBytes = [](const Task& t, const Shape& s) {
        const double m = dimD(s, "M");
        const double n = dimD(s, "N");
        const bool transpose = t.param("transpose").flag;
        return m * n * bytesOf(t, "A") + (transpose ? m : n) * bytesOf(t, "x") +
               (transpose ? n : m) * bytesOf(t, "y");
    };
    ops.push_back(std::move(gemv));

    OpSpec softmax;
    softmax.name = "softmax";
    softmax.kevolveOp = abi::kOpSoftmax;
    softmax.dims = {"M", "N"};
    softmax.inputs = {"X"};
    softmax.outputs = {"Y"};
    softmax.tensorDtypes = floats;
    softmax.accumulateDtypes = {Dtype::F32};
    softmax.defaultLeadingDimMultiple = 8;
    softmax.validate = validateSoftmax;
    softmax.flops = [](const Task&, const Shape& s) { return 5.0 * dimD(s, "M") * dimD(s, "N"); };
    softmax.minBytes = [](const Task& t, const Shape& s) {
        return dimD(s, "M") * dimD(s, "N") * (bytesOf(t, "X") + bytesOf(t, "Y"));
    };
    ops.push_back(std::move(softmax));

    OpSpec layernorm;
    layernorm.name = "layernorm";
    layernorm.kevolveOp = abi::kOpLayernorm;
    layernorm.dims = {"M", "N"};
    layernorm.inputs = {"X", "W", "B"};
    layernorm.outputs = {"Y"};
    layernorm.tensorDtypes = floats;
    layernorm.accumulateDtypes = {Dtype::F32};
    layernorm.defaultLeadingDimMultiple = 8;
    {
        ParamSpec epsilon{"epsilon", numberParam(1e-5), {}};
        epsilon.min = 0.0;
        epsilon.minOpen = true;
        epsilon.max = 1.0;
        layernorm.params = {epsilon};
    }
    layernorm.validate = validateLayernorm;
    layernorm.flops = [](const Task&, const Shape& s) { return 8.0 * dimD(s, "M") * dimD(s, "N"); };
    layernorm.minBytes = [](const Task& t, const Shape& s) {
        const double m = dimD(s, "M");
        const double n = dimD(s, "N");
        return m * n * (bytesOf(t, "X") + bytesOf(t, "Y")) +
               n * (bytesOf(t, "W") + bytesOf(t, "B"));
    };
    ops.push_back(std::move(layernorm));

    OpSpec reduce;
    reduce.name = "reduce";
    reduce.kevolveOp = abi::kOpReduce;
    reduce.dims = {"M", "N"};
    reduce.inputs = {"X"};
    reduce.outputs = {"Y"};
    reduce.tensorDtypes = floats;
    reduce.accumulateDtypes = {Dtype::F32};
    reduce.defaultLeadingDimMultiple = 8;
    reduce.params = {{"reduction", choiceParam("sum"), {"sum", "max"}}};
    reduce.validate = validateReduce;
    reduce.flops = [](const Task&, const Shape& s) { return dimD(s, "M") * dimD(s, "N"); };
    reduce.minBytes = [](const Task& t, const Shape& s) {
        return dimD(s, "M") * dimD(s, "N") * bytesOf(t, "X") + dimD(s, "M") * bytesOf(t, "Y");
    };
    ops.push_back(std::move(reduce));

    OpSpec elementwise;
    elementwise.name = "elementwise";
    elementwise.kevolveOp = abi::kOpElementwise;
    elementwise.dims = {"N"};
    elementwise.inputs = {"X"};
    elementwise.outputs = {"Y"};
    elementwise.tensorDtypes = floats;
    elementwise.accumulateDtypes = {Dtype::F32};
    elementwise.defaultLeadingDimMultiple = 8;
    elementwise.params = {{"function", choiceParam("gelu"), {"gelu", "silu"}}};
    elementwise.validate = validateElementwise;
    elementwise.flops = [](const Task& t, const Shape& s) {
        return (t.param("function").choice == "silu" ? 4.0 : 8.0) * dimD(s, "N");
    };
    elementwise.minBytes = [](const Task& t, const Shape& s) {
        return dimD(s, "N") * (bytesOf(t, "X") + bytesOf(t, "Y"));
    };
    ops.push_back(std::move(elementwise));

    OpSpec rmsnorm;
    rmsnorm.name = "rmsnorm";
    rmsnorm.kevolveOp = abi::kOpRmsnorm;
    rmsnorm.dims = {"M", "N"};
    rmsnorm.inputs = {"X", "W"};
    rmsnorm.outputs = {"Y"};
    rmsnorm.tensorDtypes = floats;
    rmsnorm.accumulateDtypes = {Dtype::F32};
    rmsnorm.defaultLeadingDimMultiple = 8;
    {
        ParamSpec epsilon{"epsilon", numberParam(1e-6), {}};
        epsilon.min = 0.0;
        epsilon.minOpen = true;
        epsilon.max = 1.0;
        rmsnorm.params = {epsilon};
    }
    rmsnorm.validate = validateRmsnorm;
    // Per element: the square and its sum, then the scale by rstd and by W.
    rmsnorm.flops = [](const Task&, const Shape& s) { return 4.0 * dimD(s, "M") * dimD(s, "N"); };
    rmsnorm.minBytes = [](const Task& t, const Shape& s) {
        const double m = dimD(s, "M");
        const double n = dimD(s, "N");
        return m * n * (bytesOf(t, "X") + bytesOf(t, "Y")) + n * bytesOf(t, "W");
    };
    ops.push_back(std::move(rmsnorm));

    // Custom ops declare their dimensions, tensors, params and counts in the task; the counts
    // given are the timed shape's, and other shapes scale them by their element count.
    OpSpec custom;
    custom.name = "custom";
    custom.kevolveOp = abi::kOpCustom;
    custom.tensorDtypes = floats;
    custom.accumulateDtypes = {Dtype::F32};
    custom.defaultLeadingDimMultiple = 1;
    custom.flops = [](const Task& t, const Shape& s) {
        const double timed = customElements(t, t.shape);
        return t.counts && timed > 0 ? t.counts->flops * customElements(t, s) / timed : 0.0;
    };
    custom.minBytes = [](const Task& t, const Shape& s) {
        double total = 0;
        for (const auto& tensor : t.tensors) {
            double n = dtypeBytes(tensor.dtype);
            for (const auto& d : tensor.dims)
                n *= static_cast<double>(s.dim(d));
            total += n;
        }
        return total;
    };
    ops.push_back(std::move(custom));
    return ops;
}

} // namespace

const char* dtypeName(Dtype dtype) {
    for (const auto& e : kDtypes) {
        if (e.dtype == dtype)
            return e.name;
    }
    return "?";
}

std::optional<Dtype> parseDtype(std::string_view name) {
    for (const auto& e : kDtypes) {
        if (name == e.name)
            return e.dtype;
    }
    return std::nullopt;
}

int dtypeBytes(Dtype dtype) {
    for (const auto& e : kDtypes) {
        if (e.dtype == dtype)
            return e.bytes;
    }
    return 0;
}

const char* layoutName(Layout) {
    return "row";
}

int64_t Shape::dim(std::string_view name) const {
    for (const auto& [key, value] : dims) {
        if (key == name)
            return value;
    }
    throw std::out_of_range("shape has no dimension " + std::string(name));
}

json::Value Shape::toJson() const {
    json::Value v = json::Value::object();
    for (const auto& [key, value] : dims)
        v[key] = value;
    return v;
}

const OpSpec& Task::opSpec() const {
    const OpSpec* spec = findOp(op);
    if (!spec)
        throw std::out_of_range("no op named " + op + " in the registry");
    return *spec;
}

const TensorSpec& Task::tensor(std::string_view tensorName) const {
    for (const auto& t : tensors) {
        if (t.name == tensorName)
            return t;
    }
    throw std::out_of_range("task " + name + " has no tensor " + std::string(tensorName));
}

double Task::flops(const Shape& s) const {
    if (counts && s == shape)
        return counts->flops;
    return opSpec().flops(*this, s);
}

double Task::minBytes(const Shape& s) const {
    if (counts && s == shape)
        return counts->minBytes;
    return opSpec().minBytes(*this, s);
}

bool Task::operator==(const Task& o) const {
    return schemaVersion == o.schemaVersion && name == o.name && description == o.description &&
           op == o.op && tensors == o.tensors && accumulate == o.accumulate && shape == o.shape &&
           validationShapes == o.validationShapes && leadingDimMultiple == o.leadingDimMultiple &&
           reference == o.reference && toleranceMultiple == o.toleranceMultiple &&
           timing == o.timing && counts == o.counts && params == o.params && dims == o.dims &&
           elementwiseTolerance == o.elementwiseTolerance;
}

const ParamValue& Task::param(std::string_view paramName) const {
    for (const auto& [key, value] : params) {
        if (key == paramName)
            return value;
    }
    throw std::out_of_range("task " + name + " has no parameter " + std::string(paramName));
}

const std::vector<OpSpec>& opRegistry() {
    static const std::vector<OpSpec> registry = makeRegistry();
    return registry;
}

const OpSpec* findOp(std::string_view name) {
    for (const auto& op : opRegistry()) {
        if (op.name == name)
            return &op;
    }
    return nullptr;
}

} // namespace kev
