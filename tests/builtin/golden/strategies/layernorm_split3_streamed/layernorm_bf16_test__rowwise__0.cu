// expect: ok
// task: layernorm_bf16_test.json
// Kevolve built-in kernel, family rowwise (generated; edit freely).
// Task: layernorm_bf16_test (layernorm 16384x4096 bf16->bf16).
// Strategy: one block per row (256 threads per block), 8-element vectors, 4 vectors per thread in registers (rows up to 8192 elements are read once), Welford statistics, each row split over a cluster of 3 blocks (slices combined through distributed shared memory).
// Rationale:
//   compile sample: layernorm rows split over a cluster of 3 blocks (a count other than a power
//   of two), slices in the registers, Welford moments combined in rank order

#include <kevolve/abi.h>
#include <cuda_bf16.h>
#include <stdint.h>
#include <cooperative_groups.h>

namespace {

using ElemX = __nv_bfloat16;
using ElemY = __nv_bfloat16;
using ElemW = __nv_bfloat16;
using ElemB = __nv_bfloat16;

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

constexpr int WARPS = 8;
constexpr int THREADS = WARPS * 32;
// Threads that share one row: the whole block (one row per block).
constexpr int ROW_THREADS = THREADS;
constexpr int ROWS_PER_CTA = THREADS / ROW_THREADS;
constexpr int VPT = 4;                     // vectors per thread held in registers
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

// Welford/Chan statistics of a set of values: count, mean and sum of squared deviations. The
// merge is symmetric in its arguments, so every thread of a row computes the same bits.
struct Moments {
    float n;
    float mean;
    float m2;
};
__device__ __forceinline__ Moments shuffleDown(Moments v, int offset)
{
    return {shuffleDown(v.n, offset), shuffleDown(v.mean, offset), shuffleDown(v.m2, offset)};
}
[[maybe_unused]] __device__ __forceinline__ Moments shuffleFirst(Moments v)
{
    return {shuffleFirst(v.n), shuffleFirst(v.mean), shuffleFirst(v.m2)};
}
__device__ __forceinline__ Moments combineMoments(Moments a, Moments b)
{
    const float n = a.n + b.n;
    if (n == 0.0f)
        return {0.0f, 0.0f, 0.0f};
    const float delta = b.mean - a.mean;
    return {n, (a.n * a.mean + b.n * b.mean) / n, a.m2 + b.m2 + delta * delta * (a.n * b.n / n)};
}
// The moments of the valid elements of one chunk in registers, by two passes over registers.
__device__ __forceinline__ Moments chunkMoments(const float (&d)[VPT][VEC], long long N,
                                                long long base, int t)
{
    float n = 0.0f;
    float sum = 0.0f;
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        n += static_cast<float>(validIn(N, base, j, t));
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            sum += d[j][i]; // columns past N hold 0
    }
    if (n == 0.0f)
        return {0.0f, 0.0f, 0.0f};
    const float mean = sum / n;
    float m2 = 0.0f;
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const int valid = validIn(N, base, j, t);
#pragma unroll
        for (int i = 0; i < VEC; ++i) {
            const float e = i < valid ? d[j][i] - mean : 0.0f;
            m2 = fmaf(e, e, m2);
        }
    }
    return {n, mean, m2};
}

// The normalised deviation (d - mean) * rstd as one FFMA, d * rstd + centre(mean, rstd), where a
// subtraction and a multiplication took two instructions an element (the prefetching and cp.async
// kernels). d is x - x[0] there, so |mean| * rstd <= sqrt(N) (no element lies further than sqrt(N)
// standard deviations from the mean) and is a few units on most rows: the rounding of -mean * rstd
// moves a normalised value by at most sqrt(N) * 2^-24 (1e-5 at N = 20000), mostly by a few float
// ulps, like the rounding of d - mean it replaces. (Without the shift, rows of 1e4 + noise would
// lose the noise in that rounding.)
[[maybe_unused]] __device__ __forceinline__ float centre(float mean, float rstd)
{
    return -mean * rstd;
}

