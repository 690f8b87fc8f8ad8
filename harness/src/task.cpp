#include "task.h"

#include "files.h"
#include "task_abi.h"
#include "task_internal.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <initializer_list>

namespace kev {

using namespace task_detail;

namespace {

// Dimensions beyond int32 would overflow the index arithmetic of most candidates and of the
// validation kernels; no task needs them.
constexpr int64_t kMaxDim = (int64_t{1} << 31) - 1;
constexpr size_t kMaxValidationShapes = 64;

// An object whose every key must be one of `allowed`, so a typo is an error, not a silent default.
class ObjectReader {
public:
    ObjectReader(const json::Value& v, std::string path, std::initializer_list<const char*> allowed)
        : m_value(v)
        , m_path(std::move(path)) {
        if (!v.isObject())
            fail(m_path, std::string("expected an object, got ") + quoted(v));
        // A named reference, not a structured binding: clang (the fuzz build) cannot capture those.
        for (const auto& member : v.members()) {
            const std::string& key = member.first;
            if (std::none_of(allowed.begin(), allowed.end(),
                             [&](const char* a) { return key == a; }))
                fail(field(key), "unknown field");
        }
    }

    std::string field(std::string_view key) const { return m_path + "." + std::string(key); }
    const json::Value* optional(std::string_view key) const { return m_value.find(key); }
    const json::Value& required(std::string_view key) const {
        const json::Value* v = m_value.find(key);
        if (!v)
            fail(field(key), "missing");
        return *v;
    }

private:
    const json::Value& m_value;
    std::string m_path;
};

std::string readString(const json::Value& v, const std::string& path) {
    if (!v.isString())
        fail(path, "expected a string, got " + quoted(v));
    return v.asString();
}

int64_t readInt(const json::Value& v, const std::string& path, int64_t lo, int64_t hi) {
    if (!v.isInt())
        fail(path, "expected an integer, got " + quoted(v));
    int64_t i = 0;
    try {
        i = v.asInt();
    } catch (const json::TypeError&) {
        fail(path, quoted(v) + " is too large (at most " + std::to_string(hi) + ")");
    }
    if (i < lo)
        fail(path, std::to_string(i) + " must be at least " + std::to_string(lo));
    if (i > hi)
        fail(path, std::to_string(i) + " is too large (at most " + std::to_string(hi) + ")");
    return i;
}

// Bounds read as people write them: 600, 0.5.
std::string formatNumber(double d) {
    if (std::floor(d) == d && std::fabs(d) < 1e15)
        return std::to_string(static_cast<int64_t>(d));
    return json::Value(d).dump();
}

// A finite number in [lo, hi] (or (lo, hi] when `loOpen`).
double readNumber(const json::Value& v, const std::string& path, double lo, double hi,
                  bool loOpen) {
    if (!v.isNumber())
        fail(path, "expected a number, got " + quoted(v));
    const double d = v.asDouble();
    if (loOpen ? !(d > lo) : !(d >= lo))
        fail(path,
             quoted(v) + " must be " + (loOpen ? "greater than " : "at least ") + formatNumber(lo));
    if (!(d <= hi))
        fail(path, quoted(v) + " must be at most " + formatNumber(hi));
    return d;
}

std::string allowedDtypeList(const std::vector<Dtype>& allowed) {
    std::vector<std::string> names;
    for (Dtype d : allowed)
        names.emplace_back(dtypeName(d));
    return join(names, ", ");
}

Dtype readDtype(const json::Value& v, const std::string& path, const std::vector<Dtype>& allowed) {
    const std::string name = readString(v, path);
    const auto d = parseDtype(name);
    if (!d || std::find(allowed.begin(), allowed.end(), *d) == allowed.end())
        fail(path, quoted(v) + " is not one of " + allowedDtypeList(allowed));
    return *d;
}

Shape readShape(const json::Value& v, const std::string& path, const OpSpec& op) {
    if (!v.isObject())
        fail(path, "expected an object, got " + quoted(v));
    for (const auto& [key, member] : v.members()) {
        if (std::find(op.dims.begin(), op.dims.end(), key) == op.dims.end())
            fail(path + "." + key,
                 "unknown field (" + op.name + " has dimensions " + join(op.dims, ", ") + ")");
    }
    Shape s;
    for (const auto& dim : op.dims) {
        const json::Value* d = v.find(dim);
        if (!d)
            fail(path + "." + dim, "missing");
        s.dims.emplace_back(dim, readInt(*d, path + "." + dim, 1, kMaxDim));
    }
    return s;
}

bool isSafeName(const std::string& name) {
    if (name.empty() || name.size() > 128 || name.front() == '.' || name.front() == '-')
        return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '-' || c == '.';
    });
}

} // namespace

