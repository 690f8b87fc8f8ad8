// expect: ok
// task: softmax_f16_256x32000.json
// Kevolve built-in kernel, family rowwise (generated; edit freely).
// Task: softmax_f16_256x32000 (softmax 256x32000 f16->f16).
// Strategy: one block per row (256 threads per block), 8-element vectors, 4 vectors per thread per step from shared memory (rows up to 32000 elements are read once), online softmax (maximum and sum in one pass, one reduction), one block per row group, the block's slice of the row copied whole into shared memory by 8 bulk copies (TMA) issued at once, so it is read once from DRAM.
// Rationale:
//   Memory-bound softmax: rows of 32000 exceed what a block's registers cache; rather than
//   stream them twice (statistics, then output), each block copies its slice of the row whole
//   into shared memory with bulk copies (TMA), and the row is read once from DRAM: 8 warps, the
//   fewest blocks per row whose slices stay within 80 KB, or with rows for more than a round of
//   resident blocks the most whose slices keep 30 KB; 8-element vectors (16-byte accesses where
//   the alignment allows); online statistics (running maximum and sum) in one read of the row;
//   one block per row (62 KB of shared memory).

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
constexpr int SPLIT = 1;

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

using RawX = Raw<VEC * sizeof(ElemX)>::type;

// VEC elements of p[0..valid) packed, the rest `fill`; vectors inside the row take one access.
template <typename T, typename R>
__device__ __forceinline__ void loadPackedVec(const T* p, long long valid, T fill, R& out)
{
    if (valid >= VEC) {
        out = *reinterpret_cast<const R*>(p);
        return;
    }
    T e[VEC];
#pragma unroll
    for (int i = 0; i < VEC; ++i)
        e[i] = i < valid ? p[i] : fill;
    memcpy(&out, e, sizeof(R));
}

// Issues the loads of a thread's VPT vectors of row x and returns without waiting for them.
// INSIDE: how many of every thread's leading vectors lie inside the row, so need no test: VPT when
// N == CHUNK; VPT - 1 when only the last vector can pass the row's end (N > CHUNK - ROW_THREADS *
// VEC: the smallest cover of the row, which the strategies size to the task's row); 0 otherwise.
// The prefetching kernels run only rows of N <= CHUNK, so the tests are 32-bit. A tested vector
// (N % VEC == 0, the launch's condition) is still loaded by every lane, without a branch: a vector
// past the row reads the row's first vector instead, which fillPastRow replaces once the row is
// used. (With loads inside a test of the row's end, which diverges where the row ends inside a
// warp, rows that no block covers exactly ran 5-20 points further from the DRAM floor than exact
// ones: most likely the warp waited for those loads, the next row's prefetch, where its lanes
// reconverged. With every vector tested, rows of 9000 in 9 vectors ran 800 instructions a row
// where the exact cover runs 617.)
template <int INSIDE, typename T, typename R>
__device__ __forceinline__ void loadVectors(const T* x, long long N, int t, R (&v)[VPT])
{
    const int left = static_cast<int>(N) - t * VEC; // columns from the thread's first
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const int col = j * ROW_THREADS * VEC;
        v[j] = *reinterpret_cast<const R*>(x + (j < INSIDE || col < left ? t * VEC + col : 0));
    }
}

// The vectors past N of a row as loadVectors<INSIDE> read it take `fill`, a value that adds
// nothing to the op's statistics. Called when the row is used, after its loads have arrived.
template <int INSIDE, typename T, typename R>
__device__ __forceinline__ void fillPastRow(R (&v)[VPT], long long N, int t, T fill)
{
    // A full row has no vector past N (and nvcc warns of unreachable loops).
    if constexpr (INSIDE < VPT) {
        T e[VEC];
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            e[i] = fill;
        R filled;
        memcpy(&filled, e, sizeof(R));
        const int left = static_cast<int>(N) - t * VEC;
#pragma unroll
        for (int j = INSIDE; j < VPT; ++j)
            v[j] = j * ROW_THREADS * VEC < left ? v[j] : filled;
    }
}

