// The host side of the ops beyond GEMM: storage rounding, layouts, truths on hand-computed cases,
// and the correctness rule against host implementations written in the storage precision: the
// naive ones (no max-subtraction, one-pass variance, fp16 accumulation, NaN-dropping max) must
// fail it, careful fp32 ones must pass it on every distribution and edge case.
#include "ops/op.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace json = kev::json;
namespace ops = kev::ops;
using kev::Dtype;
using kev::Shape;
using kev::Task;
using ops::HostTensor;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Task makeTask(const std::string& op, const std::string& dtypes, const std::string& shape,
              const std::string& params = "{}") {
    return kev::parseTask(json::parse(R"({"name":"t","op":")" + op + R"(","dtypes":)" + dtypes +
                                      R"(,"shape":)" + shape + R"(,"params":)" + params + "}"));
}

Task softmaxTask(const char* dtype, int64_t m, int64_t n) {
    const std::string d = std::string("\"") + dtype + "\"";
    return makeTask("softmax", R"({"X":)" + d + R"(,"Y":)" + d + "}",
                    R"({"M":)" + std::to_string(m) + R"(,"N":)" + std::to_string(n) + "}");
}

Task layernormTask(const char* dtype, int64_t m, int64_t n) {
    const std::string d = std::string("\"") + dtype + "\"";
    return makeTask("layernorm",
                    R"({"X":)" + d + R"(,"W":)" + d + R"(,"B":)" + d + R"(,"Y":)" + d + "}",
                    R"({"M":)" + std::to_string(m) + R"(,"N":)" + std::to_string(n) + "}");
}

Task rmsnormTask(const char* dtype, int64_t m, int64_t n) {
    const std::string d = std::string("\"") + dtype + "\"";
    return makeTask("rmsnorm", R"({"X":)" + d + R"(,"W":)" + d + R"(,"Y":)" + d + "}",
                    R"({"M":)" + std::to_string(m) + R"(,"N":)" + std::to_string(n) + "}");
}