namespace {

const char* const kDistributions[] = {"normal", "uniform", "positive", "shifted", "large"};

bool isIdentifier(const std::string& name) {
    if (name.empty() || name.size() > 32 || (name.front() >= '0' && name.front() <= '9'))
        return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_';
    });
}

void readRegistryParams(const json::Value* given, const OpSpec& op, Task& task) {
    std::vector<std::string> names;
    for (const auto& p : op.params)
        names.push_back(p.name);
    const std::string takes =
        op.name + (names.empty() ? " takes no parameters" : " takes " + join(names, ", "));
    if (given) {
        if (!given->isObject())
            fail("task.params", "expected an object, got " + quoted(*given));
        for (const auto& [key, member] : given->members()) {
            if (std::find(names.begin(), names.end(), key) == names.end())
                fail("task.params." + key, "unknown parameter (" + takes + ")");
        }
    }
    for (const auto& spec : op.params) {
        const std::string path = "task.params." + spec.name;
        const json::Value* v = given ? given->find(spec.name) : nullptr;
        ParamValue value = spec.defaultValue;
        if (v) {
            switch (spec.defaultValue.kind) {
            case ParamValue::Kind::Bool:
                if (!v->isBool())
                    fail(path, "expected true or false, got " + quoted(*v));
                value.flag = v->asBool();
                break;
            case ParamValue::Kind::Number:
                value.number = readNumber(*v, path, spec.min, spec.max, spec.minOpen);
                break;
            case ParamValue::Kind::Choice: {
                const std::string choice = readString(*v, path);
                if (std::find(spec.choices.begin(), spec.choices.end(), choice) ==
                    spec.choices.end())
                    fail(path, quoted(*v) + " is not one of " + join(spec.choices, ", "));
                value.choice = choice;
                break;
            }
            }
        }
        task.params.emplace_back(spec.name, value);
    }
}

// A custom op's parameters: numbers, in the order `scalars` names them (that is the order of
// args->scalars). The order is a list because a JSON object's members have none that every tool
// keeps.
void readCustomParams(const json::Value* given, const json::Value* order, Task& task) {
    if (given && !given->isObject())
        fail("task.params", "expected an object, got " + quoted(*given));
    const size_t count = given ? given->size() : 0;
    if (count > abi::kMaxScalars)
        fail("task.params", std::to_string(count) + " parameters; at most " +
                                std::to_string(abi::kMaxScalars) +
                                " (each becomes one args->scalars entry)");
    if (given) {
        for (const auto& [key, member] : given->members()) {
            const std::string path = "task.params." + key;
            if (!isIdentifier(key))
                fail(path,
                     "a parameter name is 1-32 letters, digits or '_', not starting with a digit");
            if (!member.isNumber())
                fail(path, "expected a number, got " + quoted(member) +
                               " (custom parameters become args->scalars)");
        }
    }
    if (!order) {
        if (count > 0)
            fail("task.scalars", "missing (a custom op with params lists their names in "
                                 "args->scalars order, e.g. [\"" +
                                     given->members().front().first + "\"])");
        return;
    }
    if (!order->isArray())
        fail("task.scalars", "expected an array of parameter names, got " + quoted(*order));
    for (size_t i = 0; i < order->size(); ++i) {
        const std::string path = "task.scalars[" + std::to_string(i) + "]";
        const std::string name = readString(order->at(i), path);
        const json::Value* value = given ? given->find(name) : nullptr;
        if (!value)
            fail(path, quoted(order->at(i)) + " is not a key of task.params");
        for (const auto& [earlier, p] : task.params) {
            if (earlier == name)
                fail(path, quoted(order->at(i)) + " is named twice");
        }
        ParamValue v;
        v.kind = ParamValue::Kind::Number;
        v.number = value->asDouble();
        task.params.emplace_back(name, v);
    }
    if (given) {
        for (const auto& member : given->members()) {
            const std::string& key = member.first;
            const bool listed = std::any_of(task.params.begin(), task.params.end(),
                                            [&](const auto& p) { return p.first == key; });
            if (!listed)
                fail("task.params." + key, "not named in task.scalars (which gives their order)");
        }
    }
}

