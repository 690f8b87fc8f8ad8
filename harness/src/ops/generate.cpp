// Input generation: the GEMM-like distributions and each op's edge cases (PROTOCOL.md, "Ops").
#include "ops/ops.h"
#include "ops/parallel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

namespace kev::ops {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// splitmix64: tiny, fast and good enough for test inputs; the same seed gives the same inputs on
// every host.
class Rng {
public:
    explicit Rng(uint64_t seed)
        : m_state(seed) {}

    uint64_t next() {
        uint64_t z = (m_state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    // [0, 1)
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
    double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
    int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }
    // Marsaglia's polar method: one log and one square root per pair, no trigonometry.
    double normal() {
        if (m_haveSpare) {
            m_haveSpare = false;
            return m_spare;
        }
        double u = 0, v = 0, s = 0;
        do {
            u = 2.0 * uniform() - 1.0;
            v = 2.0 * uniform() - 1.0;
            s = u * u + v * v;
        } while (s >= 1.0 || s == 0.0);
        const double f = std::sqrt(-2.0 * std::log(s) / s);
        m_spare = v * f;
        m_haveSpare = true;
        return u * f;
    }
    double normal(double mean, double stddev) { return mean + stddev * normal(); }

private:
    uint64_t m_state;
    double m_spare = 0.0;
    bool m_haveSpare = false;
};

// Independent streams per tensor and per case, from one seed.
uint64_t mix(uint64_t seed, uint64_t salt) {
    Rng r(seed ^ (salt * 0xD1B54A32D192ED03ull));
    return r.next();
}

// Sizes `inputs` to the op's input layouts, reusing the buffers when they already match.
void prepare(const Task& task, const Shape& shape, std::vector<HostTensor>& inputs) {
    std::vector<TensorLayout> layouts;
    for (auto& l : tensorLayouts(task, shape)) {
        if (!l.output)
            layouts.push_back(std::move(l));
    }
    bool same = inputs.size() == layouts.size();
    for (size_t i = 0; same && i < layouts.size(); ++i) {
        const TensorLayout& a = inputs[i].layout;
        same = a.name == layouts[i].name && a.dtype == layouts[i].dtype &&
               a.shape == layouts[i].shape && a.ld == layouts[i].ld;
    }
    if (same)
        return;
    inputs.clear();
    for (auto& l : layouts)
        inputs.emplace_back(std::move(l));
}

// Logical elements per random stream. Fixed, so the values do not depend on the thread count.
constexpr int64_t kBlock = int64_t{1} << 16;

// Every element (r, c) of `t` = value(rng, r, c), in blocks of kBlock logical elements (row-major),
// block b drawing from its own stream mix(seed, b + 1); a case's own draws use mix(seed, 0).
template <typename F> void fill(HostTensor& t, uint64_t seed, F&& value) {
    const int64_t cols = t.layout.cols;
    const int64_t total = t.layout.elements();
    parallelFor((total + kBlock - 1) / kBlock, [&](int64_t b) {
        Rng rng(mix(seed, static_cast<uint64_t>(b) + 1));
        std::vector<double> run;
        const int64_t end = std::min(total, (b + 1) * kBlock);
        for (int64_t i = b * kBlock; i < end;) {
            const int64_t r = i / cols;
            const int64_t c = i % cols;
            const int64_t n = std::min(cols - c, end - i);
            run.resize(static_cast<size_t>(n));
            for (int64_t k = 0; k < n; ++k)
                run[static_cast<size_t>(k)] = value(rng, r, c + k);
            t.store(r, c, n, run.data());
            i += n;
        }
    });
}

// Row-structured inputs: row(rng, r, values) writes row r's cols values; blocks of
// rowsPerBlock(cols) rows, each with its own stream seeded by (seed, block).
template <typename F> void fillRows(HostTensor& t, uint64_t seed, F&& row) {
    const int64_t rows = t.layout.rows;
    const int64_t cols = t.layout.cols;
    const int64_t per = rowsPerBlock(cols);
    parallelFor((rows + per - 1) / per, [&](int64_t b) {
        Rng rng(mix(seed, static_cast<uint64_t>(b) + 1));
        std::vector<double> values(static_cast<size_t>(cols));
        for (int64_t r = b * per; r < std::min(rows, (b + 1) * per); ++r) {
            row(rng, r, values.data());
            t.store(r, 0, cols, values.data());
        }
    });
}

void fillNormal(HostTensor& t, uint64_t seed, double mean, double stddev) {
    fill(t, seed, [&](Rng& rng, int64_t, int64_t) { return rng.normal(mean, stddev); });
}

// Mean and standard deviation of each distribution for the op's data inputs. Large magnitudes
// overflow a 16-bit accumulator while results stay representable in the output dtype.
struct Moments {
    double mean;
    double stddev;
};

Moments moments(const Task& task, Distribution d, Dtype out) {
    switch (d) {
    case Distribution::Normal:
        return {0.0, 1.0};
    case Distribution::Shifted:
        // Softmax is shift-invariant, so its shift is large enough to overflow a naive fp16 exp.
        return {task.op == "softmax" ? 50.0 : 1.0, 1.0};
    case Distribution::Large:
        return {0.0, out == Dtype::F16 ? 4.0 : 24.0};
    }
    return {0.0, 1.0};
}

void generateCustom(const Task& task, uint64_t seed, std::vector<HostTensor>& inputs) {
    for (size_t i = 0; i < inputs.size(); ++i) {
        HostTensor& t = inputs[i];
        const std::string& d = task.tensor(t.layout.name).distribution;
        const uint64_t stream = mix(seed, i + 1);
        if (d == "uniform")
            fill(t, stream, [](Rng& rng, int64_t, int64_t) { return rng.uniform(-1.0, 1.0); });
        else if (d == "positive")
            fill(t, stream, [](Rng& rng, int64_t, int64_t) { return rng.uniform(0.5, 2.0); });
        else if (d == "shifted")
            fill(t, stream, [](Rng& rng, int64_t, int64_t) { return rng.normal(1.0, 1.0); });
        else if (d == "large")
            fill(t, stream, [](Rng& rng, int64_t, int64_t) { return rng.normal(0.0, 16.0); });
        else
            fill(t, stream, [](Rng& rng, int64_t, int64_t) { return rng.normal(); });
    }
}

HostTensor& input(std::vector<HostTensor>& inputs, const char* name) {
    for (auto& t : inputs) {
        if (t.layout.name == name)
            return t;
    }
    throw std::logic_error(std::string("no input ") + name);
}

// Weight and bias of a layer norm: around 1 and 0, as trained ones are.
void fillAffine(std::vector<HostTensor>& inputs, uint64_t seed) {
    fillNormal(input(inputs, "W"), mix(seed, 2), 1.0, 0.5);
    fillNormal(input(inputs, "B"), mix(seed, 3), 0.0, 0.5);
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

} // namespace

const char* distributionName(Distribution d) {
    switch (d) {
    case Distribution::Normal:
        return "normal";
    case Distribution::Shifted:
        return "shifted";
    case Distribution::Large:
        return "large";
    }
    return "?";
}

std::vector<Distribution> distributions(const Task& task) {
    if (task.isCustom())
        return {Distribution::Normal};
    return {Distribution::Normal, Distribution::Shifted, Distribution::Large};
}

void generate(const Task& task, const Shape& shape, Distribution distribution, uint64_t seed,
              std::vector<HostTensor>& inputs) {
    prepare(task, shape, inputs);
    if (task.isCustom()) {
        generateCustom(task, seed, inputs);
        return;
    }
    Dtype out = Dtype::F32;
    for (const auto& t : task.tensors) {
        if (t.output)
            out = t.dtype;
    }
    const Moments m = moments(task, distribution, out);
    if (task.op == "layernorm") {
        fillNormal(input(inputs, "X"), mix(seed, 1), m.mean, m.stddev);
        fillAffine(inputs, seed);
        return;
    }
    for (size_t i = 0; i < inputs.size(); ++i)
        fillNormal(inputs[i], mix(seed, i + 1), m.mean, m.stddev);
}

std::vector<EdgeCase> edgeCases(const Task& task, const Shape& shape) {
    if (task.op == "softmax")
        return softmaxCases(task, shape);
    if (task.op == "layernorm")
        return layernormCases(task, shape);
    if (task.op == "reduce")
        return reduceCases(task, shape);
    if (task.op == "elementwise")
        return elementwiseCases(task, shape);
    return {};
}

} // namespace kev::ops
