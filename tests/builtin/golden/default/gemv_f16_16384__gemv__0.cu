// expect: ok
// task: gemv_f16_16384.json
// Kevolve built-in kernel, family gemv (generated; edit freely).
// Task: gemv_f16_16384 (gemv 16384x16384 f16 y=A*x).
// Strategy: y = A x; one warp per row (4 per block), 8-element loads of A and x, 2 vectors per lane in flight, fp32 accumulation and a shuffle reduction.
// Rationale:
//   y = A x is a stream over A: one warp per row with 8-element vector loads of A and x, two
//   vectors per lane in flight, 4 rows per block.

#include <kevolve/abi.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace {

using ElemA = __half;
using ElemX = __half;
using ElemY = __half;
[[maybe_unused]] __device__ __forceinline__ float toFloat(__half x) { return __half2float(x); }
[[maybe_unused]] __device__ __forceinline__ void fromFloat(float v, __half& out) { out = __float2half_rn(v); }
// The two elements of a 32-bit word (the lower first); the pointer only picks the type.
[[maybe_unused]] __device__ __forceinline__ void toFloats(const __half*, unsigned int w, float& lo, float& hi)
{
    __half2 h;
    memcpy(&h, &w, sizeof(h));
    const float2 f = __half22float2(h);
    lo = f.x;
    hi = f.y;
}

// The unsigned type of one access of `Bytes` bytes (vector loads and stores are 2 to 16 bytes).
template <int Bytes> struct Raw;
template <> struct Raw<2> { using type = unsigned short; };
template <> struct Raw<4> { using type = unsigned int; };
template <> struct Raw<8> { using type = uint2; };
template <> struct Raw<16> { using type = uint4; };

constexpr int VEC = 8; // elements per access

// VEC elements at p, which is aligned to VEC * sizeof(T), in one access.
template <typename T> __device__ __forceinline__ void loadVec(const T* p, float (&v)[VEC])
{
    using R = typename Raw<VEC * sizeof(T)>::type;
    const R raw = *reinterpret_cast<const R*>(p);
    T e[VEC];
    memcpy(e, &raw, sizeof(R));
#pragma unroll
    for (int i = 0; i < VEC; ++i)
        v[i] = toFloat(e[i]);
}

template <typename T> __device__ __forceinline__ void storeVec(T* p, const float (&v)[VEC])
{
    using R = typename Raw<VEC * sizeof(T)>::type;
    T e[VEC];
#pragma unroll
    for (int i = 0; i < VEC; ++i)
        fromFloat(v[i], e[i]);
    R raw;
    memcpy(&raw, e, sizeof(R));
    *reinterpret_cast<R*>(p) = raw;
}

// The last, partial vector of a row: `valid` (< VEC) elements exist, the rest read as `fill`.
template <typename T>
__device__ __forceinline__ void loadTail(const T* p, long long valid, float fill, float (&v)[VEC])
{
#pragma unroll
    for (int i = 0; i < VEC; ++i)
        v[i] = i < valid ? toFloat(p[i]) : fill;
}

template <typename T>
__device__ __forceinline__ void storeTail(T* p, long long valid, const float (&v)[VEC])
{
#pragma unroll
    for (int i = 0; i < VEC; ++i) {
        if (i < valid)
            fromFloat(v[i], p[i]);
    }
}

constexpr int WARPS = 4;
constexpr int THREADS = WARPS * 32;
constexpr int VPT = 2; // vectors of A and x per lane in flight per step
constexpr int CHUNK = 32 * VEC * VPT; // columns a warp reads per step

// y = A x: one warp per row of A, lanes on neighbouring vectors of the row (coalesced), x read
// through the same vector width (it stays in L1/L2, every warp reads all of it).
__global__ void __launch_bounds__(THREADS)
    gemvRows(const ElemA* __restrict__ A, const ElemX* __restrict__ x, ElemY* __restrict__ y,
             long long M, long long N, long long lda)
{
    const int lane = threadIdx.x & 31;
    for (long long row = static_cast<long long>(blockIdx.x) * WARPS + threadIdx.x / 32; row < M;
         row += static_cast<long long>(gridDim.x) * WARPS) {
        const ElemA* a = A + row * lda;
        float acc = 0.0f;
        for (long long base = 0; base < N; base += CHUNK) {
            float av[VPT][VEC];
            float xv[VPT][VEC];
#pragma unroll
            for (int j = 0; j < VPT; ++j) {
                const long long col = base + (static_cast<long long>(j) * 32 + lane) * VEC;
                if (col + VEC <= N) {
                    loadVec(a + col, av[j]);
                    loadVec(x + col, xv[j]);
                } else {
                    loadTail(a + col, N - col, 0.0f, av[j]);
                    loadTail(x + col, N - col, 0.0f, xv[j]);
                }
            }
#pragma unroll
            for (int j = 0; j < VPT; ++j)
#pragma unroll
                for (int i = 0; i < VEC; ++i)
                    acc = fmaf(av[j][i], xv[j][i], acc);
        }
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1)
            acc += __shfl_down_sync(0xffffffffu, acc, offset);
        if (lane == 0)
            fromFloat(acc, y[row]);
    }
}

} // namespace

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream)
{
    // This file was generated for one task; refuse any other so a mismatch is an error.
    if (args->abi_version != KEVOLVE_ABI_VERSION || args->op != KEVOLVE_OP_GEMV ||
        args->num_inputs != 2 || args->num_outputs != 1)
        return 1;
    if (args->inputs[0].dtype != KEVOLVE_F16 ||
        args->inputs[1].dtype != KEVOLVE_F16 ||
        args->outputs[0].dtype != KEVOLVE_F16)
        return 2;
    if (args->inputs[0].stride[args->inputs[0].rank - 1] != 1 ||
        args->inputs[1].stride[args->inputs[1].rank - 1] != 1 ||
        args->outputs[0].stride[args->outputs[0].rank - 1] != 1)
        return 3;
    if (args->scalars[0] != 0.0)
        return 6; // generated for y = A x (transpose 0) only
    const long long M = KEVOLVE_ROWS(args);
    const long long N = KEVOLVE_COLS(args);
    const long long lda = KEVOLVE_LDX(args);
    // Vector accesses need every row of A (and x) to start on a VEC-element boundary.
    if (lda % VEC != 0 ||
        reinterpret_cast<uintptr_t>(args->inputs[0].data) % (VEC * sizeof(ElemA)) != 0 ||
        reinterpret_cast<uintptr_t>(args->inputs[1].data) % (VEC * sizeof(ElemX)) != 0)
        return 4;
    const long long grid = min((M + WARPS - 1) / WARPS, 2147483647LL);
    gemvRows<<<grid, THREADS, 0, stream>>>(static_cast<const ElemA*>(args->inputs[0].data),
                                           static_cast<const ElemX*>(args->inputs[1].data),
                                           static_cast<ElemY*>(args->outputs[0].data), M, N, lda);
    return cudaGetLastError() == cudaSuccess ? 0 : 5;
}
