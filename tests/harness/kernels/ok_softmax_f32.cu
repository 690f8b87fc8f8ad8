// expect: ok
// task: softmax_f32_8192.json
// timeout: 600
// Softmax, one block per row, online: each thread keeps a running max and a sum rescaled to it,
// then the block merges the pairs. A running max of -inf keeps its sum at 0 (exp(-inf - -inf)
// would be NaN), so only an all -inf row comes out NaN; a NaN makes the max NaN, hence the row.
#include <kevolve/abi.h>

constexpr int kThreads = 256;

struct MaxSum {
    float m;
    float s;
};

__device__ MaxSum merge(MaxSum a, MaxSum b) {
    if (isnan(a.m) || isnan(b.m)) {
        return {a.m + b.m, 0.0f};
    }
    const float m = fmaxf(a.m, b.m);
    if (m == -INFINITY) {
        return {m, 0.0f};
    }
    return {m, a.s * expf(a.m - m) + b.s * expf(b.m - m)};
}

__global__ void __launch_bounds__(kThreads)
    softmaxOnline(const float* x, float* y, int64_t rows, int64_t cols, int64_t ldx, int64_t ldy) {
    __shared__ MaxSum partial[kThreads / 32];
    const int64_t row = blockIdx.x;
    if (row >= rows) {
        return;
    }
    const float* xr = x + row * ldx;
    float* yr = y + row * ldy;
    MaxSum t{-INFINITY, 0.0f};
    for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
        t = merge(t, MaxSum{xr[c], 1.0f});
    }
    for (int o = 16; o > 0; o >>= 1) {
        t = merge(
            t, MaxSum{__shfl_xor_sync(0xffffffffu, t.m, o), __shfl_xor_sync(0xffffffffu, t.s, o)});
    }
    if (threadIdx.x % 32 == 0) {
        partial[threadIdx.x / 32] = t;
    }
    __syncthreads();
    MaxSum all = partial[0];
    for (int w = 1; w < kThreads / 32; ++w) {
        all = merge(all, partial[w]);
    }
    const float inv = 1.0f / all.s;
    for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
        yr[c] = expf(xr[c] - all.m) * inv;
    }
}

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    const int64_t rows = KEVOLVE_ROWS(args);
    softmaxOnline<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
        static_cast<const float*>(args->inputs[0].data), static_cast<float*>(args->outputs[0].data),
        rows, KEVOLVE_COLS(args), KEVOLVE_LDX(args), KEVOLVE_LDY(args));
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
