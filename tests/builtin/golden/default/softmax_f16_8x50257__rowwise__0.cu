// expect: ok
// task: softmax_f16_8x50257.json
// Kevolve built-in kernel, family rowwise (generated; edit freely).
// Task: softmax_f16_8x50257 (softmax 8x50257 f16->f16).
// Strategy: one block per row (1024 threads per block), 1-element vectors, 16 vectors per thread in registers (rows up to 16384 elements are read once), online softmax (maximum and sum in one pass, one reduction), each row split over a cluster of 4 blocks (slices combined through distributed shared memory).
// Rationale:
//   Memory-bound softmax: rows of 50257 exceed what a block's registers cache: 32 warps x 16
//   vectors of 1 elements per thread stream the row in chunks of 16384 elements (the statistics'
//   read, then the output's, which finds the row in L2); 1-element vectors (2-byte accesses
//   where the alignment allows); online statistics (running maximum and sum) in one read of the
//   row; one block per row group; 8 rows give too few blocks for 132 SMs, so each row is split
//   over a cluster of 4 blocks (slices of about 12565 elements, each read once from DRAM), their
//   statistics combined through distributed shared memory in a fixed order.

#include <kevolve/abi.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <cooperative_groups.h>

namespace {

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

constexpr int VEC = 1; // elements per access

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

constexpr int WARPS = 32;
constexpr int THREADS = WARPS * 32;
// Threads that share one row: the whole block (one row per block).
constexpr int ROW_THREADS = THREADS;
constexpr int ROWS_PER_CTA = THREADS / ROW_THREADS;
constexpr int VPT = 16;                     // vectors per thread held in registers
constexpr int CHUNK = ROW_THREADS * VEC * VPT; // row elements one register load covers
// 0: one block per ROWS_PER_CTA rows (no persistent grid).
[[maybe_unused]] constexpr int CTAS_PER_SM = 0;
[[maybe_unused]] constexpr float LOG2E = 1.4426950408889634f;

__device__ __forceinline__ float shuffleDown(float v, int offset)
{
    return __shfl_down_sync(0xffffffffu, v, offset);
}
[[maybe_unused]] __device__ __forceinline__ float shuffleFirst(float v) { return __shfl_sync(0xffffffffu, v, 0); }

// The block combines its values: within each warp by shuffles, then the warps' results in a fixed
// order, so every thread gets the same bits. The warps' results alternate between two buffers
// (phase flips on every call), so one barrier per reduction suffices: a warp can write the next
// reduction's buffer only after every warp has passed this one's barrier, and the reduction after
// that, which reuses this buffer, only after every warp has finished reading it.
template <typename T, typename F>
__device__ __forceinline__ T rowReduce(T v, F combine, int& phase)
{
    __shared__ T partial[2][WARPS];
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        v = combine(v, shuffleDown(v, offset));
    T* buffer = partial[phase];
    phase ^= 1;
    if ((threadIdx.x & 31) == 0)
        buffer[threadIdx.x / 32] = v;
    __syncthreads();
    T r = buffer[0];
#pragma unroll
    for (int w = 1; w < WARPS; ++w)
        r = combine(r, buffer[w]);
    return r;
}

// Vector j of thread t covers columns base + (j * ROW_THREADS + t) * VEC onwards, so neighbouring
// threads read neighbouring vectors (coalesced). Columns at or past N read as `fill`.
template <typename T>
__device__ __forceinline__ void loadChunk(const T* row, long long N, long long base, int t,
                                          float fill, float (&v)[VPT][VEC])
{
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const long long col = base + (static_cast<long long>(j) * ROW_THREADS + t) * VEC;
        if (col + VEC <= N)
            loadVec(row + col, v[j]);
        else
            loadTail(row + col, N - col, fill, v[j]);
    }
}

template <typename T>
__device__ __forceinline__ void storeChunk(T* row, long long N, long long base, int t,
                                           const float (&v)[VPT][VEC])
{
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const long long col = base + (static_cast<long long>(j) * ROW_THREADS + t) * VEC;
        if (col + VEC <= N)
            storeVec(row + col, v[j]);
        else
            storeTail(row + col, N - col, v[j]);
    }
}

