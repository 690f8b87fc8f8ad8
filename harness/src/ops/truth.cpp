// fp64 truths of the registry ops, on the stored (already rounded) inputs. Each follows the
// numerically careful algorithm (max-subtraction, two-pass variance, erfc for GELU's tail,
// compensated sums), so its own error is far below any output dtype's.
#include "ops/ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace kev::ops {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const HostTensor& input(const std::vector<HostTensor>& inputs, const char* name) {
    for (const auto& t : inputs) {
        if (t.layout.name == name)
            return t;
    }
    throw std::invalid_argument(std::string("computeTruth: no input ") + name);
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

Truth gemv(const Task& task, const Shape& shape, const std::vector<HostTensor>& in) {
    const HostTensor& a = input(in, "A");
    const HostTensor& x = input(in, "x");
    const int64_t m = shape.dim("M");
    const int64_t n = shape.dim("N");
    if (task.param("transpose").flag) {
        std::vector<double> y(static_cast<size_t>(n), 0.0);
        for (int64_t i = 0; i < m; ++i) {
            const double xi = x.at(0, i);
            for (int64_t j = 0; j < n; ++j)
                y[static_cast<size_t>(j)] += a.at(i, j) * xi;
        }
        return {std::move(y)};
    }
    std::vector<double> y(static_cast<size_t>(m), 0.0);
    for (int64_t i = 0; i < m; ++i) {
        double acc = 0.0;
        for (int64_t j = 0; j < n; ++j)
            acc += a.at(i, j) * x.at(0, j);
        y[static_cast<size_t>(i)] = acc;
    }
    return {std::move(y)};
}

// Per row: a NaN anywhere makes the row NaN; otherwise exp(x - max) / sum, which gives NaN for a
// row of -inf (-inf - -inf) and for +inf entries (inf - inf), as the careful algorithm does.
Truth softmax(const Shape& shape, const std::vector<HostTensor>& in) {
    const HostTensor& x = input(in, "X");
    const int64_t m = shape.dim("M");
    const int64_t n = shape.dim("N");
    std::vector<double> y(static_cast<size_t>(m * n));
    std::vector<double> row(static_cast<size_t>(n));
    for (int64_t i = 0; i < m; ++i) {
        double mx = -std::numeric_limits<double>::infinity();
        bool nan = false;
        for (int64_t j = 0; j < n; ++j) {
            row[static_cast<size_t>(j)] = x.at(i, j);
            nan = nan || std::isnan(row[static_cast<size_t>(j)]);
            mx = std::max(mx, row[static_cast<size_t>(j)]);
        }
        double* out = y.data() + i * n;
        if (nan) {
            std::fill(out, out + n, kNaN);
            continue;
        }
        Sum sum;
        for (int64_t j = 0; j < n; ++j) {
            out[j] = std::exp(row[static_cast<size_t>(j)] - mx);
            sum.add(out[j]);
        }
        const double total = sum.value();
        for (int64_t j = 0; j < n; ++j)
            out[j] /= total;
    }
    return {std::move(y)};
}

Truth layernorm(const Task& task, const Shape& shape, const std::vector<HostTensor>& in) {
    const HostTensor& x = input(in, "X");
    const HostTensor& w = input(in, "W");
    const HostTensor& b = input(in, "B");
    const double epsilon = task.param("epsilon").number;
    const int64_t m = shape.dim("M");
    const int64_t n = shape.dim("N");
    std::vector<double> y(static_cast<size_t>(m * n));
    for (int64_t i = 0; i < m; ++i) {
        Sum sum;
        for (int64_t j = 0; j < n; ++j)
            sum.add(x.at(i, j));
        const double mean = sum.value() / static_cast<double>(n);
        Sum sq;
        for (int64_t j = 0; j < n; ++j) {
            const double d = x.at(i, j) - mean;
            sq.add(d * d);
        }
        const double rstd = 1.0 / std::sqrt(sq.value() / static_cast<double>(n) + epsilon);
        for (int64_t j = 0; j < n; ++j)
            y[static_cast<size_t>(i * n + j)] =
                (x.at(i, j) - mean) * rstd * w.at(0, j) + b.at(0, j);
    }
    return {std::move(y)};
}

Truth reduce(const Task& task, const Shape& shape, const std::vector<HostTensor>& in) {
    const HostTensor& x = input(in, "X");
    const bool isMax = task.param("reduction").choice == "max";
    const int64_t m = shape.dim("M");
    const int64_t n = shape.dim("N");
    std::vector<double> y(static_cast<size_t>(m));
    for (int64_t i = 0; i < m; ++i) {
        if (isMax) {
            double mx = -std::numeric_limits<double>::infinity();
            for (int64_t j = 0; j < n; ++j) {
                const double v = x.at(i, j);
                // NaN propagates (as IEEE maximum does, not fmax).
                if (std::isnan(v) || std::isnan(mx))
                    mx = kNaN;
                else
                    mx = std::max(mx, v);
            }
            y[static_cast<size_t>(i)] = mx;
        } else {
            Sum sum;
            for (int64_t j = 0; j < n; ++j)
                sum.add(x.at(i, j));
            y[static_cast<size_t>(i)] = sum.value();
        }
    }
    return {std::move(y)};
}

double gelu(double x) {
    // x Phi(x) with Phi through erfc, accurate in the far negative tail where 1 + erf(x) cancels.
    return 0.5 * x * std::erfc(-x / std::sqrt(2.0));
}

double silu(double x) {
    return x / (1.0 + std::exp(-x));
}

Truth elementwise(const Task& task, const Shape& shape, const std::vector<HostTensor>& in) {
    const HostTensor& x = input(in, "X");
    const bool isSilu = task.param("function").choice == "silu";
    const int64_t n = shape.dim("N");
    std::vector<double> y(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
        y[static_cast<size_t>(i)] = isSilu ? silu(x.at(0, i)) : gelu(x.at(0, i));
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
        for (int64_t r = 0; r < o.layout.rows; ++r) {
            for (int64_t c = 0; c < o.layout.cols; ++c)
                v[static_cast<size_t>(r * o.layout.cols + c)] = o.at(r, c);
        }
        truth.push_back(std::move(v));
    }
    return truth;
}

} // namespace kev::ops
