// expect: incorrect
// task: rmsnorm_f16_4096x8192.json
// timeout: 600
// RMS norm whose sum of squares is kept in __half: on the rmsnorm_huge_offset case (1000 +
// N(0,1) rows) every square (1e6) is past fp16's 65504, the sum is +inf and every output 0 where
// the truth is about W; N(0, 4^2) rows of 8192 (the large distribution) overflow it too.
#include <kevolve/abi.h>

#include <cuda_fp16.h>

constexpr int kThreads = 256;

__device__ __half blockSum(__half v, __half* partial) {
    for (int o = 16; o > 0; o >>= 1) {
        v = __hadd(v, __shfl_xor_sync(0xffffffffu, v, o));
    }
    if (threadIdx.x % 32 == 0) {
        partial[threadIdx.x / 32] = v;
    }
    __syncthreads();
    __half total = __float2half(0.0f);
    for (int w = 0; w < kThreads / 32; ++w) {
        total = __hadd(total, partial[w]);
    }
    __syncthreads();
    return total;
}

__global__ void __launch_bounds__(kThreads)
    rmsnorm(const __half* x, const __half* w, __half* y, int64_t rows, int64_t cols, int64_t ldx,
            int64_t ldy, float epsilon) {
    __shared__ __half partial[kThreads / 32];
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const __half* xr = x + row * ldx;
        __half* yr = y + row * ldy;
        __half q = __float2half(0.0f);
        for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
            q = __hfma(xr[c], xr[c], q);
        }
        const float meanSquare = __half2float(blockSum(q, partial)) / static_cast<float>(cols);
        const float rstd = 1.0f / sqrtf(meanSquare + epsilon);
        for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
            yr[c] = __float2half_rn(__half2float(xr[c]) * rstd * __half2float(w[c]));
        }
    }
}

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    const int64_t rows = KEVOLVE_ROWS(args);
    const unsigned grid = static_cast<unsigned>(rows < 65535 ? rows : 65535);
    rmsnorm<<<grid, kThreads, 0, stream>>>(static_cast<const __half*>(args->inputs[0].data),
                                           static_cast<const __half*>(args->inputs[1].data),
                                           static_cast<__half*>(args->outputs[0].data), rows,
                                           KEVOLVE_COLS(args), KEVOLVE_LDX(args), KEVOLVE_LDY(args),
                                           static_cast<float>(args->scalars[0]));
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
