#include "ops/op.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace kev::ops {

namespace {

// `value` rounded to float by rounding to odd: exact when float holds it, else truncated toward
// zero with the last bit set. Rounding that once more to nearest even in a format with at least two
// bits fewer (f16: 11, bf16: 8 of float's 24, subnormals included) gives the correctly rounded
// result of `value`, which rounding through an ordinary float (round to nearest twice) does not.
float toFloatOdd(double value) {
    float f = static_cast<float>(value);
    if (static_cast<double>(f) == value || std::isnan(value))
        return f;
    uint32_t bits = 0;
    std::memcpy(&bits, &f, 4);
    // Rounded away from zero: one step back toward it (the magnitude's bits, sign apart, count
    // the steps; infinity steps back to the largest float).
    if (std::fabs(static_cast<double>(f)) > std::fabs(value))
        --bits;
    bits |= 1u;
    std::memcpy(&f, &bits, 4);
    return f;
}

uint16_t floatToF16(float value) {
    uint32_t x = 0;
    std::memcpy(&x, &value, 4);
    const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
    x &= 0x7FFFFFFFu;
    if (x > 0x7F800000u)
        return 0x7E00;
    // 65520, halfway between 65504 and 2^16, rounds to even: infinity.
    if (x >= 0x477FF000u)
        return static_cast<uint16_t>(sign | 0x7C00u);
    if (x >= 0x38800000u) {
        // Normal: rebias the exponent (127 -> 15) and round 23 fraction bits to 10, nearest even;
        // a carry out of the fraction correctly bumps the exponent.
        uint32_t r = x - (112u << 23);
        r += 0xFFFu + ((r >> 13) & 1u);
        return static_cast<uint16_t>(sign | (r >> 13));
    }
    // Subnormal (or zero): the count of 2^-24 units, rounded to nearest even. Adding 2^23 (0.5)
    // makes float's own rounding do it: the sum's last bits are the units.
    const float units = std::fabs(value) * 0x1p24f + 0x1p23f;
    uint32_t u = 0;
    std::memcpy(&u, &units, 4);
    return static_cast<uint16_t>(sign | (u & 0x7FFu));
}

uint16_t floatToBf16(float value) {
    uint32_t x = 0;
    std::memcpy(&x, &value, 4);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u)
        return 0x7FC0;
    x += 0x7FFFu + ((x >> 16) & 1u);
    return static_cast<uint16_t>(x >> 16);
}

std::array<float, 65536> f16Table() {
    std::array<float, 65536> table{};
    for (uint32_t bits = 0; bits < 65536; ++bits) {
        const bool negative = (bits & 0x8000u) != 0;
        const int exponent = static_cast<int>((bits >> 10) & 0x1Fu);
        const int fraction = static_cast<int>(bits & 0x3FFu);
        float magnitude = 0.0f;
        if (exponent == 31)
            magnitude = fraction != 0 ? std::numeric_limits<float>::quiet_NaN()
                                      : std::numeric_limits<float>::infinity();
        else if (exponent == 0)
            magnitude = std::ldexp(static_cast<float>(fraction), -24);
        else
            magnitude = std::ldexp(static_cast<float>(fraction + 1024), exponent - 25);
        table[bits] = negative ? -magnitude : magnitude;
    }
    return table;
}

float f16ToFloat(uint16_t bits) {
    static const std::array<float, 65536> table = f16Table();
    return table[bits];
}

float bf16ToFloat(uint16_t bits) {
    const uint32_t x = static_cast<uint32_t>(bits) << 16;
    float f = 0;
    std::memcpy(&f, &x, 4);
    return f;
}

int64_t roundUp(int64_t value, int64_t multiple) {
    return (value + multiple - 1) / multiple * multiple;
}

TensorLayout makeLayout(const TensorSpec& spec, std::vector<int64_t> shape, int64_t multiple) {
    TensorLayout l;
    l.name = spec.name;
    l.output = spec.output;
    l.dtype = spec.dtype;
    l.shape = std::move(shape);
    l.cols = l.shape.back();
    l.rows = 1;
    for (size_t i = 0; i + 1 < l.shape.size(); ++i)
        l.rows *= l.shape[i];
    l.ld = l.shape.size() >= 2 ? roundUp(l.cols, multiple) : l.cols;
    return l;
}

} // namespace

uint16_t toF16(double value) {
    return floatToF16(toFloatOdd(value));
}

