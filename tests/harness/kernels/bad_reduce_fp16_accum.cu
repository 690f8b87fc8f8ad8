// expect: incorrect
// task: reduce_sum_f32_16384x8192.json
// timeout: 600
// Row sums accumulated in fp16 on an fp32-accumulate task: each partial sum rounds to 11 bits
// (and overflows past 65504 on the reduce_cancellation rows), far outside the rule's floor.
#include <kevolve/abi.h>
#include <cuda_fp16.h>

constexpr int kWarpsPerBlock = 8;

__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    reduceRowsHalf(const float* x, float* y, int64_t rows, int64_t cols, int64_t ldx) {
    const int64_t row = blockIdx.x * static_cast<int64_t>(kWarpsPerBlock) + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows) {
        return;
    }
    const float* xr = x + row * ldx;
    __half acc = __float2half(0.0f);
    for (int64_t c = lane; c < cols; c += 32) {
        acc = __hadd(acc, __float2half(xr[c]));
    }
    for (int o = 16; o > 0; o >>= 1) {
        acc = __hadd(acc, __shfl_xor_sync(0xffffffffu, acc, o));
    }
    if (lane == 0) {
        y[row] = __half2float(acc);
    }
}

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    const int64_t rows = KEVOLVE_ROWS(args);
    const unsigned blocks = static_cast<unsigned>((rows + kWarpsPerBlock - 1) / kWarpsPerBlock);
    reduceRowsHalf<<<blocks, kWarpsPerBlock * 32, 0, stream>>>(
        static_cast<const float*>(args->inputs[0].data), static_cast<float*>(args->outputs[0].data),
        rows, KEVOLVE_COLS(args), KEVOLVE_LDX(args));
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
