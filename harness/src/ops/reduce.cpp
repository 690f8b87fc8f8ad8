// Row reduction of X (M x N) to Y (M), sum or max: the op of ops/op.h.
#include "ops/op_util.h"

#include <algorithm>
#include <cmath>
#include <memory>

namespace kev::ops {

namespace {

using namespace detail;

Truth reduce(const Task& task, const Shape& shape, const std::vector<HostTensor>& in) {
    const HostTensor& x = truthInput(in, "X");
    const bool isMax = task.param("reduction").choice == "max";
    const int64_t m = shape.dim("M");
    const int64_t n = shape.dim("N");
    std::vector<double> y(static_cast<size_t>(m));
    forRowBlocks(m, n, [&](int64_t r0, int64_t r1) {
        std::vector<double> row(static_cast<size_t>(n));
        for (int64_t i = r0; i < r1; ++i) {
            x.load(i, 0, n, row.data());
            if (isMax) {
                double mx = -std::numeric_limits<double>::infinity();
                for (const double v : row) {
                    // NaN propagates (as IEEE maximum does, not fmax).
                    if (std::isnan(v) || std::isnan(mx))
                        mx = kNaN;
                    else
                        mx = std::max(mx, v);
                }
                y[static_cast<size_t>(i)] = mx;
            } else {
                Sum sum;
                for (const double v : row)
                    sum.add(v);
                y[static_cast<size_t>(i)] = sum.value();
            }
        }
    });
    return {std::move(y)};
}

// A sum is judged against the magnitudes summed (sum |x|), normwise too: on rows that cancel, the
// result is tiny and any fp32 order's error is large relative to it, but not to its terms.
Scales reduceScales(const Task& task, const Shape& shape, const std::vector<HostTensor>& in,
                    const Truth& truth, double tiny) {
    const HostTensor& x = ruleInput(in, "X");
    const int64_t m = shape.dim("M");
    const int64_t n = shape.dim("N");
    std::vector<double> s(static_cast<size_t>(m), tiny);
    Scales sc;
    if (task.param("reduction").choice == "max") {
        for (int64_t i = 0; i < m; ++i) {
            const double t = truth[0][static_cast<size_t>(i)];
            if (std::isfinite(t))
                s[static_cast<size_t>(i)] += std::fabs(t);
        }
        sc.componentwise.push_back(std::move(s));
        return sc;
    }
    forRowBlocks(m, n, [&](int64_t r0, int64_t r1) {
        std::vector<double> row(static_cast<size_t>(n));
        for (int64_t i = r0; i < r1; ++i) {
            x.load(i, 0, n, row.data());
            double acc = s[static_cast<size_t>(i)];
            for (const double v : row) {
                if (std::isfinite(v))
                    acc += std::fabs(v);
            }
            s[static_cast<size_t>(i)] = acc;
        }
    });
    sc.componentwise.push_back(s);
    sc.normwise.push_back(std::move(s));
    return sc;
}

std::vector<EdgeCase> reduceCases(const Task& task, const Shape& shape) {
    const auto t = std::make_shared<const Task>(task);
    const Shape s = shape;
    const bool isMax = task.param("reduction").choice == "max";
    std::vector<EdgeCase> cases;
    if (!isMax) {
        // Pairs +-v with |v| ~ 1e4 (exact negatives once stored) and a quarter of small entries:
        // the sum is the small entries', far below the magnitudes summed.
        cases.push_back({"reduce_cancellation", [t, s](uint64_t seed, std::vector<HostTensor>& in) {
                             prepare(*t, s, in);
                             HostTensor& x = in[0];
                             const Dtype dtype = x.layout.dtype;
                             const int64_t n = x.layout.cols;
                             const double big = dtype == Dtype::F16 ? 1e3 : 1e4;
                             fillRows(x, seed, [&](Rng& rng, int64_t, double* row) {
                                 int64_t c = 0;
                                 for (; c + 1 < n; c += 2) {
                                     if (rng.uniform() < 0.25) {
                                         row[c] = rng.normal();
                                         row[c + 1] = rng.normal();
                                         continue;
                                     }
                                     const double v = roundTo(dtype, big * rng.normal());
                                     row[c] = v;
                                     row[c + 1] = -v;
                                 }
                                 if (c < n)
                                     row[c] = rng.normal();
                             });
                         }});
    }
    // Rows of special values (row r mod 5): NaN somewhere (NaN), +inf somewhere (+inf for both
    // reductions), -inf somewhere, all negative large magnitudes (a max initialised to 0 is
    // wrong), and for sum +inf and -inf together (NaN).
    cases.push_back({isMax ? "reduce_max_special" : "reduce_sum_special",
                     [t, s, isMax](uint64_t seed, std::vector<HostTensor>& in) {
                         prepare(*t, s, in);
                         const int64_t n = in[0].layout.cols;
                         fillRows(in[0], seed, [&](Rng& rng, int64_t r, double* row) {
                             for (int64_t j = 0; j < n; ++j)
                                 row[j] = r % 5 == 3 ? -1e4 * rng.uniform(0.5, 1.0) : rng.normal();
                             const int64_t c = rng.below(n);
                             switch (r % 5) {
                             case 0:
                                 row[c] = kNaN;
                                 break;
                             case 1:
                                 row[c] = kInf;
                                 break;
                             case 2:
                                 row[c] = -kInf;
                                 if (isMax && r == 2)
                                     std::fill(row, row + n, -kInf);
                                 break;
                             case 4:
                                 if (!isMax && n > 1) {
                                     row[0] = kInf;
                                     row[n - 1] = -kInf;
                                 }
                                 break;
                             default:
                                 break;
                             }
                         });
                     }});
    return cases;
}

class ReduceOp final : public Op {
public:
    const char* name() const override { return "reduce"; }
    std::vector<std::pair<std::string, std::vector<int64_t>>>
    tensorShapes(const Task&, const Shape& shape) const override {
        return {{"X", {shape.dim("M"), shape.dim("N")}}, {"Y", {shape.dim("M")}}};
    }
    std::vector<EdgeCase> edgeCases(const Task& task, const Shape& shape) const override {
        return reduceCases(task, shape);
    }
    Truth truth(const Task& task, const Shape& shape,
                const std::vector<HostTensor>& inputs) const override {
        return reduce(task, shape, inputs);
    }
    Scales scales(const Task& task, const Shape& shape, const std::vector<HostTensor>& inputs,
                  const Truth& truth, double tiny) const override {
        return reduceScales(task, shape, inputs, truth, tiny);
    }
    int64_t accumulationLength(const Task& task, const Shape& shape) const override {
        return task.param("reduction").choice == "max" ? 1 : shape.dim("N");
    }
    const char* normwiseDenominator(const Task& task) const override {
        return task.param("reduction").choice == "sum" ? "sum|x|" : "t";
    }
};

} // namespace

const Op& reduceOp() {
    static const ReduceOp op;
    return op;
}

} // namespace kev::ops
