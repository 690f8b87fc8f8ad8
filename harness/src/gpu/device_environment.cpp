#include "device_environment.h"

#include <cublas_v2.h>

#include <cstdio>

namespace kev::gpu {

json::Value deviceEnvironment(int device, const cudaDeviceProp& props, const std::string& pciBusId,
                              const nvml::Device* nvmlDevice) {
    json::Value env = json::Value::object();
    json::Value gpu = json::Value::object();
    gpu["index"] = device;
    gpu["name"] = props.name;
    char cc[16];
    std::snprintf(cc, sizeof cc, "%d.%d", props.major, props.minor);
    gpu["cc"] = cc;
    gpu["sm_count"] = props.multiProcessorCount;
    gpu["l2_bytes"] = props.l2CacheSize;
    gpu["memory_bytes"] = static_cast<uint64_t>(props.totalGlobalMem);
    gpu["pci_bus_id"] = pciBusId;
    gpu["smem_per_block_optin"] = static_cast<uint64_t>(props.sharedMemPerBlockOptin);
    if (nvmlDevice) {
        const nvml::DeviceInfo info = nvmlDevice->info();
        gpu["uuid"] = info.uuid;
        json::Value clocks = json::Value::object();
        clocks["sm"] = info.smMhz;
        clocks["mem"] = info.memMhz;
        clocks["sm_max"] = info.smMaxMhz;
        clocks["mem_max"] = info.memMaxMhz;
        gpu["clocks_mhz"] = clocks;
        gpu["power_limit_w"] = info.powerLimitW;
        gpu["temperature_c"] = info.temperatureC;
    }
    env["gpu"] = gpu;
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    env["cuda_driver_version"] = driver;
    env["cuda_runtime_version"] = runtime;
    int major = 0, minor = 0, patch = 0;
    cublasGetProperty(MAJOR_VERSION, &major);
    cublasGetProperty(MINOR_VERSION, &minor);
    cublasGetProperty(PATCH_LEVEL, &patch);
    env["cublas_version"] = major * 10000 + minor * 100 + patch;
    env["driver_version"] = nvml::driverVersion();
    return env;
}

} // namespace kev::gpu
