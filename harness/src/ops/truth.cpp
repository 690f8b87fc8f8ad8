// fp64 truths of the registry ops, on the stored (already rounded) inputs. Each follows the
// numerically careful algorithm (max-subtraction, two-pass variance, erfc for GELU's tail,
// compensated sums), so its own error is far below any output dtype's.
#include "ops/ops.h"
#include "ops/parallel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace kev::ops {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const HostTensor& input(const std::vector<HostTensor>& inputs, const char* name) {
    return namedInput(inputs, name, "computeTruth");
}

// Neumaier's compensated sum: exact enough for rows whose terms cancel.
class Sum {
public:
    void add(double v) {
        const double t = m_sum + v;
        if (std::fabs(m_sum) >= std::fabs(v))
            m_comp += (m_sum - t) + v;
        else
            m_comp += (v - t) + m_sum;
        m_sum = t;
    }
    // Infinite and NaN terms make the plain sum's value (the compensation would be NaN).
    double value() const { return std::isfinite(m_sum) ? m_sum + m_comp : m_sum; }

private:
    double m_sum = 0.0;
    double m_comp = 0.0;
};

Truth gemm(const Shape& shape, const std::vector<HostTensor>& in) {
    const HostTensor& a = input(in, "A");
    const HostTensor& b = input(in, "B");
    const int64_t m = shape.dim("M");
    const int64_t n = shape.dim("N");
    const int64_t k = shape.dim("K");
    std::vector<double> c(static_cast<size_t>(m * n), 0.0);
    for (int64_t i = 0; i < m; ++i) {
        for (int64_t p = 0; p < k; ++p) {
            const double av = a.at(i, p);
            for (int64_t j = 0; j < n; ++j)
                c[static_cast<size_t>(i * n + j)] += av * b.at(p, j);
        }
    }
    return {std::move(c)};
}

// Rows [r0, r1) of a row-wise pass, blocked by rowsPerBlock(cols); each row is computed alone, so
// the result does not depend on the blocking or the thread count.
template <typename F> void forRowBlocks(int64_t rows, int64_t cols, F&& f) {
    const int64_t per = rowsPerBlock(cols);
    parallelFor((rows + per - 1) / per,
                [&](int64_t b) { f(b * per, std::min(rows, (b + 1) * per)); });
}

Truth gemv(const Task& task, const Shape& shape, const std::vector<HostTensor>& in) {
    const HostTensor& a = input(in, "A");
    const HostTensor& x = input(in, "x");
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

// Per row: a NaN anywhere makes the row NaN; otherwise exp(x - max) / sum, which gives NaN for a
// row of -inf (-inf - -inf) and for +inf entries (inf - inf), as the careful algorithm does.
Truth softmax(const Shape& shape, const std::vector<HostTensor>& in) {
    const HostTensor& x = input(in, "X");
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

Truth layernorm(const Task& task, const Shape& shape, const std::vector<HostTensor>& in) {
    const HostTensor& x = input(in, "X");
    const double epsilon = task.param("epsilon").number;
    const int64_t m = shape.dim("M");
    const int64_t n = shape.dim("N");
    std::vector<double> w(static_cast<size_t>(n)), b(static_cast<size_t>(n));
    input(in, "W").load(0, 0, n, w.data());
    input(in, "B").load(0, 0, n, b.data());
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

Truth reduce(const Task& task, const Shape& shape, const std::vector<HostTensor>& in) {
    const HostTensor& x = input(in, "X");
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

double gelu(double x) {
    // x Phi(x) with Phi through erfc, accurate in the far negative tail where 1 + erf(x) cancels.
    return 0.5 * x * std::erfc(-x * 0.70710678118654752440);
}

double silu(double x) {
    return x / (1.0 + std::exp(-x));
}

Truth elementwise(const Task& task, const Shape& shape, const std::vector<HostTensor>& in) {
    const HostTensor& x = input(in, "X");
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

} // namespace

bool hasHostTruth(const Task& task) {
    return !task.isCustom();
}

Truth computeTruth(const Task& task, const Shape& shape, const std::vector<HostTensor>& inputs) {
    if (task.op == "gemm")
        return gemm(shape, inputs);
    if (task.op == "gemv")
        return gemv(task, shape, inputs);
    if (task.op == "softmax")
        return softmax(shape, inputs);
    if (task.op == "layernorm")
        return layernorm(task, shape, inputs);
    if (task.op == "reduce")
        return reduce(task, shape, inputs);
    if (task.op == "elementwise")
        return elementwise(task, shape, inputs);
    throw std::logic_error("no host truth for op " + task.op +
                           " (a custom op's truth is its reference's output)");
}

Truth truthFromOutputs(const std::vector<HostTensor>& outputs) {
    Truth truth;
    for (const auto& o : outputs) {
        std::vector<double> v(static_cast<size_t>(o.layout.elements()));
        for (int64_t r = 0; r < o.layout.rows; ++r)
            o.load(r, 0, o.layout.cols, v.data() + r * o.layout.cols);
        truth.push_back(std::move(v));
    }
    return truth;
}

} // namespace kev::ops