// y = (x - mean) * rstd * w + b for one chunk; d holds x - shift and mean is that of d. W and B
// are read one vector at a time, so only the row stays live in registers (more rows in flight).
// (Not centre's one FFMA: the streaming kernel's extra live value spilled at 3 blocks per SM.)
__device__ __forceinline__ void normalizeChunk(const ElemW* __restrict__ W,
                                               const ElemB* __restrict__ B, long long N,
                                               long long base, int t, float mean, float rstd,
                                               float (&d)[VPT][VEC])
{
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const long long col = base + (static_cast<long long>(j) * ROW_THREADS + t) * VEC;
        float w[VEC];
        float b[VEC];
        if (col + VEC <= N) {
            loadVec(W + col, w);
            loadVec(B + col, b);
        } else {
            loadTail(W + col, N - col, 0.0f, w);
            loadTail(B + col, N - col, 0.0f, b);
        }
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            d[j][i] = fmaf((d[j][i] - mean) * rstd, w[i], b[i]);
    }
}

// Loads a chunk as x - shift (columns past N give 0).
__device__ __forceinline__ void loadShifted(const ElemX* x, long long N, long long base, int t,
                                            float shift, float (&d)[VPT][VEC])
{
    loadChunk(x, N, base, t, shift, d);
#pragma unroll
    for (int j = 0; j < VPT; ++j)
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            d[j][i] -= shift;
}

