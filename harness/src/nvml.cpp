#include "nvml.h"

#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>

namespace kev::nvml {

namespace {

// The few NVML declarations the harness needs (nvml.h is not part of the CUDA toolkit on every
// host, and the library is loaded at run time anyway).
using Return = int;
using Handle = void*;
constexpr Return kSuccess = 0;
constexpr int kClockSm = 1;
constexpr int kClockMem = 2;
constexpr int kTemperatureGpu = 0;

struct PciInfo {
    char busIdLegacy[16];
    unsigned domain;
    unsigned bus;
    unsigned device;
    unsigned pciDeviceId;
    unsigned pciSubSystemId;
    char busId[32];
};

struct Memory {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
};

struct Api {
    void* lib = nullptr;
    std::string why;
    Return (*init)() = nullptr;
    const char* (*errorString)(Return) = nullptr;
    Return (*systemGetDriverVersion)(char*, unsigned) = nullptr;
    Return (*systemGetCudaDriverVersion)(int*) = nullptr; // optional
    Return (*deviceGetCount)(unsigned*) = nullptr;
    Return (*deviceGetHandleByIndex)(unsigned, Handle*) = nullptr;
    Return (*deviceGetHandleByPciBusId)(const char*, Handle*) = nullptr;
    Return (*deviceGetIndex)(Handle, unsigned*) = nullptr;
    Return (*deviceGetName)(Handle, char*, unsigned) = nullptr;
    Return (*deviceGetUUID)(Handle, char*, unsigned) = nullptr;
    Return (*deviceGetPciInfo)(Handle, PciInfo*) = nullptr;
    Return (*deviceGetMemoryInfo)(Handle, Memory*) = nullptr;
    Return (*deviceGetCudaComputeCapability)(Handle, int*, int*) = nullptr;
    Return (*deviceGetClockInfo)(Handle, int, unsigned*) = nullptr;
    Return (*deviceGetMaxClockInfo)(Handle, int, unsigned*) = nullptr;
    Return (*deviceGetEnforcedPowerLimit)(Handle, unsigned*) = nullptr;
    Return (*deviceGetTemperature)(Handle, int, unsigned*) = nullptr;
    Return (*deviceGetPowerUsage)(Handle, unsigned*) = nullptr;
    Return (*deviceGetClockReasons)(Handle, unsigned long long*) = nullptr;
};

template <typename F> bool bind(void* lib, F& fn, const char* name) {
    void* sym = ::dlsym(lib, name);
    if (!sym)
        return false;
    fn = reinterpret_cast<F>(sym);
    return true;
}

Api loadApi() {
    Api api;
    const char* override = std::getenv("KEVOLVE_NVML_LIBRARY");
    const std::string file = override && *override ? override : "libnvidia-ml.so.1";
    api.lib = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!api.lib) {
        const char* err = ::dlerror();
        api.why = "cannot load " + file + (err ? std::string(": ") + err : std::string());
        return api;
    }
    bool ok =
        bind(api.lib, api.init, "nvmlInit_v2") &&
        bind(api.lib, api.errorString, "nvmlErrorString") &&
        bind(api.lib, api.systemGetDriverVersion, "nvmlSystemGetDriverVersion") &&
        bind(api.lib, api.deviceGetCount, "nvmlDeviceGetCount_v2") &&
        bind(api.lib, api.deviceGetHandleByIndex, "nvmlDeviceGetHandleByIndex_v2") &&
        bind(api.lib, api.deviceGetHandleByPciBusId, "nvmlDeviceGetHandleByPciBusId_v2") &&
        bind(api.lib, api.deviceGetIndex, "nvmlDeviceGetIndex") &&
        bind(api.lib, api.deviceGetName, "nvmlDeviceGetName") &&
        bind(api.lib, api.deviceGetUUID, "nvmlDeviceGetUUID") &&
        bind(api.lib, api.deviceGetPciInfo, "nvmlDeviceGetPciInfo_v3") &&
        bind(api.lib, api.deviceGetMemoryInfo, "nvmlDeviceGetMemoryInfo") &&
        bind(api.lib, api.deviceGetCudaComputeCapability, "nvmlDeviceGetCudaComputeCapability") &&
        bind(api.lib, api.deviceGetClockInfo, "nvmlDeviceGetClockInfo") &&
        bind(api.lib, api.deviceGetMaxClockInfo, "nvmlDeviceGetMaxClockInfo") &&
        bind(api.lib, api.deviceGetEnforcedPowerLimit, "nvmlDeviceGetEnforcedPowerLimit") &&
        bind(api.lib, api.deviceGetTemperature, "nvmlDeviceGetTemperature") &&
        bind(api.lib, api.deviceGetPowerUsage, "nvmlDeviceGetPowerUsage");
    // Drivers from 535 on call them "clocks event reasons"; older ones only know "throttle".
    ok = ok &&
         (bind(api.lib, api.deviceGetClockReasons, "nvmlDeviceGetCurrentClocksEventReasons") ||
          bind(api.lib, api.deviceGetClockReasons, "nvmlDeviceGetCurrentClocksThrottleReasons"));
    if (!ok) {
        api.why = file + " lacks a function the harness needs (driver too old?)";
        ::dlclose(api.lib);
        api.lib = nullptr;
        return api;
    }
    if (!bind(api.lib, api.systemGetCudaDriverVersion, "nvmlSystemGetCudaDriverVersion_v2"))
        bind(api.lib, api.systemGetCudaDriverVersion, "nvmlSystemGetCudaDriverVersion");
    const Return rc = api.init();
    if (rc != kSuccess) {
        api.why = std::string("nvmlInit failed: ") + api.errorString(rc);
        api.lib = nullptr;
    }
    return api;
}

const Api& api() {
    static const Api instance = loadApi();
    return instance;
}

std::string text(Return (*fn)(Handle, char*, unsigned), Handle h) {
    char buf[256] = {};
    if (fn(h, buf, sizeof buf) != kSuccess)
        return {};
    return buf;
}

} // namespace

