// expect: rule_violation
// lint: off
// Launches the top half of C before returning and leaves the bottom half to a thread that launches
// a second kernel on the harness stream after kevolve_launch returned. The hooks see a launch from
// a thread the harness did not start; the CUPTI audit sees a kernel launched after the return.
#include <kevolve/abi.h>
#include <cuda_fp16.h>

#include <chrono>
#include <thread>

__global__ void gemmRows(const __half* a, const __half* b, float* c, int64_t row0, int64_t rows,
                         int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc) {
    const int64_t col = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    const int64_t row = row0 + blockIdx.y * static_cast<int64_t>(blockDim.y) + threadIdx.y;
    if (row >= row0 + rows || col >= n) {
        return;
    }
    float acc = 0.0f;
    for (int64_t i = 0; i < k; ++i) {
        acc += __half2float(a[row * lda + i]) * __half2float(b[i * ldb + col]);
    }
    c[row * ldc + col] = acc;
}

namespace {
void launchRows(const KevolveArgs a, int64_t row0, int64_t rows, cudaStream_t stream) {
    const int64_t n = KEVOLVE_GEMM_N(&a);
    const dim3 block(32, 8);
    const dim3 grid(static_cast<unsigned>((n + 31) / 32), static_cast<unsigned>((rows + 7) / 8));
    gemmRows<<<grid, block, 0, stream>>>(
        static_cast<const __half*>(a.inputs[0].data), static_cast<const __half*>(a.inputs[1].data),
        static_cast<float*>(a.outputs[0].data), row0, rows, n, KEVOLVE_GEMM_K(&a),
        KEVOLVE_GEMM_LDA(&a), KEVOLVE_GEMM_LDB(&a), KEVOLVE_GEMM_LDC(&a));
}
} // namespace

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    const int64_t m = KEVOLVE_GEMM_M(args);
    const int64_t half = m / 2;
    if (half > 0) {
        launchRows(*args, 0, half, stream);
    }
    const KevolveArgs copy = *args;
    std::thread([copy, half, m, stream] {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        launchRows(copy, half, m - half, stream);
    }).detach();
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
