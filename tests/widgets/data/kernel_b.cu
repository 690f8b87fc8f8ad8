// Tiled FMA GEMM: each thread computes a 4x1 strip, 64x32 tiles staged through padded shared memory.
#include <kevolve/abi.h>
#include <cuda_fp16.h>

constexpr int kTile = 32;
constexpr int kRows = 4;

__global__ void gemm_kernel(const __half* A, const __half* B, float* C, int M, int N, int K) {
    __shared__ float tileA[kTile * kRows][kTile + 1];
    __shared__ float tileB[kTile][kTile + 1];
    const int row = blockIdx.y * kTile * kRows + threadIdx.y * kRows;
    const int col = blockIdx.x * kTile + threadIdx.x;
    float acc[kRows] = {};
    for (int k0 = 0; k0 < K; k0 += kTile) {
        for (int r = 0; r < kRows; ++r)
            tileA[threadIdx.y * kRows + r][threadIdx.x] =
                (row + r < M && k0 + threadIdx.x < K) ? __half2float(A[(row + r) * K + k0 + threadIdx.x]) : 0.0f;
        tileB[threadIdx.y][threadIdx.x] =
            (col < N && k0 + threadIdx.y < K) ? __half2float(B[(k0 + threadIdx.y) * N + col]) : 0.0f;
        __syncthreads();
        for (int k = 0; k < kTile; ++k) {
            const float b = tileB[k][threadIdx.x];
            for (int r = 0; r < kRows; ++r)
                acc[r] += tileA[threadIdx.y * kRows + r][k] * b;
        }
        __syncthreads();
    }
    for (int r = 0; r < kRows; ++r)
        if (row + r < M && col < N)
            C[(row + r) * N + col] = acc[r];
}

extern "C" int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    const dim3 block(kTile, kTile / kRows);
    const dim3 grid((KEVOLVE_GEMM_N(args) + kTile - 1) / kTile, (KEVOLVE_GEMM_M(args) + kTile * kRows - 1) / (kTile * kRows));
    gemm_kernel<<<grid, block, 0, stream>>>(static_cast<const __half*>(args->inputs[0].data),
                                            static_cast<const __half*>(args->inputs[1].data),
                                            static_cast<float*>(args->outputs[0].data),
                                            int(KEVOLVE_GEMM_M(args)), int(KEVOLVE_GEMM_N(args)),
                                            int(KEVOLVE_GEMM_K(args)));
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