Task reduceTask(const char* dtype, const char* reduction, int64_t m, int64_t n) {
    return makeTask("reduce", std::string(R"({"X":")") + dtype + R"(","Y":"f32"})",
                    R"({"M":)" + std::to_string(m) + R"(,"N":)" + std::to_string(n) + "}",
                    std::string(R"({"reduction":")") + reduction + "\"}");
}

Task elementwiseTask(const char* dtype, const char* function, int64_t n) {
    const std::string d = std::string("\"") + dtype + "\"";
    return makeTask("elementwise", R"({"X":)" + d + R"(,"Y":)" + d + "}",
                    R"({"N":)" + std::to_string(n) + "}",
                    std::string(R"({"function":")") + function + "\"}");
}

Task gemvTask(const char* dtype, const char* out, bool transpose, int64_t m, int64_t n) {
    return makeTask("gemv",
                    std::string(R"({"A":")") + dtype + R"(","x":")" + dtype + R"(","y":")" + out +
                        "\"}",
                    R"({"M":)" + std::to_string(m) + R"(,"N":)" + std::to_string(n) + "}",
                    transpose ? R"({"transpose":true})" : R"({"transpose":false})");
}

// A host "kernel": fills the outputs from the inputs.
using Kernel =
    std::function<void(const Task&, const std::vector<HostTensor>&, std::vector<HostTensor>&)>;

std::vector<HostTensor> run(const Kernel& k, const Task& t, const Shape& s,
                            const std::vector<HostTensor>& in) {
    std::vector<HostTensor> out = ops::allocateOutputs(t, s);
    k(t, in, out);
    return out;
}

// Every input set a validation runs: the distributions, then the edge cases.
struct InputSet {
    std::string name;
    std::vector<HostTensor> inputs;
};

std::vector<InputSet> inputSets(const Task& t, const Shape& s, uint64_t seed) {
    std::vector<InputSet> sets;
    for (ops::Distribution d : ops::distributions(t)) {
        InputSet set{ops::distributionName(d), {}};
        ops::generate(t, s, d, seed++, set.inputs);
        sets.push_back(std::move(set));
    }
    for (const auto& e : ops::edgeCases(t, s)) {
        InputSet set{e.name, {}};
        e.generate(seed++, set.inputs);
        sets.push_back(std::move(set));
    }
    return sets;
}

ops::Check judge(const Task& t, const Shape& s, const std::vector<HostTensor>& in,
                 const Kernel& candidate, const Kernel& reference) {
    const ops::Truth truth = ops::computeTruth(t, s, in);
    return ops::compare(t, s, in, truth, run(candidate, t, s, in), run(reference, t, s, in));
}

// Names of the input sets on which `candidate` fails (reference: `reference`).
std::vector<std::string> failures(const Task& t, const Kernel& candidate, const Kernel& reference,
                                  uint64_t seed = 7) {
    std::vector<std::string> failed;
    for (const auto& set : inputSets(t, t.shape, seed)) {
        const ops::Check c = judge(t, t.shape, set.inputs, candidate, reference);
        if (!c.verdict.pass)
            failed.push_back(set.name + ": " + c.verdict.reason);
    }
    return failed;
}

bool failsOn(const Task& t, const std::string& setName, const Kernel& candidate,
             const Kernel& reference) {
    for (const auto& set : inputSets(t, t.shape, 11)) {
        if (set.name == setName)
            return !judge(t, t.shape, set.inputs, candidate, reference).verdict.pass;
    }
    ADD_FAILURE() << "no input set " << setName;
    return false;
}

// A blocked fp32 sum as a GPU does it: 32 sequential partial sums, then a tree.
float blockedSum(const std::vector<float>& v) {
    float part[32] = {};
    for (size_t i = 0; i < v.size(); ++i)
        part[i % 32] += v[i];
    for (int width = 16; width >= 1; width /= 2) {
        for (int i = 0; i < width; ++i)
            part[i] += part[i + width];
    }
    return part[0];
}

std::vector<float> rowF(const HostTensor& x, int64_t r) {
    std::vector<float> v(static_cast<size_t>(x.layout.cols));
    for (int64_t c = 0; c < x.layout.cols; ++c)
        v[static_cast<size_t>(c)] = static_cast<float>(x.at(r, c));
    return v;
}

// ---- softmax ----

void softmaxCareful(const Task&, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
    const HostTensor& x = in[0];
    for (int64_t r = 0; r < x.layout.rows; ++r) {
        std::vector<float> v = rowF(x, r);
        float mx = -INFINITY;
        bool nan = false;
        for (float f : v) {
            nan = nan || std::isnan(f);
            mx = std::max(mx, f);
        }
        std::vector<float> e(v.size());
        for (size_t j = 0; j < v.size(); ++j)
            e[j] = nan ? NAN : std::exp(v[j] - mx);
        const float sum = blockedSum(e);
        for (size_t j = 0; j < v.size(); ++j)
            out[0].set(r, static_cast<int64_t>(j), e[j] / sum);
    }
}

void softmaxNoMax(const Task&, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
    const HostTensor& x = in[0];
    for (int64_t r = 0; r < x.layout.rows; ++r) {
        std::vector<float> v = rowF(x, r);
        std::vector<float> e(v.size());
        for (size_t j = 0; j < v.size(); ++j)
            e[j] = std::exp(v[j]);
        const float sum = blockedSum(e);
        for (size_t j = 0; j < v.size(); ++j)
            out[0].set(r, static_cast<int64_t>(j), e[j] / sum);
    }
}

// Without max-subtraction, in fp16 arithmetic (hexp and half sums).
void softmaxNoMaxHalf(const Task&, const std::vector<HostTensor>& in,
                      std::vector<HostTensor>& out) {
    const HostTensor& x = in[0];
    for (int64_t r = 0; r < x.layout.rows; ++r) {
        std::vector<double> e(static_cast<size_t>(x.layout.cols));
        double sum = 0;
        for (size_t j = 0; j < e.size(); ++j) {
            e[j] = ops::roundTo(Dtype::F16, std::exp(x.at(r, static_cast<int64_t>(j))));
            sum = ops::roundTo(Dtype::F16, sum + e[j]);
        }
        for (size_t j = 0; j < e.size(); ++j)
            out[0].set(r, static_cast<int64_t>(j), e[j] / sum);
    }
}

// "Safe" softmax that turns a row without a finite maximum into zeros and skips NaN.
void softmaxZeroForEmptyRows(const Task& t, const std::vector<HostTensor>& in,
                             std::vector<HostTensor>& out) {
    softmaxCareful(t, in, out);
    for (int64_t r = 0; r < out[0].layout.rows; ++r) {
        for (int64_t c = 0; c < out[0].layout.cols; ++c) {
            if (std::isnan(out[0].at(r, c)))
                out[0].set(r, c, 0.0);
        }
    }
}

// ---- layernorm ----

void layernormTwoPass(const Task& t, const std::vector<HostTensor>& in,
                      std::vector<HostTensor>& out) {
    const float eps = static_cast<float>(t.param("epsilon").number);
    const HostTensor& x = in[0];
    const float n = static_cast<float>(x.layout.cols);
    for (int64_t r = 0; r < x.layout.rows; ++r) {
        std::vector<float> v = rowF(x, r);
        const float mean = blockedSum(v) / n;
        std::vector<float> d(v.size());
        for (size_t j = 0; j < v.size(); ++j)
            d[j] = (v[j] - mean) * (v[j] - mean);
        const float rstd = 1.0f / std::sqrt(blockedSum(d) / n + eps);
        for (size_t j = 0; j < v.size(); ++j) {
            const auto c = static_cast<int64_t>(j);
            out[0].set(r, c,
                       (v[j] - mean) * rstd * static_cast<float>(in[1].at(0, c)) +
                           static_cast<float>(in[2].at(0, c)));
        }
    }
}

template <typename Acc>
void layernormOnePass(const Task& t, const std::vector<HostTensor>& in,
                      std::vector<HostTensor>& out) {
    const Acc eps = static_cast<Acc>(t.param("epsilon").number);
    const HostTensor& x = in[0];
    const Acc n = static_cast<Acc>(x.layout.cols);
    for (int64_t r = 0; r < x.layout.rows; ++r) {
        Acc sum = 0;
        Acc sumSq = 0;
        for (int64_t c = 0; c < x.layout.cols; ++c) {
            const Acc v = static_cast<Acc>(x.at(r, c));
            sum = static_cast<Acc>(sum + v);
            sumSq = static_cast<Acc>(sumSq + static_cast<Acc>(v * v));
        }
        const Acc mean = static_cast<Acc>(sum / n);
        const Acc var = static_cast<Acc>(sumSq / n - static_cast<Acc>(mean * mean));
        const double rstd = 1.0 / std::sqrt(static_cast<double>(var) + static_cast<double>(eps));
        for (int64_t c = 0; c < x.layout.cols; ++c)
            out[0].set(r, c,
                       (x.at(r, c) - static_cast<double>(mean)) * rstd * in[1].at(0, c) +
                           in[2].at(0, c));
    }
}

// fp16 arithmetic: every operation rounded to fp16.
struct Half {
    double v = 0;
    Half() = default;
    Half(double d)
        : v(kev::ops::roundTo(Dtype::F16, d)) {}
    explicit operator double() const { return v; }
    friend Half operator+(Half a, Half b) { return Half(a.v + b.v); }
    friend Half operator-(Half a, Half b) { return Half(a.v - b.v); }
    friend Half operator*(Half a, Half b) { return Half(a.v * b.v); }
    friend Half operator/(Half a, Half b) { return Half(a.v / b.v); }
};

// bf16 arithmetic: every operation rounded to bf16.
struct Bf16 {
    double v = 0;
    Bf16() = default;
    Bf16(double d)
        : v(kev::ops::roundTo(Dtype::BF16, d)) {}
    explicit operator double() const { return v; }
    friend Bf16 operator+(Bf16 a, Bf16 b) { return Bf16(a.v + b.v); }
    friend Bf16 operator*(Bf16 a, Bf16 b) { return Bf16(a.v * b.v); }
};

void layernormNoEpsilon(const Task&, const std::vector<HostTensor>& in,
                        std::vector<HostTensor>& out) {
    const HostTensor& x = in[0];
    const double n = static_cast<double>(x.layout.cols);
    for (int64_t r = 0; r < x.layout.rows; ++r) {
        double mean = 0;
        for (int64_t c = 0; c < x.layout.cols; ++c)
            mean += x.at(r, c) / n;
        double var = 0;
        for (int64_t c = 0; c < x.layout.cols; ++c)
            var += (x.at(r, c) - mean) * (x.at(r, c) - mean) / n;
        for (int64_t c = 0; c < x.layout.cols; ++c)
            out[0].set(r, c,
                       (x.at(r, c) - mean) / std::sqrt(var) * in[1].at(0, c) + in[2].at(0, c));
    }
}

// ---- rmsnorm ----

// fp32 as a GPU does it: the blocked sum of squares, then x rstd w.
void rmsnormCareful(const Task& t, const std::vector<HostTensor>& in,
                    std::vector<HostTensor>& out) {
    const float eps = static_cast<float>(t.param("epsilon").number);
    const HostTensor& x = in[0];
    const float n = static_cast<float>(x.layout.cols);
    for (int64_t r = 0; r < x.layout.rows; ++r) {
        std::vector<float> v = rowF(x, r);
        std::vector<float> q(v.size());
        for (size_t j = 0; j < v.size(); ++j)
            q[j] = v[j] * v[j];
        const float rstd = 1.0f / std::sqrt(blockedSum(q) / n + eps);
        for (size_t j = 0; j < v.size(); ++j) {
            const auto c = static_cast<int64_t>(j);
            out[0].set(r, c, v[j] * rstd * static_cast<float>(in[1].at(0, c)));
        }
    }
}

// The sum of squares in the accumulator type Acc (Half, Bf16: the storage precision), the rest in
// fp64, so only the accumulation can fail.
template <typename Acc>
void rmsnormSequential(const Task& t, const std::vector<HostTensor>& in,
                       std::vector<HostTensor>& out) {
    const double eps = t.param("epsilon").number;
    const HostTensor& x = in[0];
    const double n = static_cast<double>(x.layout.cols);
    for (int64_t r = 0; r < x.layout.rows; ++r) {
        Acc q = Acc(0.0);
        for (int64_t c = 0; c < x.layout.cols; ++c) {
            const Acc v = Acc(x.at(r, c));
            q = q + v * v;
        }
        const double rstd = 1.0 / std::sqrt(static_cast<double>(q) / n + eps);
        for (int64_t c = 0; c < x.layout.cols; ++c)
            out[0].set(r, c, x.at(r, c) * rstd * in[1].at(0, c));
    }
}

void rmsnormNoEpsilon(const Task&, const std::vector<HostTensor>& in,
                      std::vector<HostTensor>& out) {
    const HostTensor& x = in[0];
    const double n = static_cast<double>(x.layout.cols);
    for (int64_t r = 0; r < x.layout.rows; ++r) {
        double q = 0;
        for (int64_t c = 0; c < x.layout.cols; ++c)
            q += x.at(r, c) * x.at(r, c);
        for (int64_t c = 0; c < x.layout.cols; ++c)
            out[0].set(r, c, x.at(r, c) / std::sqrt(q / n) * in[1].at(0, c));
    }
}

// ---- reduce ----

void reduceCareful(const Task& t, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
    const bool isMax = t.param("reduction").choice == "max";
    const HostTensor& x = in[0];
    for (int64_t r = 0; r < x.layout.rows; ++r) {
        std::vector<float> v = rowF(x, r);
        if (!isMax) {
            out[0].set(0, r, blockedSum(v));
            continue;
        }
        float mx = -INFINITY;
        for (float f : v)
            mx = (std::isnan(f) || std::isnan(mx)) ? NAN : std::max(mx, f);
        out[0].set(0, r, mx);
    }
}

void reduceHalfAccumulator(const Task&, const std::vector<HostTensor>& in,
                           std::vector<HostTensor>& out) {
    const HostTensor& x = in[0];
    for (int64_t r = 0; r < x.layout.rows; ++r) {
        Half part[32];
        for (int64_t c = 0; c < x.layout.cols; ++c)
            part[c % 32] = part[c % 32] + Half(x.at(r, c));
        Half total;
        for (const Half& p : part)
            total = total + p;
        out[0].set(0, r, static_cast<double>(total));
    }
}

void reduceFmax(const Task&, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
    const HostTensor& x = in[0];
    for (int64_t r = 0; r < x.layout.rows; ++r) {
        float mx = -INFINITY;
        for (float f : rowF(x, r))
            mx = std::fmax(mx, f);
        out[0].set(0, r, mx);
    }
}

void reduceMaxFromZero(const Task&, const std::vector<HostTensor>& in,
                       std::vector<HostTensor>& out) {
    const HostTensor& x = in[0];
    for (int64_t r = 0; r < x.layout.rows; ++r) {
        float mx = 0.0f;
        for (float f : rowF(x, r))
            mx = (std::isnan(f) || std::isnan(mx)) ? NAN : std::max(mx, f);
        out[0].set(0, r, mx);
    }
}

// ---- elementwise ----

void geluErf(const Task& t, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
    const bool isSilu = t.param("function").choice == "silu";
    for (int64_t i = 0; i < in[0].layout.cols; ++i) {
        const float x = static_cast<float>(in[0].at(0, i));
        const float y = isSilu ? x / (1.0f + std::exp(-x))
                               : 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
        out[0].set(0, i, y);
    }
}

void geluTanh(const Task&, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
    for (int64_t i = 0; i < in[0].layout.cols; ++i) {
        const float x = static_cast<float>(in[0].at(0, i));
        const float inner = 0.7978845608f * (x + 0.044715f * x * x * x);
        out[0].set(0, i, 0.5f * x * (1.0f + std::tanh(inner)));
    }
}

void siluExpRatio(const Task&, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
    for (int64_t i = 0; i < in[0].layout.cols; ++i) {
        const float x = static_cast<float>(in[0].at(0, i));
        const float e = std::exp(x);
        out[0].set(0, i, x * e / (1.0f + e));
    }
}

// ---- gemv ----

template <typename Acc>
void gemvAcc(const Task& t, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
    const bool transpose = t.param("transpose").flag;
    const HostTensor& a = in[0];
    const HostTensor& x = in[1];
    const int64_t m = a.layout.rows;
    const int64_t n = a.layout.cols;
    const int64_t outLen = transpose ? n : m;
    const int64_t len = transpose ? m : n;
    for (int64_t o = 0; o < outLen; ++o) {
        Acc part[32] = {};
        for (int64_t k = 0; k < len; ++k) {
            const double av = transpose ? a.at(k, o) : a.at(o, k);
            part[k % 32] = static_cast<Acc>(part[k % 32] + static_cast<Acc>(av * x.at(0, k)));
        }
        Acc total = 0;
        for (const Acc& p : part)
            total = static_cast<Acc>(total + p);
        out[0].set(0, o, static_cast<double>(total));
    }
}

// The most accurate reference possible: the truth rounded to the output dtype. Careful kernels
// must pass against it too, on the floors alone where it is exact.
void rounded(const Task& t, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
    const ops::Truth truth = ops::computeTruth(t, t.shape, in);
    for (size_t o = 0; o < out.size(); ++o) {
        for (int64_t i = 0; i < out[o].layout.elements(); ++i)
            out[o].set(i, truth[o][static_cast<size_t>(i)]);
    }
}
const Kernel kRounded = rounded;

const Kernel kSoftmaxCareful = softmaxCareful;
const Kernel kLayernormTwoPass = layernormTwoPass;
const Kernel kRmsnormCareful = rmsnormCareful;
const Kernel kReduceCareful = reduceCareful;
const Kernel kElementwiseCareful = geluErf;

std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& e : v)
        s += e + "\n";
    return s;
}

} // namespace