// a[0..VEC) combined pairwise: log2(VEC) dependent steps instead of VEC - 1. Per-lane
// accumulators of this shape keep the hot loops' chains of dependent adds short.
template <typename F> __device__ __forceinline__ float combineLanes(float (&a)[VEC], F combine)
{
#pragma unroll
    for (int w = VEC / 2; w > 0; w /= 2)
#pragma unroll
        for (int i = 0; i < w; ++i)
            a[i] = combine(a[i], a[i + w]);
    return a[0];
}

// Elements of vector j of thread t that lie inside the row (0..VEC).
[[maybe_unused]] __device__ __forceinline__ int validIn(long long N, long long base, int j, int t)
{
    const long long col = base + (static_cast<long long>(j) * ROW_THREADS + t) * VEC;
    return static_cast<int>(min(max(N - col, 0LL), static_cast<long long>(VEC)));
}

// exp(x - m) for a row whose maximum is m. x = -inf contributes 0 whatever m is, so a row of -inf
// sums to 0 and ends as 0 * inf = NaN, as it must; a NaN stays NaN and spreads through the sum.
// Subtracting the maximum keeps exp from overflowing for rows of +-1e4.
//
// 2^y on the special-function unit (ex2.approx.ftz: 2 ulp, as exp2f, whose slow path only keeps
// results below 2^-126 that no output or sum of at least 1 can show). A maximum of -inf (a thread
// or row of only -inf) shifts by 0 instead, so x = -inf gives 2^-inf = 0 without a branch per
// element, and x - m stays exact for rows of 1e4 + noise.
__device__ __forceinline__ float exp2Fast(float y)
{
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(y));
    return r;
}
__device__ __forceinline__ float expShifted(float x, float m)
{
    return exp2Fast((x - (m == -INFINITY ? 0.0f : m)) * LOG2E);
}

// Online softmax statistics: the running maximum m and the sum of exp(x - m).
struct MaxSum {
    float m;
    float s;
};
__device__ __forceinline__ MaxSum shuffleDown(MaxSum v, int offset)
{
    return {shuffleDown(v.m, offset), shuffleDown(v.s, offset)};
}
[[maybe_unused]] __device__ __forceinline__ MaxSum shuffleFirst(MaxSum v)
{
    return {shuffleFirst(v.m), shuffleFirst(v.s)};
}
// exp(mOld - mNew); a part that has seen only -inf (or NaN) keeps its sum, 0 or NaN, times 0.
__device__ __forceinline__ float rescale(float mOld, float mNew)
{
    return mOld == -INFINITY ? 0.0f : exp2Fast((mOld - mNew) * LOG2E);
}
__device__ __forceinline__ MaxSum combineMaxSum(MaxSum a, MaxSum b)
{
    const float m = fmaxf(a.m, b.m);
    return {m, a.s * rescale(a.m, m) + b.s * rescale(b.m, m)};
}

