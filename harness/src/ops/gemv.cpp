// GEMV, y = A x (A M x N row-major; transpose: y = A^T x): the op of ops/op.h.
#include "ops/op_util.h"

#include <algorithm>
#include <cmath>

namespace kev::ops {

namespace {

using namespace detail;

Truth gemv(const Task& task, const Shape& shape, const std::vector<HostTensor>& in) {
    const HostTensor& a = truthInput(in, "A");
    const HostTensor& x = truthInput(in, "x");
    const int64_t m = shape.dim("M");
    const int64_t n = shape.dim("N");
    const bool transpose = task.param("transpose").flag;
    std::vector<double> xv(static_cast<size_t>(transpose ? m : n));
    x.load(0, 0, static_cast<int64_t>(xv.size()), xv.data());
    if (transpose) {
        // Column blocks, each summing over every row in row order (as one thread would).
        constexpr int64_t kCols = 512;
        std::vector<double> y(static_cast<size_t>(n), 0.0);
        parallelFor((n + kCols - 1) / kCols, [&](int64_t b) {
            const int64_t j0 = b * kCols;
            const int64_t w = std::min(n, j0 + kCols) - j0;
            std::vector<double> row(static_cast<size_t>(w));
            double* yb = y.data() + j0;
            for (int64_t i = 0; i < m; ++i) {
                a.load(i, j0, w, row.data());
                const double xi = xv[static_cast<size_t>(i)];
                for (int64_t j = 0; j < w; ++j)
                    yb[j] += row[static_cast<size_t>(j)] * xi;
            }
        });
        return {std::move(y)};
    }
    std::vector<double> y(static_cast<size_t>(m), 0.0);
    forRowBlocks(m, n, [&](int64_t r0, int64_t r1) {
        std::vector<double> row(static_cast<size_t>(n));
        for (int64_t i = r0; i < r1; ++i) {
            a.load(i, 0, n, row.data());
            double acc = 0.0;
            for (int64_t j = 0; j < n; ++j)
                acc += row[static_cast<size_t>(j)] * xv[static_cast<size_t>(j)];
            y[static_cast<size_t>(i)] = acc;
        }
    });
    return {std::move(y)};
}

Scales gemvScales(const Task& task, const Shape& shape, const std::vector<HostTensor>& in,
                  double tiny) {
    const HostTensor& a = ruleInput(in, "A");
    const HostTensor& x = ruleInput(in, "x");
    const int64_t m = shape.dim("M");
    const int64_t n = shape.dim("N");
    const bool transpose = task.param("transpose").flag;
    std::vector<double> ax(static_cast<size_t>(transpose ? m : n));
    x.load(0, 0, static_cast<int64_t>(ax.size()), ax.data());
    for (double& v : ax)
        v = std::fabs(v);
    std::vector<double> s(static_cast<size_t>(transpose ? n : m), tiny);
    if (transpose) {
        constexpr int64_t kCols = 512;
        parallelFor((n + kCols - 1) / kCols, [&](int64_t b) {
            const int64_t j0 = b * kCols;
            const int64_t w = std::min(n, j0 + kCols) - j0;
            std::vector<double> row(static_cast<size_t>(w));
            double* sb = s.data() + j0;
            for (int64_t i = 0; i < m; ++i) {
                a.load(i, j0, w, row.data());
                const double xi = ax[static_cast<size_t>(i)];
                for (int64_t j = 0; j < w; ++j)
                    sb[j] += std::fabs(row[static_cast<size_t>(j)]) * xi;
            }
        });
    } else {
        forRowBlocks(m, n, [&](int64_t r0, int64_t r1) {
            std::vector<double> row(static_cast<size_t>(n));
            for (int64_t i = r0; i < r1; ++i) {
                a.load(i, 0, n, row.data());
                double acc = s[static_cast<size_t>(i)];
                for (int64_t j = 0; j < n; ++j)
                    acc += std::fabs(row[static_cast<size_t>(j)]) * ax[static_cast<size_t>(j)];
                s[static_cast<size_t>(i)] = acc;
            }
        });
    }
    Scales sc;
    sc.componentwise.push_back(std::move(s));
    return sc;
}

class GemvOp final : public Op {
public:
    const char* name() const override { return "gemv"; }
    std::vector<std::pair<std::string, std::vector<int64_t>>>
    tensorShapes(const Task& task, const Shape& shape) const override {
        const int64_t m = shape.dim("M");
        const int64_t n = shape.dim("N");
        const bool transpose = task.param("transpose").flag;
        return {{"A", {m, n}}, {"x", {transpose ? m : n}}, {"y", {transpose ? n : m}}};
    }
    Truth truth(const Task& task, const Shape& shape,
                const std::vector<HostTensor>& inputs) const override {
        return gemv(task, shape, inputs);
    }
    Scales scales(const Task& task, const Shape& shape, const std::vector<HostTensor>& inputs,
                  const Truth&, double tiny) const override {
        return gemvScales(task, shape, inputs, tiny);
    }
    int64_t accumulationLength(const Task& task, const Shape& shape) const override {
        return task.param("transpose").flag ? shape.dim("M") : shape.dim("N");
    }
    // A transposed GEMV's output follows A's columns.
    bool rotatesColumns(const Task& task) const override { return task.param("transpose").flag; }
};

} // namespace

const Op& gemvOp() {
    static const GemvOp op;
    return op;
}

} // namespace kev::ops
