#include "ops/ops.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace kev::ops {

namespace {

// `value` rounded to nearest even in a binary format with `precision` significand bits (the
// implicit one included), smallest normal exponent `emin` and largest `emax`; infinite beyond the
// largest finite value's rounding boundary.
double quantize(double value, int precision, int emin, int emax) {
    if (!std::isfinite(value) || value == 0.0)
        return value;
    const double magnitude = std::fabs(value);
    const int e = std::max(std::ilogb(magnitude), emin);
    const double quantum = std::ldexp(1.0, e - precision + 1);
    // Division and multiplication by a power of two are exact; nearbyint rounds to nearest even.
    double rounded = std::nearbyint(magnitude / quantum) * quantum;
    const double largest = std::ldexp(2.0 - std::ldexp(1.0, 1 - precision), emax);
    if (rounded > largest)
        rounded = std::numeric_limits<double>::infinity();
    return std::copysign(rounded, value);
}

// Bits of an already quantized value in a 16-bit format with `mantissa` stored bits and exponent
// bias `bias`.
uint16_t encode16(double q, int mantissa, int bias) {
    const int expBits = 15 - mantissa;
    const uint16_t sign = std::signbit(q) ? 0x8000 : 0;
    const uint16_t expMask = static_cast<uint16_t>(((1 << expBits) - 1) << mantissa);
    if (std::isnan(q))
        return static_cast<uint16_t>(expMask | (1 << (mantissa - 1)));
    if (std::isinf(q))
        return static_cast<uint16_t>(sign | expMask);
    const double magnitude = std::fabs(q);
    if (magnitude == 0.0)
        return sign;
    const int emin = 1 - bias;
    const int e = std::ilogb(magnitude);
    if (e < emin) {
        const double m = magnitude / std::ldexp(1.0, emin - mantissa);
        return static_cast<uint16_t>(sign | static_cast<uint16_t>(m));
    }
    const double m = magnitude / std::ldexp(1.0, e - mantissa) - std::ldexp(1.0, mantissa);
    return static_cast<uint16_t>(sign | ((e + bias) << mantissa) | static_cast<uint16_t>(m));
}

double decode16(uint16_t bits, int mantissa, int bias) {
    const int expBits = 15 - mantissa;
    const bool negative = (bits & 0x8000) != 0;
    const int exponent = (bits >> mantissa) & ((1 << expBits) - 1);
    const int fraction = bits & ((1 << mantissa) - 1);
    double magnitude = 0.0;
    if (exponent == (1 << expBits) - 1)
        magnitude = fraction != 0 ? std::numeric_limits<double>::quiet_NaN()
                                  : std::numeric_limits<double>::infinity();
    else if (exponent == 0)
        magnitude = std::ldexp(static_cast<double>(fraction), 1 - bias - mantissa);
    else
        magnitude =
            std::ldexp(static_cast<double>(fraction + (1 << mantissa)), exponent - bias - mantissa);
    return negative ? -magnitude : magnitude;
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
    return encode16(quantize(value, 11, -14, 15), 10, 15);
}

double fromF16(uint16_t bits) {
    return decode16(bits, 10, 15);
}

uint16_t toBf16(double value) {
    return encode16(quantize(value, 8, -126, 127), 7, 127);
}

double fromBf16(uint16_t bits) {
    return decode16(bits, 7, 127);
}

double roundTo(Dtype dtype, double value) {
    switch (dtype) {
    case Dtype::F16:
        return quantize(value, 11, -14, 15);
    case Dtype::BF16:
        return quantize(value, 8, -126, 127);
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
    if (task.isCustom()) {
        for (const auto& t : task.tensors) {
            std::vector<int64_t> dims;
            for (const auto& d : t.dims)
                dims.push_back(shape.dim(d));
            out.push_back(makeLayout(t, std::move(dims), multiple));
        }
        return out;
    }
    if (task.op == "gemm") {
        const int64_t m = shape.dim("M");
        const int64_t n = shape.dim("N");
        const int64_t k = shape.dim("K");
        add("A", {m, k});
        add("B", {k, n});
        add("C", {m, n});
    } else if (task.op == "gemv") {
        const int64_t m = shape.dim("M");
        const int64_t n = shape.dim("N");
        const bool transpose = task.param("transpose").flag;
        add("A", {m, n});
        add("x", {transpose ? m : n});
        add("y", {transpose ? n : m});
    } else if (task.op == "softmax") {
        add("X", {shape.dim("M"), shape.dim("N")});
        add("Y", {shape.dim("M"), shape.dim("N")});
    } else if (task.op == "layernorm") {
        add("X", {shape.dim("M"), shape.dim("N")});
        add("W", {shape.dim("N")});
        add("B", {shape.dim("N")});
        add("Y", {shape.dim("M"), shape.dim("N")});
    } else if (task.op == "reduce") {
        add("X", {shape.dim("M"), shape.dim("N")});
        add("Y", {shape.dim("M")});
    } else if (task.op == "elementwise") {
        add("X", {shape.dim("N")});
        add("Y", {shape.dim("N")});
    } else {
        throw std::logic_error("no tensor layouts for op " + task.op);
    }
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
    const size_t i = static_cast<size_t>(row * layout.ld + col);
    switch (layout.dtype) {
    case Dtype::F16: {
        uint16_t b = 0;
        std::memcpy(&b, bytes.data() + 2 * i, 2);
        return fromF16(b);
    }
    case Dtype::BF16: {
        uint16_t b = 0;
        std::memcpy(&b, bytes.data() + 2 * i, 2);
        return fromBf16(b);
    }
    case Dtype::F32: {
        float f = 0;
        std::memcpy(&f, bytes.data() + 4 * i, 4);
        return f;
    }
    case Dtype::F64: {
        double d = 0;
        std::memcpy(&d, bytes.data() + 8 * i, 8);
        return d;
    }
    default:
        return std::numeric_limits<double>::quiet_NaN();
    }
}

void HostTensor::set(int64_t row, int64_t col, double value) {
    const size_t i = static_cast<size_t>(row * layout.ld + col);
    switch (layout.dtype) {
    case Dtype::F16: {
        const uint16_t b = toF16(value);
        std::memcpy(bytes.data() + 2 * i, &b, 2);
        break;
    }
    case Dtype::BF16: {
        const uint16_t b = toBf16(value);
        std::memcpy(bytes.data() + 2 * i, &b, 2);
        break;
    }
    case Dtype::F32: {
        const float f = static_cast<float>(value);
        std::memcpy(bytes.data() + 4 * i, &f, 4);
        break;
    }
    case Dtype::F64:
        std::memcpy(bytes.data() + 8 * i, &value, 8);
        break;
    default:
        break;
    }
}

std::vector<HostTensor> allocateOutputs(const Task& task, const Shape& shape) {
    std::vector<HostTensor> out;
    for (auto& l : tensorLayouts(task, shape)) {
        if (l.output)
            out.emplace_back(std::move(l));
    }
    return out;
}

std::array<double, 4> scalars(const Task& task) {
    std::array<double, 4> s{};
    if (task.op == "gemm") {
        s[0] = 1.0;
        return s;
    }
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
