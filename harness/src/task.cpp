#include "task.h"

#include "kevolve/abi.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>

namespace kev {

static_assert(static_cast<int>(Dtype::F32) == KEVOLVE_F32);
static_assert(static_cast<int>(Dtype::F16) == KEVOLVE_F16);
static_assert(static_cast<int>(Dtype::BF16) == KEVOLVE_BF16);
static_assert(static_cast<int>(Dtype::F64) == KEVOLVE_F64);
static_assert(static_cast<int>(Dtype::I32) == KEVOLVE_I32);
static_assert(static_cast<int>(Dtype::I8) == KEVOLVE_I8);

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

// Dimensions beyond int32 would overflow the index arithmetic of most candidates and of the
// validation kernels; no task needs them.
constexpr int64_t kMaxDim = (int64_t{1} << 31) - 1;

[[noreturn]] void fail(const std::string& path, const std::string& message) {
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

// An object whose every key must be one of `allowed`, so a typo is an error, not a silent default.
class ObjectReader {
public:
    ObjectReader(const json::Value& v, std::string path, std::initializer_list<const char*> allowed)
        : m_value(v)
        , m_path(std::move(path)) {
        if (!v.isObject())
            fail(m_path, std::string("expected an object, got ") + quoted(v));
        for (const auto& [key, member] : v.members()) {
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

std::vector<OpSpec> makeRegistry() {
    std::vector<OpSpec> ops;
    OpSpec gemm;
    gemm.name = "gemm";
    gemm.kevolveOp = KEVOLVE_OP_GEMM;
    gemm.dims = {"M", "N", "K"};
    gemm.inputs = {"A", "B"};
    gemm.outputs = {"C"};
    gemm.tensorDtypes = {Dtype::F16, Dtype::BF16, Dtype::F32};
    gemm.accumulateDtypes = {Dtype::F32};
    gemm.defaultLeadingDimMultiple = 8;
    gemm.validate = validateGemm;
    gemm.flops = [](const Shape& s) {
        return 2.0 * static_cast<double>(s.dim("M")) * static_cast<double>(s.dim("N")) *
               static_cast<double>(s.dim("K"));
    };
    gemm.minBytes = [](const Task& t, const Shape& s) {
        const double m = static_cast<double>(s.dim("M"));
        const double n = static_cast<double>(s.dim("N"));
        const double k = static_cast<double>(s.dim("K"));
        return m * k * dtypeBytes(t.dtype("A")) + k * n * dtypeBytes(t.dtype("B")) +
               m * n * dtypeBytes(t.dtype("C"));
    };
    ops.push_back(std::move(gemm));
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
    return opSpec().flops(s);
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
           timing == o.timing && counts == o.counts;
}

Task parseTask(const json::Value& value, const std::string& baseDir) {
    const ObjectReader root(value, "task",
                            {"schema_version", "name", "description", "op", "dtypes", "layout",
                             "shape", "validation_shapes", "alignment", "reference", "tolerance",
                             "timing", "counts"});
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

    {
        std::vector<std::string> tensorNames = op->inputs;
        tensorNames.insert(tensorNames.end(), op->outputs.begin(), op->outputs.end());
        const json::Value& dtypes = root.required("dtypes");
        if (!dtypes.isObject())
            fail("task.dtypes", "expected an object, got " + quoted(dtypes));
        for (const auto& [key, member] : dtypes.members()) {
            if (key != "accumulate" &&
                std::find(tensorNames.begin(), tensorNames.end(), key) == tensorNames.end())
                fail("task.dtypes." + key, "unknown field (" + op->name + " has tensors " +
                                               join(tensorNames, ", ") + " and accumulate)");
        }
        for (const auto& tensorName : tensorNames) {
            const json::Value* d = dtypes.find(tensorName);
            if (!d)
                fail("task.dtypes." + tensorName, "missing");
            TensorSpec t;
            t.name = tensorName;
            t.output =
                std::find(op->outputs.begin(), op->outputs.end(), tensorName) != op->outputs.end();
            t.dtype = readDtype(*d, "task.dtypes." + tensorName, op->tensorDtypes);
            task.tensors.push_back(t);
        }
        if (const json::Value* acc = dtypes.find("accumulate"))
            task.accumulate = readDtype(*acc, "task.dtypes.accumulate", op->accumulateDtypes);
        else
            task.accumulate = op->accumulateDtypes.front();

        if (const json::Value* layout = root.optional("layout")) {
            if (!layout->isObject())
                fail("task.layout", "expected an object, got " + quoted(*layout));
            for (const auto& [key, member] : layout->members()) {
                if (std::find(tensorNames.begin(), tensorNames.end(), key) == tensorNames.end())
                    fail("task.layout." + key, "unknown field (" + op->name + " has tensors " +
                                                   join(tensorNames, ", ") + ")");
                if (readString(member, "task.layout." + key) != "row")
                    fail("task.layout." + key,
                         quoted(member) + " is not supported (only \"row\" in version 1)");
            }
        }
    }

    task.shape = readShape(root.required("shape"), "task.shape", *op);
    if (const json::Value* shapes = root.optional("validation_shapes")) {
        if (!shapes->isArray())
            fail("task.validation_shapes", "expected an array, got " + quoted(*shapes));
        for (size_t i = 0; i < shapes->size(); ++i)
            task.validationShapes.push_back(
                readShape(shapes->at(i), "task.validation_shapes[" + std::to_string(i) + "]", *op));
    }

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
    }

    if (const json::Value* v = root.optional("tolerance")) {
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
    }

    if (op->validate)
        op->validate(task);
    return task;
}

Task loadTaskFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw TaskError(
            path + ": cannot read the task file (" +
            (std::filesystem::exists(path) ? "permission denied or not a file" : "no such file") +
            ")");
    std::ostringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    json::Value value;
    try {
        value = json::parse(text);
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
    for (const auto& t : task.tensors)
        dtypes[t.name] = dtypeName(t.dtype);
    dtypes["accumulate"] = dtypeName(task.accumulate);
    json::Value& layout = v["layout"];
    layout = json::Value::object();
    for (const auto& t : task.tensors)
        layout[t.name] = layoutName(t.layout);
    v["shape"] = task.shape.toJson();
    json::Value& shapes = v["validation_shapes"];
    shapes = json::Value::array();
    for (const auto& s : task.validationShapes)
        shapes.push(s.toJson());
    v["alignment"]["leading_dim_multiple"] = task.leadingDimMultiple;
    if (task.reference.kind == Reference::Kind::Cublas)
        v["reference"] = "cublas";
    else
        v["reference"]["file"] = task.reference.file;
    v["tolerance"]["multiple"] = task.toleranceMultiple;
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
