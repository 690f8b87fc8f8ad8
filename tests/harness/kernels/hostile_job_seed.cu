// expect: ok
// lint: off
// Issue 15, class 2: host code reads every file it can find in its working directory (the job
// file sits there) and its own command line, looking for the seed that would let it predict the
// inputs and the checks. It computes a correct GEMM, and fails on purpose (kevolve_launch returns
// 7, a runtime error) if it finds a seed: the verifier draws its seeds from getrandom and never
// writes them where the runner can read them.
#include <kevolve/abi.h>
#include <cuda_fp16.h>

#include <dirent.h>
#include <stdio.h>
#include <string.h>

namespace {

bool fileMentionsSeed(const char* path) {
    FILE* f = fopen(path, "rb");
    if (!f) {
        return false;
    }
    static char buf[1 << 20];
    const size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    for (size_t i = 0; i < n; ++i) {
        buf[i] = buf[i] ? buf[i] : ' ';
    }
    buf[n] = 0;
    return strstr(buf, "seed") != nullptr;
}

bool seedVisible() {
    bool found = fileMentionsSeed("/proc/self/cmdline") || fileMentionsSeed("/proc/self/environ");
    if (DIR* d = opendir(".")) {
        while (const dirent* e = readdir(d)) {
            if (e->d_name[0] != '.' && strstr(e->d_name, ".json")) {
                found = found || fileMentionsSeed(e->d_name);
            }
        }
        closedir(d);
    }
    return found;
}

} // namespace

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
    static const bool seen = seedVisible();
    if (seen) {
        return 7;
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
