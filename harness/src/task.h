#pragma once
// Tasks (PROTOCOL.md, "Task") and the op registry. A task names an op from the registry; the op
// says which dimensions, tensors and dtypes it has and adds its own rules, so new ops join by
// registering an OpSpec, without a protocol change.
#include "json.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kev {

// Values equal KevolveDtype in kevolve/abi.h (checked in task.cpp).
enum class Dtype : int { F32 = 0, F16 = 1, BF16 = 2, F64 = 3, I32 = 4, I8 = 5 };

const char* dtypeName(Dtype dtype);
std::optional<Dtype> parseDtype(std::string_view name);
int dtypeBytes(Dtype dtype);

enum class Layout { Row };
const char* layoutName(Layout layout);

// A rejected task. The message starts with the field path, e.g. "task.shape.K: ...".
class TaskError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Named dimensions in the op's order (gemm: M, N, K), which is also the order of KevolveArgs::dims.
struct Shape {
    std::vector<std::pair<std::string, int64_t>> dims;

    // Throws std::out_of_range naming the dimension when it is absent.
    int64_t dim(std::string_view name) const;
    json::Value toJson() const;
    bool operator==(const Shape& other) const { return dims == other.dims; }
};

struct TensorSpec {
    std::string name; // "A", "B", "C" for gemm
    bool output = false;
    Dtype dtype = Dtype::F32;
    Layout layout = Layout::Row;
    // Custom ops only: the tensor's dimensions by name (outermost first) and, for inputs, how its
    // values are drawn (ops.h, "distributions"). Registry ops leave both empty.
    std::vector<std::string> dims;
    std::string distribution;
    bool operator==(const TensorSpec& o) const {
        return name == o.name && output == o.output && dtype == o.dtype && layout == o.layout &&
               dims == o.dims && distribution == o.distribution;
    }
};

// One op parameter (task "params"): a boolean, a number or one of a list of names.
struct ParamValue {
    enum class Kind { Bool, Number, Choice };
    Kind kind = Kind::Number;
    bool flag = false;
    double number = 0.0;
    std::string choice;
    bool operator==(const ParamValue& o) const {
        return kind == o.kind && flag == o.flag && number == o.number && choice == o.choice;
    }
};

// A parameter an op accepts: its type, default and allowed values. Every parameter becomes one
// KevolveArgs::scalars[] entry in declaration order: booleans 0/1, numbers as they are, choices
// their index in `choices`.
struct ParamSpec {
    std::string name;
    ParamValue defaultValue;
    std::vector<std::string> choices; // Kind::Choice
    double min = -1e300;              // Kind::Number, inclusive
    double max = 1e300;
    bool minOpen = false; // min itself excluded (epsilon > 0)
};

// Custom ops: outputs are judged elementwise against the reference's output,
// |y - ref| <= atol + rtol * |ref|.
struct ElementTolerance {
    double atol = 0.0;
    double rtol = 0.0;
    bool operator==(const ElementTolerance& o) const { return atol == o.atol && rtol == o.rtol; }
};

struct Reference {
    enum class Kind { Cublas, File };
    Kind kind = Kind::Cublas;
    std::string file; // a .cu implementing the candidate ABI; absolute once loaded from a file
    bool operator==(const Reference& o) const { return kind == o.kind && file == o.file; }
};

struct TimingSpec {
    double budgetS = 3.0;
    double targetHalfWidth = 0.005;
    int rounds = 3;
    double maxRoundSpread = 0.15;
    bool operator==(const TimingSpec& o) const {
        return budgetS == o.budgetS && targetHalfWidth == o.targetHalfWidth && rounds == o.rounds &&
               maxRoundSpread == o.maxRoundSpread;
    }
};

struct Counts {
    double flops = 0;
    double minBytes = 0;
    bool operator==(const Counts& o) const { return flops == o.flops && minBytes == o.minBytes; }
};

struct OpSpec;

struct Task {
    int schemaVersion = 1;
    std::string name;
    std::string description;
    std::string op;
    std::vector<TensorSpec> tensors; // inputs then outputs, in the op's order
    Dtype accumulate = Dtype::F32;
    Shape shape; // the timed shape
    std::vector<Shape> validationShapes;
    int64_t leadingDimMultiple = 8;
    Reference reference;
    double toleranceMultiple = 8.0;
    TimingSpec timing;
    std::optional<Counts> counts; // overrides the registry's counts when given; required for custom
    // Every parameter the op declares, in its order, defaults filled in (custom: as the task
    // declares them, numbers only).
    std::vector<std::pair<std::string, ParamValue>> params;
    std::vector<std::string> dims; // custom only: the dimension names, in args->dims order
    std::optional<ElementTolerance> elementwiseTolerance; // custom only

    const OpSpec& opSpec() const;
    bool isCustom() const { return op == "custom"; }
    // Throws std::out_of_range naming the parameter when the task has none of that name.
    const ParamValue& param(std::string_view paramName) const;
    // Throws std::out_of_range naming the tensor when the op has no such tensor.
    const TensorSpec& tensor(std::string_view tensorName) const;
    Dtype dtype(std::string_view tensorName) const { return tensor(tensorName).dtype; }
    // The counts the roofline uses for `s`: the override for the timed shape, else the registry's.
    double flops(const Shape& s) const;
    double minBytes(const Shape& s) const;

    bool operator==(const Task& o) const;
};

struct OpSpec {
    std::string name;
    int kevolveOp = 0; // KevolveOp in abi.h
    std::vector<std::string> dims;
    std::vector<std::string> inputs;
    std::vector<std::string> outputs;
    std::vector<Dtype> tensorDtypes;     // what inputs and outputs may be
    std::vector<Dtype> accumulateDtypes; // what accumulation may be
    int64_t defaultLeadingDimMultiple = 1;
    std::vector<ParamSpec> params;
    // Op-specific rules on an otherwise well-formed task; throws TaskError naming the field.
    std::function<void(const Task&)> validate;
    std::function<double(const Task&, const Shape&)> flops;
    std::function<double(const Task&, const Shape&)> minBytes;
};

const std::vector<OpSpec>& opRegistry();
const OpSpec* findOp(std::string_view name);

// `baseDir` resolves a relative reference file; empty leaves the path as written.
Task parseTask(const json::Value& value, const std::string& baseDir = {});
// Parses a task file; every error message starts with the file's path.
Task loadTaskFile(const std::string& path);
// The normalised task: every default written out, fields in a fixed order. parseTask(toJson(t))
// gives back t.
json::Value toJson(const Task& task);

} // namespace kev
