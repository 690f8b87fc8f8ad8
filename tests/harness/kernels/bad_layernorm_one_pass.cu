// expect: incorrect
// task: layernorm_f32_16384x4096.json
// timeout: 600
// Layer norm with the one-pass variance E[x^2] - E[x]^2 in fp32: on the 1e4 + N(0,1) rows of the
// layernorm_large_offset case E[x^2] ~ 1e8 carries an absolute error far above the variance (1),
// which cancels catastrophically.
#include <kevolve/abi.h>

constexpr int kThreads = 256;

__device__ float blockSum(float v, float* partial) {
    for (int o = 16; o > 0; o >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, o);
    }
    if (threadIdx.x % 32 == 0) {
        partial[threadIdx.x / 32] = v;
    }
    __syncthreads();
    float total = 0.0f;
    for (int w = 0; w < kThreads / 32; ++w) {
        total += partial[w];
    }
    __syncthreads();
    return total;
}

__global__ void __launch_bounds__(kThreads)
    layernorm(const float* x, const float* w, const float* b, float* y, int64_t rows, int64_t cols,
              int64_t ldx, int64_t ldy, float epsilon) {
    __shared__ float partial[kThreads / 32];
    const int64_t row = blockIdx.x;
    if (row >= rows) {
        return;
    }
    const float* xr = x + row * ldx;
    float* yr = y + row * ldy;
    const float n = static_cast<float>(cols);
    float s = 0.0f, q = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
        s += xr[c];
        q += xr[c] * xr[c];
    }
    const float mean = blockSum(s, partial) / n;
    const float var = blockSum(q, partial) / n - mean * mean;
    const float rstd = rsqrtf(var + epsilon);
    for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
        yr[c] = (xr[c] - mean) * rstd * w[c] + b[c];
    }
}

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    const int64_t rows = KEVOLVE_ROWS(args);
    layernorm<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
        static_cast<const float*>(args->inputs[0].data),
        static_cast<const float*>(args->inputs[1].data),
        static_cast<const float*>(args->inputs[2].data), static_cast<float*>(args->outputs[0].data),
        rows, KEVOLVE_COLS(args), KEVOLVE_LDX(args), KEVOLVE_LDY(args),
        static_cast<float>(args->scalars[0]));
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