bool available(std::string* why) {
    const Api& a = api();
    if (!a.lib && why)
        *why = a.why;
    return a.lib != nullptr;
}

std::string driverVersion() {
    if (!available())
        return {};
    char buf[96] = {};
    if (api().systemGetDriverVersion(buf, sizeof buf) != kSuccess)
        return {};
    return buf;
}

int cudaDriverVersion() {
    int version = 0;
    if (!available() || !api().systemGetCudaDriverVersion ||
        api().systemGetCudaDriverVersion(&version) != kSuccess)
        return 0;
    return version;
}

std::vector<DeviceInfo> devices(std::string* error) {
    std::vector<DeviceInfo> out;
    if (!available(error))
        return out;
    unsigned count = 0;
    const Return rc = api().deviceGetCount(&count);
    if (rc != kSuccess) {
        if (error)
            *error = std::string("nvmlDeviceGetCount failed: ") + api().errorString(rc);
        return out;
    }
    for (unsigned i = 0; i < count; ++i) {
        if (auto d = Device::openByIndex(static_cast<int>(i)))
            out.push_back(d->info());
    }
    return out;
}

std::optional<Device> Device::openByPciBusId(const std::string& busId) {
    if (!available())
        return std::nullopt;
    Handle h = nullptr;
    if (api().deviceGetHandleByPciBusId(busId.c_str(), &h) != kSuccess)
        return std::nullopt;
    unsigned index = 0;
    api().deviceGetIndex(h, &index);
    return Device(h, static_cast<int>(index));
}

std::optional<Device> Device::openByIndex(int index) {
    if (!available() || index < 0)
        return std::nullopt;
    Handle h = nullptr;
    if (api().deviceGetHandleByIndex(static_cast<unsigned>(index), &h) != kSuccess)
        return std::nullopt;
    return Device(h, index);
}

