#pragma once
// NVML, loaded at run time (dlopen "libnvidia-ml.so.1"), so the supervisor learns devices, clocks
// and throttle reasons without initialising CUDA, and runs on machines without a driver.
#include "json.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kev::nvml {

// Loads and initialises NVML once; false with the reason when it cannot. $KEVOLVE_NVML_LIBRARY
// names another library file (tests use a fake one).
bool available(std::string* why = nullptr);

struct DeviceInfo {
    int index = 0;
    std::string name;
    std::string uuid;
    std::string pciBusId;
    uint64_t memoryBytes = 0;
    int ccMajor = 0;
    int ccMinor = 0;
    unsigned smMhz = 0;
    unsigned memMhz = 0;
    unsigned smMaxMhz = 0;
    unsigned memMaxMhz = 0;
    unsigned powerLimitW = 0;
    unsigned temperatureC = 0;
};

struct ClockSample {
    bool ok = false;
    unsigned smMhz = 0;
    unsigned memMhz = 0;
    unsigned long long reasons = 0; // nvmlClocksEventReason* bits
    unsigned temperatureC = 0;
    unsigned powerMw = 0;
};

// Every device, in NVML (PCI bus) order; empty with `error` set when NVML is unavailable.
std::vector<DeviceInfo> devices(std::string* error = nullptr);
std::string driverVersion();
// The CUDA version the driver supports (13000 for 13.0), or 0 when unknown.
int cudaDriverVersion();

class Device {
public:
    static std::optional<Device> openByPciBusId(const std::string& busId);
    static std::optional<Device> openByIndex(int index);

    ClockSample sample() const;
    DeviceInfo info() const;

private:
    explicit Device(void* handle, int index)
        : m_handle(handle)
        , m_index(index) {}
    void* m_handle;
    int m_index;
};

// gpu_idle, applications_clocks, sw_power_cap, hw_slowdown, sync_boost, sw_thermal, hw_thermal,
// hw_power_brake, display_clocks; unknown bits as "0x...".
std::vector<std::string> reasonNames(unsigned long long reasons);
// Thermal or hardware slow-down: a sample taken under it is discarded. Power-capped clocks are the
// card's normal state under load and are not.
bool disqualifying(unsigned long long reasons);

json::Value toJson(const DeviceInfo& info);

} // namespace kev::nvml