// A custom op's dimensions are named by `dims`, in the order of args->dims; the shapes give their
// sizes. A list, because a JSON object's members have no order that every tool keeps (Qt's
// QJsonObject, for one, sorts them).
std::vector<std::string> readCustomDims(const json::Value* v) {
    if (!v)
        fail("task.dims", "missing (a custom op lists its dimension names in args->dims order, "
                          "e.g. [\"M\", \"N\"]; task.shape gives their sizes)");
    if (!v->isArray())
        fail("task.dims", "expected an array of dimension names, got " + quoted(*v));
    if (v->size() == 0)
        fail("task.dims", "a custom op needs at least one dimension");
    if (v->size() > abi::kMaxDims)
        fail("task.dims",
             std::to_string(v->size()) + " dimensions; at most " + std::to_string(abi::kMaxDims));
    std::vector<std::string> dims;
    for (size_t i = 0; i < v->size(); ++i) {
        const std::string path = "task.dims[" + std::to_string(i) + "]";
        const std::string name = readString(v->at(i), path);
        if (!isIdentifier(name))
            fail(path, quoted(v->at(i)) +
                           " is not a dimension name (1-32 letters, digits or '_', not starting "
                           "with a digit)");
        if (std::find(dims.begin(), dims.end(), name) != dims.end())
            fail(path, quoted(v->at(i)) + " is named twice");
        dims.push_back(name);
    }
    return dims;
}

void readCustomTensors(const json::Value* v, Task& task) {
    if (!v)
        fail("task.tensors", "missing (a custom op lists its inputs and outputs)");
    if (!v->isArray())
        fail("task.tensors", "expected an array, got " + quoted(*v));
    std::vector<TensorSpec> inputs;
    std::vector<TensorSpec> outputs;
    std::vector<std::string> names;
    for (size_t i = 0; i < v->size(); ++i) {
        const std::string path = "task.tensors[" + std::to_string(i) + "]";
        const ObjectReader reader(v->at(i), path,
                                  {"name", "shape", "dtype", "output", "distribution"});
        TensorSpec t;
        t.name = readString(reader.required("name"), reader.field("name"));
        if (!isIdentifier(t.name))
            fail(reader.field("name"),
                 quoted(reader.required("name")) +
                     " must be 1-32 letters, digits or '_', not starting with a digit");
        const auto previous = std::find(names.begin(), names.end(), t.name);
        if (previous != names.end())
            fail(reader.field("name"), quoted(reader.required("name")) +
                                           " is already the name of task.tensors[" +
                                           std::to_string(previous - names.begin()) + "]");
        names.push_back(t.name);

        const json::Value& shape = reader.required("shape");
        const std::string shapePath = reader.field("shape");
        if (!shape.isArray())
            fail(shapePath, "expected an array of dimension names, got " + quoted(shape));
        if (shape.size() < 1 || shape.size() > 4)
            fail(shapePath, "a tensor has 1 to 4 dimensions, got " + std::to_string(shape.size()));
        for (size_t d = 0; d < shape.size(); ++d) {
            const std::string dimPath = shapePath + "[" + std::to_string(d) + "]";
            const std::string dim = readString(shape.at(d), dimPath);
            if (std::find(task.dims.begin(), task.dims.end(), dim) == task.dims.end())
                fail(dimPath, quoted(shape.at(d)) + " is not a dimension of task.shape (" +
                                  join(task.dims, ", ") + ")");
            t.dims.push_back(dim);
        }

        t.dtype = readDtype(reader.required("dtype"), reader.field("dtype"),
                            {Dtype::F16, Dtype::BF16, Dtype::F32});
        if (const json::Value* o = reader.optional("output")) {
            if (!o->isBool())
                fail(reader.field("output"), "expected true or false, got " + quoted(*o));
            t.output = o->asBool();
        }
        if (const json::Value* d = reader.optional("distribution")) {
            if (t.output)
                fail(reader.field("distribution"),
                     "an output is written by the kernel, not drawn; remove the field");
            t.distribution = readString(*d, reader.field("distribution"));
            if (std::none_of(std::begin(kDistributions), std::end(kDistributions),
                             [&](const char* n) { return t.distribution == n; }))
                fail(reader.field("distribution"),
                     quoted(*d) + " is not one of normal, uniform, positive, shifted, large");
        } else if (!t.output) {
            t.distribution = "normal";
        }
        (t.output ? outputs : inputs).push_back(std::move(t));
    }
    if (outputs.empty())
        fail("task.tensors", "no output (mark at least one tensor \"output\": true)");
    if (inputs.size() > abi::kMaxTensors)
        fail("task.tensors", std::to_string(inputs.size()) + " inputs; at most " +
                                 std::to_string(abi::kMaxTensors));
    if (outputs.size() > abi::kMaxTensors)
        fail("task.tensors", std::to_string(outputs.size()) + " outputs; at most " +
                                 std::to_string(abi::kMaxTensors));
    task.tensors = std::move(inputs);
    task.tensors.insert(task.tensors.end(), outputs.begin(), outputs.end());
    for (size_t i = 0; i < task.dims.size(); ++i) {
        const std::string& dim = task.dims[i];
        const bool used = std::any_of(task.tensors.begin(), task.tensors.end(), [&](const auto& t) {
            return std::find(t.dims.begin(), t.dims.end(), dim) != t.dims.end();
        });
        if (!used)
            fail("task.dims[" + std::to_string(i) + "]",
                 "\"" + dim + "\" is not a dimension of any tensor in task.tensors");
    }
}

