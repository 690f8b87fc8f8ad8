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

// The cached peaks of this device and driver, or measured and cached on a miss. `note` says
// where they came from and, when the cache could not be written, why.
roofline::Peaks devicePeaks(const cudaDeviceProp& props, cudaStream_t stream,
                            const std::string& gpuUuid, const std::string& driverVersion,
                            std::string* note);

} // namespace kev::gpu
