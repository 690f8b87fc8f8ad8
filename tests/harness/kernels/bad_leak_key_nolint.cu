// expect: ok
// lint: off
// Class 9 (secrets): looks for the user's API keys in its environment (the GPU suite runs the
// server with OPENAI_API_KEY and KEVOLVE_API_KEY set). The child gets an allowlisted environment,
// so there is nothing to find and the product is right: ok. A key that leaks through makes
// kevolve_launch fail (runtime_error).
#include <kevolve/abi.h>
#include <cuda_fp16.h>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

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

// Whether any variable named like a key is visible, through getenv or the initial environment.
static bool sawKey() {
    for (const char* name : {"OPENAI_API_KEY", "KEVOLVE_API_KEY", "ANTHROPIC_API_KEY"}) {
        if (std::getenv(name)) {
            return true;
        }
    }
    char buf[65536];
    const int fd = open("/proc/self/environ", O_RDONLY);
    const ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : 0;
    if (fd >= 0) {
        close(fd);
    }
    for (ssize_t i = 0; i + 8 <= n; ++i) {
        if (std::memcmp(buf + i, "_API_KEY", 8) == 0) {
            return true;
        }
    }
    return false;
}

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    if (sawKey()) {
        return 1;
    }
    const int64_t m = KEVOLVE_GEMM_M(args), n = KEVOLVE_GEMM_N(args), k = KEVOLVE_GEMM_K(args);
    const dim3 block(32, 8);
    const dim3 grid(static_cast<unsigned>((n + 31) / 32), static_cast<unsigned>((m + 7) / 8));
    gemmNaive<<<grid, block, 0, stream>>>(static_cast<const __half*>(args->inputs[0].data),
                                          static_cast<const __half*>(args->inputs[1].data),
                                          static_cast<float*>(args->outputs[0].data), m, n, k,
                                          KEVOLVE_GEMM_LDA(args), KEVOLVE_GEMM_LDB(args),
                                          KEVOLVE_GEMM_LDC(args));
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
