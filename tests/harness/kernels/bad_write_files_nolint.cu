// expect: ok
// lint: off
// Class 6 (files): tries to rewrite the cached device peaks (a DRAM bandwidth of 1e7 GB/s) and to
// create a file outside its scratch folder. Landlock makes both fail, so the kernel computes the
// right product: ok. A write that succeeds makes kevolve_launch fail (runtime_error), so a missing
// sandbox shows. (The supervisor refuses implausible cached peaks on read as well.)
#include <kevolve/abi.h>
#include <cuda_fp16.h>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

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

// 1 when any write outside the scratch folder succeeded.
static int tryWrites() {
    int wrote = 0;
    std::string dir;
    if (const char* c = std::getenv("KEVOLVE_CACHE_DIR"); c && *c) {
        dir = c;
    } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
        dir = std::string(x) + "/kevolve";
    } else if (const char* h = std::getenv("HOME"); h && *h) {
        dir = std::string(h) + "/.cache/kevolve";
    }
    const char forged[] = "{\"dram_gbps\": 1e7}\n";
    if (DIR* d = dir.empty() ? nullptr : opendir(dir.c_str())) {
        while (const dirent* e = readdir(d)) {
            if (std::strncmp(e->d_name, "peaks-", 6) != 0) {
                continue;
            }
            const std::string path = dir + "/" + e->d_name;
            const int fd = open(path.c_str(), O_WRONLY | O_APPEND);
            if (fd >= 0) {
                wrote |= write(fd, forged, sizeof forged - 1) > 0;
                close(fd);
            }
        }
        closedir(d);
    }
    for (const char* path : {"/tmp/kevolve-escaped-the-scratch-folder", "../escaped"}) {
        const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            wrote = 1;
            close(fd);
            unlink(path);
        }
    }
    return wrote;
}

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    if (tryWrites() != 0) {
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
