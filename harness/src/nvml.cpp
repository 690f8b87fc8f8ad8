#include "nvml.h"

#include <dlfcn.h>

#include <cstring>
#include <mutex>

namespace kev::nvml {

namespace {

// The few NVML declarations the harness needs (stable C ABI of libnvidia-ml.so.1).
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t kSuccess = 0;
constexpr unsigned kClockGraphics = 0, kClockSm = 1, kClockMem = 2;
constexpr unsigned kTemperatureGpu = 0;

struct MemoryInfo {
    unsigned long long total, free, used;
};

struct Api {
    void* lib = nullptr;
    std::string why;
    nvmlReturn_t (*init)() = nullptr;
    nvmlReturn_t (*count)(unsigned*) = nullptr;
    nvmlReturn_t (*byIndex)(unsigned, nvmlDevice_t*) = nullptr;
    nvmlReturn_t (*byBus)(const char*, nvmlDevice_t*) = nullptr;
    nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned) = nullptr;
    nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned) = nullptr;
    nvmlReturn_t (*memory)(nvmlDevice_t, MemoryInfo*) = nullptr;
    nvmlReturn_t (*cc)(nvmlDevice_t, int*, int*) = nullptr;
    nvmlReturn_t (*clock)(nvmlDevice_t, unsigned, unsigned*) = nullptr;
    nvmlReturn_t (*maxClock)(nvmlDevice_t, unsigned, unsigned*) = nullptr;
    nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
    nvmlReturn_t (*power)(nvmlDevice_t, unsigned*) = nullptr;
    nvmlReturn_t (*powerLimit)(nvmlDevice_t, unsigned*) = nullptr;
    nvmlReturn_t (*temperature)(nvmlDevice_t, unsigned, unsigned*) = nullptr;
    nvmlReturn_t (*driver)(char*, unsigned) = nullptr;
    nvmlReturn_t (*pci)(nvmlDevice_t, void*) = nullptr;
};

template <typename F> void bind(void* lib, F& f, const char* name) {
    f = reinterpret_cast<F>(dlsym(lib, name));
}

const Api& api() {
    static Api a;
    static std::once_flag once;
    std::call_once(once, [] {
        a.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!a.lib) {
            const char* e = dlerror();
            a.why = std::string("libnvidia-ml.so.1 not found (no NVIDIA driver): ") + (e ? e : "");
            return;
        }
        bind(a.lib, a.init, "nvmlInit_v2");
        bind(a.lib, a.count, "nvmlDeviceGetCount_v2");
        bind(a.lib, a.byIndex, "nvmlDeviceGetHandleByIndex_v2");
        bind(a.lib, a.byBus, "nvmlDeviceGetHandleByPciBusId_v2");
        bind(a.lib, a.name, "nvmlDeviceGetName");
        bind(a.lib, a.uuid, "nvmlDeviceGetUUID");
        bind(a.lib, a.memory, "nvmlDeviceGetMemoryInfo");
        bind(a.lib, a.cc, "nvmlDeviceGetCudaComputeCapability");
        bind(a.lib, a.clock, "nvmlDeviceGetClockInfo");
        bind(a.lib, a.maxClock, "nvmlDeviceGetMaxClockInfo");
        bind(a.lib, a.reasons, "nvmlDeviceGetCurrentClocksEventReasons");
        if (!a.reasons) {
            bind(a.lib, a.reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
        }
        bind(a.lib, a.power, "nvmlDeviceGetPowerUsage");
        bind(a.lib, a.powerLimit, "nvmlDeviceGetEnforcedPowerLimit");
        bind(a.lib, a.temperature, "nvmlDeviceGetTemperature");
        bind(a.lib, a.driver, "nvmlSystemGetDriverVersion");
        if (!a.init || !a.count || !a.byIndex) {
            a.why = "libnvidia-ml.so.1 lacks nvmlInit_v2 / nvmlDeviceGetCount_v2";
            a.lib = nullptr;
            return;
        }
        const nvmlReturn_t rc = a.init();
        if (rc != kSuccess) {
            a.why = "nvmlInit_v2 failed with code " + std::to_string(rc);
            a.lib = nullptr;
        }
    });
    return a;
}