double fromF16(uint16_t bits) {
    return f16ToFloat(bits);
}

uint16_t toBf16(double value) {
    return floatToBf16(toFloatOdd(value));
}

double fromBf16(uint16_t bits) {
    return bf16ToFloat(bits);
}

double roundTo(Dtype dtype, double value) {
    switch (dtype) {
    case Dtype::F16:
        return fromF16(toF16(value));
    case Dtype::BF16:
        return fromBf16(toBf16(value));
    case Dtype::F32:
        return static_cast<double>(static_cast<float>(value));
    default:
        return value;
    }
}

KevolveTensor TensorLayout::abi(void* data) const {
    KevolveTensor t{};
    t.data = data;
    t.dtype = static_cast<int32_t>(dtype);
    t.rank = rank();
    int64_t stride = 1;
    for (int i = rank() - 1; i >= 0; --i) {
        t.shape[i] = shape[static_cast<size_t>(i)];
        t.stride[i] = stride;
        stride *= i == rank() - 1 ? ld : shape[static_cast<size_t>(i)];
    }
    return t;
}

std::vector<TensorLayout> tensorLayouts(const Task& task, const Shape& shape) {
    const int64_t multiple = task.leadingDimMultiple;
    std::vector<TensorLayout> out;
    const auto add = [&](const char* name, std::vector<int64_t> dims) {
        out.push_back(makeLayout(task.tensor(name), std::move(dims), multiple));
    };
    for (auto& [name, dims] : opFor(task).tensorShapes(task, shape))
        add(name.c_str(), std::move(dims));
    return out;
}

HostTensor::HostTensor(TensorLayout l)
    : layout(std::move(l))
    , bytes(static_cast<size_t>(layout.bytes())) {
    const int64_t n = layout.storedElements();
    switch (layout.dtype) {
    case Dtype::F16:
    case Dtype::BF16: {
        const uint16_t nan = layout.dtype == Dtype::F16 ? 0x7E00 : 0x7FC0;
        auto* p = reinterpret_cast<uint16_t*>(bytes.data());
        for (int64_t i = 0; i < n; ++i)
            p[i] = nan;
        break;
    }
    case Dtype::F32: {
        auto* p = reinterpret_cast<float*>(bytes.data());
        for (int64_t i = 0; i < n; ++i)
            p[i] = std::numeric_limits<float>::quiet_NaN();
        break;
    }
    case Dtype::F64: {
        auto* p = reinterpret_cast<double*>(bytes.data());
        for (int64_t i = 0; i < n; ++i)
            p[i] = std::numeric_limits<double>::quiet_NaN();
        break;
    }
    default:
        throw std::logic_error(std::string("no host storage for dtype ") + dtypeName(layout.dtype));
    }
}

double HostTensor::at(int64_t row, int64_t col) const {
    double v = 0;
    load(row, col, 1, &v);
    return v;
}

void HostTensor::set(int64_t row, int64_t col, double value) {
    store(row, col, 1, &value);
}

void HostTensor::load(int64_t row, int64_t col, int64_t count, double* out) const {
    const size_t first = static_cast<size_t>(row * layout.ld + col);
    const size_t n = static_cast<size_t>(count);
    switch (layout.dtype) {
    case Dtype::F16: {
        const auto* p = reinterpret_cast<const uint16_t*>(bytes.data()) + first;
        for (size_t i = 0; i < n; ++i)
            out[i] = f16ToFloat(p[i]);
        break;
    }
    case Dtype::BF16: {
        const auto* p = reinterpret_cast<const uint16_t*>(bytes.data()) + first;
        for (size_t i = 0; i < n; ++i)
            out[i] = bf16ToFloat(p[i]);
        break;
    }
    case Dtype::F32: {
        const auto* p = reinterpret_cast<const float*>(bytes.data()) + first;
        for (size_t i = 0; i < n; ++i)
            out[i] = p[i];
        break;
    }
    case Dtype::F64:
        std::memcpy(out, bytes.data() + 8 * first, 8 * n);
        break;
    default:
        std::fill(out, out + n, std::numeric_limits<double>::quiet_NaN());
        break;
    }
}

