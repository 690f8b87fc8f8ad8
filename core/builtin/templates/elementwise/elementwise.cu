${# elementwise/elementwise.cu: the elementwise family (family_elementwise.cpp). Values: HEADER, X_T,}
${# Y_T, ELEMENTS, WARPS, VPT, CTAS, CHECKS. Conditions: F16, BF16, PERSISTENT, SILU (else GELU).}
${HEADER}
#include <kevolve/abi.h>
${if F16}
#include <cuda_fp16.h>
${endif}
${if BF16}
#include <cuda_bf16.h>
${endif}
#include <stdint.h>

namespace {

using ElemX = ${X_T};
using ElemY = ${Y_T};
${ELEMENTS}
constexpr int WARPS = ${WARPS};
constexpr int THREADS = WARPS * 32;
constexpr int VPT = ${VPT};                // vectors per thread per step, loaded before any math
constexpr int STEP = THREADS * VPT;        // vectors a block covers per step
[[maybe_unused]] constexpr int CTAS_PER_SM = ${CTAS}; // ${if PERSISTENT}persistent blocks per SM, looping${else}0: one block per STEP vectors, no loop${endif}

${if SILU}
// SiLU, x / (1 + exp(-x)): for x -> -large, exp(-x) overflows to inf and x / inf is -0; for
// x -> +large, exp(-x) is 0 and the result is x. Never inf / inf.
__device__ __forceinline__ float apply(float x)
{
    return x / (1.0f + expf(-x));
}
${else}
// GELU, erf form: 0.5 x (1 + erf(x / sqrt 2)). erff saturates to +-1, so large |x| gives x or
// -0 (never an overflow or NaN).
__device__ __forceinline__ float apply(float x)
{
    return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
}
${endif}

__global__ void __launch_bounds__(THREADS)
    elementwise(const ElemX* __restrict__ X, ElemY* __restrict__ Y, long long N)
{
    const long long vectors = N / VEC; // whole vectors; the N % VEC tail comes last
    for (long long first = static_cast<long long>(blockIdx.x) * STEP; first < vectors;
         first += static_cast<long long>(gridDim.x) * STEP) {
        float v[VPT][VEC];
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            const long long index = first + static_cast<long long>(j) * THREADS + threadIdx.x;
            if (index < vectors)
                loadVec(X + index * VEC, v[j]);
        }
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            const long long index = first + static_cast<long long>(j) * THREADS + threadIdx.x;
            if (index < vectors) {
#pragma unroll
                for (int i = 0; i < VEC; ++i)
                    v[j][i] = apply(v[j][i]);
                storeVec(Y + index * VEC, v[j]);
            }
        }
    }
    const long long tail = vectors * VEC + threadIdx.x;
    if (blockIdx.x == 0 && tail < N)
        fromFloat(apply(toFloat(X[tail])), Y[tail]);
}

} // namespace

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream)
{
${CHECKS}    if (args->scalars[0] != ${if SILU}1.0${else}0.0${endif})
        return 6; // generated for ${if SILU}SiLU (function 1)${else}GELU (function 0)${endif} only
    const long long N = args->dims[0];
    if (reinterpret_cast<uintptr_t>(args->inputs[0].data) % (VEC * sizeof(ElemX)) != 0 ||
        reinterpret_cast<uintptr_t>(args->outputs[0].data) % (VEC * sizeof(ElemY)) != 0)
        return 4;
    const long long steps = max((N / VEC + STEP - 1) / STEP, 1LL);
${if PERSISTENT}
    const long long grid = min(steps, static_cast<long long>(CTAS_PER_SM) * args->device.sm_count);
${else}
    const long long grid = min(steps, 2147483647LL);
${endif}
    elementwise<<<grid, THREADS, 0, stream>>>(static_cast<const ElemX*>(args->inputs[0].data),
                                              static_cast<ElemY*>(args->outputs[0].data), N);
    return cudaGetLastError() == cudaSuccess ? 0 : 5;
}