TEST(OpsStorage, SixteenBitRoundingIsNearestEven) {
    EXPECT_EQ(ops::toF16(1.0), 0x3C00);
    EXPECT_EQ(ops::toF16(-2.0), 0xC000);
    EXPECT_EQ(ops::toF16(65504.0), 0x7BFF);
    EXPECT_EQ(ops::toF16(65519.0), 0x7BFF);
    EXPECT_EQ(ops::toF16(65520.0), 0x7C00) << "the rounding boundary of the largest half";
    EXPECT_EQ(ops::toF16(std::ldexp(1.0, -24)), 0x0001);
    EXPECT_EQ(ops::toF16(std::ldexp(1.0, -26)), 0x0000);
    EXPECT_EQ(ops::toF16(1.0 + std::ldexp(1.0, -11)), 0x3C00) << "a tie goes to even";
    EXPECT_EQ(ops::toF16(1.0 + 3 * std::ldexp(1.0, -11)), 0x3C02);
    EXPECT_TRUE(std::isnan(ops::fromF16(ops::toF16(kNaN))));
    EXPECT_EQ(ops::fromF16(0x3555), 0.333251953125);
    EXPECT_EQ(ops::toBf16(1.0), 0x3F80);
    EXPECT_EQ(ops::fromBf16(0x4049), 3.140625);
    EXPECT_EQ(ops::roundTo(Dtype::BF16, 3.14159), 3.140625);
    EXPECT_EQ(ops::roundTo(Dtype::F16, 1e5), kInf);
    EXPECT_EQ(ops::roundTo(Dtype::F32, 0.1), static_cast<double>(0.1f));
    for (double v : {0.1, -7.25, 1e-6, 3e4, -6e-8}) {
        EXPECT_EQ(ops::fromF16(ops::toF16(v)), ops::roundTo(Dtype::F16, v)) << v;
        EXPECT_EQ(ops::fromBf16(ops::toBf16(v)), ops::roundTo(Dtype::BF16, v)) << v;
    }
}

