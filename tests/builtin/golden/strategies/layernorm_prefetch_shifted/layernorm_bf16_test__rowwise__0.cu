// expect: ok
// task: layernorm_bf16_test.json
// Kevolve built-in kernel, family rowwise (generated; edit freely).
// Task: layernorm_bf16_test (layernorm 16384x4096 bf16->bf16).
// Strategy: one block per row (128 threads per block), 8-element vectors, 4 vectors per thread in registers (rows up to 4096 elements are read once), shifted one-pass statistics (sums of x - x[0] and its square, one reduction), a persistent grid of 4 blocks per SM, the next row prefetched (packed) before the current row's reductions, W and B kept in registers.
// Rationale:
//   compile sample: pipeline=prefetch with stats=shifted_one_pass (one reduction of both sums,
//   the row not reconverted before the normalisation)

#include <kevolve/abi.h>
#include <cuda_bf16.h>
#include <stdint.h>

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

constexpr int WARPS = 4;
constexpr int THREADS = WARPS * 32;
// Threads that share one row: the whole block (one row per block).
constexpr int ROW_THREADS = THREADS;
constexpr int ROWS_PER_CTA = THREADS / ROW_THREADS;
constexpr int VPT = 4;                     // vectors per thread held in registers
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
            float sum = 0.0f;
#pragma unroll
            for (int j = 0; j < VPT; ++j)
#pragma unroll
                for (int i = 0; i < VEC; ++i)
                    sum += d[j][i];
            const float mean = rowReduce(sum, sumOf, phase) / count;
            float squares = 0.0f;
#pragma unroll
            for (int j = 0; j < VPT; ++j) {
                const int valid = validIn(N, 0, j, t);
#pragma unroll
                for (int i = 0; i < VEC; ++i) {
                    const float e = i < valid ? d[j][i] - mean : 0.0f;
                    squares = fmaf(e, e, squares);
                }
            }
            const float variance = rowReduce(squares, sumOf, phase) / count;
            const float rstd = 1.0f / sqrtf(variance + epsilon);
            normalizeChunk(W, B, N, 0, t, mean, rstd, d);
            storeChunk(y, N, 0, t, d);
        } else {
            // Longer than the register cache: mean, then variance around it, then the output.
            float sum = 0.0f;
            for (long long base = 0; base < N; base += CHUNK) {
                float d[VPT][VEC];
                loadShifted(x, N, base, t, shift, d);
#pragma unroll
                for (int j = 0; j < VPT; ++j)
#pragma unroll
                    for (int i = 0; i < VEC; ++i)
                        sum += d[j][i];
            }
            const float mean = rowReduce(sum, sumOf, phase) / count;
            float squares = 0.0f;
            for (long long base = 0; base < N; base += CHUNK) {
                float d[VPT][VEC];
                loadShifted(x, N, base, t, shift, d);
#pragma unroll
                for (int j = 0; j < VPT; ++j) {
                    const int valid = validIn(N, base, j, t);
#pragma unroll
                    for (int i = 0; i < VEC; ++i) {
                        const float e = i < valid ? d[j][i] - mean : 0.0f;
                        squares = fmaf(e, e, squares);
                    }
                }
            }
            const float variance = rowReduce(squares, sumOf, phase) / count;
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

using RawX = Raw<VEC * sizeof(ElemX)>::type;
using RawW = Raw<VEC * sizeof(ElemW)>::type;
using RawB = Raw<VEC * sizeof(ElemB)>::type;

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
// fit), and the row's first element, the shift of its statistics.
struct PackedRow {
    RawX v[VPT];
    ElemX first;
};

// Issues the loads of row x and returns without waiting for them. Columns past N become x[0] when
// the row is used (fillPastRow), so their deviation from the shift is exactly 0. INSIDE: the
// leading vectors of every thread that lie inside the row (loadVectors).
template <int INSIDE>
__device__ __forceinline__ void loadRow(const ElemX* x, long long N, int t, PackedRow& r)
{
    r.first = x[0];
    loadVectors<INSIDE>(x, N, t, r.v);
}

[[maybe_unused]] __device__ __forceinline__ void keepPacked(PackedRow& r)
{
#pragma unroll
    for (int j = 0; j < VPT; ++j)
        keepPacked(r.v[j]);
}

// x - shift of vector j.
__device__ __forceinline__ void deviations(const PackedRow& r, int j, float shift, float (&d)[VEC])
{
    unpackVec<ElemX>(r.v[j], d);
#pragma unroll
    for (int i = 0; i < VEC; ++i)
        d[i] -= shift;
}

// The sums of d and of d * d, reduced together (a struct of this file, so that rowReduce finds its
// shuffles by argument-dependent lookup, as it does for float).
struct ShiftedSums {
    float d;
    float dd;
};
__device__ __forceinline__ ShiftedSums shuffleDown(ShiftedSums v, int offset)
{
    return {shuffleDown(v.d, offset), shuffleDown(v.dd, offset)};
}
[[maybe_unused]] __device__ __forceinline__ ShiftedSums shuffleFirst(ShiftedSums v)
{
    return {shuffleFirst(v.d), shuffleFirst(v.dd)};
}

// W and B for this thread's columns, loaded once per block and kept packed for all its rows
// (columns past N read as 0).
struct PackedWeights {
    RawW w[VPT];
    RawB b[VPT];
};
template <int INSIDE>
__device__ __forceinline__ void loadWeights(const ElemW* W, const ElemB* B, long long N, int t,
                                            PackedWeights& p)
{
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const long long col = (static_cast<long long>(j) * ROW_THREADS + t) * VEC;
        if (j < INSIDE) {
            p.w[j] = *reinterpret_cast<const RawW*>(W + col);
            p.b[j] = *reinterpret_cast<const RawB*>(B + col);
        } else {
            loadPackedVec(W + col, N - col, ElemW(0.0f), p.w[j]);
            loadPackedVec(B + col, N - col, ElemB(0.0f), p.b[j]);
        }
    }
}

