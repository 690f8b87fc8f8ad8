#pragma once
// Statistics of paired timing samples: medians with distribution-free confidence intervals, the
// ABBA pairing, and the stopping and stability rules of the referee (PROTOCOL.md, "Report").
#include <string>
#include <vector>

namespace kev::stats {

double median(std::vector<double> values);

struct Interval {
    double median = 0;
    double lo = 0;
    double hi = 0;
    int n = 0;
    // Half the interval's width relative to the median: the "noise" the stopping rule bounds.
    double relHalfWidth() const;
};

// The median and its confidence interval from binomial order statistics: no assumption about the
// distribution of the samples, so one slow outlier moves neither bound much.
Interval medianInterval(std::vector<double> values, double confidence = 0.95);

// One ABBA quad: candidate, reference, reference, candidate. A linear drift over the quad cancels
// in (r1 + r2) / (c1 + c2). With the candidate in another process the order is ABAB, so that every
// sample follows a switch of GPU context (timer.cpp); the ratio is the same.
struct Quad {
    double c1 = 0, r1 = 0, r2 = 0, c2 = 0;
    double ratio() const { return (r1 + r2) / (c1 + c2); }
};

struct StopRule {
    int minPairs = 10;
    int maxPairs = 5000;
    double targetHalfWidth = 0.005;
    double budgetSeconds = 1.0;
};

enum class StopReason { None, HalfWidth, TimeLimit, MaxPairs };
const char* toString(StopReason reason);

// Whether a round of paired ratios may stop after `elapsedSeconds`.
StopReason shouldStop(const std::vector<double>& ratios, double elapsedSeconds,
                      const StopRule& rule);

// (max - min) / min of the round medians: the three-round rule compares it with max_round_spread.
double spread(const std::vector<double>& roundMedians);

// Median absolute deviation, scaled to estimate a standard deviation for normal data.
double robustSigma(std::vector<double> values);

} // namespace kev::stats