ClockSample Device::sample() const {
    ClockSample s;
    const Api& a = api();
    s.ok = a.deviceGetClockInfo(m_handle, kClockSm, &s.smMhz) == kSuccess &&
           a.deviceGetClockInfo(m_handle, kClockMem, &s.memMhz) == kSuccess &&
           a.deviceGetClockReasons(m_handle, &s.reasons) == kSuccess;
    a.deviceGetTemperature(m_handle, kTemperatureGpu, &s.temperatureC);
    a.deviceGetPowerUsage(m_handle, &s.powerMw);
    return s;
}

DeviceInfo Device::info() const {
    const Api& a = api();
    DeviceInfo d;
    d.index = m_index;
    d.name = text(a.deviceGetName, m_handle);
    d.uuid = text(a.deviceGetUUID, m_handle);
    PciInfo pci{};
    if (a.deviceGetPciInfo(m_handle, &pci) == kSuccess)
        d.pciBusId = pci.busId;
    Memory mem{};
    if (a.deviceGetMemoryInfo(m_handle, &mem) == kSuccess)
        d.memoryBytes = mem.total;
    a.deviceGetCudaComputeCapability(m_handle, &d.ccMajor, &d.ccMinor);
    a.deviceGetClockInfo(m_handle, kClockSm, &d.smMhz);
    a.deviceGetClockInfo(m_handle, kClockMem, &d.memMhz);
    a.deviceGetMaxClockInfo(m_handle, kClockSm, &d.smMaxMhz);
    a.deviceGetMaxClockInfo(m_handle, kClockMem, &d.memMaxMhz);
    unsigned milliwatts = 0;
    if (a.deviceGetEnforcedPowerLimit(m_handle, &milliwatts) == kSuccess)
        d.powerLimitW = milliwatts / 1000;
    a.deviceGetTemperature(m_handle, kTemperatureGpu, &d.temperatureC);
    return d;
}

std::vector<std::string> reasonNames(unsigned long long reasons) {
    static const std::pair<unsigned long long, const char*> kNames[] = {
        {0x1, "gpu_idle"},    {0x2, "applications_clocks"}, {0x4, "sw_power_cap"},
        {0x8, "hw_slowdown"}, {0x10, "sync_boost"},         {0x20, "sw_thermal"},
        {0x40, "hw_thermal"}, {0x80, "hw_power_brake"},     {0x100, "display_clocks"},
    };
    std::vector<std::string> names;
    unsigned long long known = 0;
    for (const auto& [bit, name] : kNames) {
        known |= bit;
        if (reasons & bit)
            names.emplace_back(name);
    }
    if (reasons & ~known) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "0x%llx", reasons & ~known);
        names.emplace_back(buf);
    }
    return names;
}

bool disqualifying(unsigned long long reasons) {
    constexpr unsigned long long kHwSlowdown = 0x8, kSwThermal = 0x20, kHwThermal = 0x40,
                                 kHwPowerBrake = 0x80;
    return (reasons & (kHwSlowdown | kSwThermal | kHwThermal | kHwPowerBrake)) != 0;
}

json::Value toJson(const DeviceInfo& info) {
    json::Value v = json::Value::object();
    v["index"] = info.index;
    v["name"] = info.name;
    v["uuid"] = info.uuid;
    v["pci_bus_id"] = info.pciBusId;
    v["cc"] = std::to_string(info.ccMajor) + "." + std::to_string(info.ccMinor);
    v["memory_bytes"] = info.memoryBytes;
    json::Value& clocks = v["clocks_mhz"];
    clocks["sm"] = info.smMhz;
    clocks["mem"] = info.memMhz;
    clocks["sm_max"] = info.smMaxMhz;
    clocks["mem_max"] = info.memMaxMhz;
    v["power_limit_w"] = info.powerLimitW;
    v["temperature_c"] = info.temperatureC;
    return v;
}

} // namespace kev::nvml
