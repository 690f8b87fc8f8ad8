// The host side of the ops on several threads: inputs, truths and verdicts must be bit-identical
// whatever KEVOLVE_HOST_THREADS says, and the fast storage conversions must round exactly as an
// independent, slow nearest-even rounding does.
#include "ops/ops.h"
#include "ops/parallel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace json = kev::json;
namespace ops = kev::ops;
using kev::Dtype;
using kev::Task;
using ops::HostTensor;

namespace {

// Nearest-even rounding to `precision` significand bits with exponents in [emin, emax], by
// scaling: the test's own oracle, independent of the bit manipulation under test.
double slowRound(double v, int precision, int emin, int emax) {
    if (!std::isfinite(v) || v == 0.0)
        return v;
    const int e = std::max(std::ilogb(std::fabs(v)), emin);
    const double quantum = std::ldexp(1.0, e - precision + 1);
    double r = std::nearbyint(std::fabs(v) / quantum) * quantum;
    if (r > std::ldexp(2.0 - std::ldexp(1.0, 1 - precision), emax))
        r = std::numeric_limits<double>::infinity();
    return std::copysign(r, v);
}

Task makeTask(const std::string& op, const std::string& dtypes, const std::string& shape,
              const std::string& params = "{}") {
    return kev::parseTask(json::parse(R"({"name":"t","op":")" + op + R"(","dtypes":)" + dtypes +
                                      R"(,"shape":)" + shape + R"(,"params":)" + params + "}"));
}

// Shapes of several blocks each (2^16 elements, 512 GEMV columns), rows not a multiple of the
// blocking.
std::vector<Task> tasks() {
    return {
        makeTask("softmax", R"({"X":"f16","Y":"f16"})", R"({"M":67,"N":3080})"),
        makeTask("layernorm", R"({"X":"bf16","W":"bf16","B":"bf16","Y":"bf16"})",
                 R"({"M":45,"N":3080})"),
        makeTask("rmsnorm", R"({"X":"f16","W":"f16","Y":"f16"})", R"({"M":45,"N":3080})"),
        makeTask("reduce", R"({"X":"f32","Y":"f32"})", R"({"M":77,"N":3001})",
                 R"({"reduction":"sum"})"),
        makeTask("reduce", R"({"X":"f16","Y":"f32"})", R"({"M":77,"N":3001})",
                 R"({"reduction":"max"})"),
        makeTask("gemv", R"({"A":"f16","x":"f16","y":"f16"})", R"({"M":301,"N":1200})",
                 R"({"transpose":false})"),
        makeTask("gemv", R"({"A":"f16","x":"f16","y":"f32"})", R"({"M":301,"N":1200})",
                 R"({"transpose":true})"),
        makeTask("elementwise", R"({"X":"f16","Y":"f16"})", R"({"N":200003})",
                 R"({"function":"gelu"})"),
        makeTask("elementwise", R"({"X":"f32","Y":"f32"})", R"({"N":200003})",
                 R"({"function":"silu"})"),
    };
}

// Everything one validation of `t` computes on the host, as bytes and strings.
struct HostRun {
    std::vector<std::vector<unsigned char>> inputs;
    std::vector<std::vector<double>> truths;
    std::vector<std::string> verdicts;
};

std::string describe(const ops::Check& c) {
    char buf[256];
    std::snprintf(
        buf, sizeof buf, "%a %a %a %lld %lld %d %a ", c.candidate.relFro, c.candidate.maxScaled,
        c.candidate.checksum, static_cast<long long>(c.candidate.nanCount),
        static_cast<long long>(c.specialMismatches), c.verdict.pass ? 1 : 0, c.verdict.margin);
    return buf + c.verdict.reason + " | " + c.evidence;
}

HostRun validate(const Task& t, const char* threads) {
    setenv("KEVOLVE_HOST_THREADS", threads, 1);
    HostRun run;
    std::vector<std::vector<HostTensor>> sets;
    uint64_t seed = 11;
    for (ops::Distribution d : ops::distributions(t)) {
        sets.emplace_back();
        ops::generate(t, t.shape, d, seed++, sets.back());
    }
    for (const ops::EdgeCase& e : ops::edgeCases(t, t.shape)) {
        sets.emplace_back();
        e.generate(seed++, sets.back());
    }
    for (const auto& in : sets) {
        for (const HostTensor& h : in)
            run.inputs.push_back(h.bytes);
        const ops::Truth truth = ops::computeTruth(t, t.shape, in);
        run.truths.insert(run.truths.end(), truth.begin(), truth.end());
        // A candidate off by a varying relative 1e-3, and one element NaN: both the measures and
        // the first-mismatch search run over every block.
        std::vector<HostTensor> out = ops::allocateOutputs(t, t.shape);
        for (size_t o = 0; o < out.size(); ++o) {
            for (int64_t i = 0; i < out[o].layout.elements(); ++i) {
                const double v = truth[o][static_cast<size_t>(i)];
                out[o].set(i, v * (1.0 + 1e-3 * static_cast<double>(i % 7 - 3)));
            }
        }
        run.verdicts.push_back(describe(ops::compare(t, t.shape, in, truth, out, out)));
        out[0].set(out[0].layout.elements() - 2, std::numeric_limits<double>::quiet_NaN());
        run.verdicts.push_back(describe(ops::compare(t, t.shape, in, truth, out, {})));
    }
    unsetenv("KEVOLVE_HOST_THREADS");
    return run;
}

bool sameBits(const std::vector<double>& a, const std::vector<double>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

} // namespace

TEST(OpsStorage, FastConversionsRoundLikeTheSlowOracle) {
    std::mt19937_64 gen(3);
    std::vector<double> values = {0.0,   -0.0,    65504.0, 65519.999, 65520.0, 65536.0, 1e-8,
                                  -6e-8, 3e-5,    6.1e-5,  3.4e38,    3.39e38, 1e-40,   -1e-45,
                                  1e300, -1e-300, 1.0 / 3, 2.0 / 3,   0.1,     1e5};
    // Ties and near-ties of both formats: odd multiples of half a quantum, and a hair either side.
    for (int e = -30; e < 20; ++e) {
        for (int k = 1; k < 40; k += 2) {
            for (int p : {11, 8}) {
                const double tie = std::ldexp(1.0 + k * std::ldexp(1.0, -p), e);
                values.insert(values.end(),
                              {tie, std::nextafter(tie, 0.0), std::nextafter(tie, 1e300), -tie});
            }
        }
    }
    std::uniform_real_distribution<double> mantissa(1.0, 2.0);
    std::uniform_int_distribution<int> exponent(-150, 130);
    for (int i = 0; i < 200000; ++i)
        values.push_back((i % 2 ? -1 : 1) * std::ldexp(mantissa(gen), exponent(gen)));
    for (const double v : values) {
        ASSERT_EQ(ops::fromF16(ops::toF16(v)), slowRound(v, 11, -14, 15)) << std::hexfloat << v;
        ASSERT_EQ(ops::fromBf16(ops::toBf16(v)), slowRound(v, 8, -126, 127)) << std::hexfloat << v;
        ASSERT_EQ(std::signbit(ops::fromF16(ops::toF16(v))), std::signbit(v)) << v;
    }
    for (uint32_t bits = 0; bits < 65536; ++bits) {
        const double f16 = ops::fromF16(static_cast<uint16_t>(bits));
        if (!std::isnan(f16)) {
            ASSERT_EQ(ops::toF16(f16), bits) << "f16 round trip of " << bits;
        }
        const double bf16 = ops::fromBf16(static_cast<uint16_t>(bits));
        if (!std::isnan(bf16)) {
            ASSERT_EQ(ops::toBf16(bf16), bits) << "bf16 round trip of " << bits;
        }
    }
}

TEST(OpsParallel, ThreadCountComesFromTheEnvironment) {
    setenv("KEVOLVE_HOST_THREADS", "3", 1);
    EXPECT_EQ(ops::hostThreads(), 3);
    setenv("KEVOLVE_HOST_THREADS", "zero", 1);
    EXPECT_GE(ops::hostThreads(), 1) << "a malformed value falls back to the hardware's count";
    unsetenv("KEVOLVE_HOST_THREADS");
    EXPECT_GE(ops::hostThreads(), 1);
}

TEST(OpsParallel, EveryBlockRunsOnceAndErrorsReachTheCaller) {
    setenv("KEVOLVE_HOST_THREADS", "4", 1);
    std::vector<int> hits(1000, 0);
    ops::parallelFor(1000, [&](int64_t b) { ++hits[static_cast<size_t>(b)]; });
    EXPECT_EQ(std::count(hits.begin(), hits.end(), 1), 1000);
    EXPECT_THROW(ops::parallelFor(100,
                                  [](int64_t b) {
                                      if (b == 37)
                                          throw std::runtime_error("block 37");
                                  }),
                 std::runtime_error);
    unsetenv("KEVOLVE_HOST_THREADS");
}

TEST(OpsParallel, InputsTruthsAndVerdictsDoNotDependOnTheThreadCount) {
    for (const Task& t : tasks()) {
        SCOPED_TRACE(t.op + " " + kev::dtypeName(t.tensors.at(0).dtype));
        const HostRun one = validate(t, "1");
        const HostRun four = validate(t, "4");
        ASSERT_EQ(one.inputs.size(), four.inputs.size());
        for (size_t i = 0; i < one.inputs.size(); ++i)
            EXPECT_TRUE(one.inputs[i] == four.inputs[i]) << "input tensor " << i;
        ASSERT_EQ(one.truths.size(), four.truths.size());
        for (size_t i = 0; i < one.truths.size(); ++i)
            EXPECT_TRUE(sameBits(one.truths[i], four.truths[i])) << "truth " << i;
        EXPECT_EQ(one.verdicts, four.verdicts);
    }
}

TEST(OpsParallel, BlocksDrawDifferentValues) {
    // Every block seeded alike would repeat the same 2^16 values along a long vector.
    const Task t = makeTask("elementwise", R"({"X":"f32","Y":"f32"})", R"({"N":200003})",
                            R"({"function":"gelu"})");
    std::vector<HostTensor> in;
    ops::generate(t, t.shape, ops::Distribution::Normal, 5, in);
    EXPECT_NE(in[0].at(0, 0), in[0].at(0, 1 << 16));
    EXPECT_NE(in[0].at(0, 1), in[0].at(0, (1 << 16) + 1));
}
