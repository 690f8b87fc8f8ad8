#pragma once
// The report's `environment` as the GPU child sees it: the device's properties, NVML's clocks,
// power and temperature, and the driver, runtime and cuBLAS versions.
#include "json.h"
#include "nvml.h"

#include <cuda_runtime.h>

#include <string>

namespace kev::gpu {

json::Value deviceEnvironment(int device, const cudaDeviceProp& props, const std::string& pciBusId,
                              const nvml::Device* nvmlDevice);

} // namespace kev::gpu