void HostTensor::store(int64_t row, int64_t col, int64_t count, const double* values) {
    const size_t first = static_cast<size_t>(row * layout.ld + col);
    const size_t n = static_cast<size_t>(count);
    switch (layout.dtype) {
    case Dtype::F16: {
        auto* p = reinterpret_cast<uint16_t*>(bytes.data()) + first;
        for (size_t i = 0; i < n; ++i)
            p[i] = toF16(values[i]);
        break;
    }
    case Dtype::BF16: {
        auto* p = reinterpret_cast<uint16_t*>(bytes.data()) + first;
        for (size_t i = 0; i < n; ++i)
            p[i] = toBf16(values[i]);
        break;
    }
    case Dtype::F32: {
        auto* p = reinterpret_cast<float*>(bytes.data()) + first;
        for (size_t i = 0; i < n; ++i)
            p[i] = static_cast<float>(values[i]);
        break;
    }
    case Dtype::F64:
        std::memcpy(bytes.data() + 8 * first, values, 8 * n);
        break;
    default:
        break;
    }
}

const HostTensor& namedInput(const std::vector<HostTensor>& inputs, const char* name,
                             const char* who) {
    for (const auto& t : inputs) {
        if (t.layout.name == name)
            return t;
    }
    throw std::invalid_argument(std::string(who) + ": no input " + name);
}

std::vector<HostTensor> allocateOutputs(const Task& task, const Shape& shape) {
    std::vector<HostTensor> out;
    for (auto& l : tensorLayouts(task, shape)) {
        if (l.output)
            out.emplace_back(std::move(l));
    }
    return out;
}

SampleRotation sampleRotation(const Task& task, const Shape& shape) {
    SampleRotation r;
    const Op& op = opFor(task);
    if (!op.rotatesSamples())
        return r;
    std::vector<TensorLayout> layouts = tensorLayouts(task, shape);
    // Input 0 is the one the outputs follow row by row (X; A for GEMV); a transposed GEMV's
    // output follows A's columns, and a vector's elements are its columns.
    const TensorLayout& in = layouts.front();
    r.input = 0;
    r.columns = in.rank() == 1 || op.rotatesColumns(task);
    r.extent = r.columns ? in.cols : in.rows;
    for (const TensorLayout& out : layouts) {
        if (out.output && (out.rank() == 1 ? out.cols : out.rows) != r.extent)
            throw std::logic_error("op " + task.op + ": output " + out.name +
                                   " does not follow the rotation of input " + in.name);
    }
    return r;
}

int64_t rotationStride(uint64_t seed, int64_t extent) {
    if (extent < 2)
        return 1;
    int64_t stride = 1 + static_cast<int64_t>((seed * 0x9E3779B97F4A7C15ull) >> 1) % (extent - 1);
    while (std::gcd(stride, extent) != 1)
        stride = stride % (extent - 1) + 1;
    return stride;
}

std::array<double, 4> scalars(const Task& task) {
    return opFor(task).scalars(task);
}

std::array<double, 4> Op::scalars(const Task& task) const {
    std::array<double, 4> s{};
    const OpSpec& spec = task.opSpec();
    for (size_t i = 0; i < task.params.size() && i < s.size(); ++i) {
        const ParamValue& p = task.params[i].second;
        switch (p.kind) {
        case ParamValue::Kind::Bool:
            s[i] = p.flag ? 1.0 : 0.0;
            break;
        case ParamValue::Kind::Number:
            s[i] = p.number;
            break;
        case ParamValue::Kind::Choice:
            for (const auto& ps : spec.params) {
                if (ps.name != task.params[i].first)
                    continue;
                for (size_t c = 0; c < ps.choices.size(); ++c) {
                    if (ps.choices[c] == p.choice)
                        s[i] = static_cast<double>(c);
                }
            }
            break;
        }
    }
    return s;
}

KevolveArgs shapeArgs(const Task& task, const Shape& shape) {
    KevolveArgs a{};
    a.abi_version = KEVOLVE_ABI_VERSION;
    a.op = static_cast<uint32_t>(task.opSpec().kevolveOp);
    for (const auto& l : tensorLayouts(task, shape)) {
        if (l.output)
            a.outputs[a.num_outputs++] = l.abi(nullptr);
        else
            a.inputs[a.num_inputs++] = l.abi(nullptr);
    }
    for (size_t i = 0; i < shape.dims.size() && i < KEVOLVE_MAX_DIMS; ++i)
        a.dims[i] = shape.dims[i].second;
    const auto s = scalars(task);
    for (size_t i = 0; i < s.size(); ++i)
        a.scalars[i] = s[i];
    return a;
}

} // namespace kev::ops
