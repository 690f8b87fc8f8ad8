// Layer norm of each row of X (M x N) with weight W and bias B (N): the op of ops/op.h.
#include "ops/op_util.h"

#include <algorithm>
#include <cmath>
#include <memory>

namespace kev::ops {

namespace {

using namespace detail;

Truth layernorm(const Task& task, const Shape& shape, const std::vector<HostTensor>& in) {
    const HostTensor& x = truthInput(in, "X");
    const double epsilon = task.param("epsilon").number;
    const int64_t m = shape.dim("M");
    const int64_t n = shape.dim("N");
    std::vector<double> w(static_cast<size_t>(n)), b(static_cast<size_t>(n));
    truthInput(in, "W").load(0, 0, n, w.data());
    truthInput(in, "B").load(0, 0, n, b.data());
    std::vector<double> y(static_cast<size_t>(m * n));
    forRowBlocks(m, n, [&](int64_t r0, int64_t r1) {
        std::vector<double> row(static_cast<size_t>(n));
        for (int64_t i = r0; i < r1; ++i) {
            x.load(i, 0, n, row.data());
            Sum sum;
            for (int64_t j = 0; j < n; ++j)
                sum.add(row[static_cast<size_t>(j)]);
            const double mean = sum.value() / static_cast<double>(n);
            Sum sq;
            for (int64_t j = 0; j < n; ++j) {
                const double d = row[static_cast<size_t>(j)] - mean;
                sq.add(d * d);
            }
            const double rstd = 1.0 / std::sqrt(sq.value() / static_cast<double>(n) + epsilon);
            double* out = y.data() + i * n;
            for (int64_t j = 0; j < n; ++j) {
                const size_t k = static_cast<size_t>(j);
                out[j] = (row[k] - mean) * rstd * w[k] + b[k];
            }
        }
    });
    return {std::move(y)};
}

// y = (x - mean) rstd w + b: the terms are |x| rstd |w| and |b|. A row's mean costs fp32 about u
// |x| per element, so the normwise floor grows with rms(x) rstd, the row's conditioning (1 for
// N(0,1) rows, 1e4 for 1e4 + N(0,1), rms / sqrt(epsilon) for constant rows).
Scales layernormScales(const Task& task, const Shape& shape, const std::vector<HostTensor>& in,
                       double tiny) {
    const HostTensor& x = ruleInput(in, "X");
    const double epsilon = task.param("epsilon").number;
    const int64_t m = shape.dim("M");
    const int64_t n = shape.dim("N");
    std::vector<double> w(static_cast<size_t>(n)), b(static_cast<size_t>(n));
    ruleInput(in, "W").load(0, 0, n, w.data());
    ruleInput(in, "B").load(0, 0, n, b.data());
    std::vector<double> s(static_cast<size_t>(m * n), tiny);
    std::vector<double> kappa(static_cast<size_t>(m), 1.0);
    forRowBlocks(m, n, [&](int64_t r0, int64_t r1) {
        std::vector<double> row(static_cast<size_t>(n));
        for (int64_t i = r0; i < r1; ++i) {
            x.load(i, 0, n, row.data());
            double sum = 0.0;
            double sumSq = 0.0;
            for (const double v : row) {
                sum += v;
                sumSq += v * v;
            }
            const double mean = sum / static_cast<double>(n);
            double var = 0.0;
            for (const double v : row)
                var += (v - mean) * (v - mean);
            const double rstd = 1.0 / std::sqrt(var / static_cast<double>(n) + epsilon);
            const double k = std::sqrt(sumSq / static_cast<double>(n)) * rstd;
            if (std::isfinite(k))
                kappa[static_cast<size_t>(i)] = k;
            double* si = s.data() + i * n;
            for (int64_t j = 0; j < n; ++j) {
                const size_t c = static_cast<size_t>(j);
                si[j] += (std::fabs(row[c]) * rstd + 1.0) * std::fabs(w[c]) + std::fabs(b[c]);
            }
        }
    });
    Scales sc;
    sc.componentwise.push_back(std::move(s));
    sc.conditioning = std::max(1.0, *std::max_element(kappa.begin(), kappa.end()));
    return sc;
}

// Weight and bias of a layer norm: around 1 and 0, as trained ones are.
void fillAffine(std::vector<HostTensor>& inputs, uint64_t seed) {
    fillNormal(mutableInput(inputs, "W"), mix(seed, 2), 1.0, 0.5);
    fillNormal(mutableInput(inputs, "B"), mix(seed, 3), 0.0, 0.5);
}

// The offset of a large-offset layer-norm row: far above the spread (1), yet the spread still
// spans several of the dtype's steps, so the row is not constant once stored.
double largeOffset(Dtype d) {
    switch (d) {
    case Dtype::F16:
        return 500.0;
    case Dtype::BF16:
        return 60.0;
    default:
        return 1e4;
    }
}

std::vector<EdgeCase> layernormCases(const Task& task, const Shape& shape) {
    const auto t = std::make_shared<const Task>(task);
    const Shape s = shape;
    std::vector<EdgeCase> cases;
    // Variance 0: the output is B exactly (epsilon keeps it finite).
    cases.push_back({"layernorm_constant_rows", [t, s](uint64_t seed, std::vector<HostTensor>& in) {
                         prepare(*t, s, in);
                         Rng rng(seed);
                         std::vector<double> rowValue(static_cast<size_t>(in[0].layout.rows));
                         for (size_t r = 0; r < rowValue.size(); ++r)
                             rowValue[r] = r == 0 ? 0.0 : rng.normal();
                         fill(in[0], seed, [&rowValue](Rng&, int64_t r, int64_t) {
                             return rowValue[static_cast<size_t>(r)];
                         });
                         fillAffine(in, seed);
                     }});
    // offset + N(0,1): one-pass E[x^2] - E[x]^2 cancels catastrophically.
    cases.push_back({"layernorm_large_offset", [t, s](uint64_t seed, std::vector<HostTensor>& in) {
                         prepare(*t, s, in);
                         const double offset = largeOffset(in[0].layout.dtype);
                         fillNormal(in[0], seed, offset, 1.0);
                         fillAffine(in, seed);
                     }});
    // A variance of 1e-6, below epsilon (1e-5 by default): ignoring epsilon changes the output.
    cases.push_back({"layernorm_tiny_variance", [t, s](uint64_t seed, std::vector<HostTensor>& in) {
                         prepare(*t, s, in);
                         fillNormal(in[0], seed, 0.0, 1e-3);
                         fillAffine(in, seed);
                     }});
    return cases;
}

class LayernormOp final : public Op {
public:
    const char* name() const override { return "layernorm"; }
    std::vector<std::pair<std::string, std::vector<int64_t>>>
    tensorShapes(const Task&, const Shape& shape) const override {
        return {{"X", {shape.dim("M"), shape.dim("N")}},
                {"W", {shape.dim("N")}},
                {"B", {shape.dim("N")}},
                {"Y", {shape.dim("M"), shape.dim("N")}}};
    }
    // X from the distribution; W and B as trained ones are.
    void fillInputs(const Task& task, Distribution distribution, uint64_t seed,
                    std::vector<HostTensor>& inputs) const override {
        const Moments m = moments(*this, task, distribution);
        fillNormal(mutableInput(inputs, "X"), mix(seed, 1), m.mean, m.stddev);
        fillAffine(inputs, seed);
    }
    std::vector<EdgeCase> edgeCases(const Task& task, const Shape& shape) const override {
        return layernormCases(task, shape);
    }
    Truth truth(const Task& task, const Shape& shape,
                const std::vector<HostTensor>& inputs) const override {
        return layernorm(task, shape, inputs);
    }
    Scales scales(const Task& task, const Shape& shape, const std::vector<HostTensor>& inputs,
                  const Truth&, double tiny) const override {
        return layernormScales(task, shape, inputs, tiny);
    }
    int64_t accumulationLength(const Task&, const Shape& shape) const override {
        return shape.dim("N");
    }
};

} // namespace

const Op& layernormOp() {
    static const LayernormOp op;
    return op;
}

} // namespace kev::ops
