// Reference for the custom op "RMSNorm" (task.json): the straightforward kernel the candidates
// are judged against and timed against. One block of 256 threads per row; the sum of squares in
// fp32 through shared memory.
//
// Arguments (task.json, in its order): dims {M, N}; inputs X (M x N, row stride ld), W (N);
// outputs Y (M x N, row stride ld); scalars {epsilon}.
#include <kevolve/abi.h>
#include <cuda_fp16.h>

namespace {

constexpr int kThreads = 256;

__global__ void rmsnormRef(const __half* x, const __half* w, __half* y, int64_t n, int64_t ldx,
                           int64_t ldy, float epsilon) {
    __shared__ float partial[kThreads];
    const __half* row = x + blockIdx.x * ldx;
    float sum = 0.0f;
    for (int64_t j = threadIdx.x; j < n; j += kThreads) {
        const float v = __half2float(row[j]);
        sum += v * v;
    }
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (int width = kThreads / 2; width > 0; width /= 2) {
        if (threadIdx.x < width)
            partial[threadIdx.x] += partial[threadIdx.x + width];
        __syncthreads();
    }
    const float scale = rsqrtf(partial[0] / static_cast<float>(n) + epsilon);
    __half* out = y + blockIdx.x * ldy;
    for (int64_t j = threadIdx.x; j < n; j += kThreads)
        out[j] = __float2half_rn(__half2float(row[j]) * scale * __half2float(w[j]));
}

} // namespace

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    if (args->op != KEVOLVE_OP_CUSTOM || args->num_inputs != 2 || args->num_outputs != 1)
        return 1;
    const int64_t m = args->dims[0];
    const int64_t n = args->dims[1];
    rmsnormRef<<<static_cast<unsigned>(m), kThreads, 0, stream>>>(
        static_cast<const __half*>(args->inputs[0].data),
        static_cast<const __half*>(args->inputs[1].data), static_cast<__half*>(args->outputs[0].data),
        n, args->inputs[0].stride[0], args->outputs[0].stride[0],
        static_cast<float>(args->scalars[0]));
    return cudaPeekAtLastError() == cudaSuccess ? 0 : 2;
}