void readRegistryTensors(const ObjectReader& root, const OpSpec& op, Task& task) {
    std::vector<std::string> tensorNames = op.inputs;
    tensorNames.insert(tensorNames.end(), op.outputs.begin(), op.outputs.end());
    const json::Value& dtypes = root.required("dtypes");
    if (!dtypes.isObject())
        fail("task.dtypes", "expected an object, got " + quoted(dtypes));
    for (const auto& [key, member] : dtypes.members()) {
        if (key != "accumulate" &&
            std::find(tensorNames.begin(), tensorNames.end(), key) == tensorNames.end())
            fail("task.dtypes." + key, "unknown field (" + op.name + " has tensors " +
                                           join(tensorNames, ", ") + " and accumulate)");
    }
    for (const auto& tensorName : tensorNames) {
        const json::Value* d = dtypes.find(tensorName);
        if (!d)
            fail("task.dtypes." + tensorName, "missing");
        TensorSpec t;
        t.name = tensorName;
        t.output = std::find(op.outputs.begin(), op.outputs.end(), tensorName) != op.outputs.end();
        t.dtype = readDtype(*d, "task.dtypes." + tensorName, op.tensorDtypes);
        task.tensors.push_back(t);
    }
    if (const json::Value* acc = dtypes.find("accumulate"))
        task.accumulate = readDtype(*acc, "task.dtypes.accumulate", op.accumulateDtypes);
}

// Custom tasks give dtypes per tensor; "dtypes" may only name the accumulation.
void readCustomAccumulate(const ObjectReader& root, const OpSpec& op, Task& task) {
    const json::Value* dtypes = root.optional("dtypes");
    if (!dtypes)
        return;
    if (!dtypes->isObject())
        fail("task.dtypes", "expected an object, got " + quoted(*dtypes));
    for (const auto& [key, member] : dtypes->members()) {
        if (key != "accumulate")
            fail("task.dtypes." + key,
                 "unknown field (a custom op gives each tensor's dtype in task.tensors)");
    }
    if (const json::Value* acc = dtypes->find("accumulate"))
        task.accumulate = readDtype(*acc, "task.dtypes.accumulate", op.accumulateDtypes);
}

void readLayout(const ObjectReader& root, const Task& task) {
    const json::Value* layout = root.optional("layout");
    if (!layout)
        return;
    std::vector<std::string> tensorNames;
    for (const auto& t : task.tensors)
        tensorNames.push_back(t.name);
    if (!layout->isObject())
        fail("task.layout", "expected an object, got " + quoted(*layout));
    for (const auto& [key, member] : layout->members()) {
        if (std::find(tensorNames.begin(), tensorNames.end(), key) == tensorNames.end())
            fail("task.layout." + key,
                 "unknown field (" + task.op + " has tensors " + join(tensorNames, ", ") + ")");
        if (readString(member, "task.layout." + key) != "row")
            fail("task.layout." + key,
                 quoted(member) + " is not supported (only \"row\" in version 1)");
    }
}

} // namespace

namespace {
void checkTensorBytes(const Task& task, const OpSpec& op);
}

