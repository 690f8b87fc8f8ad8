// expect: incorrect
// Issue 15, class 1: overwrites A and B with zeros and writes C = 0, which is "correct" for the
// inputs it leaves behind. The verifier compares every input with its pristine copy after every
// call: "the candidate changed its inputs".
#include <kevolve/abi.h>
#include <cuda_fp16.h>

__global__ void zeroAll(__half* a, __half* b, float* c, int64_t mk, int64_t kn, int64_t mn) {
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
         i < mk || i < kn || i < mn; i += stride) {
        if (i < mk) {
            a[i] = __float2half(0.0f);
        }
        if (i < kn) {
            b[i] = __float2half(0.0f);
        }
        if (i < mn) {
            c[i] = 0.0f;
        }
    }
}

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    const int64_t m = KEVOLVE_GEMM_M(args), k = KEVOLVE_GEMM_K(args);
    zeroAll<<<1024, 256, 0, stream>>>(
        static_cast<__half*>(args->inputs[0].data), static_cast<__half*>(args->inputs[1].data),
        static_cast<float*>(args->outputs[0].data), m * KEVOLVE_GEMM_LDA(args),
        k * KEVOLVE_GEMM_LDB(args), m * KEVOLVE_GEMM_LDC(args));
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
