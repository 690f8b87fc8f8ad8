// expect: ok
// task: rmsnorm_bf16_test.json
// Kevolve built-in kernel, family rowwise (generated; edit freely).
// Task: rmsnorm_bf16_test (rmsnorm 16384x4096 bf16->bf16).
// Strategy: one block per row (128 threads per block), 4-element vectors, 8 vectors per thread in registers (rows up to 4096 elements are read once), one-pass mean square (fp32 sum of squares, one reduction), a persistent grid of 4 blocks per SM, the next row prefetched (packed) before the current row's reduction, W kept in registers.
// Rationale:
//   Memory-bound rmsnorm: rows of 4096 need a block to stay in registers: 4 warps x 8 vectors of
//   4 elements per thread cache up to 4096 elements, so the row is read once; 4-element vectors
//   (8-byte accesses where the alignment allows); the mean square in one fp32 reduction (its
//   terms never cancel), then x times 1/sqrt(mean square + epsilon) times W; a persistent grid
//   of 4 blocks per SM (as many as the registers hold), each loading its next row before
//   reducing the current one (about 32 KB of loads in flight per SM), W kept in registers.

#include <kevolve/abi.h>
#include <cuda_bf16.h>
#include <stdint.h>

namespace {

using ElemX = __nv_bfloat16;
using ElemY = __nv_bfloat16;
using ElemW = __nv_bfloat16;

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

constexpr int VEC = 4; // elements per access

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
// Threads that share one row: the whole block (one row per block).
constexpr int ROW_THREADS = THREADS;
constexpr int ROWS_PER_CTA = THREADS / ROW_THREADS;
constexpr int VPT = 8;                     // vectors per thread held in registers
constexpr int CHUNK = ROW_THREADS * VEC * VPT; // row elements one register load covers
// Blocks per SM of the persistent grid.
[[maybe_unused]] constexpr int CTAS_PER_SM = 4;
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

// y = x * rstd * w for one chunk in registers. W is read one vector at a time, so only the row
// stays live in registers (more rows in flight).
__device__ __forceinline__ void scaleChunk(const ElemW* __restrict__ W, long long N, long long base,
                                           int t, float rstd, float (&v)[VPT][VEC])
{
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const long long col = base + (static_cast<long long>(j) * ROW_THREADS + t) * VEC;
        float w[VEC];
        if (col + VEC <= N)
            loadVec(W + col, w);
        else
            loadTail(W + col, N - col, 0.0f, w);
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            v[j][i] = v[j][i] * rstd * w[i];
    }
}

// This thread's sum of squares of one chunk; columns past N hold 0 and add nothing. The terms are
// never negative, so nothing cancels: one pass in fp32 holds what the row needs.
__device__ __forceinline__ float chunkSquares(const float (&v)[VPT][VEC])
{
    float q[VEC];
#pragma unroll
    for (int i = 0; i < VEC; ++i)
        q[i] = 0.0f;
#pragma unroll
    for (int j = 0; j < VPT; ++j)
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            q[i] = fmaf(v[j][i], v[j][i], q[i]);
    return combineLanes(q, [](float a, float b) { return a + b; });
}

