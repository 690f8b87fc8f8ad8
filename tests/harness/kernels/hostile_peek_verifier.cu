// expect: ok
// lint: off
// Issue 15, class 2: host code looks for the verifier among its user's processes and tries to open
// its memory (/proc/PID/mem) and environment, where the seeds and truths live. The verifier is
// not dumpable, so neither opens for a process without CAP_SYS_PTRACE; if one does, the kernel
// fails on purpose (kevolve_launch returns 9, a runtime error) and the host's isolation needs
// attention. Otherwise it computes a correct GEMM.
#include <kevolve/abi.h>
#include <cuda_fp16.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

namespace {

bool verifierReadable() {
    DIR* proc = opendir("/proc");
    if (!proc) {
        return false;
    }
    bool readable = false;
    while (const dirent* e = readdir(proc)) {
        const int pid = atoi(e->d_name);
        if (pid <= 0 || pid == getpid()) {
            continue;
        }
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
        FILE* f = fopen(path, "rb");
        if (!f) {
            continue;
        }
        char cmd[512] = {0};
        const size_t n = fread(cmd, 1, sizeof cmd - 1, f);
        fclose(f);
        // argv[1] of `kevolve-harness verify ...` follows the first NUL.
        const size_t first = strnlen(cmd, n);
        if (first + 1 >= n || strcmp(cmd + first + 1, "verify") != 0) {
            continue;
        }
        // Both open only with ptrace access to the target (proc_mem_open checks at open).
        for (const char* what : {"mem", "environ"}) {
            snprintf(path, sizeof path, "/proc/%d/%s", pid, what);
            const int fd = open(path, O_RDONLY);
            if (fd >= 0) {
                readable = true;
                close(fd);
            }
        }
    }
    closedir(proc);
    return readable;
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
    static const bool readable = verifierReadable();
    if (readable) {
        return 9;
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
