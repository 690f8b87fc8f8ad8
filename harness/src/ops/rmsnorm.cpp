// RMS norm of each row of X (M x N) with weight W (N): the op of ops/op.h.
#include "ops/op_util.h"

#include <cmath>
#include <memory>

namespace kev::ops {

namespace {

using namespace detail;

// 1 / sqrt(mean(x^2) + epsilon) of one row. The inputs are f32, f16 or bf16, so every square
// stays inside the double range (|x| < 2^128); the terms never cancel, and the compensated sum only
// keeps the last bits over long rows. IEEE semantics carry through: a NaN makes the row NaN, an
// infinite element gives rstd 0 (finite elements 0, infinite ones NaN, as x / sqrt(inf) does).
double rowRstd(const std::vector<double>& row, double epsilon) {
    Sum ssq;
    for (const double v : row)
        ssq.add(v * v);
    return 1.0 / std::sqrt(ssq.value() / static_cast<double>(row.size()) + epsilon);
}

Truth rmsnorm(const Task& task, const Shape& shape, const std::vector<HostTensor>& in) {
    const HostTensor& x = truthInput(in, "X");
    const double epsilon = task.param("epsilon").number;
    const int64_t m = shape.dim("M");
    const int64_t n = shape.dim("N");
    std::vector<double> w(static_cast<size_t>(n));
    truthInput(in, "W").load(0, 0, n, w.data());
    std::vector<double> y(static_cast<size_t>(m * n));
    forRowBlocks(m, n, [&](int64_t r0, int64_t r1) {
        std::vector<double> row(static_cast<size_t>(n));
        for (int64_t i = r0; i < r1; ++i) {
            x.load(i, 0, n, row.data());
            const double rstd = rowRstd(row, epsilon);
            double* out = y.data() + i * n;
            for (int64_t j = 0; j < n; ++j) {
                const size_t k = static_cast<size_t>(j);
                out[j] = row[k] * rstd * w[k];
            }
        }
    });
    return {std::move(y)};
}

// y = x rstd w: rstd's relative error is about N u whatever the row (its terms never cancel), so
// the term is |x| rstd |w|; the 1 |w| keeps elements near zero judged on the row's magnitude
// (|y| is O(1) on average), as layernorm's scale does. No cancellation: conditioning 1.
Scales rmsnormScales(const Task& task, const Shape& shape, const std::vector<HostTensor>& in,
                     double tiny) {
    const HostTensor& x = ruleInput(in, "X");
    const double epsilon = task.param("epsilon").number;
    const int64_t m = shape.dim("M");
    const int64_t n = shape.dim("N");
    std::vector<double> w(static_cast<size_t>(n));
    ruleInput(in, "W").load(0, 0, n, w.data());
    std::vector<double> s(static_cast<size_t>(m * n), tiny);
    forRowBlocks(m, n, [&](int64_t r0, int64_t r1) {
        std::vector<double> row(static_cast<size_t>(n));
        for (int64_t i = r0; i < r1; ++i) {
            x.load(i, 0, n, row.data());
            const double rstd = rowRstd(row, epsilon);
            double* si = s.data() + i * n;
            for (int64_t j = 0; j < n; ++j) {
                const size_t c = static_cast<size_t>(j);
                const double term = std::fabs(row[c]) * rstd;
                si[j] += ((std::isfinite(term) ? term : 0.0) + 1.0) * std::fabs(w[c]);
            }
        }
    });
    Scales sc;
    sc.componentwise.push_back(std::move(s));
    return sc;
}

// The weight of an RMS norm: around 1, as trained ones are.
void fillWeight(std::vector<HostTensor>& inputs, uint64_t seed) {
    fillNormal(mutableInput(inputs, "W"), mix(seed, 2), 1.0, 0.5);
}

// A row offset whose square overflows a 16-bit accumulator (f16: 1e6 > 65504 from the first
// term) or stalls one (bf16: after 256 terms of 1e8 each the sum's step exceeds a term), while the
// stored rows keep a spread of several steps and the outputs stay near W.
double hugeOffset(Dtype d) {
    switch (d) {
    case Dtype::F16:
        return 1000.0;
    case Dtype::BF16:
        return 1e4;
    default:
        return 1e6;
    }
}

std::vector<EdgeCase> rmsnormCases(const Task& task, const Shape& shape) {
    const auto t = std::make_shared<const Task>(task);
    const Shape s = shape;
    std::vector<EdgeCase> cases;
    // Every row one value c (row 0: c = 0): the output is c / sqrt(c^2 + epsilon) W, W itself up
    // to epsilon for the others.
    cases.push_back({"rmsnorm_constant_rows", [t, s](uint64_t seed, std::vector<HostTensor>& in) {
                         prepare(*t, s, in);
                         Rng rng(seed);
                         std::vector<double> rowValue(static_cast<size_t>(in[0].layout.rows));
                         for (size_t r = 0; r < rowValue.size(); ++r)
                             rowValue[r] = r == 0 ? 0.0 : rng.normal(0.0, 4.0);
                         fill(in[0], seed, [&rowValue](Rng&, int64_t r, int64_t) {
                             return rowValue[static_cast<size_t>(r)];
                         });
                         fillWeight(in, seed);
                     }});
    // offset + N(0,1): a storage-precision sum of squares overflows (f16) or stalls (bf16).
    cases.push_back({"rmsnorm_huge_offset", [t, s](uint64_t seed, std::vector<HostTensor>& in) {
                         prepare(*t, s, in);
                         fillNormal(in[0], seed, hugeOffset(in[0].layout.dtype), 1.0);
                         fillWeight(in, seed);
                     }});
    // Even rows zero (0 / sqrt(epsilon) = 0; without epsilon 0 / 0 = NaN), odd rows N(0, 1e-3):
    // their mean square (1e-6) is about epsilon (1e-6 by default), so dropping it changes them.
    cases.push_back({"rmsnorm_zero_rows", [t, s](uint64_t seed, std::vector<HostTensor>& in) {
                         prepare(*t, s, in);
                         fill(in[0], seed, [](Rng& rng, int64_t r, int64_t) {
                             return r % 2 == 0 ? 0.0 : rng.normal(0.0, 1e-3);
                         });
                         fillWeight(in, seed);
                     }});
    return cases;
}

class RmsnormOp final : public Op {
public:
    const char* name() const override { return "rmsnorm"; }
    std::vector<std::pair<std::string, std::vector<int64_t>>>
    tensorShapes(const Task&, const Shape& shape) const override {
        return {{"X", {shape.dim("M"), shape.dim("N")}},
                {"W", {shape.dim("N")}},
                {"Y", {shape.dim("M"), shape.dim("N")}}};
    }
    // X from the distribution; W as trained ones are.
    void fillInputs(const Task& task, Distribution distribution, uint64_t seed,
                    std::vector<HostTensor>& inputs) const override {
        const Moments m = moments(*this, task, distribution);
        fillNormal(mutableInput(inputs, "X"), mix(seed, 1), m.mean, m.stddev);
        fillWeight(inputs, seed);
    }
    std::vector<EdgeCase> edgeCases(const Task& task, const Shape& shape) const override {
        return rmsnormCases(task, shape);
    }
    Truth truth(const Task& task, const Shape& shape,
                const std::vector<HostTensor>& inputs) const override {
        return rmsnorm(task, shape, inputs);
    }
    Scales scales(const Task& task, const Shape& shape, const std::vector<HostTensor>& inputs,
                  const Truth&, double tiny) const override {
        return rmsnormScales(task, shape, inputs, tiny);
    }
    int64_t accumulationLength(const Task&, const Shape& shape) const override {
        return shape.dim("N");
    }
};

} // namespace

const Op& rmsnormOp() {
    static const RmsnormOp op;
    return op;
}

} // namespace kev::ops