DeviceInfo describe(nvmlDevice_t h, int index) {
    const Api& a = api();
    DeviceInfo d;
    d.index = index;
    char buf[128];
    if (a.name && a.name(h, buf, sizeof buf) == kSuccess) {
        d.name = buf;
    }
    if (a.uuid && a.uuid(h, buf, sizeof buf) == kSuccess) {
        d.uuid = buf;
    }
    MemoryInfo mem{};
    if (a.memory && a.memory(h, &mem) == kSuccess) {
        d.memoryBytes = mem.total;
    }
    if (a.cc) {
        a.cc(h, &d.ccMajor, &d.ccMinor);
    }
    if (a.clock) {
        a.clock(h, kClockSm, &d.smMhz);
        a.clock(h, kClockMem, &d.memMhz);
    }
    if (a.maxClock) {
        a.maxClock(h, kClockSm, &d.smMaxMhz);
        a.maxClock(h, kClockMem, &d.memMaxMhz);
    }
    unsigned mw = 0;
    if (a.powerLimit && a.powerLimit(h, &mw) == kSuccess) {
        d.powerLimitW = mw / 1000;
    }
    if (a.temperature) {
        a.temperature(h, kTemperatureGpu, &d.temperatureC);
    }
    (void)kClockGraphics;
    return d;
}

} // namespace

bool available(std::string* why) {
    const Api& a = api();
    if (!a.lib && why) {
        *why = a.why;
    }
    return a.lib != nullptr;
}

std::vector<DeviceInfo> devices(std::string* error) {
    std::vector<DeviceInfo> out;
    const Api& a = api();
    if (!a.lib) {
        if (error) {
            *error = a.why;
        }
        return out;
    }
    unsigned n = 0;
    if (a.count(&n) != kSuccess) {
        if (error) {
            *error = "nvmlDeviceGetCount_v2 failed";
        }
        return out;
    }
    for (unsigned i = 0; i < n; ++i) {
        nvmlDevice_t h = nullptr;
        if (a.byIndex(i, &h) == kSuccess) {
            out.push_back(describe(h, static_cast<int>(i)));
        }
    }
    return out;
}

std::string driverVersion() {
    const Api& a = api();
    char buf[96] = {0};
    if (a.lib && a.driver && a.driver(buf, sizeof buf) == kSuccess) {
        return buf;
    }
    return {};
}

std::optional<Device> Device::openByPciBusId(const std::string& busId) {
    const Api& a = api();
    nvmlDevice_t h = nullptr;
    if (!a.lib || !a.byBus || a.byBus(busId.c_str(), &h) != kSuccess) {
        return std::nullopt;
    }
    Device d;
    d.m_handle = h;
    return d;
}

std::optional<Device> Device::openByIndex(int index) {
    const Api& a = api();
    nvmlDevice_t h = nullptr;
    if (!a.lib || a.byIndex(static_cast<unsigned>(index), &h) != kSuccess) {
        return std::nullopt;
    }
    Device d;
    d.m_handle = h;
    d.m_index = index;
    return d;
}

ClockSample Device::sample() const {
    const Api& a = api();
    ClockSample s;
    if (!a.lib || !a.clock) {
        return s;
    }
    s.ok = a.clock(m_handle, kClockSm, &s.smMhz) == kSuccess;
    a.clock(m_handle, kClockMem, &s.memMhz);
    if (a.reasons) {
        a.reasons(m_handle, &s.reasons);
    }
    if (a.temperature) {
        a.temperature(m_handle, kTemperatureGpu, &s.temperatureC);
    }
    if (a.power) {
        a.power(m_handle, &s.powerMw);
    }
    return s;
}

DeviceInfo Device::info() const {
    return describe(m_handle, m_index);
}

namespace {
struct ReasonBit {
    unsigned long long bit;
    const char* name;
    bool disqualifying;
};
// nvmlClocksEventReason* bit values.
constexpr ReasonBit kReasons[] = {
    {0x1ull, "gpu_idle", false},         {0x2ull, "applications_clocks", false},
    {0x4ull, "sw_power_cap", false},     {0x8ull, "hw_slowdown", true},
    {0x10ull, "sync_boost", false},      {0x20ull, "sw_thermal", true},
    {0x40ull, "hw_thermal", true},       {0x80ull, "hw_power_brake", true},
    {0x100ull, "display_clocks", false},
};
} // namespace

std::vector<std::string> reasonNames(unsigned long long reasons) {
    std::vector<std::string> out;
    for (const ReasonBit& r : kReasons) {
        if (reasons & r.bit) {
            out.emplace_back(r.name);
        }
    }
    return out;
}

bool disqualifying(unsigned long long reasons) {
    for (const ReasonBit& r : kReasons) {
        if (r.disqualifying && (reasons & r.bit)) {
            return true;
        }
    }
    return false;
}

} // namespace kev::nvml