TEST(OpsLayout, RowsArePaddedToTheAlignmentAndPaddingIsNaN) {
    const Task t = softmaxTask("f16", 3, 1);
    const auto layouts = ops::tensorLayouts(t, t.shape);
    ASSERT_EQ(layouts.size(), 2u);
    EXPECT_EQ(layouts[0].name, "X");
    EXPECT_EQ(layouts[0].ld, 8);
    EXPECT_EQ(layouts[0].bytes(), 3 * 8 * 2);
    EXPECT_TRUE(layouts[1].output);
    std::vector<HostTensor> in;
    ops::generate(t, t.shape, ops::Distribution::Normal, 1, in);
    EXPECT_TRUE(std::isfinite(in[0].at(2, 0)));
    EXPECT_TRUE(std::isnan(in[0].at(2, 5))) << "padding holds NaN";

    const KevolveArgs a = ops::shapeArgs(t, t.shape);
    EXPECT_EQ(a.op, static_cast<uint32_t>(KEVOLVE_OP_SOFTMAX));
    EXPECT_EQ(a.num_inputs, 1);
    EXPECT_EQ(a.num_outputs, 1);
    EXPECT_EQ(a.dims[0], 3);
    EXPECT_EQ(a.dims[1], 1);
    EXPECT_EQ(a.inputs[0].rank, 2);
    EXPECT_EQ(a.inputs[0].shape[1], 1);
    EXPECT_EQ(a.inputs[0].stride[0], 8);
    EXPECT_EQ(a.inputs[0].stride[1], 1);
    EXPECT_EQ(a.inputs[0].dtype, KEVOLVE_F16);
    EXPECT_EQ(a.inputs[0].data, nullptr);
}

