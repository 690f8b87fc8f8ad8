// expect: rule_violation
// lint: off
// Issue 15, class 4: host code finds the runner's pipe to the verifier (a write-only FIFO above
// the result descriptor) and answers for the runner with a timed sample of 0.1 us, then computes
// a correct GEMM. The verifier reads exactly one reply of the expected kind per command: the
// forged line (a `sample` where `done` is due, or a second line) is a rule violation.
#include <kevolve/abi.h>
#include <cuda_fp16.h>

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
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

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    for (int fd = 4; fd < 256; ++fd) {
        struct stat st;
        const int flags = fcntl(fd, F_GETFL);
        if (flags < 0 || (flags & O_ACCMODE) != O_WRONLY || fstat(fd, &st) != 0 ||
            !S_ISFIFO(st.st_mode)) {
            continue;
        }
        const char* forged = "sample 0.0001\n";
        (void)!write(fd, forged, strlen(forged));
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