[[maybe_unused]] __global__ void __launch_bounds__(THREADS)
    layerNormRows(const ElemX* __restrict__ X, const ElemW* __restrict__ W,
                  const ElemB* __restrict__ B, ElemY* __restrict__ Y, long long M, long long N,
                  long long ldx, long long ldy, float epsilon)
{
    const int t = threadIdx.x % ROW_THREADS;
    int phase = 0; // the block reduction's buffer
    [[maybe_unused]] const auto sumOf = [](float a, float b) { return a + b; };
    const float count = static_cast<float>(N);
    for (long long row = static_cast<long long>(blockIdx.x) * ROWS_PER_CTA + threadIdx.x / ROW_THREADS;
         row < M; row += static_cast<long long>(gridDim.x) * ROWS_PER_CTA) {
        const ElemX* x = X + row * ldx;
        ElemY* y = Y + row * ldy;
        // Statistics of x - x[0]: a constant row has deviations of exactly 0 (output = B), and a
        // large common offset (1e4 + noise) leaves small numbers to sum, without cancellation.
        const float shift = toFloat(x[0]);
        if (N <= CHUNK) {
            // The row fits in registers: one read and one write, the DRAM floor.
            float d[VPT][VEC];
            loadShifted(x, N, 0, t, shift, d);
            const Moments total = rowReduce(chunkMoments(d, N, 0, t), [](Moments a, Moments b) {
                return combineMoments(a, b);
            }, phase);
            const float mean = total.mean;
            const float variance = total.m2 / count;
            const float rstd = 1.0f / sqrtf(variance + epsilon);
            normalizeChunk(W, B, N, 0, t, mean, rstd, d);
            storeChunk(y, N, 0, t, d);
        } else {
            // Longer than the register cache: Welford statistics in one read, then the output.
            Moments part{0.0f, 0.0f, 0.0f};
            for (long long base = 0; base < N; base += CHUNK) {
                float d[VPT][VEC];
                loadShifted(x, N, base, t, shift, d);
                part = combineMoments(part, chunkMoments(d, N, base, t));
            }
            const Moments total =
                rowReduce(part, [](Moments a, Moments b) { return combineMoments(a, b); }, phase);
            const float mean = total.mean;
            const float variance = total.m2 / count;
            const float rstd = 1.0f / sqrtf(variance + epsilon);
            for (long long base = 0; base < N; base += CHUNK) {
                float d[VPT][VEC];
                loadShifted(x, N, base, t, shift, d);
                normalizeChunk(W, B, N, base, t, mean, rstd, d);
                storeChunk(y, N, base, t, d);
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
constexpr int SPLIT = 3;

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
    layerNormRowsSplit(const ElemX* __restrict__ X, const ElemW* __restrict__ W,
                       const ElemB* __restrict__ B, ElemY* __restrict__ Y, long long N,
                       long long ldx, long long ldy, float epsilon)
{
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    __shared__ Moments published;
    const int t = threadIdx.x;
    int phase = 0; // the block reduction's buffer
    const auto combine = [](Moments a, Moments b) { return combineMoments(a, b); };
    const long long slice = sliceLength(N);
    const long long begin = min(N, static_cast<long long>(cluster.block_rank()) * slice);
    const long long n = min(slice, N - begin);
    // One row per cluster; the launch covers the rows (in batches of at most 2^28 rows).
    const long long row = blockIdx.x / SPLIT;
    // Every block shifts by the row's first element (the same value in all of them), so a
    // constant row has deviations of exactly 0 and a large common offset cancels exactly.
    const float shift = toFloat(X[row * ldx]);
    const ElemX* x = X + row * ldx + begin;
    ElemY* y = Y + row * ldy + begin;
    float d[VPT][VEC];
    Moments part{0.0f, 0.0f, 0.0f};
    for (long long base = 0; base < n; base += CHUNK) {
        loadShifted(x, n, base, t, shift, d);
        part = combineMoments(part, chunkMoments(d, n, base, t));
    }
    const Moments block = rowReduce(part, combine, phase);
    if (t == 0)
        published = block;
    const Moments total = clusterCombine(&published, combine);
    const float rstd = 1.0f / sqrtf(total.m2 / static_cast<float>(N) + epsilon);
    if (n <= CHUNK) {
        // The slice is still in registers: the row was read once.
        normalizeChunk(W + begin, B + begin, n, 0, t, total.mean, rstd, d);
        storeChunk(y, n, 0, t, d);
        return;
    }
    for (long long base = 0; base < n; base += CHUNK) {
        loadShifted(x, n, base, t, shift, d);
        normalizeChunk(W + begin, B + begin, n, base, t, total.mean, rstd, d);
        storeChunk(y, n, base, t, d);
    }
}

} // namespace

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream)
{
    // This file was generated for one task; refuse any other so a mismatch is an error.
    if (args->abi_version != KEVOLVE_ABI_VERSION || args->op != KEVOLVE_OP_LAYERNORM ||
        args->num_inputs != 3 || args->num_outputs != 1)
        return 1;
    if (args->inputs[0].dtype != KEVOLVE_BF16 ||
        args->inputs[1].dtype != KEVOLVE_BF16 ||
        args->inputs[2].dtype != KEVOLVE_BF16 ||
        args->outputs[0].dtype != KEVOLVE_BF16)
        return 2;
    if (args->inputs[0].stride[args->inputs[0].rank - 1] != 1 ||
        args->inputs[1].stride[args->inputs[1].rank - 1] != 1 ||
        args->inputs[2].stride[args->inputs[2].rank - 1] != 1 ||
        args->outputs[0].stride[args->outputs[0].rank - 1] != 1)
        return 3;
    if (!(args->scalars[0] > 0.0))
        return 6; // epsilon

    const long long M = KEVOLVE_ROWS(args);
    const long long N = KEVOLVE_COLS(args);
    const long long ldx = KEVOLVE_LDX(args);
    // Vector accesses need every row to start on a VEC-element boundary.
    if (ldx % VEC != 0 || KEVOLVE_LDY(args) % VEC != 0 ||
        reinterpret_cast<uintptr_t>(args->inputs[0].data) % (VEC * sizeof(ElemX)) != 0 ||
        reinterpret_cast<uintptr_t>(args->inputs[1].data) % (VEC * sizeof(ElemW)) != 0 ||
        reinterpret_cast<uintptr_t>(args->inputs[2].data) % (VEC * sizeof(ElemB)) != 0 ||
        reinterpret_cast<uintptr_t>(args->outputs[0].data) % (VEC * sizeof(ElemY)) != 0)
        return 4;
    // A cluster of SPLIT blocks per row, in launches of at most 2^28 rows (the grid's limit).
    for (long long first = 0; first < M; first += (1LL << 28)) {
        const long long grid = min(M - first, 1LL << 28) * SPLIT;
        layerNormRowsSplit<<<grid, THREADS, 0, stream>>>(
            static_cast<const ElemX*>(args->inputs[0].data) + first * ldx,
            static_cast<const ElemW*>(args->inputs[1].data),
            static_cast<const ElemB*>(args->inputs[2].data),
            static_cast<ElemY*>(args->outputs[0].data) + first * KEVOLVE_LDY(args), N, ldx,
            KEVOLVE_LDY(args), static_cast<float>(args->scalars[0]));
    }
    return cudaGetLastError() == cudaSuccess ? 0 : 5;
}