__device__ __forceinline__ void keepPacked(PackedWeights& p)
{
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        keepPacked(p.w[j]);
        keepPacked(p.b[j]);
    }
}

// y = n * w + b for one vector, stored, where W, B and Y share one 16-bit type: n is rounded to it
// and the multiply-add runs two elements an instruction (HFMA2) on W's and B's raw words, which
// are never converted. Per element that is half a pack and half an HFMA2 where the float path took
// two conversions and an FFMA (about 2.5 of 17 instructions an element in a row of f16). Each
// output carries two roundings, n's and the HFMA2's: at most one unit of the output type against
// |n * w| + |b| beyond the float path's, inside the harness's componentwise bound ((|x| rstd + 1)
// |w| + |b| per element, twice the unit roundoff at least).
__device__ __forceinline__ void storeAffine(ElemY* y, const float (&n)[VEC], const RawW& w,
                                            const RawB& b)
{
    static_assert(VEC % 2 == 0 && sizeof(RawW) == sizeof(RawOf<ElemY>), "packed pairs");
    __nv_bfloat162 wp[VEC / 2];
    __nv_bfloat162 bp[VEC / 2];
    __nv_bfloat162 out[VEC / 2];
    memcpy(wp, &w, sizeof(wp));
    memcpy(bp, &b, sizeof(bp));
#pragma unroll
    for (int k = 0; k < VEC / 2; ++k)
        out[k] = __hfma2(__floats2bfloat162_rn(n[2 * k], n[2 * k + 1]), wp[k], bp[k]);
    RawOf<ElemY> raw;
    memcpy(&raw, out, sizeof(raw));
    *reinterpret_cast<RawOf<ElemY>*>(y) = raw;
}
// INSIDE: the leading vectors of every thread that lie inside the row, so are read, used and stored
// without a bounds test (loadVectors; kevolve_launch picks VPT, VPT - 1 or 0 from N).
template <int INSIDE>
__global__ void __launch_bounds__(THREADS, CTAS_PER_SM)
    layerNormRowsPrefetch(const ElemX* __restrict__ X, const ElemW* __restrict__ W,
                          const ElemB* __restrict__ B, ElemY* __restrict__ Y, long long M,
                          long long N, long long ldx, long long ldy, float epsilon)
{
    const int t = threadIdx.x % ROW_THREADS;
    int phase = 0; // the block reduction's buffer
    const auto sumsOf = [](ShiftedSums a, ShiftedSums b) {
        return ShiftedSums{a.d + b.d, a.dd + b.dd};
    };
    const float count = static_cast<float>(N);
    const long long step = static_cast<long long>(gridDim.x) * ROWS_PER_CTA;
    long long row = static_cast<long long>(blockIdx.x) * ROWS_PER_CTA + threadIdx.x / ROW_THREADS;
    PackedWeights weights;
    loadWeights<INSIDE>(W, B, N, t, weights);
    PackedRow current;
    if (row < M)
        loadRow<INSIDE>(X + row * ldx, N, t, current);
    for (; row < M; row += step) {
        // The next row's loads go out first and are waited for only when it becomes current.
        PackedRow next;
        if (row + step < M)
            loadRow<INSIDE>(X + (row + step) * ldx, N, t, next);
        // Statistics of x - x[0]: a constant row has deviations of exactly 0 (output = B), and a
        // large common offset (1e4 + noise) leaves small numbers to sum, without cancellation.
        const float shift = toFloat(current.first);
        fillPastRow<INSIDE>(current.v, N, t, current.first);
        keepPacked(weights);
        float sumD[VEC];
        float sumDD[VEC];
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            sumD[i] = sumDD[i] = 0.0f;
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            float d[VEC];
            deviations(current, j, shift, d);
#pragma unroll
            for (int i = 0; i < VEC; ++i) {
                sumD[i] += d[i];
                sumDD[i] = fmaf(d[i], d[i], sumDD[i]);
            }
        }
        ShiftedSums sums{combineLanes(sumD, [](float a, float b) { return a + b; }),
                         combineLanes(sumDD, [](float a, float b) { return a + b; })};
        sums = rowReduce(sums, sumsOf, phase);
        const float mean = sums.d / count;
        const float variance = fmaxf(0.0f, (sums.dd - sums.d * mean) / count);
        const float rstd = 1.0f / sqrtf(variance + epsilon);
        const float offset = centre(mean, rstd);
        ElemY* y = Y + row * ldy;
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            const int col = (j * ROW_THREADS + t) * VEC; // N <= CHUNK
            float d[VEC];
            deviations(current, j, shift, d);
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                d[i] = fmaf(d[i], rstd, offset);
            const RawW w = weights.w[j];
            const RawB b = weights.b[j];
            if (j < INSIDE || col < static_cast<int>(N)) // N % VEC == 0: whole vectors
                storeAffine(y + col, d, w, b);
        }
        current = next;
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
        layerNormRowsPrefetch<VPT><<<grid, THREADS, 0, stream>>>(
            static_cast<const ElemX*>(args->inputs[0].data),
            static_cast<const ElemW*>(args->inputs[1].data),
            static_cast<const ElemB*>(args->inputs[2].data),
            static_cast<ElemY*>(args->outputs[0].data), M, N, ldx, KEVOLVE_LDY(args),
            static_cast<float>(args->scalars[0]));
    else if (N <= CHUNK && N % VEC == 0)
        layerNormRowsPrefetch<0><<<grid, THREADS, 0, stream>>>(
            static_cast<const ElemX*>(args->inputs[0].data),
            static_cast<const ElemW*>(args->inputs[1].data),
            static_cast<const ElemB*>(args->inputs[2].data),
            static_cast<ElemY*>(args->outputs[0].data), M, N, ldx, KEVOLVE_LDY(args),
            static_cast<float>(args->scalars[0]));
    else
        layerNormRows<<<grid, THREADS, 0, stream>>>(
            static_cast<const ElemX*>(args->inputs[0].data),
            static_cast<const ElemW*>(args->inputs[1].data),
            static_cast<const ElemB*>(args->inputs[2].data),
            static_cast<ElemY*>(args->outputs[0].data), M, N, ldx, KEVOLVE_LDY(args),
            static_cast<float>(args->scalars[0]));
    return cudaGetLastError() == cudaSuccess ? 0 : 5;
}
