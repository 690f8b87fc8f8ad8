// expect: ok
// task: gemv_f16_16384.json
// timeout: 600
// GEMV in fp16 with fp32 accumulation, both orientations: y = A x with one warp per row of A
// (coalesced along the row), y = A^T x with one thread per column of A (coalesced across the
// warp, each thread walking down its column).
#include <kevolve/abi.h>
#include <cuda_fp16.h>

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads)
    gemvRows(const __half* a, const __half* x, __half* y, int64_t rows, int64_t cols, int64_t lda) {
    const int64_t row = blockIdx.x * static_cast<int64_t>(kThreads / 32) + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows) {
        return;
    }
    const __half* ar = a + row * lda;
    float acc = 0.0f;
    for (int64_t c = lane; c < cols; c += 32) {
        acc += __half2float(ar[c]) * __half2float(x[c]);
    }
    for (int o = 16; o > 0; o >>= 1) {
        acc += __shfl_xor_sync(0xffffffffu, acc, o);
    }
    if (lane == 0) {
        y[row] = __float2half_rn(acc);
    }
}

__global__ void __launch_bounds__(kThreads) gemvColumns(const __half* a, const __half* x, __half* y,
                                                        int64_t rows, int64_t cols, int64_t lda) {
    const int64_t col = blockIdx.x * static_cast<int64_t>(kThreads) + threadIdx.x;
    if (col >= cols) {
        return;
    }
    float acc = 0.0f;
    for (int64_t r = 0; r < rows; ++r) {
        acc += __half2float(a[r * lda + col]) * __half2float(x[r]);
    }
    y[col] = __float2half_rn(acc);
}

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    const int64_t rows = KEVOLVE_ROWS(args), cols = KEVOLVE_COLS(args);
    const auto* a = static_cast<const __half*>(args->inputs[0].data);
    const auto* x = static_cast<const __half*>(args->inputs[1].data);
    auto* y = static_cast<__half*>(args->outputs[0].data);
    if (args->scalars[0] != 0.0) {
        gemvColumns<<<static_cast<unsigned>((cols + kThreads - 1) / kThreads), kThreads, 0,
                      stream>>>(a, x, y, rows, cols, KEVOLVE_LDX(args));
    } else {
        gemvRows<<<static_cast<unsigned>((rows + kThreads / 32 - 1) / (kThreads / 32)), kThreads, 0,
                   stream>>>(a, x, y, rows, cols, KEVOLVE_LDX(args));
    }
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
