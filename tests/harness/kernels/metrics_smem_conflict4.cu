// expect: ok
// task: gemm_fp16_fp32_nonsquare.json
// Metrics corpus: every shared-memory load and store is a 4-way bank conflict. B's tile is kept
// with a stride of 4 floats between the lanes of a warp, so lanes t, t+8, t+16, t+24 hit the same
// bank: the Range Profiler and Nsight Compute should both show about 4 wavefronts per shared
// instruction (metrics_smem_padded.cu is the conflict-free twin).
#include <kevolve/abi.h>
#include <cuda_fp16.h>

constexpr int kTileK = 32;
constexpr int kRows = 8;
constexpr int kStride = 128; // floats per shared row: 32 lanes x 4

__device__ __forceinline__ int slot(int lane) {
    return lane * 4;
}

__global__ void gemmConflict4(const __half* a, const __half* b, float* c, int64_t m, int64_t n,
                              int64_t k, int64_t lda, int64_t ldb, int64_t ldc) {
    __shared__ float bs[kTileK][kStride];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t row = blockIdx.y * static_cast<int64_t>(kRows) + ty;
    const int64_t col = blockIdx.x * 32ll + tx;
    float acc = 0.0f;
    for (int64_t k0 = 0; k0 < k; k0 += kTileK) {
        for (int r = ty; r < kTileK; r += kRows) {
            bs[r][slot(tx)] =
                (k0 + r < k && col < n) ? __half2float(b[(k0 + r) * ldb + col]) : 0.0f;
        }
        __syncthreads();
        if (row < m) {
            const int steps = static_cast<int>(k - k0 < kTileK ? k - k0 : kTileK);
            for (int i = 0; i < steps; ++i) {
                acc += __half2float(a[row * lda + k0 + i]) * bs[i][slot(tx)];
            }
        }
        __syncthreads();
    }
    if (row < m && col < n) {
        c[row * ldc + col] = acc;
    }
}

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    const int64_t m = KEVOLVE_GEMM_M(args), n = KEVOLVE_GEMM_N(args), k = KEVOLVE_GEMM_K(args);
    const dim3 block(32, kRows);
    const dim3 grid(static_cast<unsigned>((n + 31) / 32),
                    static_cast<unsigned>((m + kRows - 1) / kRows));
    gemmConflict4<<<grid, block, 0, stream>>>(static_cast<const __half*>(args->inputs[0].data),
                                              static_cast<const __half*>(args->inputs[1].data),
                                              static_cast<float*>(args->outputs[0].data), m, n, k,
                                              KEVOLVE_GEMM_LDA(args), KEVOLVE_GEMM_LDB(args),
                                              KEVOLVE_GEMM_LDC(args));
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