[[maybe_unused]] __global__ void __launch_bounds__(THREADS)
    softmaxRows(const ElemX* __restrict__ X, ElemY* __restrict__ Y, long long M, long long N,
                long long ldx, long long ldy)
{
    const int t = threadIdx.x % ROW_THREADS;
    int phase = 0; // the block reduction's buffer
    const auto maxOf = [](float a, float b) { return fmaxf(a, b); };
    const auto sumOf = [](float a, float b) { return a + b; };
    for (long long row = static_cast<long long>(blockIdx.x) * ROWS_PER_CTA + threadIdx.x / ROW_THREADS;
         row < M; row += static_cast<long long>(gridDim.x) * ROWS_PER_CTA) {
        const ElemX* x = X + row * ldx;
        ElemY* y = Y + row * ldy;
        if (N <= CHUNK) {
            // The row fits in registers: one read and one write, the DRAM floor.
            float v[VPT][VEC];
            loadChunk(x, N, 0, t, -INFINITY, v);
            // Maximum and sum of this thread's elements, then one combined reduction.
            MaxSum part;
            float lanes[VEC];
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                lanes[i] = -INFINITY;
#pragma unroll
            for (int j = 0; j < VPT; ++j)
#pragma unroll
                for (int i = 0; i < VEC; ++i)
                    lanes[i] = fmaxf(lanes[i], v[j][i]);
            part.m = combineLanes(lanes, maxOf);
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                lanes[i] = 0.0f;
#pragma unroll
            for (int j = 0; j < VPT; ++j)
#pragma unroll
                for (int i = 0; i < VEC; ++i)
                    lanes[i] += expShifted(v[j][i], part.m);
            part.s = combineLanes(lanes, sumOf);
            const MaxSum total =
                rowReduce(part, [](MaxSum a, MaxSum b) { return combineMaxSum(a, b); }, phase);
            const float inv = 1.0f / total.s;
#pragma unroll
            for (int j = 0; j < VPT; ++j)
#pragma unroll
                for (int i = 0; i < VEC; ++i)
                    v[j][i] = expShifted(v[j][i], total.m) * inv;
            storeChunk(y, N, 0, t, v);
        } else {
            // Longer than the register cache: two reads (online statistics, output).
            MaxSum part{-INFINITY, 0.0f};
            for (long long base = 0; base < N; base += CHUNK) {
                float v[VPT][VEC];
                loadChunk(x, N, base, t, -INFINITY, v);
                float m = part.m;
#pragma unroll
                for (int j = 0; j < VPT; ++j)
#pragma unroll
                    for (int i = 0; i < VEC; ++i)
                        m = fmaxf(m, v[j][i]);
                float s = 0.0f;
#pragma unroll
                for (int j = 0; j < VPT; ++j)
#pragma unroll
                    for (int i = 0; i < VEC; ++i)
                        s += expShifted(v[j][i], m);
                part.s = part.s * rescale(part.m, m) + s;
                part.m = m;
            }
            const MaxSum total =
                rowReduce(part, [](MaxSum a, MaxSum b) { return combineMaxSum(a, b); }, phase);
            const float inv = 1.0f / total.s;
            for (long long base = 0; base < N; base += CHUNK) {
                float v[VPT][VEC];
                loadChunk(x, N, base, t, -INFINITY, v);
#pragma unroll
                for (int j = 0; j < VPT; ++j)
#pragma unroll
                    for (int i = 0; i < VEC; ++i)
                        v[j][i] = expShifted(v[j][i], total.m) * inv;
                storeChunk(y, N, base, t, v);
            }
        }
    }
}


// Too few rows to fill the GPU: each row is split over the SPLIT blocks of a cluster. Block r of the
// cluster takes the r-th slice of the row (a whole number of vectors, so its accesses stay aligned;
// the last slices of a short row may be empty), computes its slice's statistics, and publishes them
// in its shared memory. After the cluster's barrier every block reads the SPLIT partials through
// distributed shared memory in rank order, so all blocks combine the same values in the same order:
// the same bits in every block and in every run (no atomics). A slice that fits the registers is
// read once; a longer one is read again for the output, from L2. One row per cluster, no loop over
// rows: ptxas spilled the loop's state around the reductions (reduce max, f16).
constexpr int SPLIT = 4;

// The elements of a slice: N / SPLIT rounded up to whole vectors (pipeline=bulk has its own,
// bulkSlice, and leaves this unused).
[[maybe_unused]] __host__ __device__ __forceinline__ long long sliceLength(long long N)
{
    const long long perBlock = (N + SPLIT - 1) / SPLIT;
    return (perBlock + VEC - 1) / VEC * VEC;
}

// The cluster's partials combined in rank order (every block gets the same bits). The second
// barrier keeps each block's partial alive (and unchanged) until every block has read it.
template <typename T, typename F> __device__ __forceinline__ T clusterCombine(T* mine, F combine)
{
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    cluster.sync();
    T total = *cluster.map_shared_rank(mine, 0);
#pragma unroll
    for (int r = 1; r < SPLIT; ++r)
        total = combine(total, *cluster.map_shared_rank(mine, r));
    cluster.sync();
    return total;
}

