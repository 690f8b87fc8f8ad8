// expect: incorrect
// Issue 15, class 1: a correct GEMM that then uses one element of B as scratch space. The output
// is right, but an input changed: every call is checked, not only the first.
#include <kevolve/abi.h>
#include <cuda_fp16.h>

__global__ void gemmNaive(const __half* a, const __half* b, float* c, int64_t m, int64_t n,
                          int64_t k, int64_t lda, int64_t ldb, int64_t ldc) {
    const int64_t col = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    const int64_t row = blockIdx.y * static_cast<int64_t>(blockDim.y) + threadIdx.y;
    if (row >= m || col >= n) {
        return;
    }
    float acc = 0.0f;
    for (int64_t i = 0; i < k; ++i) {
        acc += __half2float(a[row * lda + i]) * __half2float(b[i * ldb + col]);
    }
    c[row * ldc + col] = acc;
}

__global__ void scribble(__half* b, int64_t last) {
    b[last] = __hadd(b[last], __float2half(1.0f));
}

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    const int64_t m = KEVOLVE_GEMM_M(args), n = KEVOLVE_GEMM_N(args), k = KEVOLVE_GEMM_K(args);
    const dim3 block(32, 8);
    const dim3 grid(static_cast<unsigned>((n + 31) / 32), static_cast<unsigned>((m + 7) / 8));
    __half* b = static_cast<__half*>(args->inputs[1].data);
    gemmNaive<<<grid, block, 0, stream>>>(static_cast<const __half*>(args->inputs[0].data), b,
                                          static_cast<float*>(args->outputs[0].data), m, n, k,
                                          KEVOLVE_GEMM_LDA(args), KEVOLVE_GEMM_LDB(args),
                                          KEVOLVE_GEMM_LDC(args));
    scribble<<<1, 1, 0, stream>>>(b, (k - 1) * KEVOLVE_GEMM_LDB(args) + n - 1);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
