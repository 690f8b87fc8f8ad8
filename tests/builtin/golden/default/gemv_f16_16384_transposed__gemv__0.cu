// expect: ok
// task: gemv_f16_16384_transposed.json
// Kevolve built-in kernel, family gemv (generated; edit freely).
// Task: gemv_f16_16384_transposed (gemv 16384x16384 f16 y=A^T*x).
// Strategy: y = A^T x; blocks of 8 warps own 256 columns and one of 16 row ranges; 8-element loads of A, 4 rows in flight per warp; fp32 partials in the workspace, summed by gemvFinish.
// Rationale:
//   y = A^T x: lanes on neighbouring 8-element vectors of a row of A (coalesced), 8 warps
//   walking rows with 4 rows in flight; 64 column blocks x split_m 16 row ranges fill the GPU,
//   partial sums added by a second kernel.

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

constexpr int WARPS = 8;
constexpr int THREADS = WARPS * 32;
constexpr int VPT = 4; // rows of A each warp has in flight per step
constexpr int COLS = 32 * VEC;    // columns of y per block: a warp's lanes side by side
constexpr int SPLIT = 16;       // blocks along M per column range, summed by gemvFinish

// y = A^T x: block (bx, by) owns columns bx * COLS .. + COLS - 1 and the by-th of SPLIT row
// ranges. Each warp walks rows WARPS apart, VPT rows per step in flight, each lane accumulating
// VEC columns in fp32; the warps' sums meet in shared memory.
__global__ void __launch_bounds__(THREADS)
    gemvColumns(const ElemA* __restrict__ A, const ElemX* __restrict__ x, float* __restrict__ partial,
                long long M, long long N, long long lda)
{
    __shared__ float sums[WARPS][COLS]; // [warp][i * 32 + lane]: conflict-free writes
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x / 32;
    const long long col = static_cast<long long>(blockIdx.x) * COLS + lane * VEC;
    const long long rowsPerSplit = (M + SPLIT - 1) / SPLIT;
    const long long rowBegin = static_cast<long long>(blockIdx.y) * rowsPerSplit;
    const long long rowEnd = min(M, rowBegin + rowsPerSplit);
    float acc[VEC];
#pragma unroll
    for (int i = 0; i < VEC; ++i)
        acc[i] = 0.0f;
    // Threads past N still run the loop (reading nothing) so every thread reaches the barrier.
    for (long long r0 = rowBegin + warp; r0 < rowEnd; r0 += static_cast<long long>(WARPS) * VPT) {
        float av[VPT][VEC];
        float xv[VPT];
#pragma unroll
        for (int u = 0; u < VPT; ++u) {
            const long long r = r0 + static_cast<long long>(u) * WARPS;
            const ElemA* a = A + r * lda + col;
            if (r < rowEnd && col + VEC <= N)
                loadVec(a, av[u]);
            else
                loadTail(a, r < rowEnd ? N - col : 0, 0.0f, av[u]);
            xv[u] = r < rowEnd ? toFloat(x[r]) : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < VPT; ++u)
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                acc[i] = fmaf(av[u][i], xv[u], acc[i]);
    }
#pragma unroll
    for (int i = 0; i < VEC; ++i)
        sums[warp][i * 32 + lane] = acc[i];
    __syncthreads();
    for (int slot = threadIdx.x; slot < COLS; slot += THREADS) {
        float s = 0.0f;
#pragma unroll
        for (int w = 0; w < WARPS; ++w)
            s += sums[w][slot];
        const long long c = static_cast<long long>(blockIdx.x) * COLS + (slot % 32) * VEC + slot / 32;
        if (c < N)
            partial[blockIdx.y * N + c] = s;
    }
}

// y = the sum of the SPLIT partial rows, in a fixed order. Every partial element below N was
// written by gemvColumns (empty row ranges write 0), so the poisoned workspace is never read.
__global__ void __launch_bounds__(256)
    gemvFinish(const float* __restrict__ partial, ElemY* __restrict__ y, long long N)
{
    for (long long c = static_cast<long long>(blockIdx.x) * 256 + threadIdx.x; c < N;
         c += static_cast<long long>(gridDim.x) * 256) {
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < SPLIT; ++k)
            s += partial[k * N + c];
        fromFloat(s, y[c]);
    }
}

} // namespace

extern "C" KEVOLVE_EXPORT uint64_t kevolve_workspace_bytes(const KevolveArgs* args)
{
    return static_cast<uint64_t>(SPLIT) * static_cast<uint64_t>(KEVOLVE_COLS(args)) * sizeof(float);
}

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
    if (args->scalars[0] != 1.0)
        return 6; // generated for y = A^T x (transpose 1) only
    const long long M = KEVOLVE_ROWS(args);
    const long long N = KEVOLVE_COLS(args);
    const long long lda = KEVOLVE_LDX(args);
    // Vector accesses need every row of A to start on a VEC-element boundary.
    if (lda % VEC != 0 ||
        reinterpret_cast<uintptr_t>(args->inputs[0].data) % (VEC * sizeof(ElemA)) != 0)
        return 4;
    const long long columnBlocks = (N + COLS - 1) / COLS;
    if (columnBlocks > 2147483647LL)
        return 4;
    if (args->workspace_bytes < kevolve_workspace_bytes(args) || !args->workspace)
        return 7;
    float* partial = static_cast<float*>(args->workspace);
    gemvColumns<<<dim3(static_cast<unsigned>(columnBlocks), SPLIT), THREADS, 0, stream>>>(
        static_cast<const ElemA*>(args->inputs[0].data),
        static_cast<const ElemX*>(args->inputs[1].data), partial, M, N, lda);
    const long long finishBlocks = min((N + 255) / 256, 65536LL);
    gemvFinish<<<finishBlocks, 256, 0, stream>>>(
        partial, static_cast<ElemY*>(args->outputs[0].data), N);
    return cudaGetLastError() == cudaSuccess ? 0 : 5;
}
