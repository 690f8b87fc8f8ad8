// expect: incorrect
// task: rmsnorm_bf16_16384x4096.json
// timeout: 600
// RMS norm with epsilon dropped: y = x / sqrt(mean(x^2)) * w. Right on every distribution, but
// the rmsnorm_zero_rows case's zero rows give 0 / 0 = NaN (the truth is 0) and its N(0, 1e-3^2)
// rows, whose mean square is about epsilon, come out up to sqrt(2) too large.
#include <kevolve/abi.h>

#include <cuda_bf16.h>

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
    rmsnorm(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t rows,
            int64_t cols, int64_t ldx, int64_t ldy) {
    __shared__ float partial[kThreads / 32];
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const __nv_bfloat16* xr = x + row * ldx;
        __nv_bfloat16* yr = y + row * ldy;
        float q = 0.0f;
        for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
            const float v = __bfloat162float(xr[c]);
            q += v * v;
        }
        const float rms = sqrtf(blockSum(q, partial) / static_cast<float>(cols));
        for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
            yr[c] = __float2bfloat16_rn(__bfloat162float(xr[c]) / rms * __bfloat162float(w[c]));
        }
    }
}

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    const int64_t rows = KEVOLVE_ROWS(args);
    const unsigned grid = static_cast<unsigned>(rows < 65535 ? rows : 65535);
    rmsnorm<<<grid, kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(args->inputs[0].data),
                                           static_cast<const __nv_bfloat16*>(args->inputs[1].data),
                                           static_cast<__nv_bfloat16*>(args->outputs[0].data), rows,
                                           KEVOLVE_COLS(args), KEVOLVE_LDX(args),
                                           KEVOLVE_LDY(args));
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