__global__ void __cluster_dims__(SPLIT, 1, 1) __launch_bounds__(THREADS)
    softmaxRowsSplit(const ElemX* __restrict__ X, ElemY* __restrict__ Y, long long N,
                     long long ldx, long long ldy)
{
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    __shared__ MaxSum published;
    const int t = threadIdx.x;
    int phase = 0; // the block reduction's buffer
    const auto combine = [](MaxSum a, MaxSum b) { return combineMaxSum(a, b); };
    const long long slice = sliceLength(N);
    const long long begin = min(N, static_cast<long long>(cluster.block_rank()) * slice);
    const long long n = min(slice, N - begin);
    // One row per cluster; the launch covers the rows (in batches of at most 2^28 rows).
    const long long row = blockIdx.x / SPLIT;
    const ElemX* x = X + row * ldx + begin;
    ElemY* y = Y + row * ldy + begin;
    float v[VPT][VEC];
    MaxSum part{-INFINITY, 0.0f};
    for (long long base = 0; base < n; base += CHUNK) {
        loadChunk(x, n, base, t, -INFINITY, v);
        float m = part.m;
#pragma unroll
        for (int j = 0; j < VPT; ++j)
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                m = fmaxf(m, v[j][i]);
        float s = 0.0f;
#pragma unroll
        for (int j = 0; j < VPT; ++j)
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                s += expShifted(v[j][i], m);
        part.s = part.s * rescale(part.m, m) + s;
        part.m = m;
    }
    const MaxSum block = rowReduce(part, combine, phase);
    if (t == 0)
        published = block;
    const MaxSum total = clusterCombine(&published, combine);
    const float inv = 1.0f / total.s;
    if (n <= CHUNK) {
        // The slice is still in registers: the row was read once.
#pragma unroll
        for (int j = 0; j < VPT; ++j)
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                v[j][i] = expShifted(v[j][i], total.m) * inv;
        storeChunk(y, n, 0, t, v);
        return;
    }
    for (long long base = 0; base < n; base += CHUNK) {
        loadChunk(x, n, base, t, -INFINITY, v);
#pragma unroll
        for (int j = 0; j < VPT; ++j)
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                v[j][i] = expShifted(v[j][i], total.m) * inv;
        storeChunk(y, n, base, t, v);
    }
}

} // namespace

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream)
{
    // This file was generated for one task; refuse any other so a mismatch is an error.
    if (args->abi_version != KEVOLVE_ABI_VERSION || args->op != KEVOLVE_OP_SOFTMAX ||
        args->num_inputs != 1 || args->num_outputs != 1)
        return 1;
    if (args->inputs[0].dtype != KEVOLVE_F16 ||
        args->outputs[0].dtype != KEVOLVE_F16)
        return 2;
    if (args->inputs[0].stride[args->inputs[0].rank - 1] != 1 ||
        args->outputs[0].stride[args->outputs[0].rank - 1] != 1)
        return 3;

    const long long M = KEVOLVE_ROWS(args);
    const long long N = KEVOLVE_COLS(args);
    const long long ldx = KEVOLVE_LDX(args);
    // Vector accesses need every row to start on a VEC-element boundary.
    if (ldx % VEC != 0 || KEVOLVE_LDY(args) % VEC != 0 ||
        reinterpret_cast<uintptr_t>(args->inputs[0].data) % (VEC * sizeof(ElemX)) != 0 ||
        reinterpret_cast<uintptr_t>(args->outputs[0].data) % (VEC * sizeof(ElemY)) != 0)
        return 4;
    // A cluster of SPLIT blocks per row, in launches of at most 2^28 rows (the grid's limit).
    for (long long first = 0; first < M; first += (1LL << 28)) {
        const long long grid = min(M - first, 1LL << 28) * SPLIT;
        softmaxRowsSplit<<<grid, THREADS, 0, stream>>>(
            static_cast<const ElemX*>(args->inputs[0].data) + first * ldx,
            static_cast<ElemY*>(args->outputs[0].data) + first * KEVOLVE_LDY(args), N, ldx,
            KEVOLVE_LDY(args));
    }
    return cudaGetLastError() == cudaSuccess ? 0 : 5;
}
