// expect: ok
// task: gemm_bf16_m1_n14336_k4096.json
// Kevolve built-in kernel, family gemv_smallm (generated; edit freely).
// Task: gemm_bf16_m1_n14336_k4096 (gemm 1x14336x4096 bf16*bf16->bf16).
// Strategy: a GEMV over B for M <= 4; blocks of 8 warps own 256 columns and one of 16 k-ranges, 4 rows of B in flight per warp, partials summed in split order.
// Rationale:
//   Decode-size GEMM (M=1): a GEMV over B (117 MB, read once with 16-byte loads) with 1
//   accumulators per column; 56 column blocks x split-K 16 for 264 block slots (at least two
//   waves), 4 rows of B in flight per warp.

#include <kevolve/abi.h>
#include <cuda_bf16.h>
#include <stdint.h>
#include <string.h>

namespace {

using Input = __nv_bfloat16;
using Output = __nv_bfloat16;
[[maybe_unused]] __device__ __forceinline__ float toFloat(__nv_bfloat16 x) { return __bfloat162float(x); }
[[maybe_unused]] __device__ __forceinline__ void fromFloat(float v, __nv_bfloat16& out) { out = __float2bfloat16_rn(v); }
// The two elements of a 32-bit word (the lower first), exactly: a bf16 is the upper half of its
// float, so one shift or one mask each (the upper element converted on its own took a byte permute
// and a shift: about 10% more instructions in a layernorm row's loop than its f16 twin).
[[maybe_unused]] __device__ __forceinline__ void toFloats(const __nv_bfloat16*, unsigned int w, float& lo, float& hi)
{
    lo = __uint_as_float(w << 16);
    hi = __uint_as_float(w & 0xffff0000u);
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

// C (M x N) = A (M x K) B (K x N) for M <= MAX_M: a GEMV over B with ROWS >= M accumulators per
// column (the smallest instantiation of 1, 2, 4, ... that covers M, so no FMA is wasted on rows
// that do not exist beyond the power of two).
// Block (bx, by) owns columns bx * COLS .. + COLS - 1 and the by-th of SPLIT k-ranges; each lane
// owns VEC adjacent columns (one 16-byte load of a B row), each warp walks k-rows WARPS apart
// with VPT rows in flight, and every A element it needs is the same for all its lanes (one
// broadcast load, from L1). B, nearly all the bytes, is read exactly once, in whole lines.
constexpr int MAX_M = 4;
constexpr int WARPS = 8;
constexpr int THREADS = WARPS * 32;
constexpr int VPT = 4;
constexpr int SPLIT = 16;
constexpr int COLS = 32 * VEC;
static_assert(VEC == 8, "one 16-byte load of B per lane and row");

template <int ROWS>
__global__ void __launch_bounds__(THREADS)
    gemvLike(const Input* __restrict__ A, const Input* __restrict__ B,
             float* __restrict__ partials, int M, int N, int K, long long lda, long long ldb)
{
    __shared__ float sums[WARPS][COLS]; // [warp][i * 32 + lane]: conflict-free writes
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x / 32;
    const int col = static_cast<int>(blockIdx.x) * COLS + lane * VEC;
    const int rowsPerSplit = (K + SPLIT - 1) / SPLIT;
    const int kBegin = static_cast<int>(blockIdx.y) * rowsPerSplit;
    const int kEnd = min(K, kBegin + rowsPerSplit);
    float acc[ROWS][VEC];
#pragma unroll
    for (int m = 0; m < ROWS; ++m)
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            acc[m][i] = 0.0f;
    // Lanes past N still run the loop (reading nothing) so every thread reaches the barriers.
    for (int k0 = kBegin + warp; k0 < kEnd; k0 += WARPS * VPT) {
        float bv[VPT][VEC];
        float av[VPT][ROWS];
#pragma unroll
        for (int u = 0; u < VPT; ++u) {
            const int k = k0 + u * WARPS;
            const Input* b = B + static_cast<long long>(k) * ldb + col;
            if (k < kEnd && col + VEC <= N)
                loadVec(b, bv[u]);
            else
                loadTail(b, k < kEnd && col < N ? N - col : 0, 0.0f, bv[u]);
#pragma unroll
            for (int m = 0; m < ROWS; ++m)
                av[u][m] = k < kEnd && m < M ? toFloat(A[m * lda + k]) : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < VPT; ++u)
#pragma unroll
            for (int m = 0; m < ROWS; ++m)
#pragma unroll
                for (int i = 0; i < VEC; ++i)
                    acc[m][i] = fmaf(av[u][m], bv[u][i], acc[m][i]);
    }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    // gemvFinish may be scheduled now; it waits for this grid's completion before reading.
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
    // The warps' sums meet in shared memory, one row of C at a time; split by.y writes its
    // partial of every element of its columns (zeros for an empty k-range), so the workspace is
    // never read unwritten.
#pragma unroll
    for (int m = 0; m < ROWS; ++m) {
        if (m >= M) // uniform: every thread leaves together (constant indices keep acc in registers)
            break;
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            sums[warp][i * 32 + lane] = acc[m][i];
        __syncthreads();
        for (int slot = threadIdx.x; slot < COLS; slot += THREADS) {
            float s = 0.0f;
#pragma unroll
            for (int w = 0; w < WARPS; ++w)
                s += sums[w][slot];
            const int c = static_cast<int>(blockIdx.x) * COLS + (slot % 32) * VEC + slot / 32;
            if (c < N)
                partials[(static_cast<long long>(blockIdx.y) * M + m) * N + c] = s;
        }
        __syncthreads();
    }
}

// C = alpha * (split 0 + split 1 + ... in order) + beta * C: the same bits on every run.
__global__ void __launch_bounds__(256)
    gemvFinish(const float* __restrict__ partials, Output* __restrict__ C, int M, int N,
               long long ldc, float alpha, float beta)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
    const long long elements = static_cast<long long>(M) * N;
    for (long long e = static_cast<long long>(blockIdx.x) * 256 + threadIdx.x; e < elements;
         e += static_cast<long long>(gridDim.x) * 256) {
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < SPLIT; ++k)
            s += partials[k * elements + e];
        const long long row = e / N;
        Output* out = C + row * ldc + (e - row * N);
        float v = alpha * s;
        if (beta != 0.0f) // C is read only then: the harness poisons it, and 0 * NaN is NaN
            v += beta * toFloat(*out);
        fromFloat(v, *out);
    }
}

} // namespace

