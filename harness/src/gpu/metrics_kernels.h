#pragma once
// Device work of the metrics side of the harness: the FMA-bound kernel that measures the fp32
// peak, and the empty marker kernel that brackets kevolve_launch in an audited sample.
#include <cuda_runtime.h>

namespace kev::gpu {

// Enqueues an FMA-bound kernel: `blocks` blocks of 256 threads, each thread running 8 independent
// chains of `iterations` fused multiply-adds. Returns the flops it performs through `flops`.
cudaError_t launchFmaPeak(float* out, int blocks, int iterations, cudaStream_t stream,
                          double* flops);

// The marker kernel and its name as CUPTI reports it (unmangled: extern "C").
cudaError_t launchAuditMarker(cudaStream_t stream);
const char* auditMarkerName();

} // namespace kev::gpu
