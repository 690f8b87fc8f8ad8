// Softmax over each row of X (M x N): the op of ops/op.h.
#include "ops/op_util.h"

#include <algorithm>
#include <cmath>
#include <memory>

namespace kev::ops {

namespace {

using namespace detail;

// Per row: a NaN anywhere makes the row NaN; otherwise exp(x - max) / sum, which gives NaN for a
// row of -inf (-inf - -inf) and for +inf entries (inf - inf), as the careful algorithm does.
Truth softmax(const Shape& shape, const std::vector<HostTensor>& in) {
    const HostTensor& x = truthInput(in, "X");
    const int64_t m = shape.dim("M");
    const int64_t n = shape.dim("N");
    std::vector<double> y(static_cast<size_t>(m * n));
    forRowBlocks(m, n, [&](int64_t r0, int64_t r1) {
        for (int64_t i = r0; i < r1; ++i) {
            double* out = y.data() + i * n;
            x.load(i, 0, n, out);
            double mx = -std::numeric_limits<double>::infinity();
            bool nan = false;
            for (int64_t j = 0; j < n; ++j) {
                nan = nan || std::isnan(out[j]);
                mx = std::max(mx, out[j]);
            }
            if (nan) {
                std::fill(out, out + n, kNaN);
                continue;
            }
            Sum sum;
            for (int64_t j = 0; j < n; ++j) {
                out[j] = std::exp(out[j] - mx);
                sum.add(out[j]);
            }
            const double total = sum.value();
            for (int64_t j = 0; j < n; ++j)
                out[j] /= total;
        }
    });
    return {std::move(y)};
}

// Perturbing the inputs by a relative u moves exp(x_j - max) by u (|x_j| + sum_k y_k |x_k|)
// relatively; that is the error a correct fp32 kernel has on +-1e4 rows.
Scales softmaxScales(const Shape& shape, const std::vector<HostTensor>& in, const Truth& truth,
                     double tiny) {
    const HostTensor& x = ruleInput(in, "X");
    const int64_t m = shape.dim("M");
    const int64_t n = shape.dim("N");
    const std::vector<double>& t = truth[0];
    std::vector<double> s(static_cast<size_t>(m * n), tiny);
    forRowBlocks(m, n, [&](int64_t r0, int64_t r1) {
        std::vector<double> row(static_cast<size_t>(n));
        for (int64_t i = r0; i < r1; ++i) {
            x.load(i, 0, n, row.data());
            const double* ti = t.data() + i * n;
            double* si = s.data() + i * n;
            double weighted = 0.0;
            for (int64_t j = 0; j < n; ++j) {
                if (ti[j] > 0.0 && std::isfinite(ti[j]))
                    weighted += ti[j] * std::fabs(row[static_cast<size_t>(j)]);
            }
            for (int64_t j = 0; j < n; ++j) {
                if (ti[j] > 0.0 && std::isfinite(ti[j]))
                    si[j] += ti[j] * (1.0 + std::fabs(row[static_cast<size_t>(j)]) + weighted);
            }
        }
    });
    Scales sc;
    sc.componentwise.push_back(std::move(s));
    return sc;
}

std::vector<EdgeCase> softmaxCases(const Task& task, const Shape& shape) {
    const auto t = std::make_shared<const Task>(task);
    const Shape s = shape;
    std::vector<EdgeCase> cases;
    // Half the entries near +1e4, half near -1e4: exp without max-subtraction overflows.
    cases.push_back({"softmax_pm1e4", [t, s](uint64_t seed, std::vector<HostTensor>& in) {
                         prepare(*t, s, in);
                         fill(in[0], seed, [](Rng& rng, int64_t, int64_t) {
                             return (rng.uniform() < 0.5 ? 1e4 : -1e4) + rng.normal();
                         });
                     }});
    // A quarter of the entries -inf; row 0 entirely -inf (NaN expected); row 1 (when there is
    // one) -inf but for one entry (exactly 1 there).
    cases.push_back({"softmax_neg_inf", [t, s](uint64_t seed, std::vector<HostTensor>& in) {
                         prepare(*t, s, in);
                         const int64_t keep = Rng(mix(seed, 0)).below(in[0].layout.cols);
                         fill(in[0], seed, [keep](Rng& rng, int64_t r, int64_t c) {
                             if (r == 0 || (r == 1 && c != keep))
                                 return -kInf;
                             return rng.uniform() < 0.25 ? -kInf : rng.normal();
                         });
                     }});
    // One NaN in the last row: that row must be NaN, every other row finite.
    cases.push_back({"softmax_nan", [t, s](uint64_t seed, std::vector<HostTensor>& in) {
                         prepare(*t, s, in);
                         fill(in[0], seed, [](Rng& rng, int64_t, int64_t) { return rng.normal(); });
                         const HostTensor& x = in[0];
                         in[0].set(x.layout.rows - 1, Rng(mix(seed, 0)).below(x.layout.cols), kNaN);
                     }});
    return cases;
}

class SoftmaxOp final : public Op {
public:
    const char* name() const override { return "softmax"; }
    std::vector<std::pair<std::string, std::vector<int64_t>>>
    tensorShapes(const Task&, const Shape& shape) const override {
        return {{"X", {shape.dim("M"), shape.dim("N")}}, {"Y", {shape.dim("M"), shape.dim("N")}}};
    }
    // Softmax is shift-invariant, so its shift is large enough to overflow a naive fp16 exp.
    double shiftedMean() const override { return 50.0; }
    std::vector<EdgeCase> edgeCases(const Task& task, const Shape& shape) const override {
        return softmaxCases(task, shape);
    }
    Truth truth(const Task&, const Shape& shape,
                const std::vector<HostTensor>& inputs) const override {
        return softmax(shape, inputs);
    }
    Scales scales(const Task&, const Shape& shape, const std::vector<HostTensor>& inputs,
                  const Truth& truth, double tiny) const override {
        return softmaxScales(shape, inputs, truth, tiny);
    }
    int64_t accumulationLength(const Task&, const Shape& shape) const override {
        return shape.dim("N");
    }
};

} // namespace

const Op& softmaxOp() {
    static const SoftmaxOp op;
    return op;
}

} // namespace kev::ops
