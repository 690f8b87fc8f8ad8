#pragma once
// What the op files (ops/<op>.cpp) share: the random streams and fills of input generation, the
// compensated sum and row-blocked passes of the truths, and the scales of the rule. Internal to
// ops/; nothing outside it includes this.
#include "ops/op.h"
#include "ops/parallel.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace kev::ops::detail {

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
inline uint64_t mix(uint64_t seed, uint64_t salt) {
    Rng r(seed ^ (salt * 0xD1B54A32D192ED03ull));
    return r.next();
}

// Sizes `inputs` to the op's input layouts, reusing the buffers when they already match.
void prepare(const Task& task, const Shape& shape, std::vector<HostTensor>& inputs);

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

inline void fillNormal(HostTensor& t, uint64_t seed, double mean, double stddev) {
    fill(t, seed, [&](Rng& rng, int64_t, int64_t) { return rng.normal(mean, stddev); });
}

// Mean and standard deviation of each distribution for the op's data inputs. Large magnitudes
// overflow a 16-bit accumulator while results stay representable in the output dtype.
struct Moments {
    double mean;
    double stddev;
};
Moments moments(const Op& op, const Task& task, Distribution d);

// The input named `name`, to fill it.
HostTensor& mutableInput(std::vector<HostTensor>& inputs, const char* name);

// The input named `name` for the truth (errors name computeTruth) and for the rule (compare).
inline const HostTensor& truthInput(const std::vector<HostTensor>& inputs, const char* name) {
    return namedInput(inputs, name, "computeTruth");
}
inline const HostTensor& ruleInput(const std::vector<HostTensor>& inputs, const char* name) {
    return namedInput(inputs, name, "compare");
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

// Rows [r0, r1) of a row-wise pass, blocked by rowsPerBlock(cols); each row is computed alone, so
// the result does not depend on the blocking or the thread count.
template <typename F> void forRowBlocks(int64_t rows, int64_t cols, F&& f) {
    const int64_t per = rowsPerBlock(cols);
    parallelFor((rows + per - 1) / per,
                [&](int64_t b) { f(b * per, std::min(rows, (b + 1) * per)); });
}

} // namespace kev::ops::detail
