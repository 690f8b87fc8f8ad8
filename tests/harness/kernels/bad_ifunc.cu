// expect: rule_violation
// Class 5 (load-time code): an IFUNC symbol whose resolver the loader runs while relocating the
// library (an IRELATIVE relocation); the lint refuses both.
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

static int pickedImpl() {
    return 0;
}
extern "C" {
static void* resolvePicked() {
    return reinterpret_cast<void*>(&pickedImpl);
}
}
extern "C" int picked() __attribute__((ifunc("resolvePicked")));

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    const int64_t m = KEVOLVE_GEMM_M(args), n = KEVOLVE_GEMM_N(args), k = KEVOLVE_GEMM_K(args);
    const dim3 block(32, 8);
    const dim3 grid(static_cast<unsigned>((n + 31) / 32), static_cast<unsigned>((m + 7) / 8));
    gemmNaive<<<grid, block, 0, stream>>>(static_cast<const __half*>(args->inputs[0].data),
                                          static_cast<const __half*>(args->inputs[1].data),
                                          static_cast<float*>(args->outputs[0].data), m, n, k,
                                          KEVOLVE_GEMM_LDA(args), KEVOLVE_GEMM_LDB(args),
                                          KEVOLVE_GEMM_LDC(args));
    return cudaGetLastError() == cudaSuccess ? picked() : 1;
}