TEST(OpsLayout, EveryOpHasItsTensorsAndScalars) {
    const Task ln = kev::parseTask(json::parse(
        R"({"name":"t","op":"layernorm","dtypes":{"X":"bf16","W":"bf16","B":"bf16","Y":"bf16"},
            "shape":{"M":5,"N":1000},"params":{"epsilon":1e-6}})"));
    const KevolveArgs a = ops::shapeArgs(ln, ln.shape);
    EXPECT_EQ(a.num_inputs, 3);
    EXPECT_EQ(a.inputs[1].rank, 1);
    EXPECT_EQ(a.inputs[1].shape[0], 1000);
    EXPECT_EQ(a.outputs[0].stride[0], 1000);
    EXPECT_DOUBLE_EQ(a.scalars[0], 1e-6);

    EXPECT_DOUBLE_EQ(ops::scalars(reduceTask("f32", "max", 2, 2))[0], 1.0);
    EXPECT_DOUBLE_EQ(ops::scalars(reduceTask("f32", "sum", 2, 2))[0], 0.0);
    EXPECT_DOUBLE_EQ(ops::scalars(elementwiseTask("f16", "silu", 8))[0], 1.0);
    EXPECT_DOUBLE_EQ(ops::scalars(elementwiseTask("f16", "gelu", 8))[0], 0.0);

    const Task gt = gemvTask("f16", "f32", true, 6, 10);
    const auto l = ops::tensorLayouts(gt, gt.shape);
    EXPECT_EQ(l[0].shape, (std::vector<int64_t>{6, 10}));
    EXPECT_EQ(l[0].ld, 16);
    EXPECT_EQ(l[1].shape, (std::vector<int64_t>{6})) << "A^T x reads x of length M";
    EXPECT_EQ(l[2].shape, (std::vector<int64_t>{10}));
    EXPECT_DOUBLE_EQ(ops::scalars(gt)[0], 1.0);
    const Task gemm = kev::parseTask(json::parse(
        R"({"name":"g","op":"gemm","dtypes":{"A":"f16","B":"f16","C":"f32"},"shape":{"M":8,"N":8,"K":8}})"));
    EXPECT_DOUBLE_EQ(ops::scalars(gemm)[0], 1.0);
    EXPECT_DOUBLE_EQ(ops::scalars(gemm)[1], 0.0);
}

// The task registry (task_registry.cpp) and the host op table (ops/op_table.cpp) are the two
// halves of one op: each lists every op once, in the same order, and each op's tensors are the
// OpSpec's inputs then outputs.
TEST(OpsTable, ListsTheRegistryOpsInItsOrder) {
    const auto& registry = kev::opRegistry();
    const auto& table = ops::opTable();
    ASSERT_EQ(table.size(), registry.size());
    for (size_t i = 0; i < table.size(); ++i) {
        EXPECT_EQ(table[i]->name(), registry[i].name) << "op " << i;
        if (registry[i].name == "custom")
            continue;
        std::vector<std::string> names = registry[i].inputs;
        names.insert(names.end(), registry[i].outputs.begin(), registry[i].outputs.end());
        Shape shape;
        for (const auto& d : registry[i].dims)
            shape.dims.emplace_back(d, 4);
        Task task;
        task.op = registry[i].name;
        for (const auto& p : registry[i].params)
            task.params.emplace_back(p.name, p.defaultValue);
        std::vector<std::string> got;
        for (const auto& [name, dims] : table[i]->tensorShapes(task, shape))
            got.push_back(name);
        EXPECT_EQ(got, names) << registry[i].name;
        EXPECT_TRUE(table[i]->hasHostTruth()) << registry[i].name;
    }
    Task unknown;
    unknown.op = "no_such_op";
    EXPECT_THROW(ops::opFor(unknown), std::logic_error);
}

// The generic files dispatch through ops::Op; an op named in one of them ("if (op ==
// \"softmax\")") is knowledge of that op outside its file.
TEST(OpsTable, GenericFilesNameNoOp) {
    for (const char* file : {"ops.cpp", "generate.cpp", "truth.cpp", "rule.cpp"}) {
        const std::string path = std::string(KEVOLVE_SOURCE_DIR) + "/harness/src/ops/" + file;
        std::ifstream in(path);
        ASSERT_TRUE(in) << path;
        std::string text;
        for (std::string line; std::getline(in, line);)
            text += line + '\n';
        for (const ops::Op* op : ops::opTable())
            EXPECT_EQ(text.find('"' + std::string(op->name()) + '"'), std::string::npos)
                << file << " names op " << op->name();
        EXPECT_EQ(text.find("isCustom"), std::string::npos) << file;
    }
}

TEST(OpsGenerate, DeterministicPerSeedAndDifferentAcrossSeeds) {
    const Task t = layernormTask("f32", 4, 100);
    std::vector<HostTensor> a;
    std::vector<HostTensor> b;
    std::vector<HostTensor> c;
    ops::generate(t, t.shape, ops::Distribution::Large, 5, a);
    ops::generate(t, t.shape, ops::Distribution::Large, 5, b);
    ops::generate(t, t.shape, ops::Distribution::Large, 6, c);
    ASSERT_EQ(a.size(), 3u);
    EXPECT_EQ(a[0].bytes, b[0].bytes);
    EXPECT_NE(a[0].bytes, c[0].bytes);
    EXPECT_NE(a[1].bytes, a[2].bytes) << "W and B are drawn independently";
}

