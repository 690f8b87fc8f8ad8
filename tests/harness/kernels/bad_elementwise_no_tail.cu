// expect: incorrect
// task: elementwise_gelu_f16_64M.json
// timeout: 600
// Correct GELU, but only over whole blocks: N / 256 blocks and no bounds check. Right on the timed
// N = 2^26; on the validation shapes (N = 1000, 1, 3080, 1048583) the tail is never written and
// keeps the harness's NaN poison.
#include <kevolve/abi.h>
#include <cuda_fp16.h>

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) geluWholeBlocks(const __half* x, __half* y) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(kThreads) + threadIdx.x;
    const float v = __half2float(x[i]);
    y[i] = __float2half_rn(0.5f * v * erfcf(-v * 0.70710678118654752f));
}

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    const int64_t blocks = args->dims[0] / kThreads;
    if (blocks > 0) {
        geluWholeBlocks<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
            static_cast<const __half*>(args->inputs[0].data),
            static_cast<__half*>(args->outputs[0].data));
    }
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