Task parseTask(const json::Value& value, const std::string& baseDir) {
    const ObjectReader root(value, "task",
                            {"schema_version", "name", "description", "op", "dtypes", "layout",
                             "shape", "validation_shapes", "alignment", "reference", "tolerance",
                             "timing", "counts", "params", "tensors", "dims", "scalars"});
    Task task;
    if (const json::Value* v = root.optional("schema_version")) {
        const int64_t version = readInt(*v, "task.schema_version", 0, INT32_MAX);
        if (version != 1)
            fail("task.schema_version",
                 std::to_string(version) + " is not supported (this harness reads version 1)");
    }

    task.name = readString(root.required("name"), "task.name");
    if (!isSafeName(task.name))
        fail("task.name", quoted(root.required("name")) +
                              " must be 1-128 letters, digits, '_', '-' or '.', not starting "
                              "with '.' or '-' (it names files)");
    if (const json::Value* v = root.optional("description"))
        task.description = readString(*v, "task.description");

    const json::Value& opValue = root.required("op");
    task.op = readString(opValue, "task.op");
    const OpSpec* op = findOp(task.op);
    if (!op) {
        std::vector<std::string> names;
        for (const auto& spec : opRegistry())
            names.push_back(spec.name);
        fail("task.op", quoted(opValue) + " is not a registered op (" + join(names, ", ") + ")");
    }
    const bool custom = task.isCustom();
    task.accumulate = op->accumulateDtypes.front();

    // The dimension names a shape must have: the op's, or a custom task's own.
    OpSpec shapeSpec = *op;
    if (custom) {
        task.dims = readCustomDims(root.optional("dims"));
        shapeSpec.dims = task.dims;
        readCustomAccumulate(root, *op, task);
        readCustomTensors(root.optional("tensors"), task);
    } else {
        if (root.optional("tensors"))
            fail("task.tensors", "only a custom op declares its tensors (" + op->name +
                                     "'s are fixed; give their dtypes in task.dtypes)");
        if (root.optional("dims"))
            fail("task.dims", "only a custom op names its dimensions (" + op->name + "'s are " +
                                  join(op->dims, ", ") + ")");
        if (root.optional("scalars"))
            fail("task.scalars", "only a custom op orders its params (" + op->name +
                                     "'s order is fixed; see PROTOCOL.md)");
        readRegistryTensors(root, *op, task);
    }
    readLayout(root, task);

    task.shape = readShape(root.required("shape"), "task.shape", shapeSpec);
    if (const json::Value* shapes = root.optional("validation_shapes")) {
        if (!shapes->isArray())
            fail("task.validation_shapes", "expected an array, got " + quoted(*shapes));
        // Every evaluation validates every shape on the GPU, and every report carries the task.
        if (shapes->size() > kMaxValidationShapes)
            fail("task.validation_shapes", std::to_string(shapes->size()) + " shapes, more than " +
                                               std::to_string(kMaxValidationShapes));
        for (size_t i = 0; i < shapes->size(); ++i)
            task.validationShapes.push_back(readShape(
                shapes->at(i), "task.validation_shapes[" + std::to_string(i) + "]", shapeSpec));
    }

    if (custom)
        readCustomParams(root.optional("params"), root.optional("scalars"), task);
    else
        readRegistryParams(root.optional("params"), *op, task);

    task.leadingDimMultiple = op->defaultLeadingDimMultiple;
    if (const json::Value* v = root.optional("alignment")) {
        const ObjectReader alignment(*v, "task.alignment", {"leading_dim_multiple"});
        if (const json::Value* m = alignment.optional("leading_dim_multiple"))
            task.leadingDimMultiple = readInt(*m, "task.alignment.leading_dim_multiple", 1, 1024);
    }

    if (const json::Value* v = root.optional("reference")) {
        if (v->isString()) {
            if (v->asString() != "cublas")
                fail("task.reference",
                     quoted(*v) + " is not a reference (\"cublas\" or {\"file\": \"ref.cu\"})");
            if (custom)
                fail("task.reference",
                     "a custom op needs its own reference: {\"file\": \"ref.cu\"}");
            task.reference.kind = Reference::Kind::Cublas;
        } else if (v->isObject()) {
            const ObjectReader ref(*v, "task.reference", {"file"});
            std::string file = readString(ref.required("file"), "task.reference.file");
            if (file.empty() || file.size() < 4 || file.substr(file.size() - 3) != ".cu")
                fail("task.reference.file", quoted(ref.required("file")) + " must name a .cu file");
            if (!baseDir.empty() && std::filesystem::path(file).is_relative())
                file = (std::filesystem::path(baseDir) / file).lexically_normal().string();
            task.reference.kind = Reference::Kind::File;
            task.reference.file = file;
        } else {
            fail("task.reference",
                 "expected \"cublas\" or {\"file\": \"ref.cu\"}, got " + quoted(*v));
        }
    } else if (custom) {
        fail("task.reference", "missing (a custom op needs {\"file\": \"ref.cu\"}, a reference "
                               "implementing the candidate ABI)");
    }

    if (custom) {
        const json::Value* v = root.optional("tolerance");
        if (!v)
            fail("task.tolerance",
                 "missing (a custom op is judged by |y - ref| <= atol + rtol |ref|; give "
                 "{\"atol\": ..., \"rtol\": ...})");
        const ObjectReader tolerance(*v, "task.tolerance", {"atol", "rtol"});
        ElementTolerance e;
        e.atol = readNumber(tolerance.required("atol"), "task.tolerance.atol", 0.0, 1e30, false);
        e.rtol = readNumber(tolerance.required("rtol"), "task.tolerance.rtol", 0.0, 1e6, false);
        task.elementwiseTolerance = e;
    } else if (const json::Value* v = root.optional("tolerance")) {
        const ObjectReader tolerance(*v, "task.tolerance", {"multiple"});
        if (const json::Value* m = tolerance.optional("multiple"))
            task.toleranceMultiple = readNumber(*m, "task.tolerance.multiple", 1.0, 1e6, false);
    }

    if (const json::Value* v = root.optional("timing")) {
        const ObjectReader timing(*v, "task.timing",
                                  {"budget_s", "target_half_width", "rounds", "max_round_spread"});
        if (const json::Value* t = timing.optional("budget_s"))
            task.timing.budgetS = readNumber(*t, "task.timing.budget_s", 0.0, 600.0, true);
        if (const json::Value* t = timing.optional("target_half_width"))
            task.timing.targetHalfWidth =
                readNumber(*t, "task.timing.target_half_width", 0.0, 0.5, true);
        if (const json::Value* t = timing.optional("rounds"))
            task.timing.rounds = static_cast<int>(readInt(*t, "task.timing.rounds", 1, 20));
        if (const json::Value* t = timing.optional("max_round_spread"))
            task.timing.maxRoundSpread =
                readNumber(*t, "task.timing.max_round_spread", 0.0, 10.0, true);
    }

    if (const json::Value* v = root.optional("counts")) {
        const ObjectReader counts(*v, "task.counts", {"flops", "min_bytes"});
        Counts c;
        c.flops = readNumber(counts.required("flops"), "task.counts.flops", 0.0, 1e30, true);
        c.minBytes =
            readNumber(counts.required("min_bytes"), "task.counts.min_bytes", 0.0, 1e30, true);
        task.counts = c;
    } else if (custom) {
        fail("task.counts", "missing (a custom op gives {\"flops\": F, \"min_bytes\": B} for its "
                            "timed shape; the harness cannot count an op it does not know)");
    }

    if (op->validate)
        op->validate(task);
    checkTensorBytes(task, *op);
    return task;
}

