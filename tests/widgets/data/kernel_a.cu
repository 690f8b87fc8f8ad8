// Tiled FMA GEMM: one thread per output element, 32x32 tiles staged through shared memory.
#include <kevolve/abi.h>
#include <cuda_fp16.h>

constexpr int kTile = 32;

__global__ void gemm_kernel(const __half* A, const __half* B, float* C, int M, int N, int K) {
    __shared__ float tileA[kTile][kTile];
    __shared__ float tileB[kTile][kTile];
    const int row = blockIdx.y * kTile + threadIdx.y;
    const int col = blockIdx.x * kTile + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += kTile) {
        tileA[threadIdx.y][threadIdx.x] =
            (row < M && k0 + threadIdx.x < K) ? __half2float(A[row * K + k0 + threadIdx.x]) : 0.0f;
        tileB[threadIdx.y][threadIdx.x] =
            (col < N && k0 + threadIdx.y < K) ? __half2float(B[(k0 + threadIdx.y) * N + col]) : 0.0f;
        __syncthreads();
        for (int k = 0; k < kTile; ++k)
            acc += tileA[threadIdx.y][k] * tileB[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N)
        C[row * N + col] = acc;
}

extern "C" int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    const dim3 block(kTile, kTile);
    const dim3 grid((KEVOLVE_GEMM_N(args) + kTile - 1) / kTile, (KEVOLVE_GEMM_M(args) + kTile - 1) / kTile);
    gemm_kernel<<<grid, block, 0, stream>>>(static_cast<const __half*>(args->inputs[0].data),
                                            static_cast<const __half*>(args->inputs[1].data),
                                            static_cast<float*>(args->outputs[0].data),
                                            int(KEVOLVE_GEMM_M(args)), int(KEVOLVE_GEMM_N(args)),
                                            int(KEVOLVE_GEMM_K(args)));
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
