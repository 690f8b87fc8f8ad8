// Roofline arithmetic (floors, bound, percent of floor), the peaks cache (keyed by GPU UUID and
// driver, atomic writes, refused when stale or malformed) and the compute peak per dtype.
#include "roofline.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <unistd.h>

using namespace kev;
using namespace kev::roofline;

namespace {

Peaks h200Like() {
    Peaks p;
    p.gpuUuid = "GPU-1234";
    p.gpuName = "NVIDIA H200";
    p.driverVersion = "580.159.04";
    p.tensorF16Tflops = 700;
    p.tensorBf16Tflops = 690;
    p.fp32Tflops = 60;
    p.dramGbps = 4000;
    p.measuredUnix = 1.7e9;
    return p;
}

std::string tempDir() {
    char tmpl[] = "/tmp/kev-roofline-XXXXXX";
    const char* d = mkdtemp(tmpl);
    return d ? d : "/tmp";
}

} // namespace

TEST(Roofline, HeadlineGemmIsComputeBound) {
    // 4096^3 fp16 in, fp32 out: 2 M N K flops; A and B read once, C written once.
    const double flops = 2.0 * 4096.0 * 4096.0 * 4096.0;
    const double bytes = 4096.0 * 4096.0 * (2 + 2 + 4);
    const Result r = compute(flops, bytes, 700, 4000);
    EXPECT_EQ(r.bound, "compute");
    EXPECT_NEAR(r.computeMs, flops / 700e12 * 1e3, 1e-12);
    EXPECT_NEAR(r.memoryMs, bytes / 4000e9 * 1e3, 1e-12);
    EXPECT_DOUBLE_EQ(r.floorMs, r.computeMs);
    EXPECT_NEAR(r.intensity, flops / bytes, 1e-9);
    EXPECT_NEAR(r.ridge, 700e12 / 4000e9, 1e-9);
    EXPECT_GT(r.intensity, r.ridge);
}

TEST(Roofline, SkinnyGemmIsMemoryBound) {
    // M = 2^24, N = K = 8: 128 flops and 48 bytes per row.
    const double m = 16777216.0;
    const Result r = compute(128 * m, 48 * m, 700, 4000);
    EXPECT_EQ(r.bound, "memory");
    EXPECT_DOUBLE_EQ(r.floorMs, r.memoryMs);
    EXPECT_LT(r.intensity, r.ridge);
}

TEST(Roofline, RowsGivePercentOfFloor) {
    Result r = compute(2e12, 1e9, 1000, 4000); // floor: 2 ms compute, 0.25 ms memory
    ASSERT_DOUBLE_EQ(r.floorMs, 2.0);
    addRow(r, "candidate", 4.0);
    addRow(r, "reference", 2.5);
    addRow(r, "broken", 0.0); // no time, no row
    ASSERT_EQ(r.rows.size(), 2u);
    EXPECT_DOUBLE_EQ(r.rows[0].percentOfFloor, 50.0);
    EXPECT_DOUBLE_EQ(r.rows[1].percentOfFloor, 80.0);
    EXPECT_NEAR(r.rows[0].achievedTflops, 500.0, 1e-9);
    EXPECT_NEAR(r.rows[0].achievedGbps, 250.0, 1e-9);
    const json::Value v = toJson(r);
    EXPECT_DOUBLE_EQ(v.find("percent_of_floor")->asDouble(), 50.0);
    EXPECT_EQ(v.find("bound")->asString(), "compute");
    EXPECT_EQ(v.find("rows")->size(), 2u);
    EXPECT_EQ(v.find("rows")->at(1).find("who")->asString(), "reference");
}