// fp32 partials: SPLIT slices of M x N.
extern "C" KEVOLVE_EXPORT uint64_t kevolve_workspace_bytes(const KevolveArgs* args)
{
    return static_cast<uint64_t>(SPLIT) * static_cast<uint64_t>(KEVOLVE_GEMM_M(args)) *
           static_cast<uint64_t>(KEVOLVE_GEMM_N(args)) * sizeof(float);
}

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream)
{
    // This file was generated for one task; refuse any other so a mismatch is an error.
    if (args->abi_version != KEVOLVE_ABI_VERSION || args->op != KEVOLVE_OP_GEMM ||
        args->num_inputs != 2 || args->num_outputs != 1)
        return 1;
    if (args->inputs[0].dtype != KEVOLVE_BF16 || args->inputs[1].dtype != KEVOLVE_BF16 ||
        args->outputs[0].dtype != KEVOLVE_BF16)
        return 2;
    if (args->inputs[0].stride[1] != 1 || args->inputs[1].stride[1] != 1 ||
        args->outputs[0].stride[1] != 1)
        return 3;

    const long long M = KEVOLVE_GEMM_M(args);
    const long long N = KEVOLVE_GEMM_N(args);
    const long long K = KEVOLVE_GEMM_K(args);
    const long long ldb = KEVOLVE_GEMM_LDB(args);
    // Generated for M <= MAX_M; 16-byte loads of B need its rows on 8-element boundaries.
    if (M < 1 || M > MAX_M || N < 1 || K < 1 || N > 2147483647LL || K > 2147483647LL ||
        ldb % VEC != 0 || reinterpret_cast<uintptr_t>(args->inputs[1].data) % 16 != 0)
        return 4;
    if (args->workspace == nullptr || args->workspace_bytes < kevolve_workspace_bytes(args))
        return 6;
    auto* partials = static_cast<float*>(args->workspace);
    const dim3 grid(static_cast<unsigned>((N + COLS - 1) / COLS), SPLIT);
    const auto* A = static_cast<const Input*>(args->inputs[0].data);
    const auto* B = static_cast<const Input*>(args->inputs[1].data);
    const int m = static_cast<int>(M), n = static_cast<int>(N), k = static_cast<int>(K);
    const long long lda = KEVOLVE_GEMM_LDA(args);
    if (M == 1)
        gemvLike<1><<<grid, THREADS, 0, stream>>>(A, B, partials, m, n, k, lda, ldb);
    else if (M <= 2)
        gemvLike<2><<<grid, THREADS, 0, stream>>>(A, B, partials, m, n, k, lda, ldb);
    else if (M <= 4)
        gemvLike<4><<<grid, THREADS, 0, stream>>>(A, B, partials, m, n, k, lda, ldb);
    if (cudaGetLastError() != cudaSuccess)
        return 5;
    // The sum as a programmatic dependent launch where the device has it (sm_90): no launch gap.
    const long long quads = M * N;
    cudaLaunchConfig_t finish = {};
    finish.gridDim = dim3(static_cast<unsigned>(min((quads + 255) / 256, 8LL * 132)));
    finish.blockDim = dim3(256);
    finish.stream = stream;
    cudaLaunchAttribute dependent;
    dependent.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    dependent.val.programmaticStreamSerializationAllowed = args->device.cc_major >= 9 ? 1 : 0;
    finish.attrs = &dependent;
    finish.numAttrs = 1;
    return cudaLaunchKernelEx(&finish, gemvFinish, static_cast<const float*>(partials),
                              static_cast<Output*>(args->outputs[0].data), static_cast<int>(M),
                              static_cast<int>(N), KEVOLVE_GEMM_LDC(args),
                              static_cast<float>(args->scalars[0]),
                              static_cast<float>(args->scalars[1])) == cudaSuccess
               ? 0
               : 5;
}
