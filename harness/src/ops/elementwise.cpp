// Elementwise activation of a vector X (N) to Y (N), GELU or SiLU: the op of ops/op.h.
#include "ops/op_util.h"

#include <algorithm>
#include <cmath>
#include <memory>

namespace kev::ops {

namespace {

using namespace detail;

double gelu(double x) {
    // x Phi(x) with Phi through erfc, accurate in the far negative tail where 1 + erf(x) cancels.
    return 0.5 * x * std::erfc(-x * 0.70710678118654752440);
}

double silu(double x) {
    return x / (1.0 + std::exp(-x));
}

Truth elementwise(const Task& task, const Shape& shape, const std::vector<HostTensor>& in) {
    const HostTensor& x = truthInput(in, "X");
    const bool isSilu = task.param("function").choice == "silu";
    const int64_t n = shape.dim("N");
    constexpr int64_t kBlock = int64_t{1} << 16;
    std::vector<double> y(static_cast<size_t>(n));
    parallelFor((n + kBlock - 1) / kBlock, [&](int64_t b) {
        const int64_t i0 = b * kBlock;
        const int64_t count = std::min(n, i0 + kBlock) - i0;
        double* out = y.data() + i0;
        x.load(0, i0, count, out);
        for (int64_t i = 0; i < count; ++i)
            out[i] = isSilu ? silu(out[i]) : gelu(out[i]);
    });
    return {std::move(y)};
}

// An activation computed from a rounded x is off by about u |x f'(x)| <= u |x| (saturated tails
// included), so the scale is |y| + |x|.
Scales elementwiseScales(const Shape& shape, const std::vector<HostTensor>& in, const Truth& truth,
                         double tiny) {
    const HostTensor& x = ruleInput(in, "X");
    const int64_t n = shape.dim("N");
    std::vector<double> s(static_cast<size_t>(n), tiny);
    parallelFor((n + kBlock - 1) / kBlock, [&](int64_t b) {
        const int64_t i0 = b * kBlock;
        const int64_t count = std::min(n, i0 + kBlock) - i0;
        std::vector<double> xv(static_cast<size_t>(count));
        x.load(0, i0, count, xv.data());
        for (int64_t k = 0; k < count; ++k) {
            const size_t i = static_cast<size_t>(i0 + k);
            const double v = xv[static_cast<size_t>(k)];
            if (std::isfinite(truth[0][i]) && std::isfinite(v))
                s[i] += std::fabs(truth[0][i]) + std::fabs(v);
        }
    });
    Scales sc;
    sc.componentwise.push_back(std::move(s));
    return sc;
}

std::vector<EdgeCase> elementwiseCases(const Task& task, const Shape& shape) {
    const auto t = std::make_shared<const Task>(task);
    const Shape s = shape;
    std::vector<EdgeCase> cases;
    // Saturation: |x| up to 1e4 (exp(-x) overflows fp32 beyond 88), a few NaNs (NaN out).
    cases.push_back({"elementwise_saturation", [t, s](uint64_t seed, std::vector<HostTensor>& in) {
                         prepare(*t, s, in);
                         fill(in[0], seed, [](Rng& rng, int64_t, int64_t c) {
                             if (c % 97 == 13)
                                 return kNaN;
                             const double sign = rng.uniform() < 0.5 ? -1.0 : 1.0;
                             switch (rng.below(4)) {
                             case 0:
                                 return sign * rng.uniform(0.0, 10.0);
                             case 1:
                                 return sign * rng.uniform(10.0, 100.0);
                             case 2:
                                 return sign * rng.uniform(100.0, 1e4);
                             default:
                                 return sign * rng.uniform(0.0, 1.0);
                             }
                         });
                     }});
    return cases;
}

class ElementwiseOp final : public Op {
public:
    const char* name() const override { return "elementwise"; }
    std::vector<std::pair<std::string, std::vector<int64_t>>>
    tensorShapes(const Task&, const Shape& shape) const override {
        return {{"X", {shape.dim("N")}}, {"Y", {shape.dim("N")}}};
    }
    std::vector<EdgeCase> edgeCases(const Task& task, const Shape& shape) const override {
        return elementwiseCases(task, shape);
    }
    Truth truth(const Task& task, const Shape& shape,
                const std::vector<HostTensor>& inputs) const override {
        return elementwise(task, shape, inputs);
    }
    Scales scales(const Task&, const Shape& shape, const std::vector<HostTensor>& inputs,
                  const Truth& truth, double tiny) const override {
        return elementwiseScales(shape, inputs, truth, tiny);
    }
};

} // namespace

const Op& elementwiseOp() {
    static const ElementwiseOp op;
    return op;
}

} // namespace kev::ops