// The VEC elements of type T packed in raw, as floats: 16-bit elements a 32-bit word at a time
// (conversion.cu's toFloats: one instruction an element where a bf16 converted on its own takes
// two), others one by one. (memory/vectors.cu's loadVec converts one by one: pairs made ptxas
// spill in the 64-register split kernels, and these loops are the ones the conversions slow.)
template <typename T, typename R>
__device__ __forceinline__ void unpackVec(const R& raw, float (&v)[VEC])
{
    static_assert(sizeof(R) == VEC * sizeof(T), "raw holds the VEC elements");
    if constexpr (sizeof(T) == 2 && sizeof(R) % 4 == 0) {
        unsigned int w[sizeof(R) / 4];
        memcpy(w, &raw, sizeof(R));
#pragma unroll
        for (int k = 0; k < static_cast<int>(sizeof(R) / 4); ++k)
            toFloats(static_cast<const T*>(nullptr), w[k], v[2 * k], v[2 * k + 1]);
    } else {
        T e[VEC];
        memcpy(e, &raw, sizeof(R));
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            v[i] = toFloat(e[i]);
    }
}

template <typename T> using RawOf = typename Raw<VEC * sizeof(T)>::type; // VEC elements of T

// W's (or B's) vector at column col (< CHUNK) of a row that loadVectors read, branch-free like its
// loads: a vector past the row reads W's first (its output is not stored). inside: the vector is
// one of the INSIDE untested ones (a constant once the loop over vectors is unrolled).
template <typename T>
[[maybe_unused]] __device__ __forceinline__ RawOf<T> loadWeightRaw(const T* w, int col, long long N,
                                                                   bool inside)
{
    return *reinterpret_cast<const RawOf<T>*>(w + (inside || col < static_cast<int>(N) ? col : 0));
}

template <typename T>
[[maybe_unused]] __device__ __forceinline__ void loadWeightVec(const T* w, int col, long long N,
                                                               bool inside, float (&v)[VEC])
{
    unpackVec<T>(loadWeightRaw(w, col, N, inside), v);
}

// An empty asm the compiler cannot see through. Packed values pass it before each use, so they are
// converted again where needed: otherwise the compiler keeps the floats of the first conversion
// (the current row across its three passes, W and B across all rows), which take twice the
// registers of the packed data and spill.
template <typename R> __device__ __forceinline__ void keepPacked(R& raw)
{
    if constexpr (sizeof(R) % 4 == 0) {
        unsigned int words[sizeof(R) / 4];
        memcpy(words, &raw, sizeof(R));
#pragma unroll
        for (int k = 0; k < static_cast<int>(sizeof(R) / 4); ++k)
            asm volatile("" : "+r"(words[k]));
        memcpy(&raw, words, sizeof(R));
    } else {
        unsigned short half;
        memcpy(&half, &raw, sizeof(R));
        asm volatile("" : "+h"(half));
        memcpy(&raw, &half, sizeof(R));
    }
}

// pipeline=bulk: the block's slice of the row (the whole row with SPLIT = 1) is copied into shared
// memory by PIECES bulk asynchronous copies (TMA, cp.async.bulk), all issued at once, so the slice
// is read from DRAM once however long the row, with every byte of it in flight together. The
// statistics start on each piece as it lands (its mbarrier), the output is computed from shared
// memory. A row longer than the register cache otherwise streams twice (statistics, then output).
constexpr int PIECES = 8;

// Every bulk copy but a row's first starts on a 128-byte line of the row, and so does every
// warp's 512 bytes of output: slices are whole lines, counted from the row's first line boundary
// (so rank 0's slice is short by the row's lead, the elements before it, and the last one long by
// as much), and pieces too, counted from the slice's. Copies that started anywhere on 16 bytes
// (slices of N / SPLIT rounded to vectors) ran 0.3 to 8.2 points of the DRAM floor slower over
// the same splits of 10 row lengths (H200, session 25); before, rows of 128256 f16 in 6 slices
// (whole lines by chance) ran 83.4%, in 7 and 8 (off the line) 77.3 and 79.8, and now 83.3 and
// 82.1; rows of 151936 bf16 in 8 ran 79.5 (32 bytes off the line), now 83.3.
constexpr long long LINE = 128 / sizeof(ElemX); // elements per 128-byte line
constexpr int LINE_VECTORS = 128 / (VEC * sizeof(ElemX));

