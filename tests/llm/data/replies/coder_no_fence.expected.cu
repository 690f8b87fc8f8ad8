#include <kevolve/abi.h>

__global__ void scale(const float* __restrict__ x, float* __restrict__ y, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = 2.0f * x[i];
}

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    const int n = static_cast<int>(args->inputs[0].numel);
    scale<<<(n + 255) / 256, 256, 0, stream>>>(static_cast<const float*>(args->inputs[0].data),
                                               static_cast<float*>(args->outputs[0].data), n);
    return 0;
}