[[maybe_unused]] __global__ void __launch_bounds__(THREADS)
    rmsNormRows(const ElemX* __restrict__ X, const ElemW* __restrict__ W, ElemY* __restrict__ Y,
                long long M, long long N, long long ldx, long long ldy, float epsilon)
{
    const int t = threadIdx.x % ROW_THREADS;
    int phase = 0; // the block reduction's buffer
    const auto sumOf = [](float a, float b) { return a + b; };
    const float count = static_cast<float>(N);
    for (long long row = static_cast<long long>(blockIdx.x) * ROWS_PER_CTA + threadIdx.x / ROW_THREADS;
         row < M; row += static_cast<long long>(gridDim.x) * ROWS_PER_CTA) {
        const ElemX* x = X + row * ldx;
        ElemY* y = Y + row * ldy;
        if (N <= CHUNK) {
            // The row fits in registers: one read and one write, the DRAM floor.
            float v[VPT][VEC];
            loadChunk(x, N, 0, t, 0.0f, v);
            // A zero row gives 0 / sqrt(epsilon) = 0; epsilon > 0 is checked at launch.
            const float rstd = 1.0f / sqrtf(rowReduce(chunkSquares(v), sumOf, phase) / count + epsilon);
            scaleChunk(W, N, 0, t, rstd, v);
            storeChunk(y, N, 0, t, v);
        } else {
            // Longer than the register cache: the mean square in one read, then the output.
            float squares = 0.0f;
            for (long long base = 0; base < N; base += CHUNK) {
                float v[VPT][VEC];
                loadChunk(x, N, base, t, 0.0f, v);
                squares += chunkSquares(v);
            }
            const float rstd = 1.0f / sqrtf(rowReduce(squares, sumOf, phase) / count + epsilon);
            for (long long base = 0; base < N; base += CHUNK) {
                float v[VPT][VEC];
                loadChunk(x, N, base, t, 0.0f, v);
                scaleChunk(W, N, base, t, rstd, v);
                storeChunk(y, N, base, t, v);
            }
        }
    }
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

// A thread's share of a row that fits in registers, still packed (converted on use, so two rows
// fit). Columns past N hold 0 once the row is used (fillPastRow).
struct PackedRow {
    RawX v[VPT];
};

// Issues the loads of row x and returns without waiting for them. INSIDE: the leading vectors of
// every thread that lie inside the row (loadVectors).
template <int INSIDE>
__device__ __forceinline__ void loadRow(const ElemX* x, long long N, int t, PackedRow& r)
{
    loadVectors<INSIDE>(x, N, t, r.v);
}

__device__ __forceinline__ void keepPacked(PackedRow& r)
{
#pragma unroll
    for (int j = 0; j < VPT; ++j)
        keepPacked(r.v[j]);
}

using RawW = Raw<VEC * sizeof(ElemW)>::type;

// W for this thread's columns, loaded once per block and kept packed for all its rows (columns
// past N read as 0).
struct PackedWeights {
    RawW w[VPT];
};
template <int INSIDE>
__device__ __forceinline__ void loadWeights(const ElemW* W, long long N, int t, PackedWeights& p)
{
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const long long col = (static_cast<long long>(j) * ROW_THREADS + t) * VEC;
        if (j < INSIDE)
            p.w[j] = *reinterpret_cast<const RawW*>(W + col);
        else
            loadPackedVec(W + col, N - col, ElemW(0.0f), p.w[j]);
    }
}

__device__ __forceinline__ void keepPacked(PackedWeights& p)
{
#pragma unroll
    for (int j = 0; j < VPT; ++j)
        keepPacked(p.w[j]);
}


// y = n * w for one vector, stored, where W and Y share one 16-bit type: n is rounded to it and
// the product runs two elements an instruction (HMUL2) on W's raw words, never converted (half a
// pack and half an HMUL2 an element where the float path took a conversion and an FMUL). Two
// roundings relative to |y| itself: no cancellation, at most one unit of the output type more.
__device__ __forceinline__ void storeScaled(ElemY* y, const float (&n)[VEC], const RawOf<ElemW>& w)
{
    static_assert(VEC % 2 == 0 && sizeof(RawOf<ElemW>) == sizeof(RawOf<ElemY>), "packed pairs");
    __nv_bfloat162 wp[VEC / 2];
    __nv_bfloat162 out[VEC / 2];
    memcpy(wp, &w, sizeof(wp));
#pragma unroll
    for (int k = 0; k < VEC / 2; ++k)
        out[k] = __hmul2(__floats2bfloat162_rn(n[2 * k], n[2 * k + 1]), wp[k]);
    RawOf<ElemY> raw;
    memcpy(&raw, out, sizeof(raw));
    *reinterpret_cast<RawOf<ElemY>*>(y) = raw;
}

