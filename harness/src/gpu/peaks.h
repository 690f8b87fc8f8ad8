#pragma once
// The device's roofline peaks, measured once per device and driver and cached
// (roofline::cacheDir()): fp16 and bf16 tensor throughput of a large cuBLAS GEMM with fp32
// accumulation, fp32 FMA throughput of an FMA-bound kernel, DRAM bandwidth of a >= 4 GiB
// device-to-device copy counting read and write. Each figure is the best of a few timed runs
// after a warm-up.
#include "roofline.h"

#include <cuda_runtime.h>

#include <string>

namespace kev::gpu {

// Measures now (a few seconds); throws CudaFailure on a CUDA or cuBLAS error.
roofline::Peaks measurePeaks(const cudaDeviceProp& props, cudaStream_t stream);

// What the current device can do at most (its SMs, maximum clocks and memory bus), to bound a
// cached or measured peak (roofline::implausible).
roofline::DeviceLimits deviceLimits(const cudaDeviceProp& props);

// The cached peaks of this device and driver when they are plausible, or measured on a miss (or
// an implausible cache) and, with `store`, cached when plausible. Trusted code only: call it
// before any candidate is loaded, or in a process that never loads one (the verifier); with
// `store` false the caller hands fresh peaks (source "measured") to the supervisor, which stores
// them (roofline::storePlausible). `note` says where they came from and, when the cache could not
// be written, why.
roofline::Peaks devicePeaks(const cudaDeviceProp& props, cudaStream_t stream,
                            const std::string& gpuUuid, const std::string& driverVersion,
                            std::string* note, bool store = true);

} // namespace kev::gpu
