// expect: incorrect
// task: elementwise_gelu_f16_64M.json
// timeout: 600
// GELU through the tanh approximation with tanh(u) = (e^2u - 1) / (e^2u + 1): for |x| beyond ~10
// the cubic term sends e^2u to +inf and the output to inf / inf = NaN where the truth saturates
// to x or 0 (the "large" distribution, the elementwise_saturation case).
#include <kevolve/abi.h>
#include <cuda_fp16.h>

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) geluTanh(const __half* x, __half* y, int64_t n) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(kThreads) + threadIdx.x;
    if (i >= n) {
        return;
    }
    const float v = __half2float(x[i]);
    const float u = 0.7978845608f * (v + 0.044715f * v * v * v);
    const float e = expf(2.0f * u);
    y[i] = __float2half_rn(0.5f * v * (1.0f + (e - 1.0f) / (e + 1.0f)));
}

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    const int64_t n = args->dims[0];
    geluTanh<<<static_cast<unsigned>((n + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
        static_cast<const __half*>(args->inputs[0].data),
        static_cast<__half*>(args->outputs[0].data), n);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
