// expect: ok
// Shared-memory tiling: 32x32 tiles of A and B staged through shared memory, fp32 accumulation.
#include <kevolve/abi.h>
#include <cuda_fp16.h>

constexpr int kTile = 32;

__global__ void gemmTiled(const __half* a, const __half* b, float* c, int64_t m, int64_t n,
                          int64_t k, int64_t lda, int64_t ldb, int64_t ldc) {
    __shared__ float as[kTile][kTile + 1];
    __shared__ float bs[kTile][kTile + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t row = blockIdx.y * static_cast<int64_t>(kTile) + ty;
    const int64_t col = blockIdx.x * static_cast<int64_t>(kTile) + tx;
    float acc = 0.0f;
    for (int64_t k0 = 0; k0 < k; k0 += kTile) {
        as[ty][tx] = (row < m && k0 + tx < k) ? __half2float(a[row * lda + k0 + tx]) : 0.0f;
        bs[ty][tx] = (k0 + ty < k && col < n) ? __half2float(b[(k0 + ty) * ldb + col]) : 0.0f;
        __syncthreads();
#pragma unroll
        for (int i = 0; i < kTile; ++i) {
            acc += as[ty][i] * bs[i][tx];
        }
        __syncthreads();
    }
    if (row < m && col < n) {
        c[row * ldc + col] = acc;
    }
}

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    const int64_t m = KEVOLVE_GEMM_M(args), n = KEVOLVE_GEMM_N(args), k = KEVOLVE_GEMM_K(args);
    const dim3 block(kTile, kTile);
    const dim3 grid(static_cast<unsigned>((n + kTile - 1) / kTile),
                    static_cast<unsigned>((m + kTile - 1) / kTile));
    gemmTiled<<<grid, block, 0, stream>>>(static_cast<const __half*>(args->inputs[0].data),
                                          static_cast<const __half*>(args->inputs[1].data),
                                          static_cast<float*>(args->outputs[0].data), m, n, k,
                                          KEVOLVE_GEMM_LDA(args), KEVOLVE_GEMM_LDB(args),
                                          KEVOLVE_GEMM_LDC(args));
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