// Slice r of a row starts at element r stride - lead (r > 0; rank 0 at the row's start).
__host__ __device__ __forceinline__ long long bulkStride(long long N)
{
    return ((N + SPLIT - 1) / SPLIT + LINE - 1) / LINE * LINE;
}
// The elements of shared memory one block's slice may take (the launch sizes it with this): a
// stride, or the last slice with the longest lead (LINE - VEC) if that is longer.
__host__ __device__ __forceinline__ long long bulkSlice(long long N)
{
    if (SPLIT == 1)
        return (N + VEC - 1) / VEC * VEC;
    const long long stride = bulkStride(N);
    const long long last = N - (SPLIT - 1) * stride;
    return max(stride, (last + VEC - 1) / VEC * VEC + LINE - VEC);
}

__device__ __forceinline__ uint32_t sharedAddress(const void* p)
{
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// The piece's bytes land in shared memory and complete the transaction count of `bar`.
__device__ __forceinline__ void bulkCopy(void* dst, const void* src, uint32_t bytes, uint32_t bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(sharedAddress(dst)), "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}

// Waits for the phase of `bar` with `parity` to complete. The suspend-time hint lets a warp whose
// piece has not landed sleep on the barrier (NANOSLEEP.SYNCS) instead of polling it.
__device__ __forceinline__ void waitPhase(uint32_t bar, uint32_t parity)
{
    asm volatile("{\n\t.reg .pred p;\n\t"
                 "WAIT_AGAIN:\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1, %2;\n\t"
                 "@!p bra WAIT_AGAIN;\n\t}" ::"r"(bar),
                 "r"(parity), "r"(10000000u)
                 : "memory");
}

// Thread 0 issues the copies of one slice (whole vectors) into `buffer`, each piece completing
// its barrier's transaction count. Piece p ends at vector head + (p + 1) perPiece (a line).
__device__ __forceinline__ void issueSlice(ElemX* buffer, const ElemX* x, int vectors, int head,
                                           int perPiece, unsigned long long* landed)
{
#pragma unroll
    for (int p = 0; p < PIECES; ++p) {
        const int first = p == 0 ? 0 : min(vectors, head + p * perPiece);
        const uint32_t bytes = static_cast<uint32_t>(
            (min(vectors, head + (p + 1) * perPiece) - first) * VEC * sizeof(ElemX));
        const uint32_t bar = sharedAddress(&landed[p]);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
                     : "memory");
        if (bytes > 0)
            bulkCopy(buffer + first * VEC, x + first * VEC, bytes, bar);
    }
}

// The block's (maximum, sum of exp(x - maximum)): the maximum first (a butterfly, so every lane
// has it), each thread's sum rescaled to it once, then the sums; the warps' results in a fixed
// order, so every thread gets the same bits. Pairwise online combines at every step (rowReduce)
// and the cluster's exchange took 239 instructions a warp, 13% of the kernel's 19.4 M on rows of
// 50257 bf16 (ncu source counters, H200, session 24); with this, the exchange and the reference
// below it runs 17.8 M.
__device__ __forceinline__ MaxSum blockMaxSum(MaxSum v, int& phase)
{
    __shared__ MaxSum partials[2][WARPS];
    float m = v.m;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    float s = v.s * rescale(v.m, m);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        s += __shfl_xor_sync(0xffffffffu, s, o);
    MaxSum* buffer = partials[phase];
    phase ^= 1;
    if ((threadIdx.x & 31) == 0)
        buffer[threadIdx.x / 32] = MaxSum{m, s};
    __syncthreads();
    float most = buffer[0].m;
#pragma unroll
    for (int w = 1; w < WARPS; ++w)
        most = fmaxf(most, buffer[w].m);
    float sum = 0.0f;
#pragma unroll
    for (int w = 0; w < WARPS; ++w)
        sum += buffer[w].s * rescale(buffer[w].m, most);
    return MaxSum{most, sum};
}

// The statistics pass stores each exp(x - m) (m the thread's reference) over its x, and the output
// pass multiplies it by 2^(m log2(e) - M log2(e) - log2(s)): one exponential an element, not two.
// With the second exponential, a timeline of the blocks (globaltimer) put rows of 151936 bf16 at
// 32.4-33.7 us from the first block's start to the last one's end, and at 29.9-31.0 without
// either exponential: the floor is 30.9 (H200, session 26). Stored, rows of 128256-152064 f16
// ran at 86.1-86.4% of the DRAM floor where the second exponential ran them at 82.5-83.4, bf16
// rows of 50257-151936 at 85.3-85.6 (83.3-83.4), 100277 at 83.3 (80.7), 256000 at 78.1 (76.5),
// in one serve. The stored value is rounded to ElemX once more than a directly computed output
// (within one unit of the output's last place where the direct form is within half of one; the
// harness's bound was as far from both). SLACK keeps it in ElemX's range: 10 for f16 (e^10 <
// 65504, its largest), 20 for bf16 and f32 (8-bit exponents).
constexpr float SLACK = 10.0f;
// A factor 2^d under 2^kFactorLog is applied as two, 2^kFactorLog and 2^(d - kFactorLog): one
// would flush to zero under 2^-126 where the product (an exponential up to e^20 times it) need
// not. With one factor, threads whose reference lay 87 or more under the row's maximum (the
// harness's rows of bf16 values spread by 24) wrote zeros where the output is 1e-35.
constexpr float kFactorLog = -120.0f;

// The thread's stored exponentials (vectors t, t + THREADS, ... before `end`) times 2^logFactor,
// into dst: the output, or the slice itself where the reference rose. With TWO the factor is
// applied as two (kFactorLog); without, it must be at least 2^kFactorLog.
template <bool TWO, typename T>
__device__ __forceinline__ void writeScaled(T* dst, const ElemX* stored, int t, int end,
                                            float logFactor)
{
    const float f1 = exp2Fast(TWO ? fmaxf(logFactor, kFactorLog) : logFactor);
    const float f2 = TWO ? exp2Fast(logFactor - fmaxf(logFactor, kFactorLog)) : 1.0f;
#pragma unroll VPT
    for (int j = t; j < end; j += THREADS) {
        float v[VEC];
        unpackVec<ElemX>(*reinterpret_cast<const RawOf<ElemX>*>(stored + j * VEC), v);
#pragma unroll
        for (int e = 0; e < VEC; ++e)
            v[e] = TWO ? v[e] * f1 * f2 : v[e] * f1;
        storeVec(dst + j * VEC, v);
    }
}

// Where the thread's reference rose: its exponentials stored so far rescaled to the new one (rare,
// so out of line).
__device__ __noinline__ void rescaleStored(unsigned char* slab, int t, int end, float logFactor)
{
    ElemX* stored = reinterpret_cast<ElemX*>(slab);
    writeScaled<true>(stored, stored, t, end, logFactor);
}

// One row per cluster (per block with SPLIT = 1), no loop over rows: a persistent grid of clusters
// with two slice buffers, the next row's copies in flight while the current row was reduced and
// written, ran at 25-57% of the DRAM floor where this kernel ran at 60-78% (H200, session 16; with
// this kernel's instruction count, 1 or 2 blocks of 8 or 16 warps per SM, 33-67% where it ran
// 65-85%, session 23). An unsplit row still launches as a cluster, of one block: the blocks of a
// cluster launch are placed otherwise than a plain launch's, and 1048 rows of 32000 f16 ran at
// 86.8% of the floor where the same kernel without the attribute ran at 80.7% (85.6 against 81.2
// for a second form, in the same serve; H200, session 23). Storing exp(x - the piece's maximum)
// over x, one exponential an element instead of two, lost (72.6 and 61.8 where this ran 80.7 and
// 72.1: the maximum's pass and the stores cost more than the exponentials saved).
__global__ void __cluster_dims__(SPLIT, 1, 1) __launch_bounds__(THREADS)
    softmaxRowsBulk(const ElemX* __restrict__ X, ElemY* __restrict__ Y, long long N,
                    long long ldx, long long ldy)
{
    extern __shared__ __align__(128) unsigned char slab[];
    __shared__ __align__(8) unsigned long long landed[PIECES];
    const long long rank = 0;
    const ElemX* s = reinterpret_cast<const ElemX*>(slab);
    const int t = threadIdx.x;
    int phase = 0; // the block reduction's buffer
    const long long row = blockIdx.x / SPLIT;
    // The row's lead: its elements before its first 128-byte line (16-byte aligned: the launch
    // checks ldx and the pointers, so a whole number of vectors).
    const long long lead =
        static_cast<long long>(reinterpret_cast<uintptr_t>(X + row * ldx) % 128) / sizeof(ElemX);
    const long long stride = bulkStride(N); // unused with SPLIT = 1: rank 0 takes the row
    const long long begin = rank == 0 ? 0 : min(N, rank * stride - lead);
    const long long n = (rank == SPLIT - 1 ? N : min(N, (rank + 1) * stride - lead)) - begin;
    const ElemX* x = X + row * ldx + begin;
    ElemY* y = Y + row * ldy + begin;
    // Whole vectors (16 bytes) are copied; the row's last few elements, fewer than a vector, are
    // read directly. `head`: the vectors before the slice's first line (rank 0's, with a lead).
    const int vectors = static_cast<int>(n / VEC);
    const int head = rank == 0 ? static_cast<int>((LINE - lead) % LINE / VEC) : 0;
    const int perPiece =
        (max(0, vectors - head) + PIECES * LINE_VECTORS - 1) / (PIECES * LINE_VECTORS) *
        LINE_VECTORS;
    const long long tail = n - static_cast<long long>(vectors) * VEC;
    if (t == 0) {
#pragma unroll
        for (int p = 0; p < PIECES; ++p)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sharedAddress(&landed[p]))
                         : "memory");
        // The initialised barriers visible to the copies (the async proxy) and the cluster.
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        issueSlice(reinterpret_cast<ElemX*>(slab), x, vectors, head, perPiece, landed);
    }
    __syncthreads(); // the barriers are initialised before anyone waits on them
    // One pass over each piece: the thread's reference m and sum of exp(x - m), the sum rescaled
    // only when a vector's maximum passes m + SLACK (4% faster than a maximum pass, then a sum
    // pass, over each piece: H200, session 17). With m the running maximum itself, some thread of
    // a warp raised it on 95% of the vectors (each thread holds a dozen), and the rescale's branch,
    // 10 instructions and an exponential, ran on nearly all of them; a reference up to 20 (SLACK;
    // 10 for f16) under the maximum keeps every term under e^20 (no overflow for a slice of under
    // 10^29 elements) and the sum's relative error as before: +1.1 points of the DRAM floor (H200,
    // session 24). Each
    // exponential is 2^(x log2(e) - m log2(e)), one FFMA: m log2(e) is rounded once, a relative
    // error of at most 2^-24 |m log2(e)| in every term of a row, far inside the harness's scale for
    // softmax (it grows with |x|). Indices within the slice are 32-bit, the raw words converted a
    // pair at a time (unpackVec): with the two subtractions and 64-bit indices of the first form
    // this loop and the output's ran 26.4 M warp instructions on 664 rows of 50257 bf16, then
    // 19.5 M; the kernel was issue-bound (H200, session 23).
    //   Each exponential is stored over its x in shared memory (in ElemX), so the output pass
    // multiplies instead of computing a second one (writeScaled). Where the reference rises, the
    // thread's stored exponentials are rescaled to it (rescaleStored; rare: a jump over SLACK).
    float m = -INFINITY; // the thread's reference: its maximum so far, or up to SLACK under it
    float ml = 0.0f;     // m log2(e); 0 while m is -inf, so x = -inf gives 2^-inf = 0
    float acc = 0.0f;    // the sum of exp(x - m)
    int i = t;
    for (int p = 0; p < PIECES; ++p) {
        const int last = min(vectors, head + (p + 1) * perPiece);
        waitPhase(sharedAddress(&landed[p]), 0);
#pragma unroll VPT
        for (; i < last; i += THREADS) {
            float v[VEC];
            unpackVec<ElemX>(*reinterpret_cast<const RawOf<ElemX>*>(s + i * VEC), v);
            float lanes[VEC];
#pragma unroll
            for (int e = 0; e < VEC; ++e)
                lanes[e] = v[e];
            const float most = combineLanes(lanes, [](float a, float b) { return fmaxf(a, b); });
            if (most > m + SLACK) { // -inf + SLACK = -inf: a thread's first finite vector sets m
                acc *= rescale(m, most);
                const float mostL = most * LOG2E;
                if (m != -INFINITY) // the exponentials stored so far (all 0 while m is -inf)
                    rescaleStored(slab, t, i, ml - mostL);
                m = most;
                ml = mostL;
            }
#pragma unroll
            for (int e = 0; e < VEC; ++e)
                v[e] = exp2Fast(fmaf(v[e], LOG2E, -ml));
            storeVec(reinterpret_cast<ElemX*>(slab) + i * VEC, v); // before combineLanes folds v
            acc += combineLanes(v, [](float a, float b) { return a + b; });
        }
    }
    MaxSum part{m, acc};
    float end[VEC];
    if (tail > 0 && t == THREADS - 1) {
        loadTail(x + vectors * VEC, tail, -INFINITY, end);
        float most = part.m;
#pragma unroll
        for (int e = 0; e < VEC; ++e)
            most = fmaxf(most, end[e]);
        float sum = 0.0f;
#pragma unroll
        for (int e = 0; e < VEC; ++e)
            sum += expShifted(end[e], most);
        part.s = part.s * rescale(part.m, most) + sum;
        part.m = most;
    }
    const MaxSum block = blockMaxSum(part, phase);
    const MaxSum total = block;
    // exp(x - M) / s = exp(x - m) 2^(m log2(e) - (M log2(e) + log2(s))): the stored exponential
    // times the thread's factor, in two where one would flush to zero (kFactorLog).
    const float shift = total.m == -INFINITY ? 0.0f : total.m;
    const float logSum = __log2f(total.s);
    const float shiftL = fmaf(shift, LOG2E, logSum);
    // A thread that saw only -inf stored zeros: its outputs are 0, or NaN where the row's are.
    const float logScale =
        m != -INFINITY || total.m == -INFINITY || shiftL != shiftL ? ml - shiftL : -INFINITY;
    if (__all_sync(0xffffffffu, logScale >= kFactorLog)) // the warp's threads near the maximum
        writeScaled<false>(y, s, t, vectors, logScale);
    else
        writeScaled<true>(y, s, t, vectors, logScale);
    if (tail > 0 && t == THREADS - 1) {
#pragma unroll
        for (int e = 0; e < VEC; ++e)
            end[e] = exp2Fast(fmaf(end[e] - shift, LOG2E, -logSum));
        storeTail(y + vectors * VEC, tail, end);
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
    {
        // A block's slice of the row in shared memory; a slice over what a block may have, less
        // 1 KB for the barriers and the reduction's partials, streams (the one-row kernel below).
        const long long bytes = bulkSlice(N) * static_cast<long long>(sizeof(ElemX));
        if (bytes <= static_cast<long long>(args->device.max_smem_per_block_optin) - 1024) {
            // Over 48 KB of dynamic shared memory per block must be asked for.
            if (bytes > 48 * 1024 &&
                cudaFuncSetAttribute(softmaxRowsBulk, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(bytes)) != cudaSuccess)
                return 5;
            // One row per cluster of SPLIT blocks, in launches of at most 2^28 rows.
            for (long long first = 0; first < M; first += (1LL << 28)) {
                const long long grid = min(M - first, 1LL << 28) * SPLIT;
                softmaxRowsBulk<<<grid, THREADS, bytes, stream>>>(
                    static_cast<const ElemX*>(args->inputs[0].data) + first * ldx,
                    static_cast<ElemY*>(args->outputs[0].data) + first * KEVOLVE_LDY(args), N,
                    ldx, KEVOLVE_LDY(args));
            }
            return cudaGetLastError() == cudaSuccess ? 0 : 5;
        }
    }
    const long long rowGroups = (M + ROWS_PER_CTA - 1) / ROWS_PER_CTA;
    const long long grid = min(rowGroups, 2147483647LL);
    softmaxRows<<<grid, THREADS, 0, stream>>>(
        static_cast<const ElemX*>(args->inputs[0].data),
        static_cast<ElemY*>(args->outputs[0].data), M, N, ldx, KEVOLVE_LDY(args));
    return cudaGetLastError() == cudaSuccess ? 0 : 5;
}
