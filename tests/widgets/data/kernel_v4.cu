// Tiled FMA GEMM with vector loads (does not compile: see report_compile_error.json).
#include <kevolve/abi.h>
#include <cuda_fp16.h>

constexpr int kTile = 32;

__global__ void gemm_kernel(const __half* A, const __half* B, float* C, int M, int N, int K) {
    __shared__ float tileB[kTile][kTile];
    const int row = blockIdx.y * kTile + threadIdx.y;
    const int col = blockIdx.x * kTile + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += kTile) {
        // The A tile was renamed but this store was not.
        tileA[threadIdx.y][threadIdx.x] = A[row * K + k0 + threadIdx.x];
        tileB[threadIdx.y][threadIdx.x] = __half2float(B[(k0 + threadIdx.y) * N + col]);
        __syncthreads();
        for (int k = 0; k < kTile; ++k)
            acc += tileB[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N)
        C[row * N + col] = acc;
}

__global__ void convert_kernel(const __half* A, float* out, int count) {
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= count)
        return;
    int lane = threadIdx.x % 32;
    // Vector load of a half array into float4 is the second error.
    if (idx * 4 < count) {
        float4 v = A[idx];
        out[idx] = v.x;
    }
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
