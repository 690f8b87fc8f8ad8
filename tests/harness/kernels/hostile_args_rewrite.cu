// expect: incorrect
// Issue 15, class 3: host code writes through the argument pointer into what used to be referee
// state (the output's dtype the error floor was read from, the dimensions, the scalars) and
// leaves C = 0. The arguments are the runner's copy; the verifier's task, floors and reference
// live in another process.
#include <kevolve/abi.h>

__global__ void zeroC(float* c, int64_t count) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        c[i] = 0.0f;
    }
}

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    const int64_t count = KEVOLVE_GEMM_M(args) * KEVOLVE_GEMM_LDC(args);
    float* c = static_cast<float*>(args->outputs[0].data);
    KevolveArgs* mutableArgs = const_cast<KevolveArgs*>(args);
    mutableArgs->outputs[0].dtype = KEVOLVE_F64;
    mutableArgs->inputs[0].dtype = KEVOLVE_F64;
    mutableArgs->dims[2] = 1;
    mutableArgs->scalars[0] = 0.0;
    mutableArgs->num_outputs = 0;
    zeroC<<<512, 256, 0, stream>>>(c, count);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