TEST(OpsTruth, HandComputedCases) {
    {
        const Task t = softmaxTask("f32", 4, 2);
        std::vector<HostTensor> in;
        ops::generate(t, t.shape, ops::Distribution::Normal, 1, in);
        in[0].set(0, 0, 0.0);
        in[0].set(0, 1, std::log(3.0));
        in[0].set(1, 0, -kInf);
        in[0].set(1, 1, -kInf);
        in[0].set(2, 0, 1.0);
        in[0].set(2, 1, kNaN);
        in[0].set(3, 0, -kInf);
        in[0].set(3, 1, 1e4);
        const ops::Truth y = ops::computeTruth(t, t.shape, in);
        EXPECT_NEAR(y[0][0], 0.25, 1e-7);
        EXPECT_NEAR(y[0][1], 0.75, 1e-7);
        EXPECT_TRUE(std::isnan(y[0][2]) && std::isnan(y[0][3])) << "a row of -inf is NaN";
        EXPECT_TRUE(std::isnan(y[0][4]) && std::isnan(y[0][5])) << "a NaN makes its row NaN";
        EXPECT_EQ(y[0][6], 0.0);
        EXPECT_EQ(y[0][7], 1.0);
    }
    {
        const Task t = layernormTask("f32", 1, 4);
        std::vector<HostTensor> in;
        ops::generate(t, t.shape, ops::Distribution::Normal, 1, in);
        for (int j = 0; j < 4; ++j) {
            in[0].set(0, j, j + 1.0);
            in[1].set(0, j, 2.0);
            in[2].set(0, j, 0.5);
        }
        const ops::Truth y = ops::computeTruth(t, t.shape, in);
        const double rstd = 1.0 / std::sqrt(1.25 + 1e-5);
        EXPECT_DOUBLE_EQ(y[0][0], -1.5 * rstd * 2 + 0.5);
        EXPECT_DOUBLE_EQ(y[0][3], 1.5 * rstd * 2 + 0.5);
    }
    {
        const Task sum = reduceTask("f32", "sum", 2, 3);
        const Task max = reduceTask("f32", "max", 2, 3);
        std::vector<HostTensor> in;
        ops::generate(sum, sum.shape, ops::Distribution::Normal, 1, in);
        const double v[2][3] = {{1e8, 1.0, -1e8}, {-3.0, -2.0, -7.0}};
        for (int r = 0; r < 2; ++r)
            for (int c = 0; c < 3; ++c)
                in[0].set(r, c, v[r][c]);
        EXPECT_EQ(ops::computeTruth(sum, sum.shape, in)[0], (std::vector<double>{1.0, -12.0}));
        EXPECT_EQ(ops::computeTruth(max, max.shape, in)[0], (std::vector<double>{1e8, -2.0}));
        in[0].set(1, 1, kNaN);
        EXPECT_TRUE(std::isnan(ops::computeTruth(max, max.shape, in)[0][1]));
    }
    {
        const Task gelu = elementwiseTask("f32", "gelu", 4);
        const Task silu = elementwiseTask("f32", "silu", 4);
        std::vector<HostTensor> in;
        ops::generate(gelu, gelu.shape, ops::Distribution::Normal, 1, in);
        const double x[4] = {1.0, -1.0, -30.0, 0.0};
        for (int i = 0; i < 4; ++i)
            in[0].set(0, i, x[i]);
        const ops::Truth g = ops::computeTruth(gelu, gelu.shape, in);
        EXPECT_NEAR(g[0][0], 0.8413447460685429, 1e-15);
        EXPECT_NEAR(g[0][1], -0.15865525393145707, 1e-15);
        EXPECT_LT(g[0][2], 0.0) << "the far tail stays exact (erfc), not 0 from 1 + erf";
        EXPECT_GT(g[0][2], -1e-190);
        EXPECT_EQ(g[0][3], 0.0);
        const ops::Truth s = ops::computeTruth(silu, silu.shape, in);
        EXPECT_NEAR(s[0][0], 0.7310585786300049, 1e-15);
        EXPECT_NEAR(s[0][1], -0.2689414213699951, 1e-15);
    }
    {
        const Task t = gemvTask("f32", "f32", false, 2, 3);
        const Task tt = gemvTask("f32", "f32", true, 2, 3);
        std::vector<HostTensor> in;
        ops::generate(t, t.shape, ops::Distribution::Normal, 1, in);
        for (int r = 0; r < 2; ++r)
            for (int c = 0; c < 3; ++c)
                in[0].set(r, c, r * 3 + c + 1.0); // [[1 2 3] [4 5 6]]
        for (int c = 0; c < 3; ++c)
            in[1].set(0, c, c + 1.0);
        EXPECT_EQ(ops::computeTruth(t, t.shape, in)[0], (std::vector<double>{14.0, 32.0}));
        std::vector<HostTensor> inT;
        ops::generate(tt, tt.shape, ops::Distribution::Normal, 1, inT);
        for (int r = 0; r < 2; ++r)
            for (int c = 0; c < 3; ++c)
                inT[0].set(r, c, r * 3 + c + 1.0);
        inT[1].set(0, 0, 1.0);
        inT[1].set(0, 1, -1.0);
        EXPECT_EQ(ops::computeTruth(tt, tt.shape, inT)[0], (std::vector<double>{-3.0, -3.0, -3.0}));
    }
}

TEST(OpsRule, CarefulSoftmaxPassesEverywhereAndNaiveOverflows) {
    for (const char* dtype : {"f32", "f16", "bf16"}) {
        SCOPED_TRACE(dtype);
        const Task t = softmaxTask(dtype, 9, 1000);
        EXPECT_EQ(joined(failures(t, kSoftmaxCareful, kRounded)), "");
        EXPECT_TRUE(failsOn(t, "softmax_pm1e4", softmaxNoMax, kSoftmaxCareful));
        EXPECT_TRUE(failsOn(t, "softmax_neg_inf", softmaxZeroForEmptyRows, kSoftmaxCareful));
        EXPECT_TRUE(failsOn(t, "softmax_nan", softmaxZeroForEmptyRows, kSoftmaxCareful));
    }
    EXPECT_TRUE(failsOn(softmaxTask("f16", 4, 512), "shifted", softmaxNoMaxHalf, kSoftmaxCareful))
        << "exp(50) is far beyond fp16";
    const Task one = softmaxTask("f32", 3, 1);
    EXPECT_EQ(joined(failures(one, kSoftmaxCareful, kRounded)), "");
}

TEST(OpsRule, TwoPassLayernormPassesOnePassFailsOnLargeOffsets) {
    for (const char* dtype : {"f32", "f16", "bf16"}) {
        SCOPED_TRACE(dtype);
        const Task t = layernormTask(dtype, 7, 1000);
        EXPECT_EQ(joined(failures(t, kLayernormTwoPass, kRounded)), "");
        EXPECT_TRUE(failsOn(t, "layernorm_tiny_variance", layernormNoEpsilon, kLayernormTwoPass));
    }
    EXPECT_TRUE(failsOn(layernormTask("f32", 7, 1024), "layernorm_large_offset",
                        layernormOnePass<float>, kLayernormTwoPass));
    EXPECT_TRUE(failsOn(layernormTask("f16", 7, 1024), "layernorm_large_offset",
                        layernormOnePass<float>, kLayernormTwoPass));
    EXPECT_TRUE(failsOn(layernormTask("f16", 7, 1024), "layernorm_large_offset",
                        layernormOnePass<Half>, kLayernormTwoPass));
    EXPECT_TRUE(
        failsOn(layernormTask("f16", 7, 1024), "normal", layernormOnePass<Half>, kLayernormTwoPass))
        << "fp16 sums of 1024 squares lose the variance";
}

