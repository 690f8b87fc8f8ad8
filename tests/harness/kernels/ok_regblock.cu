// expect: ok
// 2-D register blocking: a 128x128 block tile, K staged 16 at a time through shared memory, each
// of 256 threads accumulating an 8x8 sub-tile in registers.
#include <kevolve/abi.h>
#include <cuda_fp16.h>

constexpr int BM = 128, BN = 128, BK = 16, TM = 8, TN = 8, THREADS = 256;

__global__ void __launch_bounds__(THREADS)
    gemmRegBlock(const __half* a, const __half* b, float* c, int64_t m, int64_t n, int64_t k,
                 int64_t lda, int64_t ldb, int64_t ldc) {
    __shared__ float as[BK][BM + 4]; // transposed: as[kk][row]
    __shared__ float bs[BK][BN + 4];
    const int tid = threadIdx.x;
    const int tRow = tid / (BN / TN); // 0..15
    const int tCol = tid % (BN / TN); // 0..15
    const int64_t row0 = blockIdx.y * static_cast<int64_t>(BM);
    const int64_t col0 = blockIdx.x * static_cast<int64_t>(BN);
    float acc[TM][TN] = {};
    for (int64_t k0 = 0; k0 < k; k0 += BK) {
        for (int i = tid; i < BM * BK; i += THREADS) {
            const int r = i / BK, kk = i % BK;
            const int64_t gr = row0 + r, gk = k0 + kk;
            as[kk][r] = (gr < m && gk < k) ? __half2float(a[gr * lda + gk]) : 0.0f;
        }
        for (int i = tid; i < BK * BN; i += THREADS) {
            const int kk = i / BN, cc = i % BN;
            const int64_t gk = k0 + kk, gc = col0 + cc;
            bs[kk][cc] = (gk < k && gc < n) ? __half2float(b[gk * ldb + gc]) : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            float ra[TM], rb[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i) {
                ra[i] = as[kk][tRow * TM + i];
            }
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                rb[j] = bs[kk][tCol * TN + j];
            }
#pragma unroll
            for (int i = 0; i < TM; ++i) {
#pragma unroll
                for (int j = 0; j < TN; ++j) {
                    acc[i][j] += ra[i] * rb[j];
                }
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int64_t gr = row0 + tRow * TM + i;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int64_t gc = col0 + tCol * TN + j;
            if (gr < m && gc < n) {
                c[gr * ldc + gc] = acc[i][j];
            }
        }
    }
}

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    const int64_t m = KEVOLVE_GEMM_M(args), n = KEVOLVE_GEMM_N(args), k = KEVOLVE_GEMM_K(args);
    const dim3 grid(static_cast<unsigned>((n + BN - 1) / BN),
                    static_cast<unsigned>((m + BM - 1) / BM));
    gemmRegBlock<<<grid, THREADS, 0, stream>>>(static_cast<const __half*>(args->inputs[0].data),
                                               static_cast<const __half*>(args->inputs[1].data),
                                               static_cast<float*>(args->outputs[0].data), m, n, k,
                                               KEVOLVE_GEMM_LDA(args), KEVOLVE_GEMM_LDB(args),
                                               KEVOLVE_GEMM_LDC(args));
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
