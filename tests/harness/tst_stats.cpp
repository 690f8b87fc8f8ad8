// Statistics of the referee on synthetic samples: medians, distribution-free intervals, ABBA
// pairing under drift, the stopping rule and the three-round rule.
#include "stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace kev::stats;

TEST(Stats, MedianOddEvenEmpty) {
    EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2.0);
    EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
    EXPECT_DOUBLE_EQ(median({}), 0.0);
}

TEST(Stats, IntervalCoversTheMedianAndShrinksWithSamples) {
    std::mt19937_64 rng(42);
    std::normal_distribution<double> noise(1.0, 0.02);
    std::vector<double> small, large;
    for (int i = 0; i < 20; ++i) {
        small.push_back(noise(rng));
    }
    for (int i = 0; i < 2000; ++i) {
        large.push_back(noise(rng));
    }
    const Interval a = medianInterval(small);
    const Interval b = medianInterval(large);
    EXPECT_LE(a.lo, a.median);
    EXPECT_GE(a.hi, a.median);
    EXPECT_LT(b.relHalfWidth(), a.relHalfWidth());
    EXPECT_NEAR(b.median, 1.0, 0.005);
    EXPECT_LT(b.relHalfWidth(), 0.002);
}

TEST(Stats, IntervalCoverageIsAboutNinetyFivePercent) {
    std::mt19937_64 rng(7);
    std::lognormal_distribution<double> skewed(0.0, 0.3); // median 1, heavy right tail
    int covered = 0;
    const int runs = 2000;
    for (int r = 0; r < runs; ++r) {
        std::vector<double> v;
        for (int i = 0; i < 25; ++i) {
            v.push_back(skewed(rng));
        }
        const Interval iv = medianInterval(v);
        covered += (iv.lo <= 1.0 && 1.0 <= iv.hi) ? 1 : 0;
    }
    const double rate = static_cast<double>(covered) / runs;
    EXPECT_GT(rate, 0.93);
    EXPECT_LT(rate, 0.995);
}

TEST(Stats, OutliersBarelyMoveTheMedianInterval) {
    std::vector<double> v(40, 1.0);
    for (int i = 0; i < 40; ++i) {
        v[static_cast<size_t>(i)] += 0.001 * (i % 5);
    }
    const Interval clean = medianInterval(v);
    v[0] = 72.0; // the cold first sample of a round
    v[1] = 0.01;
    const Interval dirty = medianInterval(v);
    EXPECT_NEAR(dirty.median, clean.median, 0.0011);
    EXPECT_LT(dirty.relHalfWidth(), 0.005);
}

TEST(Stats, TooFewSamplesGiveTheWholeRange) {
    const Interval iv = medianInterval({1.0, 2.0, 3.0});
    EXPECT_DOUBLE_EQ(iv.lo, 1.0);
    EXPECT_DOUBLE_EQ(iv.hi, 3.0);
}

TEST(Stats, AbbaCancelsLinearDrift) {
    // The device slows down linearly over time; the candidate is truly 0.8x the reference's speed.
    const double trueRatio = 0.8;
    std::vector<double> abba, naive;
    double t = 0;
    auto clock = [&t] { return 1.0 + 0.01 * t++; };
    for (int q = 0; q < 50; ++q) {
        Quad quad;
        quad.c1 = (1 / trueRatio) * clock();
        quad.r1 = clock();
        quad.r2 = clock();
        quad.c2 = (1 / trueRatio) * clock();
        abba.push_back(quad.ratio());
        naive.push_back(quad.r1 / quad.c1); // plain AB pairing
    }
    EXPECT_NEAR(median(abba), trueRatio, 1e-3);
    EXPECT_GT(std::fabs(median(naive) - trueRatio), 2e-3);
}

TEST(Stats, StopRuleHalfWidthTimeAndMinimum) {
    StopRule rule;
    rule.minPairs = 10;
    rule.targetHalfWidth = 0.005;
    rule.budgetSeconds = 1.0;
    std::vector<double> tight(10, 1.0);
    EXPECT_EQ(shouldStop(tight, 0.1, rule), StopReason::HalfWidth);
    std::vector<double> nine(9, 1.0);
    EXPECT_EQ(shouldStop(nine, 0.1, rule), StopReason::None);
    std::vector<double> noisy;
    for (int i = 0; i < 30; ++i) {
        noisy.push_back(1.0 + 0.1 * ((i * 7) % 11 - 5));
    }
    EXPECT_EQ(shouldStop(noisy, 0.5, rule), StopReason::None);
    EXPECT_EQ(shouldStop(noisy, 1.5, rule), StopReason::TimeLimit);
    // A slow kernel: past its budget with two pairs it still needs a third.
    EXPECT_EQ(shouldStop({1.0, 1.1}, 5.0, rule), StopReason::None);
    EXPECT_EQ(shouldStop({1.0, 1.1, 1.05}, 5.0, rule), StopReason::TimeLimit);
    rule.maxPairs = 30;
    EXPECT_EQ(shouldStop(noisy, 0.5, rule), StopReason::MaxPairs);
}

TEST(Stats, RoundSpread) {
    EXPECT_NEAR(spread({1.0, 1.05, 0.98}), (1.05 - 0.98) / 0.98, 1e-12);
    EXPECT_GT(spread({1.0, 1.2, 1.0}), 0.15);
    EXPECT_DOUBLE_EQ(spread({1.0}), 0.0);
}

TEST(Stats, RobustSigmaIgnoresOutliers) {
    std::mt19937_64 rng(3);
    std::normal_distribution<double> n(0.0, 2.0);
    std::vector<double> v;
    for (int i = 0; i < 5000; ++i) {
        v.push_back(n(rng));
    }
    v[0] = 1e6;
    EXPECT_NEAR(robustSigma(v), 2.0, 0.1);
}