TEST(OpsRule, ConstantRowsGiveTheBias) {
    const Task t = layernormTask("f32", 5, 256);
    for (const auto& set : inputSets(t, t.shape, 3)) {
        if (set.name != "layernorm_constant_rows")
            continue;
        const ops::Truth y = ops::computeTruth(t, t.shape, set.inputs);
        for (int64_t j = 0; j < 256; ++j)
            EXPECT_DOUBLE_EQ(y[0][static_cast<size_t>(3 * 256 + j)], set.inputs[2].at(0, j));
        return;
    }
    FAIL() << "no constant-row case";
}

TEST(OpsRule, ReduceSumNeedsFp32Accumulation) {
    const Task t = reduceTask("f16", "sum", 6, 8192);
    EXPECT_EQ(joined(failures(t, kReduceCareful, kRounded)), "");
    EXPECT_TRUE(failsOn(t, "normal", reduceHalfAccumulator, kReduceCareful));
    EXPECT_TRUE(failsOn(t, "shifted", reduceHalfAccumulator, kReduceCareful));
    const Task f32 = reduceTask("f32", "sum", 5, 3000);
    EXPECT_EQ(joined(failures(f32, kReduceCareful, kRounded)), "");
    const Task one = reduceTask("bf16", "sum", 5, 1);
    EXPECT_EQ(joined(failures(one, kReduceCareful, kRounded)), "");
}

TEST(OpsRule, ReduceMaxPropagatesNaNAndStartsBelowEverything) {
    const Task t = reduceTask("f32", "max", 10, 777);
    EXPECT_EQ(joined(failures(t, kReduceCareful, kRounded)), "");
    EXPECT_TRUE(failsOn(t, "reduce_max_special", reduceFmax, kReduceCareful));
    EXPECT_TRUE(failsOn(t, "reduce_max_special", reduceMaxFromZero, kReduceCareful));
}

TEST(OpsRule, ElementwiseSaturatesWithoutNaN) {
    for (const char* function : {"gelu", "silu"}) {
        for (const char* dtype : {"f32", "f16", "bf16"}) {
            SCOPED_TRACE(std::string(function) + " " + dtype);
            const Task t = elementwiseTask(dtype, function, 5000);
            EXPECT_EQ(joined(failures(t, kElementwiseCareful, kRounded)), "");
        }
    }
    const Task silu = elementwiseTask("f32", "silu", 5000);
    EXPECT_TRUE(failsOn(silu, "elementwise_saturation", siluExpRatio, kElementwiseCareful))
        << "exp(x) / (1 + exp(x)) is inf / inf beyond x = 88";
    const Task gelu = elementwiseTask("f32", "gelu", 5000);
    EXPECT_TRUE(failsOn(gelu, "normal", geluTanh, kElementwiseCareful))
        << "the tanh approximation is not the erf GELU in fp32";
}

TEST(OpsRule, GemvLikeGemm) {
    for (bool transpose : {false, true}) {
        SCOPED_TRACE(transpose);
        const Task t = gemvTask("f16", "f32", transpose, 300, 4096);
        EXPECT_EQ(joined(failures(t, gemvAcc<float>, kRounded)), "");
        EXPECT_TRUE(failsOn(t, "normal", gemvAcc<Half>, gemvAcc<float>));
    }
    const Task odd = gemvTask("bf16", "bf16", false, 1, 1000);
    EXPECT_EQ(joined(failures(odd, gemvAcc<float>, kRounded)), "");
}

TEST(OpsRule, UnwrittenTailAndSpecialMismatchesFailWithEvidence) {
    const Task t = softmaxTask("f32", 4, 1000);
    std::vector<HostTensor> in;
    ops::generate(t, t.shape, ops::Distribution::Normal, 3, in);
    const Kernel noTail = [](const Task& task, const std::vector<HostTensor>& i,
                             std::vector<HostTensor>& o) {
        softmaxCareful(task, i, o);
        HostTensor fresh(o[0].layout); // the poisoned output the harness hands over
        for (int64_t c = 992; c < 1000; ++c)
            o[0].set(3, c, fresh.at(3, c));
    };
    const ops::Check c = judge(t, t.shape, in, noTail, kSoftmaxCareful);
    EXPECT_FALSE(c.verdict.pass);
    EXPECT_EQ(c.specialMismatches, 8);
    EXPECT_EQ(c.candidate.nanCount, 8);
    EXPECT_NE(c.verdict.reason.find("Y[3, 992] = nan"), std::string::npos) << c.verdict.reason;

    const ops::Check ok = judge(t, t.shape, in, kSoftmaxCareful, kSoftmaxCareful);
    EXPECT_TRUE(ok.verdict.pass) << ok.verdict.reason;
    EXPECT_LT(ok.verdict.margin, 1.0);
    EXPECT_NE(ok.evidence.find("worst element Y["), std::string::npos) << ok.evidence;
    EXPECT_NE(ops::describeRule(t, t.shape).find("NaN/Inf positions"), std::string::npos);
}

TEST(OpsRule, WrongValuesFailTheComponentwiseMeasure) {
    const Task t = layernormTask("f32", 16, 512);
    std::vector<HostTensor> in;
    ops::generate(t, t.shape, ops::Distribution::Normal, 3, in);
    const Kernel oneOff = [](const Task& task, const std::vector<HostTensor>& i,
                             std::vector<HostTensor>& o) {
        layernormTwoPass(task, i, o);
        o[0].set(5, 17, o[0].at(5, 17) * (1 + 1e-4));
    };
    const ops::Check c = judge(t, t.shape, in, oneOff, kLayernormTwoPass);
    EXPECT_FALSE(c.verdict.pass);
    EXPECT_NE(c.verdict.reason.find("componentwise"), std::string::npos) << c.verdict.reason;
    EXPECT_NE(c.verdict.reason.find("Y[5, 17]"), std::string::npos) << c.verdict.reason;
}

