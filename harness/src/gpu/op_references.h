#pragma once
// The references of the registry ops beyond GEMM: cuBLAS for GEMV (cublasGemmEx with n = 1,
// CUBLAS_COMPUTE_32F; the handle's pedantic math keeps f32 off TF32), and straightforward harness
// kernels with fp32 arithmetic for the rest: softmax (one block per row, max-subtracted), layernorm
// (one block per row, two passes), rmsnorm (one block per row), reduce (sum or max per row) and
// elementwise (GELU in its erf form, SiLU). Correct on every edge case of the ops (NaN and -inf
// semantics of abi.h), not tuned.
#include <kevolve/abi.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace kev::gpu {

// Enqueues the reference for `args` (data pointers set) on `stream`; throws CudaFailure.
void launchOpReference(const KevolveArgs& args, cublasHandle_t cublas, cudaStream_t stream);

} // namespace kev::gpu