// INSIDE: the leading vectors of every thread that lie inside the row, so are read, used and stored
// without a bounds test (loadVectors; kevolve_launch picks VPT, VPT - 1 or 0 from N).
template <int INSIDE>
__global__ void __launch_bounds__(THREADS, CTAS_PER_SM)
    rmsNormRowsPrefetch(const ElemX* __restrict__ X, const ElemW* __restrict__ W,
                        ElemY* __restrict__ Y, long long M, long long N, long long ldx,
                        long long ldy, float epsilon)
{
    const int t = threadIdx.x % ROW_THREADS;
    int phase = 0; // the block reduction's buffer
    const auto sumOf = [](float a, float b) { return a + b; };
    const float count = static_cast<float>(N);
    const long long step = static_cast<long long>(gridDim.x) * ROWS_PER_CTA;
    long long row = static_cast<long long>(blockIdx.x) * ROWS_PER_CTA + threadIdx.x / ROW_THREADS;
    PackedWeights weights;
    loadWeights<INSIDE>(W, N, t, weights);
    PackedRow current;
    if (row < M)
        loadRow<INSIDE>(X + row * ldx, N, t, current);
    for (; row < M; row += step) {
        // The next row's loads go out first and are waited for only when it becomes current.
        PackedRow next;
        if (row + step < M)
            loadRow<INSIDE>(X + (row + step) * ldx, N, t, next);
        keepPacked(weights);
        fillPastRow<INSIDE>(current.v, N, t, ElemX(0.0f));
        float q[VEC];
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            q[i] = 0.0f;
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            float v[VEC];
            unpackVec<ElemX>(current.v[j], v);
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                q[i] = fmaf(v[i], v[i], q[i]);
        }
        const float squares = rowReduce(combineLanes(q, sumOf), sumOf, phase);
        const float rstd = 1.0f / sqrtf(squares / count + epsilon);
        ElemY* y = Y + row * ldy;
        keepPacked(current);
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            const int col = (j * ROW_THREADS + t) * VEC; // N <= CHUNK
            float v[VEC];
            unpackVec<ElemX>(current.v[j], v);
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                v[i] *= rstd;
            if (j < INSIDE || col < static_cast<int>(N)) // N % VEC == 0: whole vectors
                storeScaled(y + col, v, weights.w[j]);
        }
        current = next;
    }
}

} // namespace

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream)
{
    // This file was generated for one task; refuse any other so a mismatch is an error.
    if (args->abi_version != KEVOLVE_ABI_VERSION || args->op != KEVOLVE_OP_RMSNORM ||
        args->num_inputs != 2 || args->num_outputs != 1)
        return 1;
    if (args->inputs[0].dtype != KEVOLVE_BF16 ||
        args->inputs[1].dtype != KEVOLVE_BF16 ||
        args->outputs[0].dtype != KEVOLVE_BF16)
        return 2;
    if (args->inputs[0].stride[args->inputs[0].rank - 1] != 1 ||
        args->inputs[1].stride[args->inputs[1].rank - 1] != 1 ||
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
        reinterpret_cast<uintptr_t>(args->outputs[0].data) % (VEC * sizeof(ElemY)) != 0)
        return 4;
    const long long rowGroups = (M + ROWS_PER_CTA - 1) / ROWS_PER_CTA;
    // Persistent: at most CTAS_PER_SM blocks per SM (all resident) loop over the rows,
    // as few as finish in the same number of rounds, so the last round is full
    // (16384 rows on 4 x 132 blocks: 32 rows on each of 512, not 31 or 32 on 528).
    const long long slots = max(1LL, min(rowGroups, static_cast<long long>(CTAS_PER_SM) *
                                                     args->device.sm_count));
    const long long rounds = max(1LL, (rowGroups + slots - 1) / slots);
    const long long grid = (rowGroups + rounds - 1) / rounds;
    // Rows that fit in registers take the prefetching kernel (rows of exactly CHUNK
    // elements without bounds tests, rows that only the last vector of a thread can pass with
    // that vector's tests only); longer rows, and rows of a part vector (N % VEC != 0: short
    // validation rows), stream.
    if (N == CHUNK)
        rmsNormRowsPrefetch<VPT><<<grid, THREADS, 0, stream>>>(
            static_cast<const ElemX*>(args->inputs[0].data),
            static_cast<const ElemW*>(args->inputs[1].data),
            static_cast<ElemY*>(args->outputs[0].data), M, N, ldx, KEVOLVE_LDY(args),
            static_cast<float>(args->scalars[0]));
    else if (N <= CHUNK && N % VEC == 0)
        rmsNormRowsPrefetch<0><<<grid, THREADS, 0, stream>>>(
            static_cast<const ElemX*>(args->inputs[0].data),
            static_cast<const ElemW*>(args->inputs[1].data),
            static_cast<ElemY*>(args->outputs[0].data), M, N, ldx, KEVOLVE_LDY(args),
            static_cast<float>(args->scalars[0]));
    else
        rmsNormRows<<<grid, THREADS, 0, stream>>>(
            static_cast<const ElemX*>(args->inputs[0].data),
            static_cast<const ElemW*>(args->inputs[1].data),
            static_cast<ElemY*>(args->outputs[0].data), M, N, ldx, KEVOLVE_LDY(args),
            static_cast<float>(args->scalars[0]));
    return cudaGetLastError() == cudaSuccess ? 0 : 5;
}
