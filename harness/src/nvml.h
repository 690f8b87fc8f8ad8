#pragma once
// NVML, loaded at run time (libnvidia-ml.so.1 exists wherever the driver does; no header or stub
// library is needed to build). Device discovery and clocks for the supervisor, which never
// initialises CUDA, and per-sample clocks and throttle reasons for the GPU child.
#include <optional>
#include <string>
#include <vector>

namespace kev::nvml {

bool available(std::string* why = nullptr);

struct DeviceInfo {
    int index = 0;
    std::string name, uuid, pciBusId;
    unsigned long long memoryBytes = 0;
    int ccMajor = 0, ccMinor = 0;
    unsigned smMhz = 0, memMhz = 0, smMaxMhz = 0, memMaxMhz = 0;
    unsigned powerLimitW = 0, temperatureC = 0;
};

struct ClockSample {
    bool ok = false;
    unsigned smMhz = 0, memMhz = 0;
    unsigned long long reasons = 0;
    unsigned temperatureC = 0;
    unsigned powerMw = 0;
};

std::vector<DeviceInfo> devices(std::string* error = nullptr);
std::string driverVersion();

class Device {
public:
    static std::optional<Device> openByPciBusId(const std::string& busId);
    static std::optional<Device> openByIndex(int index);
    ClockSample sample() const;
    DeviceInfo info() const;

private:
    void* m_handle = nullptr;
    int m_index = 0;
};

// Names of the clock-event (throttle) reason bits.
std::vector<std::string> reasonNames(unsigned long long reasons);
// True only for thermal and hardware slowdowns: power-capped clocks are the card's normal state.
bool disqualifying(unsigned long long reasons);

} // namespace kev::nvml
