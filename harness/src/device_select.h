// Which physical GPU a `serve --device N` measures on, told without initialising CUDA: CUDA's
// device N under $CUDA_VISIBLE_DEVICES (indices or GPU-UUID prefixes, as Slurm and users set it),
// matched against NVML's devices. The hello reports it (device_uuid) so that a client can refuse
// two workers on one GPU, whose timings would slow each other.
#pragma once

#include "json.h"

#include <string>

namespace kev {

// The UUID of CUDA device `cudaIndex` among `nvmlDevices` (probeJson()'s "devices": objects with
// "index" and "uuid"), or empty when it cannot be told for sure: no such device, a MIG instance,
// or an order CUDA and NVML may not share. `visible` is $CUDA_VISIBLE_DEVICES (null when unset),
// `order` $CUDA_DEVICE_ORDER (null when unset).
std::string servedDeviceUuid(const json::Value& nvmlDevices, int cudaIndex, const char* visible,
                             const char* order);

} // namespace kev
