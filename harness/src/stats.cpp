#include "stats.h"

#include <algorithm>
#include <cmath>

namespace kev::stats {

double median(std::vector<double> values) {
    if (values.empty()) {
        return 0.0;
    }
    const size_t mid = values.size() / 2;
    std::nth_element(values.begin(), values.begin() + static_cast<long>(mid), values.end());
    const double upper = values[mid];
    if (values.size() % 2 == 1) {
        return upper;
    }
    const double lower = *std::max_element(values.begin(), values.begin() + static_cast<long>(mid));
    return 0.5 * (lower + upper);
}

double Interval::relHalfWidth() const {
    if (median == 0.0) {
        return INFINITY;
    }
    return 0.5 * (hi - lo) / std::fabs(median);
}

namespace {
// log of C(n, k) * 0.5^n, the Binomial(n, 1/2) probability mass at k.
double logBinomialHalf(int n, int k) {
    return std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0) -
           n * std::log(2.0);
}
} // namespace

Interval medianInterval(std::vector<double> values, double confidence) {
    Interval out;
    out.n = static_cast<int>(values.size());
    if (values.empty()) {
        return out;
    }
    std::sort(values.begin(), values.end());
    out.median = median(values);
    const int n = out.n;
    // The interval [x_(j), x_(n-1-j)] (0-based) covers the median with probability
    // 1 - 2 P(Bin(n, 1/2) <= j); take the largest j that keeps the coverage.
    const double tail = 0.5 * (1.0 - confidence);
    double cdf = 0.0;
    int j = -1;
    for (int k = 0; k < n / 2; ++k) {
        cdf += std::exp(logBinomialHalf(n, k));
        if (cdf > tail) {
            break;
        }
        j = k;
    }
    if (j < 0) {
        // Too few samples for the requested confidence: the whole range is the honest interval.
        out.lo = values.front();
        out.hi = values.back();
    } else {
        out.lo = values[static_cast<size_t>(j)];
        out.hi = values[static_cast<size_t>(n - 1 - j)];
    }
    return out;
}

const char* toString(StopReason reason) {
    switch (reason) {
    case StopReason::None:
        return "none";
    case StopReason::HalfWidth:
        return "half_width";
    case StopReason::TimeLimit:
        return "time_limit";
    case StopReason::MaxPairs:
        return "max_pairs";
    }
    return "none";
}

StopReason shouldStop(const std::vector<double>& ratios, double elapsedSeconds,
                      const StopRule& rule) {
    const int n = static_cast<int>(ratios.size());
    if (n >= rule.maxPairs) {
        return StopReason::MaxPairs;
    }
    if (n >= rule.minPairs && medianInterval(ratios).relHalfWidth() <= rule.targetHalfWidth) {
        return StopReason::HalfWidth;
    }
    // The time limit never stops a round with fewer than the minimum pairs but one: a slow kernel
    // still gets a median with an interval, just a wider one.
    if (elapsedSeconds >= rule.budgetSeconds && n >= std::min(rule.minPairs, 3)) {
        return StopReason::TimeLimit;
    }
    return StopReason::None;
}

double spread(const std::vector<double>& roundMedians) {
    if (roundMedians.size() < 2) {
        return 0.0;
    }
    const auto [lo, hi] = std::minmax_element(roundMedians.begin(), roundMedians.end());
    if (*lo <= 0.0) {
        return INFINITY;
    }
    return (*hi - *lo) / *lo;
}

double robustSigma(std::vector<double> values) {
    if (values.size() < 2) {
        return 0.0;
    }
    const double m = median(values);
    for (double& v : values) {
        v = std::fabs(v - m);
    }
    return 1.4826 * median(values);
}

} // namespace kev::stats