TEST(OpsRule, CarefulKernelsPassAtTheTimedRowLengths) {
    for (const char* dtype : {"f32", "f16", "bf16"}) {
        SCOPED_TRACE(dtype);
        EXPECT_EQ(joined(failures(softmaxTask(dtype, 3, 8192), kSoftmaxCareful, kRounded)), "");
        EXPECT_EQ(joined(failures(layernormTask(dtype, 3, 4096), kLayernormTwoPass, kRounded)), "");
    }
    EXPECT_EQ(joined(failures(reduceTask("f32", "sum", 3, 8192), kReduceCareful, kRounded)), "");
    EXPECT_TRUE(failsOn(layernormTask("f32", 3, 4096), "layernorm_large_offset",
                        layernormOnePass<float>, kLayernormTwoPass));
}

TEST(OpsTruth, RmsnormHandComputedRows) {
    const Task t = rmsnormTask("f32", 3, 3);
    std::vector<HostTensor> in;
    ops::generate(t, t.shape, ops::Distribution::Normal, 1, in);
    const double x[3][3] = {{1.0, 2.0, 2.0}, {0.0, 0.0, 0.0}, {1.0, kInf, -1.0}};
    const double w[3] = {1.0, 0.5, -2.0};
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            in[0].set(r, c, x[r][c]);
    for (int c = 0; c < 3; ++c)
        in[1].set(0, c, w[c]);
    const ops::Truth y = ops::computeTruth(t, t.shape, in);
    const double rstd = 1.0 / std::sqrt(3.0 + 1e-6); // mean(1, 4, 4) = 3
    EXPECT_DOUBLE_EQ(y[0][0], rstd);
    EXPECT_DOUBLE_EQ(y[0][1], 1.0 * rstd);
    EXPECT_DOUBLE_EQ(y[0][2], -4.0 * rstd);
    for (int c = 3; c < 6; ++c)
        EXPECT_EQ(y[0][static_cast<size_t>(c)], 0.0) << "a zero row is 0 (epsilon keeps it finite)";
    EXPECT_EQ(y[0][6], 0.0) << "x / sqrt(inf) = 0";
    EXPECT_TRUE(std::isnan(y[0][7])) << "inf / sqrt(inf) = NaN";
    EXPECT_EQ(y[0][8], 0.0);
    in[0].set(1, 1, kNaN);
    const ops::Truth n = ops::computeTruth(t, t.shape, in);
    EXPECT_TRUE(std::isnan(n[0][3]) && std::isnan(n[0][5])) << "a NaN makes its row NaN";
}

TEST(OpsTruth, RmsnormKeepsEveryBitOfTheSumOfSquares) {
    // 1 followed by a thousand 1e-8: a plain fp64 sum of squares loses the 1e-16 terms entirely.
    const Task t = rmsnormTask("f32", 1, 1001);
    std::vector<HostTensor> in;
    ops::generate(t, t.shape, ops::Distribution::Normal, 1, in);
    for (int64_t c = 0; c < 1001; ++c) {
        in[0].set(0, c, c == 0 ? 1.0 : 1e-8);
        in[1].set(0, c, 1.0);
    }
    const ops::Truth y = ops::computeTruth(t, t.shape, in);
    const double ms =
        (1.0 + 1000.0 * static_cast<double>(1e-8f) * static_cast<double>(1e-8f)) / 1001;
    EXPECT_NEAR(y[0][0] * std::sqrt(ms + 1e-6), 1.0, 1e-15);
}

TEST(OpsRule, CarefulRmsnormPassesStorageAccumulationAndNoEpsilonFail) {
    for (const char* dtype : {"f32", "f16", "bf16"}) {
        SCOPED_TRACE(dtype);
        const Task t = rmsnormTask(dtype, 7, 1000);
        EXPECT_EQ(joined(failures(t, kRmsnormCareful, kRounded)), "");
        EXPECT_EQ(joined(failures(rmsnormTask(dtype, 3, 4096), kRmsnormCareful, kRounded)), "");
        EXPECT_TRUE(failsOn(t, "rmsnorm_zero_rows", rmsnormNoEpsilon, kRmsnormCareful));
        EXPECT_FALSE(failsOn(t, "normal", rmsnormNoEpsilon, kRmsnormCareful))
            << "epsilon is invisible on N(0,1) rows: only the case built for it catches it";
    }
    const Task f16 = rmsnormTask("f16", 7, 1000);
    EXPECT_TRUE(failsOn(f16, "rmsnorm_huge_offset", rmsnormSequential<Half>, kRmsnormCareful))
        << "1000^2 overflows fp16";
    EXPECT_FALSE(failsOn(f16, "rmsnorm_huge_offset", rmsnormSequential<float>, kRmsnormCareful));
    const Task bf16 = rmsnormTask("bf16", 7, 1000);
    EXPECT_TRUE(failsOn(bf16, "rmsnorm_huge_offset", rmsnormSequential<Bf16>, kRmsnormCareful))
        << "a bf16 sum of 1e8 squares stalls after a few hundred terms";
    EXPECT_FALSE(failsOn(bf16, "rmsnorm_huge_offset", rmsnormSequential<float>, kRmsnormCareful));
}

TEST(OpsRule, RmsnormConstantRowsGiveTheWeight) {
    const Task t = rmsnormTask("f32", 5, 256);
    for (const auto& set : inputSets(t, t.shape, 3)) {
        if (set.name != "rmsnorm_constant_rows")
            continue;
        const ops::Truth y = ops::computeTruth(t, t.shape, set.inputs);
        for (int64_t j = 0; j < 256; ++j) {
            const double c = set.inputs[0].at(3, j);
            EXPECT_EQ(y[0][static_cast<size_t>(j)], 0.0) << "row 0 is all zeros";
            EXPECT_DOUBLE_EQ(y[0][static_cast<size_t>(3 * 256 + j)],
                             c / std::sqrt(c * c + 1e-6) * set.inputs[1].at(0, j));
        }
        return;
    }
    FAIL() << "no constant-row case";
}
