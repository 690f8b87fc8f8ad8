// expect: ok
// task: reduce_sum_f32_16384x8192.json
// timeout: 600
// Row sums (or maxima, scalars[0] = 1), one warp per row, fp32 accumulation. The max propagates
// NaN (fmaxf would drop it) and starts from -inf (a row of large negative values).
#include <kevolve/abi.h>

constexpr int kWarpsPerBlock = 8;

__device__ float combine(float a, float b, bool max) {
    if (!max) {
        return a + b;
    }
    return isnan(a) || isnan(b) ? a + b : fmaxf(a, b);
}

__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    reduceRows(const float* x, float* y, int64_t rows, int64_t cols, int64_t ldx, bool max) {
    const int64_t row = blockIdx.x * static_cast<int64_t>(kWarpsPerBlock) + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows) {
        return;
    }
    const float* xr = x + row * ldx;
    float acc = max ? -INFINITY : 0.0f;
    for (int64_t c = lane; c < cols; c += 32) {
        acc = combine(acc, xr[c], max);
    }
    for (int o = 16; o > 0; o >>= 1) {
        acc = combine(acc, __shfl_xor_sync(0xffffffffu, acc, o), max);
    }
    if (lane == 0) {
        y[row] = acc;
    }
}

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    const int64_t rows = KEVOLVE_ROWS(args);
    const unsigned blocks = static_cast<unsigned>((rows + kWarpsPerBlock - 1) / kWarpsPerBlock);
    reduceRows<<<blocks, kWarpsPerBlock * 32, 0, stream>>>(
        static_cast<const float*>(args->inputs[0].data), static_cast<float*>(args->outputs[0].data),
        rows, KEVOLVE_COLS(args), KEVOLVE_LDX(args), args->scalars[0] != 0.0);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