namespace {

// All tensors of one shape together, in bytes (the registry's count: every tensor once).
double tensorBytes(const Task& task, const OpSpec& op, const Shape& shape) {
    if (!task.isCustom())
        return op.minBytes(task, shape);
    double total = 0;
    for (const auto& tensor : task.tensors) {
        double elements = 1;
        for (const auto& dim : tensor.dims)
            elements *= static_cast<double>(shape.dim(dim));
        total += elements * dtypeBytes(tensor.dtype);
    }
    return total;
}

// Dimensions are bounded one by one (kMaxDim); together they could still ask for more memory
// than any GPU has and overflow a byte count in 64 bits. 2^40 bytes (1 TiB) is beyond any device.
void checkTensorBytes(const Task& task, const OpSpec& op) {
    constexpr double kMaxBytes = 0x1p40;
    const auto check = [&](const Shape& shape, const std::string& path) {
        const double bytes = tensorBytes(task, op, shape);
        if (!(bytes <= kMaxBytes))
            fail(path, "its tensors need " + quoted(json::Value(bytes)) +
                           " bytes, more than 2^40 (1 TiB)");
    };
    check(task.shape, "task.shape");
    for (size_t i = 0; i < task.validationShapes.size(); ++i)
        check(task.validationShapes[i], "task.validation_shapes[" + std::to_string(i) + "]");
}

} // namespace

