// expect: incorrect
// task: softmax_f32_8192.json
// timeout: 600
// Softmax without max-subtraction: exp(x) overflows fp32 beyond x = 88.7, so rows with large
// entries (the "large" distribution, the softmax_pm1e4 case) become inf / inf = NaN.
#include <kevolve/abi.h>

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads)
    softmaxNoMax(const float* x, float* y, int64_t rows, int64_t cols, int64_t ldx, int64_t ldy) {
    __shared__ float partial[kThreads / 32];
    const int64_t row = blockIdx.x;
    if (row >= rows) {
        return;
    }
    const float* xr = x + row * ldx;
    float* yr = y + row * ldy;
    float s = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
        s += expf(xr[c]);
    }
    for (int o = 16; o > 0; o >>= 1) {
        s += __shfl_xor_sync(0xffffffffu, s, o);
    }
    if (threadIdx.x % 32 == 0) {
        partial[threadIdx.x / 32] = s;
    }
    __syncthreads();
    float total = 0.0f;
    for (int w = 0; w < kThreads / 32; ++w) {
        total += partial[w];
    }
    for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
        yr[c] = expf(xr[c]) / total;
    }
}

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    const int64_t rows = KEVOLVE_ROWS(args);
    softmaxNoMax<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
        static_cast<const float*>(args->inputs[0].data), static_cast<float*>(args->outputs[0].data),
        rows, KEVOLVE_COLS(args), KEVOLVE_LDX(args), KEVOLVE_LDY(args));
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
