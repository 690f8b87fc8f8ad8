#include "nvml.h"

#include <gtest/gtest.h>

#include <cstdlib>

// The fake library is chosen before anything touches NVML (it is loaded once per process).
class FakeNvml : public ::testing::Environment {
public:
    void SetUp() override { ::setenv("KEVOLVE_NVML_LIBRARY", KEVOLVE_FAKE_NVML, 1); }
};

const auto* const g_env = ::testing::AddGlobalTestEnvironment(new FakeNvml);

TEST(Nvml, ReasonNames) {
    EXPECT_TRUE(kev::nvml::reasonNames(0).empty());
    EXPECT_EQ(kev::nvml::reasonNames(0x4), std::vector<std::string>{"sw_power_cap"});
    EXPECT_EQ(kev::nvml::reasonNames(0x1ff),
              (std::vector<std::string>{"gpu_idle", "applications_clocks", "sw_power_cap",
                                        "hw_slowdown", "sync_boost", "sw_thermal", "hw_thermal",
                                        "hw_power_brake", "display_clocks"}));
    EXPECT_EQ(kev::nvml::reasonNames(0x4 | 0x1000),
              (std::vector<std::string>{"sw_power_cap", "0x1000"}));
}

TEST(Nvml, OnlyThermalAndHardwareSlowdownDisqualify) {
    EXPECT_FALSE(kev::nvml::disqualifying(0));
    EXPECT_FALSE(kev::nvml::disqualifying(0x1 | 0x2 | 0x4 | 0x10 | 0x100));
    EXPECT_TRUE(kev::nvml::disqualifying(0x8));
    EXPECT_TRUE(kev::nvml::disqualifying(0x20));
    EXPECT_TRUE(kev::nvml::disqualifying(0x40));
    EXPECT_TRUE(kev::nvml::disqualifying(0x80));
    EXPECT_TRUE(kev::nvml::disqualifying(0x4 | 0x40));
}

TEST(Nvml, FakeDeviceIsDescribed) {
    std::string why;
    ASSERT_TRUE(kev::nvml::available(&why)) << why;
    EXPECT_EQ(kev::nvml::driverVersion(), "999.99.99");
    const auto devices = kev::nvml::devices();
    ASSERT_EQ(devices.size(), 1u);
    const auto& d = devices[0];
    EXPECT_EQ(d.name, "Fake H200");
    EXPECT_EQ(d.pciBusId, "00000000:19:00.0");
    EXPECT_EQ(d.ccMajor, 9);
    EXPECT_EQ(d.powerLimitW, 700u);
    const auto j = kev::nvml::toJson(d);
    EXPECT_EQ(j.find("cc")->asString(), "9.0");
    EXPECT_EQ(j.find("clocks_mhz")->find("mem_max")->asInt(), 3201);
    EXPECT_EQ(j.find("memory_bytes")->asInt(), 150754820096LL);

    const auto byBus = kev::nvml::Device::openByPciBusId("00000000:19:00.0");
    ASSERT_TRUE(byBus.has_value());
    const auto s = byBus->sample();
    EXPECT_TRUE(s.ok);
    EXPECT_EQ(s.smMhz, 1980u);
    EXPECT_EQ(s.reasons, 0x4u);
    EXPECT_EQ(s.powerMw, 120000u);
    EXPECT_FALSE(kev::nvml::Device::openByPciBusId("00000000:99:00.0").has_value());
    EXPECT_FALSE(kev::nvml::Device::openByIndex(1).has_value());
}