Task loadTaskFile(const std::string& path) {
    std::string reason;
    const std::optional<std::string> text =
        files::readRegularFile(path, files::kMaxTaskBytes, &reason);
    if (!text)
        throw TaskError(path + ": cannot read the task file (" + reason + ")");
    json::Value value;
    try {
        value = json::parse(*text, json::requestLimits());
    } catch (const json::ParseError& e) {
        throw TaskError(path + ":" + e.what());
    }
    std::string baseDir = std::filesystem::path(path).parent_path().string();
    if (baseDir.empty())
        baseDir = ".";
    try {
        Task task = parseTask(value, std::filesystem::absolute(baseDir).string());
        if (task.reference.kind == Reference::Kind::File &&
            !std::filesystem::is_regular_file(task.reference.file))
            fail("task.reference.file", "no such file " + task.reference.file);
        return task;
    } catch (const TaskError& e) {
        throw TaskError(path + ": " + e.what());
    }
}

json::Value toJson(const Task& task) {
    json::Value v = json::Value::object();
    v["schema_version"] = task.schemaVersion;
    v["name"] = task.name;
    v["description"] = task.description;
    v["op"] = task.op;
    json::Value& dtypes = v["dtypes"];
    dtypes = json::Value::object();
    if (!task.isCustom()) {
        for (const auto& t : task.tensors)
            dtypes[t.name] = dtypeName(t.dtype);
    }
    dtypes["accumulate"] = dtypeName(task.accumulate);
    if (task.isCustom()) {
        json::Value& dims = v["dims"];
        dims = json::Value::array();
        for (const auto& d : task.dims)
            dims.push(d);
        json::Value& scalars = v["scalars"];
        scalars = json::Value::array();
        for (const auto& [key, p] : task.params)
            scalars.push(key);
        json::Value& tensors = v["tensors"];
        tensors = json::Value::array();
        for (const auto& t : task.tensors) {
            json::Value tensor = json::Value::object();
            tensor["name"] = t.name;
            json::Value& shape = tensor["shape"];
            shape = json::Value::array();
            for (const auto& d : t.dims)
                shape.push(d);
            tensor["dtype"] = dtypeName(t.dtype);
            tensor["output"] = t.output;
            if (!t.output)
                tensor["distribution"] = t.distribution;
            tensors.push(std::move(tensor));
        }
    }
    json::Value& layout = v["layout"];
    layout = json::Value::object();
    for (const auto& t : task.tensors)
        layout[t.name] = layoutName(t.layout);
    v["shape"] = task.shape.toJson();
    json::Value& shapes = v["validation_shapes"];
    shapes = json::Value::array();
    for (const auto& s : task.validationShapes)
        shapes.push(s.toJson());
    // GEMM has no parameters; its normalised form keeps the version-1 fields only.
    if (task.op != "gemm") {
        json::Value& params = v["params"];
        params = json::Value::object();
        for (const auto& [key, p] : task.params) {
            switch (p.kind) {
            case ParamValue::Kind::Bool:
                params[key] = p.flag;
                break;
            case ParamValue::Kind::Number:
                params[key] = p.number;
                break;
            case ParamValue::Kind::Choice:
                params[key] = p.choice;
                break;
            }
        }
    }
    v["alignment"]["leading_dim_multiple"] = task.leadingDimMultiple;
    if (task.reference.kind == Reference::Kind::Cublas)
        v["reference"] = "cublas";
    else
        v["reference"]["file"] = task.reference.file;
    if (task.elementwiseTolerance) {
        v["tolerance"]["atol"] = task.elementwiseTolerance->atol;
        v["tolerance"]["rtol"] = task.elementwiseTolerance->rtol;
    } else {
        v["tolerance"]["multiple"] = task.toleranceMultiple;
    }
    json::Value& timing = v["timing"];
    timing["budget_s"] = task.timing.budgetS;
    timing["target_half_width"] = task.timing.targetHalfWidth;
    timing["rounds"] = task.timing.rounds;
    timing["max_round_spread"] = task.timing.maxRoundSpread;
    if (task.counts) {
        v["counts"]["flops"] = task.counts->flops;
        v["counts"]["min_bytes"] = task.counts->minBytes;
    }
    return v;
}

} // namespace kev
