// expect: ok
// task: gemm_fp16_fp32_skinny.json
// Metrics corpus: a memory-bound kernel. The skinny GEMM (K = N = 8) streams A once (16 bytes a
// row, one vector load) and writes C once (32 bytes a row, two vector stores): DRAM throughput
// should be >= 80% of peak and the roofline memory-bound. Other shapes take a plain loop.
#include <kevolve/abi.h>
#include <cuda_fp16.h>

__global__ void skinny8(const uint4* __restrict__ a, const __half* __restrict__ b,
                        float4* __restrict__ c, int64_t m) {
    __shared__ float bs[8][8];
    if (threadIdx.x < 64) {
        bs[threadIdx.x / 8][threadIdx.x % 8] = __half2float(b[threadIdx.x]);
    }
    __syncthreads();
    const int64_t row = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (row >= m) {
        return;
    }
    const uint4 raw = a[row];
    const __half* h = reinterpret_cast<const __half*>(&raw);
    float out[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const float x = __half2float(h[i]);
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            out[j] += x * bs[i][j];
        }
    }
    c[2 * row] = make_float4(out[0], out[1], out[2], out[3]);
    c[2 * row + 1] = make_float4(out[4], out[5], out[6], out[7]);
}

__global__ void skinnyAny(const __half* a, const __half* b, float* c, int64_t m, int64_t n,
                          int64_t k, int64_t lda, int64_t ldb, int64_t ldc) {
    const int64_t row = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (row >= m) {
        return;
    }
    for (int64_t j = 0; j < n; ++j) {
        float acc = 0.0f;
        for (int64_t i = 0; i < k; ++i) {
            acc += __half2float(a[row * lda + i]) * __half2float(b[i * ldb + j]);
        }
        c[row * ldc + j] = acc;
    }
}

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    const int64_t m = KEVOLVE_GEMM_M(args), n = KEVOLVE_GEMM_N(args), k = KEVOLVE_GEMM_K(args);
    const unsigned blocks = static_cast<unsigned>((m + 255) / 256);
    const auto* a = static_cast<const __half*>(args->inputs[0].data);
    const auto* b = static_cast<const __half*>(args->inputs[1].data);
    auto* c = static_cast<float*>(args->outputs[0].data);
    if (n == 8 && k == 8 && KEVOLVE_GEMM_LDA(args) == 8 && KEVOLVE_GEMM_LDB(args) == 8 &&
        KEVOLVE_GEMM_LDC(args) == 8) {
        skinny8<<<blocks, 256, 0, stream>>>(reinterpret_cast<const uint4*>(a), b,
                                            reinterpret_cast<float4*>(c), m);
    } else {
        skinnyAny<<<blocks, 256, 0, stream>>>(a, b, c, m, n, k, KEVOLVE_GEMM_LDA(args),
                                              KEVOLVE_GEMM_LDB(args), KEVOLVE_GEMM_LDC(args));
    }
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