// H200, gemm_f16_m1_n4096_k4096: the floor 0.0079 ms, cuBLAS 0.0166 ms (47.6%), the built-in kernel
// 0.0143 ms (55.4%, 1.157x): room below the roof, not suspicious. The headline GEMM: cuBLAS at 97%
// of the tensor rate, so 1.15x would put the candidate at 111%: the ratio rule stands.
TEST(Roofline, ARatioOverALibraryFarBelowTheRoofIsNotSuspicious) {
    Result small = compute(2.0 * 4096 * 4096, 33.6e6, 764, 4250);
    ASSERT_EQ(small.bound, "memory");
    addRow(small, "candidate", 0.0143);
    addRow(small, "reference", 0.0166);
    EXPECT_LT(small.rows[1].percentOfFloor, 80.0);
    EXPECT_FALSE(ratioSuspicionStands(small));

    Result headline = compute(2.0 * 4096 * 4096 * 4096, 3 * 4096.0 * 4096 * 2, 764, 4250);
    const double roof = headline.floorMs;
    addRow(headline, "candidate", roof / 1.1);
    addRow(headline, "reference", roof / 0.97);
    EXPECT_TRUE(ratioSuspicionStands(headline));

    // Far below the roof but faster than it: impossible without skipping work.
    Result impossible = compute(1e9, 1e9, 1000, 1000); // floor 1 ms
    addRow(impossible, "candidate", 0.8);
    addRow(impossible, "reference", 2.0);
    EXPECT_TRUE(ratioSuspicionStands(impossible));
    // Without both rows the ratio rule stands.
    Result alone = compute(1e9, 1e9, 1000, 1000);
    addRow(alone, "candidate", 1.5);
    EXPECT_TRUE(ratioSuspicionStands(alone));
}

TEST(Roofline, WithoutACandidateTimeThereIsNoPercent) {
    Result r = compute(1e9, 1e9, 100, 1000);
    EXPECT_EQ(toJson(r).find("percent_of_floor"), nullptr);
}

TEST(Roofline, RejectsNonPositiveInputsNamingThem) {
    try {
        compute(1e9, 0, 100, 100);
        FAIL() << "zero bytes accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("min_bytes"), std::string::npos) << e.what();
    }
    try {
        compute(1e9, 1e9, 0, 100);
        FAIL() << "zero compute peak accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("compute peak"), std::string::npos) << e.what();
    }
    EXPECT_THROW(compute(-1, 1, 1, 1), std::invalid_argument);
    EXPECT_THROW(compute(1, 1, 1, std::nan("")), std::invalid_argument);
}

TEST(Roofline, ComputePeakFollowsTheInputDtype) {
    const Peaks p = h200Like();
    EXPECT_DOUBLE_EQ(computePeakTflops(p, Dtype::F16), 700);
    EXPECT_DOUBLE_EQ(computePeakTflops(p, Dtype::BF16), 690);
    EXPECT_DOUBLE_EQ(computePeakTflops(p, Dtype::F32), 60);
    EXPECT_DOUBLE_EQ(computePeakTflops(p, Dtype::I8), 0);
}

TEST(RooflineCache, PathIsKeyedByUuidAndDriverAndSanitised) {
    EXPECT_EQ(cachePath("/c", "GPU-ab/c d", "580.1"), "/c/peaks-GPU-ab_c_d-580.1.json");
}

TEST(RooflineCache, CacheDirHonoursTheOverride) {
    setenv("KEVOLVE_CACHE_DIR", "/somewhere/else", 1);
    EXPECT_EQ(cacheDir(), "/somewhere/else");
    unsetenv("KEVOLVE_CACHE_DIR");
    setenv("XDG_CACHE_HOME", "/xdg", 1);
    EXPECT_EQ(cacheDir(), "/xdg/kevolve");
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", "/home/u", 1);
    EXPECT_EQ(cacheDir(), "/home/u/.cache/kevolve");
}

TEST(RooflineCache, StoreThenLoadRoundTrips) {
    const std::string dir = tempDir() + "/nested/dir";
    const Peaks p = h200Like();
    const std::string path = cachePath(dir, p.gpuUuid, p.driverVersion);
    std::string error;
    ASSERT_TRUE(storeCached(path, p, &error)) << error;
    std::string why;
    const std::optional<Peaks> back = loadCached(path, p.gpuUuid, p.driverVersion, &why);
    ASSERT_TRUE(back) << why;
    EXPECT_EQ(back->source, "cache");
    EXPECT_DOUBLE_EQ(back->tensorF16Tflops, 700);
    EXPECT_DOUBLE_EQ(back->dramGbps, 4000);
    EXPECT_EQ(back->gpuName, "NVIDIA H200");
}

TEST(RooflineCache, RefusesAnotherDeviceOrDriver) {
    const std::string dir = tempDir();
    const Peaks p = h200Like();
    const std::string path = dir + "/peaks.json";
    std::string error;
    ASSERT_TRUE(storeCached(path, p, &error)) << error;
    std::string why;
    EXPECT_FALSE(loadCached(path, "GPU-other", p.driverVersion, &why));
    EXPECT_NE(why.find("GPU-other"), std::string::npos) << why;
    EXPECT_FALSE(loadCached(path, p.gpuUuid, "999.0", &why));
    EXPECT_NE(why.find("999.0"), std::string::npos) << why;
}

TEST(RooflineCache, RefusesMissingAndMalformedFiles) {
    const std::string dir = tempDir();
    std::string why;
    EXPECT_FALSE(loadCached(dir + "/absent.json", "u", "d", &why));
    EXPECT_NE(why.find("no cached peaks"), std::string::npos) << why;
    { std::ofstream(dir + "/garbage.json") << "{not json"; }
    EXPECT_FALSE(loadCached(dir + "/garbage.json", "u", "d", &why));
    EXPECT_NE(why.find("not valid JSON"), std::string::npos) << why;
    json::Value v = toJson(h200Like());
    v["dram_gbps"] = 0.0;
    { std::ofstream(dir + "/zero.json") << v.dump(); }
    EXPECT_FALSE(loadCached(dir + "/zero.json", "GPU-1234", "580.159.04", &why));
    EXPECT_NE(why.find("dram_gbps"), std::string::npos) << why;
}

// Class 6 of THREAT_MODEL.md: a cache any process could have written is checked for plausibility
// on read; an implausible one is refused (and measured again by the GPU child).
TEST(RooflineCache, RefusesImplausiblePeaks) {
    const std::string dir = tempDir();
    Peaks p = h200Like();
    EXPECT_EQ(implausible(p), "");
    DeviceLimits h200;
    h200.smCount = 132;
    h200.smClockMhz = 1980;
    h200.memClockMhz = 2619;
    h200.memBusBits = 6144;
    EXPECT_EQ(implausible(p, h200), "");

    p.dramGbps = 1e7;
    EXPECT_NE(implausible(p).find("dram_gbps"), std::string::npos);
    const std::string path = dir + "/forged.json";
    std::string error, why;
    ASSERT_TRUE(storeCached(path, p, &error)) << error;
    EXPECT_FALSE(loadCached(path, p.gpuUuid, p.driverVersion, &why, h200));
    EXPECT_NE(why.find("not plausible: dram_gbps"), std::string::npos) << why;

    // Within the absolute bounds but beyond what this device's bus can carry.
    p.dramGbps = 20000;
    EXPECT_EQ(implausible(p), "");
    EXPECT_NE(implausible(p, h200).find("memory bus"), std::string::npos) << implausible(p, h200);
    p = h200Like();
    p.tensorF16Tflops = 9000; // more than 16384 FLOP per SM per clock on 132 SMs at 1980 MHz
    EXPECT_NE(implausible(p, h200).find("tensor_f16_tflops"), std::string::npos);
    p = h200Like();
    p.fp32Tflops = std::nan("");
    EXPECT_NE(implausible(p).find("fp32_tflops"), std::string::npos);
}

// How the supervisor stores a trusted child's fresh peaks: only plausible ones, and the device's
// limits travel as JSON.
TEST(RooflineCache, StorePlausibleAndLimitsJson) {
    const std::string dir = tempDir();
    DeviceLimits h200;
    h200.smCount = 132;
    h200.smClockMhz = 1980;
    h200.memClockMhz = 2619;
    h200.memBusBits = 6144;
    const DeviceLimits back = limitsFromJson(toJson(h200));
    EXPECT_EQ(back.smCount, 132);
    EXPECT_DOUBLE_EQ(back.memClockMhz, 2619);
    EXPECT_EQ(back.memBusBits, 6144);
    EXPECT_EQ(limitsFromJson(json::parse(R"({"sm_count":"x","mem_bus_bits":-4})")).smCount, 0);

    std::string error, why;
    Peaks p = h200Like();
    ASSERT_TRUE(storePlausible(dir + "/good.json", p, h200, &error)) << error;
    EXPECT_TRUE(loadCached(dir + "/good.json", p.gpuUuid, p.driverVersion, &why, h200)) << why;
    p.dramGbps = 1e7;
    EXPECT_FALSE(storePlausible(dir + "/bad.json", p, h200, &error));
    EXPECT_NE(error.find("not plausible: dram_gbps"), std::string::npos) << error;
    EXPECT_FALSE(std::ifstream(dir + "/bad.json").good());
}
