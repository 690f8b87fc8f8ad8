#include "builtin/family_rowwise.h"

#include "builtin/gemmcodegen.h"
#include "builtin/memorycodegen.h"

#include <QJsonArray>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace kev {

namespace {

using namespace memorycodegen;

// Everything a row-wise kernel shares: the knobs as constants, the row reduction for the chosen
// mapping, and chunk loads and stores with the row tail.
constexpr auto kPrelude = uR"CU(${HEADER}
#include <kevolve/abi.h>
${INCLUDES}#include <stdint.h>

namespace {

${TYPES}
${ELEMENTS}
constexpr int WARPS = ${WARPS};
constexpr int THREADS = WARPS * 32;
// Threads that share one row: ${ROW_THREADS_WHY}
constexpr int ROW_THREADS = ${ROW_THREADS};
constexpr int ROWS_PER_CTA = THREADS / ROW_THREADS;
constexpr int VPT = ${VPT};                     // vectors per thread held in registers
constexpr int CHUNK = ROW_THREADS * VEC * VPT; // row elements one register load covers
// ${CTAS_WHY}
[[maybe_unused]] constexpr int CTAS_PER_SM = ${CTAS};
[[maybe_unused]] constexpr float LOG2E = 1.4426950408889634f;

__device__ __forceinline__ float shuffleDown(float v, int offset)
{
    return __shfl_down_sync(0xffffffffu, v, offset);
}
[[maybe_unused]] __device__ __forceinline__ float shuffleFirst(float v) { return __shfl_sync(0xffffffffu, v, 0); }

${REDUCE}
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
${KERNEL}
} // namespace

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream)
{
${CHECKS}${SCALAR_CHECK}
    const long long M = KEVOLVE_ROWS(args);
    const long long N = KEVOLVE_COLS(args);
    const long long ldx = KEVOLVE_LDX(args);
    // Vector accesses need every row to start on a VEC-element boundary.
    if (${ALIGNMENT})
        return 4;
    const long long rowGroups = (M + ROWS_PER_CTA - 1) / ROWS_PER_CTA;
    ${GRID}
    ${LAUNCH}
    return cudaGetLastError() == cudaSuccess ? 0 : 5;
}
)CU";

constexpr auto kWarpReduce =
    uR"CU(// A row's warp combines its values; every lane gets lane 0's result, so all agree bit for bit.
// (phase is the block reduction's; a warp needs no buffer.)
template <typename T, typename F> __device__ __forceinline__ T rowReduce(T v, F combine, int&)
{
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        v = combine(v, shuffleDown(v, offset));
    return shuffleFirst(v);
}
)CU";

constexpr auto kBlockReduce =
    uR"CU(// The block combines its values: within each warp by shuffles, then the warps' results in a fixed
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
)CU";

constexpr auto kRowLoop =
    uR"CU(    for (long long row = static_cast<long long>(blockIdx.x) * ROWS_PER_CTA + threadIdx.x / ROW_THREADS;
         row < M; row += static_cast<long long>(gridDim.x) * ROWS_PER_CTA) {)CU";

// ---- softmax ----

constexpr auto kSoftmax = uR"CU(
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
${MAXSUM}
__global__ void __launch_bounds__(THREADS)
    softmaxRows(const ElemX* __restrict__ X, ElemY* __restrict__ Y, long long M, long long N,
                long long ldx, long long ldy)
{
    const int t = threadIdx.x % ROW_THREADS;
    int phase = 0; // the block reduction's buffer
    const auto maxOf = [](float a, float b) { return fmaxf(a, b); };
    const auto sumOf = [](float a, float b) { return a + b; };
${ROW_LOOP}
        const ElemX* x = X + row * ldx;
        ElemY* y = Y + row * ldy;
        if (N <= CHUNK) {
            // The row fits in registers: one read and one write, the DRAM floor.
            float v[VPT][VEC];
            loadChunk(x, N, 0, t, -INFINITY, v);
${CACHED}
            storeChunk(y, N, 0, t, v);
        } else {
${STREAMING}
        }
    }
}
)CU";

constexpr auto kMaxSum = uR"CU(
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
)CU";

constexpr auto kSoftmaxCachedTwoPass = uR"CU(            float lanes[VEC];
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                lanes[i] = -INFINITY;
#pragma unroll
            for (int j = 0; j < VPT; ++j)
#pragma unroll
                for (int i = 0; i < VEC; ++i)
                    lanes[i] = fmaxf(lanes[i], v[j][i]);
            const float m = rowReduce(combineLanes(lanes, maxOf), maxOf, phase);
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                lanes[i] = 0.0f;
#pragma unroll
            for (int j = 0; j < VPT; ++j)
#pragma unroll
                for (int i = 0; i < VEC; ++i) {
                    v[j][i] = expShifted(v[j][i], m);
                    lanes[i] += v[j][i];
                }
            const float inv = 1.0f / rowReduce(combineLanes(lanes, sumOf), sumOf, phase);
#pragma unroll
            for (int j = 0; j < VPT; ++j)
#pragma unroll
                for (int i = 0; i < VEC; ++i)
                    v[j][i] *= inv;)CU";

constexpr auto kSoftmaxCachedOnline =
    uR"CU(            // Maximum and sum of this thread's elements, then one combined reduction.
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
                    v[j][i] = expShifted(v[j][i], total.m) * inv;)CU";

constexpr auto kSoftmaxStreamTwoPass =
    uR"CU(            // Longer than the register cache: three reads (maximum, sum, output).
            float m = -INFINITY;
            for (long long base = 0; base < N; base += CHUNK) {
                float v[VPT][VEC];
                loadChunk(x, N, base, t, -INFINITY, v);
#pragma unroll
                for (int j = 0; j < VPT; ++j)
#pragma unroll
                    for (int i = 0; i < VEC; ++i)
                        m = fmaxf(m, v[j][i]);
            }
            m = rowReduce(m, maxOf, phase);
            float s = 0.0f;
            for (long long base = 0; base < N; base += CHUNK) {
                float v[VPT][VEC];
                loadChunk(x, N, base, t, -INFINITY, v);
#pragma unroll
                for (int j = 0; j < VPT; ++j)
#pragma unroll
                    for (int i = 0; i < VEC; ++i)
                        s += expShifted(v[j][i], m);
            }
            const float inv = 1.0f / rowReduce(s, sumOf, phase);
            for (long long base = 0; base < N; base += CHUNK) {
                float v[VPT][VEC];
                loadChunk(x, N, base, t, -INFINITY, v);
#pragma unroll
                for (int j = 0; j < VPT; ++j)
#pragma unroll
                    for (int i = 0; i < VEC; ++i)
                        v[j][i] = expShifted(v[j][i], m) * inv;
                storeChunk(y, N, base, t, v);
            })CU";

constexpr auto kSoftmaxStreamOnline =
    uR"CU(            // Longer than the register cache: two reads (online statistics, output).
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
            })CU";

// ---- layernorm ----

constexpr auto kLayerNorm = uR"CU(${MOMENTS}
// y = (x - mean) * rstd * w + b for one chunk; d holds x - shift and mean is that of d. W and B
// are read one vector at a time, so only the row stays live in registers (more rows in flight).
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

__global__ void __launch_bounds__(THREADS)
    layerNormRows(const ElemX* __restrict__ X, const ElemW* __restrict__ W,
                  const ElemB* __restrict__ B, ElemY* __restrict__ Y, long long M, long long N,
                  long long ldx, long long ldy, float epsilon)
{
    const int t = threadIdx.x % ROW_THREADS;
    int phase = 0; // the block reduction's buffer
    const auto sumOf = [](float a, float b) { return a + b; };
    const float count = static_cast<float>(N);
${ROW_LOOP}
        const ElemX* x = X + row * ldx;
        ElemY* y = Y + row * ldy;
        // Statistics of x - x[0]: a constant row has deviations of exactly 0 (output = B), and a
        // large common offset (1e4 + noise) leaves small numbers to sum, without cancellation.
        const float shift = toFloat(x[0]);
        if (N <= CHUNK) {
            // The row fits in registers: one read and one write, the DRAM floor.
            float d[VPT][VEC];
            loadShifted(x, N, 0, t, shift, d);
${CACHED}
            const float rstd = 1.0f / sqrtf(variance + epsilon);
            normalizeChunk(W, B, N, 0, t, mean, rstd, d);
            storeChunk(y, N, 0, t, d);
        } else {
${STREAMING}
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
)CU";

constexpr auto kMoments = uR"CU(
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
__device__ __forceinline__ Moments shuffleFirst(Moments v)
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
)CU";

constexpr auto kLayerNormCachedTwoPass = uR"CU(            float sum = 0.0f;
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
            const float variance = rowReduce(squares, sumOf, phase) / count;)CU";

constexpr auto kLayerNormCachedWelford =
    uR"CU(            const Moments total = rowReduce(chunkMoments(d, N, 0, t), [](Moments a, Moments b) {
                return combineMoments(a, b);
            }, phase);
            const float mean = total.mean;
            const float variance = total.m2 / count;)CU";

constexpr auto kLayerNormStreamTwoPass =
    uR"CU(            // Longer than the register cache: mean, then variance around it, then the output.
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
            const float variance = rowReduce(squares, sumOf, phase) / count;)CU";

constexpr auto kLayerNormStreamWelford =
    uR"CU(            // Longer than the register cache: Welford statistics in one read, then the output.
            Moments part{0.0f, 0.0f, 0.0f};
            for (long long base = 0; base < N; base += CHUNK) {
                float d[VPT][VEC];
                loadShifted(x, N, base, t, shift, d);
                part = combineMoments(part, chunkMoments(d, N, base, t));
            }
            const Moments total =
                rowReduce(part, [](Moments a, Moments b) { return combineMoments(a, b); }, phase);
            const float mean = total.mean;
            const float variance = total.m2 / count;)CU";

// ---- layernorm, rows held across iterations ----

// Packed vectors (as loaded, converted to float on use) and the asm barrier that keeps them
// packed; shared by the kernels that hold data across rows (WEIGHT_TYPES: layernorm's W and B).
constexpr auto kPackedHelpers = uR"CU(
using RawX = Raw<VEC * sizeof(ElemX)>::type;
${WEIGHT_TYPES}
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

template <typename T, typename R>
__device__ __forceinline__ void unpackVec(const R& raw, float (&v)[VEC])
{
    T e[VEC];
    memcpy(e, &raw, sizeof(R));
#pragma unroll
    for (int i = 0; i < VEC; ++i)
        v[i] = toFloat(e[i]);
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
)CU";

constexpr auto kPackedWeightTypes = uR"CU(using RawW = Raw<VEC * sizeof(ElemW)>::type;
using RawB = Raw<VEC * sizeof(ElemB)>::type;
)CU";

// ---- softmax, prefetching the next row ----

// A persistent block issues the next row's loads, packed, before the current row's reductions, as
// layernorm's prefetch does: a 16-bit row is bound by its instructions and barriers per row, so
// one row per block in flight leaves DRAM idle through them.
constexpr auto kSoftmaxPrefetch = uR"CU(
// A thread's share of a row that fits in registers, still packed (converted on use, so two rows
// fit).
struct PackedRow {
    RawX v[VPT];
};

// Issues the loads of row x and returns without waiting for them. Columns past N read as -inf,
// which adds nothing to the maximum or the sum. FULL: N == CHUNK, every vector lies inside the row
// (no bounds tests, constant offsets).
template <bool FULL>
__device__ __forceinline__ void loadRow(const ElemX* x, long long N, int t, PackedRow& r)
{
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const long long col = (static_cast<long long>(j) * ROW_THREADS + t) * VEC;
        if (FULL)
            r.v[j] = *reinterpret_cast<const RawX*>(x + col);
        else
            loadPackedVec(x + col, N - col, ElemX(-INFINITY), r.v[j]);
    }
}

[[maybe_unused]] __device__ __forceinline__ void keepPacked(PackedRow& r)
{
#pragma unroll
    for (int j = 0; j < VPT; ++j)
        keepPacked(r.v[j]);
}

// FULL: rows of exactly CHUNK elements, the task's own shape when its strategy sizes the
// register cache to the row.
template <bool FULL>
__global__ void __launch_bounds__(THREADS, CTAS_PER_SM)
    softmaxRowsPrefetch(const ElemX* __restrict__ X, ElemY* __restrict__ Y, long long M,
                        long long N, long long ldx, long long ldy)
{
    const int t = threadIdx.x % ROW_THREADS;
    int phase = 0; // the block reduction's buffer
    const long long step = static_cast<long long>(gridDim.x) * ROWS_PER_CTA;
    long long row = static_cast<long long>(blockIdx.x) * ROWS_PER_CTA + threadIdx.x / ROW_THREADS;
    PackedRow current;
    if (row < M)
        loadRow<FULL>(X + row * ldx, N, t, current);
    for (; row < M; row += step) {
        // The next row's loads go out first and are waited for only when it becomes current.
        PackedRow next;
        if (row + step < M)
            loadRow<FULL>(X + (row + step) * ldx, N, t, next);
        // e holds exp(x - m) for a maximum m of the statistics; the output is e * scale.
        float e[VPT][VEC];
${STATS}        ElemY* y = Y + row * ldy;
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            const long long col = (static_cast<long long>(j) * ROW_THREADS + t) * VEC;
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                e[j][i] *= scale;
            if (FULL || col + VEC <= N)
                storeVec(y + col, e[j]);
            else
                storeTail(y + col, N - col, e[j]);
        }
        current = next;
    }
}
)CU";

// Two-pass statistics of the prefetched row: the row maximum, then the sum of exp(x - max) (two
// block reductions; the packed row converted again for the second pass).
constexpr auto kSoftmaxPrefetchTwoPass = uR"CU(        float lanes[VEC];
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            lanes[i] = -INFINITY;
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            float v[VEC];
            unpackVec<ElemX>(current.v[j], v);
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                lanes[i] = fmaxf(lanes[i], v[i]);
        }
        const auto maxOf = [](float a, float b) { return fmaxf(a, b); };
        const auto sumOf = [](float a, float b) { return a + b; };
        const float m = rowReduce(combineLanes(lanes, maxOf), maxOf, phase);
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            lanes[i] = 0.0f;
        keepPacked(current);
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            unpackVec<ElemX>(current.v[j], e[j]);
#pragma unroll
            for (int i = 0; i < VEC; ++i) {
                e[j][i] = expShifted(e[j][i], m);
                lanes[i] += e[j][i];
            }
        }
        const float scale = 1.0f / rowReduce(combineLanes(lanes, sumOf), sumOf, phase);
)CU";

// stats=one_pass: each thread's maximum m_t of its own elements (no reduction) and the sum of
// exp(x - m_t), then one block reduction of the (m, s) pairs. The output exp(x - m) / s is
// e * exp(m_t - m) / s, so nothing is exponentiated twice. A thread of only -inf has m_t = -inf,
// e = 0 and exp(m_t - m) taken as 0 (rescale), so it writes 0, or NaN (0 * inf) when the whole row
// is -inf, as the two-pass kernel does; fmaxf skips NaN in m_t, but exp(NaN - m_t) makes s NaN
// for the whole row; +inf gives m = inf and exp(inf - inf) = NaN, as in two passes.
constexpr auto kSoftmaxPrefetchOnePass = uR"CU(        MaxSum part;
        float lanes[VEC];
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            lanes[i] = -INFINITY;
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            unpackVec<ElemX>(current.v[j], e[j]);
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                lanes[i] = fmaxf(lanes[i], e[j][i]);
        }
        part.m = combineLanes(lanes, [](float a, float b) { return fmaxf(a, b); });
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            lanes[i] = 0.0f;
#pragma unroll
        for (int j = 0; j < VPT; ++j)
#pragma unroll
            for (int i = 0; i < VEC; ++i) {
                e[j][i] = expShifted(e[j][i], part.m);
                lanes[i] += e[j][i];
            }
        part.s = combineLanes(lanes, [](float a, float b) { return a + b; });
        const MaxSum total =
            rowReduce(part, [](MaxSum a, MaxSum b) { return combineMaxSum(a, b); }, phase);
        const float scale = rescale(part.m, total.m) / total.s;
)CU";

// ---- layernorm, prefetching the next row ----

// A persistent block keeps its rows packed as loaded and issues the next row's loads before the
// current row's reductions, so DRAM loads stay in flight through the barriers, the W/B reads and
// the stores (one row per block in flight was too little for 8 KB bf16 rows).
constexpr auto kLayerNormPrefetch = uR"CU(
// A thread's share of a row that fits in registers, still packed (converted on use, so two rows
// fit), and the row's first element, the shift of its statistics.
struct PackedRow {
    RawX v[VPT];
    ElemX first;
};

// Issues the loads of row x and returns without waiting for them. Columns past N read as x[0], so
// their deviation from the shift is exactly 0. FULL: N == CHUNK, every vector lies inside the row
// (no bounds tests, constant offsets).
template <bool FULL>
__device__ __forceinline__ void loadRow(const ElemX* x, long long N, int t, PackedRow& r)
{
    r.first = x[0];
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const long long col = (static_cast<long long>(j) * ROW_THREADS + t) * VEC;
        if (FULL)
            r.v[j] = *reinterpret_cast<const RawX*>(x + col);
        else
            loadPackedVec(x + col, N - col, r.first, r.v[j]);
    }
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
${STATS_HELPERS}${WEIGHTS_HELPERS}
// FULL: rows of exactly CHUNK elements, the task's own shape when its strategy sizes the
// register cache to the row.
template <bool FULL>
__global__ void __launch_bounds__(THREADS, CTAS_PER_SM)
    layerNormRowsPrefetch(const ElemX* __restrict__ X, const ElemW* __restrict__ W,
                          const ElemB* __restrict__ B, ElemY* __restrict__ Y, long long M,
                          long long N, long long ldx, long long ldy, float epsilon)
{
    const int t = threadIdx.x % ROW_THREADS;
    int phase = 0; // the block reduction's buffer
${SUM_OF}    const float count = static_cast<float>(N);
    const long long step = static_cast<long long>(gridDim.x) * ROWS_PER_CTA;
    long long row = static_cast<long long>(blockIdx.x) * ROWS_PER_CTA + threadIdx.x / ROW_THREADS;
${WEIGHTS_SETUP}
    PackedRow current;
    if (row < M)
        loadRow<FULL>(X + row * ldx, N, t, current);
    for (; row < M; row += step) {
        // The next row's loads go out first and are waited for only when it becomes current.
        PackedRow next;
        if (row + step < M)
            loadRow<FULL>(X + (row + step) * ldx, N, t, next);
        // Statistics of x - x[0]: a constant row has deviations of exactly 0 (output = B), and a
        // large common offset (1e4 + noise) leaves small numbers to sum, without cancellation.
        const float shift = toFloat(current.first);
${WEIGHTS_ROW}${STATS}        const float rstd = 1.0f / sqrtf(variance + epsilon);
        ElemY* y = Y + row * ldy;
${NORMALISE_KEEP}#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            const long long col = (static_cast<long long>(j) * ROW_THREADS + t) * VEC;
            float d[VEC];
            deviations(current, j, shift, d);
            float w[VEC];
            float b[VEC];
${WEIGHTS_USE}
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                d[i] = fmaf((d[i] - mean) * rstd, w[i], b[i]);
            if (FULL || col + VEC <= N)
                storeVec(y + col, d);
            else
                storeTail(y + col, N - col, d);
        }
        current = next;
    }
}
)CU";

// Two-pass statistics of the prefetched row: the mean of the deviations, then their variance
// around it (two block reductions, the packed row converted again for each pass).
constexpr auto kPrefetchTwoPass = uR"CU(        float sum = 0.0f;
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            float d[VEC];
            deviations(current, j, shift, d);
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                sum += d[i];
        }
        const float mean = rowReduce(sum, sumOf, phase) / count;
        float squares = 0.0f;
        keepPacked(current);
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            const int valid = validIn(N, 0, j, t);
            float d[VEC];
            deviations(current, j, shift, d);
#pragma unroll
            for (int i = 0; i < VEC; ++i) {
                const float e = i < valid ? d[i] - mean : 0.0f;
                squares = fmaf(e, e, squares);
            }
        }
        const float variance = rowReduce(squares, sumOf, phase) / count;
)CU";

// stats=shifted_one_pass: the sums of d and d * d, d = x - x[0], in one pass and one block
// reduction. S2 - S1 * S1 / n cancels catastrophically only when |mean(d)| is large against the
// row's spread; the shift is a sample of the row, so |mean(d)| = |mean - x[0]| is of the order of
// that spread and the fp32 sums keep the variance (Welford's per-element division is not needed).
// A constant row has every d exactly 0 (variance 0, output B); a 1e4 + noise row leaves d of the
// noise's size; columns past N read as x[0], so they add exact zeros to both sums.
constexpr auto kShiftedSums = uR"CU(
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
)CU";

constexpr auto kPrefetchShiftedOnePass = uR"CU(        float sumD[VEC];
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
)CU";

constexpr auto kWeightsInRegisters = uR"CU(
// W and B for this thread's columns, loaded once per block and kept packed for all its rows
// (columns past N read as 0).
struct PackedWeights {
    RawW w[VPT];
    RawB b[VPT];
};
template <bool FULL>
__device__ __forceinline__ void loadWeights(const ElemW* W, const ElemB* B, long long N, int t,
                                            PackedWeights& p)
{
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const long long col = (static_cast<long long>(j) * ROW_THREADS + t) * VEC;
        if (FULL) {
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
)CU";
constexpr auto kWeightsSetup = uR"CU(    PackedWeights weights;
    loadWeights<FULL>(W, B, N, t, weights);)CU";

constexpr auto kWeightsFromRegisters = uR"CU(            unpackVec<ElemW>(weights.w[j], w);
            unpackVec<ElemB>(weights.b[j], b);)CU";

constexpr auto kWeightsLoaded = uR"CU(            if (col + VEC <= N) {
                loadVec(W + col, w);
                loadVec(B + col, b);
            } else {
                loadTail(W + col, N - col, 0.0f, w);
                loadTail(B + col, N - col, 0.0f, b);
            })CU";

// ---- layernorm, rows copied ahead into shared memory ----

// A persistent block keeps DEPTH rows in flight through cp.async copies into a shared-memory ring:
// registers no longer bound the depth (prefetch holds one row ahead, 32 KB per SM for bf16 4096
// rows at 4 blocks per SM), shared memory does. Each thread copies and reads back only its own
// vectors, so the ring needs no barrier, only the thread's own cp.async.wait_group.
constexpr auto kLayerNormAsync = uR"CU(
// Rows in flight per block; the ring has a slot for each, laid out [slot][vector j][thread] in
// units of one vector, so neighbouring threads touch neighbouring 16 bytes (no bank conflicts).
constexpr int DEPTH = ${DEPTH};
constexpr int RING_BYTES = DEPTH * VPT * THREADS * static_cast<int>(sizeof(RawX));

// One vector from global to shared memory without passing through registers. Of its bytes only
// the first `bytes` are read; the rest of the vector is written as zeros.
__device__ __forceinline__ void copyVecAsync(RawX* dst, const ElemX* src, int bytes)
{
    const unsigned int to = static_cast<unsigned int>(__cvta_generic_to_shared(dst));
    if constexpr (sizeof(RawX) == 16)
        // L2 only: the row is read once, so it should not evict W and B from L1.
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(to), "l"(src),
                     "r"(bytes)
                     : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(to), "l"(src),
                     "n"(static_cast<int>(sizeof(RawX))), "r"(bytes)
                     : "memory");
}

__device__ __forceinline__ void commitCopies() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// Waits until at most `Pending` of this thread's most recent copy groups are still in flight.
template <int Pending> __device__ __forceinline__ void waitCopies()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

// Issues this thread's copies of row x into ring slot `slot` and returns without waiting. Bytes
// past N arrive as zeros (the statistics mask them by each vector's valid count); vectors wholly
// past N read nothing.
__device__ __forceinline__ void copyRow(RawX* ring, int slot, const ElemX* x, long long N, int t)
{
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const long long col = (static_cast<long long>(j) * ROW_THREADS + t) * VEC;
        const int valid = static_cast<int>(min(max(N - col, 0LL), static_cast<long long>(VEC)));
        copyVecAsync(ring + (slot * VPT + j) * THREADS + threadIdx.x, valid > 0 ? x + col : x,
                     valid * static_cast<int>(sizeof(ElemX)));
    }
}

// x - shift of vector j of this thread's share of a ring slot.
__device__ __forceinline__ void slotDeviations(const RawX* mine, int j, float shift, float (&d)[VEC])
{
    const RawX raw = mine[j * THREADS]; // one 16-byte shared load, not one per element pair
    unpackVec<ElemX>(raw, d);
#pragma unroll
    for (int i = 0; i < VEC; ++i)
        d[i] -= shift;
}
${WEIGHTS_HELPERS}
__global__ void __launch_bounds__(THREADS, CTAS_PER_SM)
    layerNormRowsAsync(const ElemX* __restrict__ X, const ElemW* __restrict__ W,
                       const ElemB* __restrict__ B, ElemY* __restrict__ Y, long long M,
                       long long N, long long ldx, long long ldy, float epsilon)
{
    extern __shared__ __align__(16) unsigned char ringMemory[];
    RawX* ring = reinterpret_cast<RawX*>(ringMemory);
    const int t = threadIdx.x % ROW_THREADS;
    int phase = 0; // the block reduction's buffer
    const auto sumOf = [](float a, float b) { return a + b; };
    const float count = static_cast<float>(N);
    const long long step = static_cast<long long>(gridDim.x) * ROWS_PER_CTA;
    long long row = static_cast<long long>(blockIdx.x) * ROWS_PER_CTA + threadIdx.x / ROW_THREADS;
${WEIGHTS_SETUP}
    // The first DEPTH - 1 rows go out before any is used. Every step commits one group, empty
    // when there is no row, so group k is always row k and the wait count stays fixed.
#pragma unroll
    for (int k = 0; k < DEPTH - 1; ++k) {
        if (row + k * step < M)
            copyRow(ring, k, X + (row + k * step) * ldx, N, t);
        commitCopies();
    }
    // x[0], the shift of a row's statistics, is wanted by every thread before its sum: a scalar
    // load issued one row ahead, so its latency hides behind the previous row.
    ElemX first = row < M ? X[row * ldx] : ElemX(0.0f);
    int slot = 0;
    for (; row < M; row += step) {
        // Row + DEPTH - 1 steps goes into the previous row's slot. Only this thread ever touches
        // its vectors of a slot, and it has read them and stored that row's output in the
        // previous iteration (keep the store before these copies), so no barrier is needed.
        const long long ahead = row + (DEPTH - 1) * step;
        if (ahead < M)
            copyRow(ring, slot == 0 ? DEPTH - 1 : slot - 1, X + ahead * ldx, N, t);
        commitCopies();
        const ElemX nextFirst = row + step < M ? X[(row + step) * ldx] : ElemX(0.0f);
        // Issuing before waiting keeps DEPTH rows in flight here; this row's group is complete
        // once no more than the DEPTH - 1 younger ones are pending.
        waitCopies<DEPTH - 1>();
        const RawX* mine = ring + slot * VPT * THREADS + threadIdx.x;
        // Statistics of x - x[0]: a constant row has deviations of exactly 0 (output = B), and a
        // large common offset (1e4 + noise) leaves small numbers to sum, without cancellation.
        const float shift = toFloat(first);
${WEIGHTS_ROW}        float sum = 0.0f;
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            const int valid = validIn(N, 0, j, t);
            float d[VEC];
            slotDeviations(mine, j, shift, d);
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                sum += i < valid ? d[i] : 0.0f; // zero-filled columns past N would give -shift
        }
        const float mean = rowReduce(sum, sumOf, phase) / count;
        float squares = 0.0f;
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            const int valid = validIn(N, 0, j, t);
            float d[VEC];
            slotDeviations(mine, j, shift, d);
#pragma unroll
            for (int i = 0; i < VEC; ++i) {
                const float e = i < valid ? d[i] - mean : 0.0f;
                squares = fmaf(e, e, squares);
            }
        }
        const float variance = rowReduce(squares, sumOf, phase) / count;
        const float rstd = 1.0f / sqrtf(variance + epsilon);
        ElemY* y = Y + row * ldy;
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            const long long col = (static_cast<long long>(j) * ROW_THREADS + t) * VEC;
            float d[VEC];
            slotDeviations(mine, j, shift, d);
            float w[VEC];
            float b[VEC];
${WEIGHTS_USE}
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                d[i] = fmaf((d[i] - mean) * rstd, w[i], b[i]);
            if (col + VEC <= N)
                storeVec(y + col, d);
            else
                storeTail(y + col, N - col, d);
        }
        first = nextFirst;
        slot = slot == DEPTH - 1 ? 0 : slot + 1;
    }
}
)CU";

// ---- reduce ----

constexpr auto kReduce = uR"CU(${NAN_MAX}
__global__ void __launch_bounds__(THREADS)
    reduceRows(const ElemX* __restrict__ X, ElemY* __restrict__ Y, long long M, long long N,
               long long ldx)
{
    const int t = threadIdx.x % ROW_THREADS;
    int phase = 0; // the block reduction's buffer
    const auto combine = [](float a, float b) { return ${COMBINE}; };
${ROW_LOOP}
        const ElemX* x = X + row * ldx;
        // One accumulator per register slot: VPT * VEC independent chains, short enough that the
        // fp32 rounding error stays small for long rows.
        float acc[VPT][VEC];
#pragma unroll
        for (int j = 0; j < VPT; ++j)
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                acc[j][i] = ${IDENTITY};
        for (long long base = 0; base < N; base += CHUNK) {
            float v[VPT][VEC];
            loadChunk(x, N, base, t, ${IDENTITY}, v);
#pragma unroll
            for (int j = 0; j < VPT; ++j)
#pragma unroll
                for (int i = 0; i < VEC; ++i)
                    acc[j][i] = combine(acc[j][i], v[j][i]);
        }
        float r = ${IDENTITY};
#pragma unroll
        for (int j = 0; j < VPT; ++j)
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                r = combine(r, acc[j][i]);
        r = rowReduce(r, combine, phase);
        if (t == 0)
            fromFloat(r, Y[row]);
    }
}
)CU";

constexpr auto kNanMax = uR"CU(
// The larger of a and b, NaN when either is (fmaxf would drop the NaN).
__device__ __forceinline__ float maxPropagatingNaN(float a, float b)
{
    return (a != a || a > b) ? a : b;
}
)CU";

int vpt(const Strategy& s) {
    return intParam(s, u"vectors_per_thread"_s);
}

QString mapping(const Strategy& s) {
    return stringParam(s, u"mapping"_s);
}

int rowThreads(const Strategy& s) {
    return mapping(s) == u"block" ? s.warps * 32 : 32;
}

int ctasPerSm(const Strategy& s) {
    return intParam(s, u"ctas_per_sm"_s, -1);
}

QString stats(const Strategy& s) {
    return stringParam(s, u"stats"_s);
}

// Strategies written before these knobs existed read as the one-row-at-a-time kernel.
QString pipeline(const Strategy& s) {
    const QString p = stringParam(s, u"pipeline"_s);
    return p.isEmpty() && !s.params.contains(u"pipeline"_s) ? u"none"_s : p;
}

bool prefetch(const Strategy& s) {
    return pipeline(s) == u"prefetch";
}

bool asyncRing(const Strategy& s) {
    return pipeline(s) == u"async";
}

// Rows in flight per block with pipeline=async; a strategy without the knob gets 4, and the other
// pipelines ignore it (so a pipeline move keeps a valid point).
int depth(const Strategy& s) {
    return intParam(s, u"depth"_s, 4);
}

QString weights(const Strategy& s) {
    const QString w = stringParam(s, u"weights"_s);
    return w.isEmpty() && !s.params.contains(u"weights"_s) ? u"load"_s : w;
}

bool weightsInRegisters(const Strategy& s) {
    return weights(s) == u"registers";
}

bool isRowOp(const QString& op) {
    return op == u"softmax" || op == u"layernorm" || op == u"reduce";
}

QStringList taskDtypes(const Task& task) {
    QStringList out;
    const QStringList names = Task::tensorNames(task.op);
    for (const QString& n : names)
        out << task.dtypeOf(n);
    return out;
}

// Row tensors accessed with vectors (reduce's output is one value per row).
QStringList vectorDtypes(const Task& task) {
    if (task.op == u"reduce")
        return {task.dtypeOf(u"X"_s)};
    return taskDtypes(task);
}

// 32-bit registers one row's packed share takes per thread with pipeline=prefetch, and W with B.
int packedRowWords(const Strategy& s, const Task& task) {
    return vpt(s) * s.vectorWidth * Task::dtypeBytes(task.dtypeOf(u"X"_s)) / 4;
}

int packedWeightWords(const Strategy& s, const Task& task) {
    return vpt(s) * s.vectorWidth *
           (Task::dtypeBytes(task.dtypeOf(u"W"_s)) + Task::dtypeBytes(task.dtypeOf(u"B"_s))) / 4;
}

// Packed words a prefetching thread holds: the current and the next row, and W and B when kept.
int prefetchWords(const Strategy& s, const Task& task) {
    return 2 * packedRowWords(s, task) + (weightsInRegisters(s) ? packedWeightWords(s, task) : 0);
}

int cacheFloats(const Strategy& s, const Task& task) {
    // layernorm keeps the row and, while normalising, one vector of W and B; reduce keeps one
    // accumulator per loaded value
    if (task.op == u"layernorm")
        return (vpt(s) + 2) * s.vectorWidth;
    return vpt(s) * s.vectorWidth * (task.op == u"reduce" ? 2 : 1);
}

int registerEstimate(const Strategy& s, const Task& task) {
    // The prefetching kernel's converted vectors and per-vector addresses come on top (ptxas,
    // sm_90a: 121 registers for bf16 4 warps x 4 vectors of 8 with W and B kept, 87 without).
    if (prefetch(s) && task.op == u"layernorm")
        return prefetchWords(s, task) + 40 + 2 * s.vectorWidth + 2 * vpt(s);
    // Softmax keeps exp(x - m) of the whole share in floats through the sum's reduction (the
    // output is that times one scale, no second exponential), beside the two packed rows.
    if (prefetch(s) && task.op == u"softmax")
        return prefetchWords(s, task) + vpt(s) * s.vectorWidth + 40;
    // The ring holds the rows; registers keep W and B when asked, and one vector converted.
    // Past 4 vectors ptxas keeps some of the row's shared loads live across the passes (sm_90a,
    // bf16 4 warps: 64 registers at 4 vectors of 8 with W and B loaded, 94 kept; 95 at 8 of 4,
    // 108 at 8 of 8 on 2 warps).
    if (asyncRing(s) && task.op == u"layernorm")
        return (weightsInRegisters(s) ? packedWeightWords(s, task) : 0) + 40 + 2 * s.vectorWidth +
               2 * vpt(s) + 4 * std::max(0, vpt(s) - 4);
    return cacheFloats(s, task) + 40;
}

// Bytes of one vector access of X.
int vectorBytes(const Strategy& s, const Task& task) {
    return s.vectorWidth * Task::dtypeBytes(task.dtypeOf(u"X"_s));
}

// The pipeline=async ring: depth rows of every thread's vectors.
qint64 ringBytes(const Strategy& s, const Task& task) {
    return qint64(depth(s)) * vpt(s) * s.warps * 32 * vectorBytes(s, task);
}

// Shared memory of one block: the block reduction's partials, and the ring with pipeline=async.
qint64 smemPerBlock(const Strategy& s, const Task& task) {
    // Two buffers (the reductions alternate), of at most 12 bytes per warp (Welford's moments).
    const qint64 partials = mapping(s) == u"block" ? qint64(s.warps) * 24 : 0;
    return partials + (asyncRing(s) && task.op == u"layernorm" ? ringBytes(s, task) : 0);
}

// The runtime reserves 1 KB of an SM's shared memory per resident block (sm_80 and newer).
constexpr qint64 kSmemReservedPerBlock = 1024;

// Elements of a row the registers of its threads cover in one load.
qint64 chunkElements(const Strategy& s) {
    return qint64(rowThreads(s)) * s.vectorWidth * vpt(s);
}

// Blocks per SM the register file and shared memory hold for this configuration, at most 8 (and
// the SM's 2048 threads).
int residentBlocks(const Strategy& s, const Task& task, const DeviceInfo& device) {
    const qint64 threads = qint64(s.warps) * 32;
    const qint64 byRegs = device.regsPerSm / (qint64(registerEstimate(s, task)) * threads);
    const qint64 bySmem = device.smemPerSm / (smemPerBlock(s, task) + kSmemReservedPerBlock);
    return int(std::min({byRegs, bySmem, 2048 / threads, qint64(8)}));
}

QStringList pipelineProblems(const Strategy& s, const Task& task, const DeviceInfo& device) {
    QStringList problems;
    const QString p = pipeline(s);
    const QString w = weights(s);
    if (p != u"none" && p != u"prefetch" && p != u"async")
        problems << u"params.pipeline=\"%1\": must be none, prefetch or async"_s.arg(p);
    if (w != u"load" && w != u"registers")
        problems << u"params.weights=\"%1\": must be load or registers"_s.arg(w);
    if (w == u"registers" && p != u"prefetch" && p != u"async")
        problems << u"weights=registers: only a persistent block that keeps rows in flight "
                    "(pipeline=prefetch or async) keeps W and B across rows"_s;
    if (p != u"prefetch" && p != u"async")
        return problems;
    if (p == u"async" && task.op != u"layernorm") {
        problems << u"pipeline=%1: implemented for layernorm only, not %2"_s.arg(p, task.op);
        return problems;
    }
    if (p == u"prefetch" && task.op != u"layernorm" && task.op != u"softmax") {
        problems << u"pipeline=prefetch: implemented for layernorm and softmax only, not %1"_s.arg(
            task.op);
        return problems;
    }
    if (task.op == u"softmax" && w == u"registers")
        problems << u"weights=registers: softmax has no W and B to keep; use weights=load"_s;
    const int k = ctasPerSm(s);
    if (k == 0)
        problems << u"pipeline=%1 needs a persistent grid to have a next row: set "
                    "params.ctas_per_sm to 1..8"_s.arg(p);
    if (p == u"async" && stats(s) != u"two_pass")
        problems << u"pipeline=%1 computes two-pass statistics; use stats=two_pass"_s.arg(p);
    if (p == u"prefetch" && task.op == u"softmax" && stats(s) != u"two_pass" &&
        stats(s) != u"one_pass")
        problems << u"pipeline=prefetch on softmax computes two-pass or one-pass (per-thread "
                    "maximum and sum, one reduction) statistics; use stats=two_pass or one_pass"_s;
    if (p == u"prefetch" && task.op == u"layernorm" && stats(s) != u"two_pass" &&
        stats(s) != u"shifted_one_pass")
        problems << u"pipeline=prefetch computes two-pass or shifted one-pass statistics; use "
                    "stats=two_pass or shifted_one_pass"_s;
    if (task.n > chunkElements(s))
        problems << u"pipeline=%1 keeps the row %2, but rows of %3 exceed the %4 elements its "
                    "threads cover (row threads x vectorWidth x vectors_per_thread)"_s
                        .arg(p, p == u"async" ? u"in its shared-memory ring"_s : u"in registers"_s)
                        .arg(task.n)
                        .arg(chunkElements(s));
    if (p == u"prefetch" && prefetchWords(s, task) > 128)
        problems << u"pipeline=prefetch holds %1 packed registers per thread (two rows%2); at most "
                    "128 fit beside the arithmetic"_s.arg(prefetchWords(s, task))
                        .arg(weightsInRegisters(s) ? u", W and B"_s : QString());
    if (p == u"prefetch" && task.op == u"softmax" && vpt(s) * s.vectorWidth > 64)
        problems << u"pipeline=prefetch on softmax keeps %1 floats of exp(x - m) per thread "
                    "(vectors_per_thread x vectorWidth) beside the packed rows; at most 64 fit"_s
                        .arg(vpt(s) * s.vectorWidth);
    if (p == u"async") {
        const int d = depth(s);
        if (d < 2 || d > 6)
            problems << u"params.depth=%1: rows in flight per block with pipeline=async must be "
                        "2 to 6"_s.arg(d);
        const int bytes = vectorBytes(s, task);
        if (bytes != 4 && bytes != 8 && bytes != 16)
            problems << u"pipeline=async copies whole vectors with cp.async (4, 8 or 16 bytes), "
                        "but vectorWidth=%1 of %2 is %3 bytes"_s.arg(s.vectorWidth)
                            .arg(task.dtypeOf(u"X"_s))
                            .arg(bytes);
        if (device.ccMajor < 8)
            problems << u"pipeline=async needs cp.async (sm_80 or newer); device %1 is sm_%2%3"_s
                            .arg(device.name)
                            .arg(device.ccMajor)
                            .arg(device.ccMinor);
        const qint64 block = smemPerBlock(s, task);
        if (block > device.smemPerBlockOptin)
            problems << u"pipeline=async ring of %1 bytes (depth x threads x vectors_per_thread x "
                        "%2-byte vectors) exceeds the %3 bytes of shared memory a block may "
                        "have"_s.arg(block)
                            .arg(bytes)
                            .arg(device.smemPerBlockOptin);
        else if (k > 0 && qint64(k) * (block + kSmemReservedPerBlock) > device.smemPerSm)
            problems << u"ctas_per_sm=%1 x (%2 bytes of ring and partials + 1024 reserved) "
                        "exceeds the %3 bytes of shared memory of an SM, so the persistent "
                        "blocks cannot all be resident"_s.arg(k)
                            .arg(block)
                            .arg(device.smemPerSm);
    }
    const qint64 regs = qint64(registerEstimate(s, task)) * s.warps * 32 * std::max(k, 1);
    if (k > 0 && regs > device.regsPerSm)
        problems << u"ctas_per_sm=%1 x %2 threads x about %3 registers exceeds the %4 registers "
                    "of an SM, so the persistent blocks cannot all be resident"_s.arg(k)
                        .arg(s.warps * 32)
                        .arg(registerEstimate(s, task))
                        .arg(device.regsPerSm);
    return problems;
}

} // namespace

QString RowwiseFamily::id() const {
    return u"rowwise"_s;
}

QString RowwiseFamily::description() const {
    return u"Row-wise memory-bound ops (softmax, layernorm, reduce sum/max): one warp per row "
           "(mapping=warp, several rows per block) or one block per row (mapping=block), vector "
           "accesses of vectorWidth elements, vectors_per_thread vectors per thread cached in "
           "registers so a row that fits is read once and written once (longer rows stream in "
           "chunks), stats=one_pass (online softmax, Welford layernorm) or two_pass, and "
           "ctas_per_sm > 0 for a persistent grid of that many blocks per SM looping over rows. "
           "fp32 arithmetic whatever the storage type."_s;
}

bool RowwiseFamily::supports(const Task& task, const DeviceInfo& device) const {
    if (!isRowOp(task.op) || device.ccMajor < 7)
        return false;
    const QStringList dtypes = taskDtypes(task);
    return std::all_of(dtypes.begin(), dtypes.end(),
                       [](const QString& d) { return d == u"f32" || d == u"f16" || d == u"bf16"; });
}

QVector<ParameterSpec> RowwiseFamily::parameters() const {
    return {
        paramsParameter(u"mapping"_s,
                        u"warp: one warp per row, warps rows per block, shuffles only; block: "
                        "all the block's threads on one row, shared memory between warps"_s,
                        strings({u"warp", u"block"})),
        fieldParameter(u"warps"_s, u"Warps per block"_s, ints({1, 2, 4, 8, 16, 32}),
                       &Strategy::warps),
        fieldParameter(u"vectorWidth"_s, u"Elements per load and store (one access)"_s,
                       ints({1, 2, 4, 8}), &Strategy::vectorWidth),
        paramsParameter(u"vectors_per_thread"_s,
                        u"Vectors a thread keeps in registers: the row is cached when it fits, "
                        "and more vectors mean more bytes in flight"_s,
                        ints({1, 2, 4, 8, 16})),
        paramsParameter(u"stats"_s,
                        u"one_pass: online softmax / Welford layernorm (one reduction, one read "
                        "for long rows; with softmax pipeline=prefetch each thread's maximum and "
                        "sum of its cached elements, then one reduction); two_pass: maximum then "
                        "sum / mean then variance; "
                        "shifted_one_pass: layernorm with pipeline=prefetch, sums of x - x[0] and "
                        "of its square in one pass and one reduction"_s,
                        strings({u"two_pass", u"one_pass", u"shifted_one_pass"})),
        paramsParameter(u"ctas_per_sm"_s,
                        u"0: one block per row group; k > 0: a persistent grid of k blocks per "
                        "SM that loops over rows"_s,
                        ints({0, 1, 2, 3, 4, 5, 6, 8})),
        paramsParameter(
            u"pipeline"_s,
            u"layernorm and softmax rows that fit in registers: none loads a row, "
            "then reduces "
            "it; prefetch (persistent grid) loads the next row, packed, before the "
            "current row's reductions so DRAM loads stay in flight; async "
            "(layernorm, persistent grid) keeps depth rows in flight through cp.async copies "
            "into a shared-memory ring"_s,
            strings({u"none", u"prefetch", u"async"})),
        paramsParameter(u"depth"_s,
                        u"rows in flight per block with pipeline=async (ring slots of shared "
                        "memory); ignored by the other pipelines"_s,
                        ints({2, 3, 4, 5, 6})),
        paramsParameter(u"weights"_s,
                        u"layernorm W and B with pipeline=prefetch or async: load reads them per "
                        "row (L1/L2 hits); registers keeps them packed for all of a block's "
                        "rows"_s,
                        strings({u"load", u"registers"})),
    };
}

void RowwiseFamily::normalize(Strategy& s) const {
    s.family = id();
    s.mma = u"fma"_s;
    s.blockM = mapping(s) == u"block" ? 1 : s.warps;
    // blockN shows the row chunk the registers hold, capped at the schema's 512
    const int chunk = rowThreads(s) * s.vectorWidth * std::max(vpt(s), 1);
    s.blockN = 1;
    while (s.blockN * 2 <= std::min(chunk, 512))
        s.blockN *= 2;
    setTileFieldsUnused(s);
}

QStringList RowwiseFamily::constraints(const Strategy& s, const Task& task,
                                       const DeviceInfo& device) const {
    QStringList problems;
    if (!supports(task, device))
        problems << u"family rowwise needs a softmax, layernorm or reduce task with f32, f16 or "
                    "bf16 tensors on an sm_70 or newer GPU (task %1, device %2 sm_%3%4)"_s
                        .arg(task.summary(), device.name)
                        .arg(device.ccMajor)
                        .arg(device.ccMinor);
    if (s.family != id())
        problems << u"family: \"%1\" is not %2"_s.arg(s.family, id());
    const QString m = mapping(s);
    if (m != u"warp" && m != u"block")
        problems << u"params.mapping=\"%1\": must be warp or block"_s.arg(m);
    if (s.warps < 1 || s.warps > 32 || (s.warps & (s.warps - 1)) != 0)
        problems << u"warps=%1: must be a power of two in 1..32"_s.arg(s.warps);
    if (m == u"block" && s.warps < 2)
        problems << u"mapping=block with warps=%1: a one-warp block is mapping=warp"_s.arg(s.warps);
    problems << vectorWidthProblems(s.vectorWidth, task, vectorDtypes(task));
    const int v = vpt(s);
    if (v != 1 && v != 2 && v != 4 && v != 8 && v != 16)
        problems << u"params.vectors_per_thread=%1: must be 1, 2, 4, 8 or 16"_s.arg(v);
    else if (!prefetch(s) && !asyncRing(s) && cacheFloats(s, task) > 64)
        problems << u"vectors_per_thread=%1 x vectorWidth=%2 is %3 cached floats per thread%4; "
                    "at most 64 fit without spilling"_s.arg(v)
                        .arg(s.vectorWidth)
                        .arg(cacheFloats(s, task))
                        .arg(task.op == u"layernorm" ? u" (row, W and B)"_s : QString());
    const QString st = stats(s);
    if (st != u"one_pass" && st != u"two_pass" && st != u"shifted_one_pass")
        problems << u"params.stats=\"%1\": must be one_pass, two_pass or shifted_one_pass"_s.arg(
            st);
    else if (st == u"shifted_one_pass" && (task.op != u"layernorm" || !prefetch(s)))
        problems << u"stats=shifted_one_pass: implemented for layernorm with pipeline=prefetch "
                    "only (here %1 with pipeline=%2)"_s.arg(task.op, pipeline(s));
    else if (task.op == u"reduce" && st != u"one_pass")
        problems << u"stats=two_pass: a reduction reads its row once; use one_pass"_s;
    const int k = ctasPerSm(s);
    if (k < 0 || k > 8)
        problems << u"params.ctas_per_sm=%1: must be 0 to 8"_s.arg(k);
    else if (k > 0 && k * s.warps * 32 > 2048)
        problems << u"ctas_per_sm=%1 x %2 threads exceeds the 2048 threads of an SM, so the "
                    "persistent blocks cannot all be resident"_s.arg(k)
                        .arg(s.warps * 32);
    problems << pipelineProblems(s, task, device);
    const int regs = registerEstimate(s, task);
    if (qint64(regs) * s.warps * 32 > device.regsPerSm)
        problems << u"about %1 registers x %2 threads exceeds the %3 registers of an SM"_s.arg(regs)
                        .arg(s.warps * 32)
                        .arg(device.regsPerSm);
    return problems;
}

ResourceEstimate RowwiseFamily::resources(const Strategy& s, const Task& task,
                                          const DeviceInfo& device) const {
    return estimateResources(s.warps * 32, smemPerBlock(s, task), registerEstimate(s, task),
                             device);
}

Strategy RowwiseFamily::defaultStrategy(const Task& task, const DeviceInfo& device) const {
    Strategy s;
    s.family = id();
    s.vectorWidth = 1;
    for (const QString& d : vectorDtypes(task))
        s.vectorWidth = std::max(s.vectorWidth, maxVectorWidth(task, d));
    for (const QString& d : vectorDtypes(task))
        s.vectorWidth = std::min(s.vectorWidth, maxVectorWidth(task, d));
    // Cached floats per thread aimed at: ptxas spilled the f32 softmax at 32 (sm_90a, nvcc 13.0).
    // Layernorm caches the row only (W and B stream one vector at a time), and the fewer threads
    // a row takes, the more rows a SM keeps in flight: at 8 warps x 2 vectors its bf16 16384x4096
    // task ran 3 blocks per SM and reached 45% of the DRAM floor (H200).
    const int perThread =
        task.op != u"layernorm" && Task::dtypeBytes(task.dtypeOf(u"X"_s)) == 4 ? 16 : 32;
    const qint64 warpCapacity = 32LL * perThread;
    QString why;
    if (task.op == u"reduce") {
        // A reduction reads each row once whatever the mapping: a warp per row needs no
        // barrier, and 8 vectors per thread keep enough loads in flight.
        s.params.insert(u"mapping"_s, u"warp"_s);
        s.warps = 8;
        s.params.insert(u"vectors_per_thread"_s, std::min(8, 32 / s.vectorWidth));
        why = u"reduce: one warp per row (no barriers), 8 rows per block, several vectors in "
              "flight per thread"_s;
    } else if (task.n <= warpCapacity) {
        s.params.insert(u"mapping"_s, u"warp"_s);
        s.warps = 4;
        int v = 1;
        while (32LL * s.vectorWidth * v < task.n && v * s.vectorWidth * 2 <= perThread)
            v *= 2;
        s.params.insert(u"vectors_per_thread"_s, v);
        why = u"rows of %1 fit in one warp's registers (%2 vectors of %3 per lane): one warp per "
              "row, no barriers"_s.arg(task.n)
                  .arg(v)
                  .arg(s.vectorWidth);
    } else {
        s.params.insert(u"mapping"_s, u"block"_s);
        int v = std::max(1, perThread / s.vectorWidth);
        int threads = int(std::min<qint64>(1024, (task.n + qint64(s.vectorWidth) * v - 1) /
                                                     (qint64(s.vectorWidth) * v)));
        int warps = 2;
        while (warps * 32 < threads && warps < 32)
            warps *= 2;
        s.warps = warps;
        s.params.insert(u"vectors_per_thread"_s, v);
        why = u"rows of %1 need a block to stay in registers: %2 warps x %3 vectors of %4 "
              "elements per thread cache up to %5 elements, so the row is read once"_s.arg(task.n)
                  .arg(warps)
                  .arg(v)
                  .arg(s.vectorWidth)
                  .arg(qint64(warps) * 32 * v * s.vectorWidth);
    }
    // Two passes over registers cost no DRAM traffic; on layernorm they ran 1.85x faster than the
    // one-pass statistics (H200, bf16 16384x4096).
    s.params.insert(u"stats"_s, task.op == u"softmax" || task.op == u"layernorm" ? u"two_pass"_s
                                                                                 : u"one_pass"_s);
    s.params.insert(u"ctas_per_sm"_s, 0);
    s.params.insert(u"pipeline"_s, u"none"_s);
    s.params.insert(u"weights"_s, u"load"_s);
    QString grid = u"one block per row group"_s;
    const int xBytes = Task::dtypeBytes(task.dtypeOf(u"X"_s));
    const qint64 rowBytes = qint64(s.warps * 32 / rowThreads(s)) * task.n * xBytes;
    // f32 layernorm keeps one row at a time: its 16 KB rows already keep enough loads in flight,
    // and the prefetching kernel ran slower (86.2% of the DRAM floor against 92.2%, H200).
    if (task.op == u"layernorm" && task.n <= chunkElements(s) && xBytes == 2) {
        // One bf16 4096-row per block at a time reached only 61% of the DRAM floor (H200): each
        // block loaded its row, then spent most of its life in barriers and W/B loads with no DRAM
        // load in flight. Prefetching the next row in registers at 4 blocks per SM, W and B kept
        // in registers, reached 75.8%; a cp.async ring with more rows in flight ran slower (64.6%
        // at depth 4, 62.1% at depth 6): the bf16 row is bound by its instructions per row, not
        // by the bytes in flight, so pipeline=async stays selectable but is not the default. W
        // and B stay in registers when 4 blocks per SM still fit, which takes their loads off the
        // path between the reductions and the store.
        s.params.insert(u"pipeline"_s, u"prefetch"_s);
        s.params.insert(u"weights"_s, u"registers"_s);
        if (residentBlocks(s, task, device) < 4)
            s.params.insert(u"weights"_s, u"load"_s);
        s.params.insert(u"ctas_per_sm"_s, std::min(4, residentBlocks(s, task, device)));
        // One pass of shifted sums and one block reduction instead of two passes and two: 83.5%
        // of the DRAM floor against 75.8% (H200), correct on the harness's constant-row,
        // large-offset and tiny-variance cases.
        s.params.insert(u"stats"_s, u"shifted_one_pass"_s);
    }
    if (task.op == u"softmax" && task.n <= chunkElements(s) && xBytes == 2) {
        // A 16-bit softmax row per block at a time reached 77.6% of the DRAM floor on f16
        // 8192x8192 (H200), its f32 twin 90.8%: half the bytes per row for the same barriers and
        // instructions. Loading the next row (packed) before reducing the current one at 2 blocks
        // per SM: 85.0% (two passes) and 84.5% (one pass of per-thread maxima and sums),
        // side by side with 83.4% for one row at a time, all after the SFU exponentials.
        s.params.insert(u"pipeline"_s, u"prefetch"_s);
        s.params.insert(u"ctas_per_sm"_s, std::min(2, residentBlocks(s, task, device)));
    }
    // 16-bit rows in the prefetching kernel: half-width vectors (8-byte accesses), twice as many
    // per thread (the same elements), ran faster in kevolve-cli searches on the H200, CIs apart:
    // layernorm bf16 85.0% of the DRAM floor against 83.7%, softmax f16 87.1% against 84.2%.
    if (prefetch(s) && xBytes == 2 && s.vectorWidth == 8) {
        Strategy narrow = s;
        narrow.vectorWidth = 4;
        narrow.params.insert(u"vectors_per_thread"_s,
                             2 * s.params.value(u"vectors_per_thread"_s).toInt());
        if (pipelineProblems(narrow, task, device).isEmpty() &&
            residentBlocks(narrow, task, device) >= ctasPerSm(narrow)) {
            s = narrow;
            why = u"rows of %1 need a block to stay in registers: %2 warps x %3 vectors of "
                  "%4 elements per thread cache up to %5 elements, so the row is read once"_s
                      .arg(task.n)
                      .arg(s.warps)
                      .arg(s.params.value(u"vectors_per_thread"_s).toInt())
                      .arg(s.vectorWidth)
                      .arg(qint64(s.warps) * 32 * s.params.value(u"vectors_per_thread"_s).toInt() *
                           s.vectorWidth);
        }
    }
    if (prefetch(s) && !pipelineProblems(s, task, device).isEmpty()) {
        // Two packed rows do not fit the registers of a resident block: one row at a time.
        s.params.insert(u"ctas_per_sm"_s, 0);
        s.params.insert(u"pipeline"_s, u"none"_s);
        s.params.insert(u"weights"_s, u"load"_s);
        s.params.insert(u"stats"_s, u"two_pass"_s);
    }
    const QString weightsText =
        weightsInRegisters(s) ? u"kept in registers"_s : u"read per row from L1/L2"_s;
    if (prefetch(s)) {
        const int k = ctasPerSm(s);
        grid = u"a persistent grid of %1 blocks per SM (as many as the registers hold), each "
               "loading its next row before reducing the current one (about %2 KB of loads in "
               "flight per SM)"_s.arg(k)
                   .arg(qint64(k) * rowBytes / 1024);
        if (task.op == u"layernorm")
            grid += u", W and B "_s + weightsText;
    } else if (asyncRing(s)) {
        const int k = ctasPerSm(s);
        grid = u"a persistent grid of %1 blocks per SM, each copying rows ahead with cp.async "
               "into a shared-memory ring of %2 rows (%3 KB per block; about %4 KB of loads in "
               "flight per SM beyond the rows being reduced), W and B %5"_s.arg(k)
                   .arg(depth(s))
                   .arg(ringBytes(s, task) / 1024)
                   .arg(qint64(k) * (depth(s) - 1) * rowBytes / 1024)
                   .arg(weightsText);
    }
    normalize(s);
    const QString layernormStats =
        stats(s) == u"shifted_one_pass"
            ? u"the sums of x - x[0] and of its square in one pass over the row in registers"_s
            : u"mean, then variance, from the row in %1"_s.arg(asyncRing(s) ? u"shared memory"_s
                                                                            : u"registers"_s);
    s.rationale = u"Memory-bound %1: %2; %3-element vectors (%4-byte accesses where the alignment "
                  "allows); %5; %6."_s.arg(task.op, why)
                      .arg(s.vectorWidth)
                      .arg(vectorBytes(s, task))
                      .arg(task.op == u"softmax"     ? u"max then sum from registers"_s
                           : task.op == u"layernorm" ? layernormStats
                                                     : u"fp32 accumulation"_s)
                      .arg(grid);
    return s;
}

QString RowwiseFamily::generate(const Strategy& s, const Task& task) const {
    using gemmcodegen::render;
    const bool block = mapping(s) == u"block";
    const bool onePass = stats(s) == u"one_pass";
    const int k = ctasPerSm(s);
    const QString op = task.op;
    const bool pipelined = prefetch(s) && (op == u"layernorm" || op == u"softmax");
    const bool ring = asyncRing(s) && op == u"layernorm";
    QStringList header{
        u"Kevolve built-in kernel, family rowwise (generated; edit freely)."_s,
        u"Task: %1 (%2)."_s.arg(task.name, task.summary()),
        u"Strategy: %1 per row (%2 threads per block), %3-element vectors, %4 vectors per thread "
        "%5 (rows up to %6 elements are read once), %7, %8%9."_s
            .arg(block ? u"one block"_s : u"one warp"_s)
            .arg(s.warps * 32)
            .arg(s.vectorWidth)
            .arg(vpt(s))
            .arg(ring ? u"in a shared-memory ring"_s : u"in registers"_s)
            .arg(qint64(rowThreads(s)) * s.vectorWidth * vpt(s))
            .arg(op == u"reduce" ? u"fp32 accumulators per register slot"_s
                 : op == u"softmax"
                     ? (onePass ? u"online softmax (maximum and sum in one pass, one reduction)"_s
                                : u"two-pass softmax (maximum, then sum)"_s)
                     : (onePass ? u"Welford statistics"_s
                        : stats(s) == u"shifted_one_pass"
                            ? u"shifted one-pass statistics (sums of x - x[0] and its square, one "
                              "reduction)"_s
                            : u"two-pass statistics (mean, then variance)"_s))
            .arg(k > 0 ? u"a persistent grid of %1 blocks per SM"_s.arg(k)
                       : u"one block per row group"_s)
            .arg(pipelined && op == u"softmax"
                     ? u", the next row prefetched (packed) before the current row's reductions"_s
                 : pipelined
                     ? u", the next row prefetched (packed) before the current row's "
                       "reductions, W and B %1"_s.arg(weightsInRegisters(s) ? u"kept in registers"_s
                                                                            : u"read per row"_s)
                 : ring
                     ? u", %1 rows per block in flight through cp.async copies into a "
                       "shared-memory ring (%2 bytes), W and B %3"_s.arg(depth(s))
                           .arg(ringBytes(s, task))
                           .arg(weightsInRegisters(s) ? u"kept in registers"_s : u"read per row"_s)
                     : QString()),
    };
    if (!s.rationale.isEmpty()) {
        header << u"Rationale:"_s;
        for (const QString& line : gemmcodegen::wrapText(s.rationale))
            header << u"  "_s + line;
    }

    QString types = u"using ElemX = %1;\nusing ElemY = %2;\n"_s.arg(
        gemmcodegen::cudaType(task.dtypeOf(u"X"_s)), gemmcodegen::cudaType(task.dtypeOf(u"Y"_s)));
    if (op == u"layernorm")
        types += u"using ElemW = %1;\nusing ElemB = %2;\n"_s.arg(
            gemmcodegen::cudaType(task.dtypeOf(u"W"_s)),
            gemmcodegen::cudaType(task.dtypeOf(u"B"_s)));

    QString kernel;
    QString launch;
    QString scalarCheck;
    QString alignment;
    const QString rowLoop = QString::fromUtf16(kRowLoop);
    if (op == u"softmax") {
        kernel =
            render(kSoftmax,
                   {{u"MAXSUM"_s, onePass ? QString::fromUtf16(kMaxSum) : QString()},
                    {u"ROW_LOOP"_s, rowLoop},
                    {u"CACHED"_s,
                     QString::fromUtf16(onePass ? kSoftmaxCachedOnline : kSoftmaxCachedTwoPass)},
                    {u"STREAMING"_s,
                     QString::fromUtf16(onePass ? kSoftmaxStreamOnline : kSoftmaxStreamTwoPass)}});
        const QString softmaxArgs =
            u"(\n"
            "        static_cast<const ElemX*>(args->inputs[0].data),\n"
            "        static_cast<ElemY*>(args->outputs[0].data), M, N, ldx, KEVOLVE_LDY(args));"_s;
        launch = u"softmaxRows<<<grid, THREADS, 0, stream>>>"_s + softmaxArgs;
        if (pipelined) {
            kernel += render(kPackedHelpers, {{u"WEIGHT_TYPES"_s, QString()}}) +
                      render(kSoftmaxPrefetch,
                             {{u"STATS"_s, QString::fromUtf16(onePass ? kSoftmaxPrefetchOnePass
                                                                      : kSoftmaxPrefetchTwoPass)}});
            // Rows longer than the register cache (other shapes than the task's) stream.
            const QString nested = QString(softmaxArgs).replace(u"\n"_s, u"\n    "_s);
            launch = u"// Rows that fit in registers take the prefetching kernel (rows of exactly "
                     "CHUNK\n"
                     "    // elements without bounds tests); longer rows stream.\n"
                     "    if (N == CHUNK)\n"
                     "        softmaxRowsPrefetch<true><<<grid, THREADS, 0, stream>>>"_s +
                     nested +
                     u"\n    else if (N <= CHUNK)\n"
                     "        softmaxRowsPrefetch<false><<<grid, THREADS, 0, stream>>>"_s +
                     nested + u"\n    else\n        softmaxRows<<<grid, THREADS, 0, stream>>>"_s +
                     nested;
        }
        alignment =
            u"ldx % VEC != 0 || KEVOLVE_LDY(args) % VEC != 0 ||\n"
            "        reinterpret_cast<uintptr_t>(args->inputs[0].data) % (VEC * sizeof(ElemX)) != "
            "0 ||\n"
            "        reinterpret_cast<uintptr_t>(args->outputs[0].data) % (VEC * sizeof(ElemY)) != 0"_s;
    } else if (op == u"layernorm") {
        kernel = render(kLayerNorm,
                        {{u"MOMENTS"_s, onePass ? QString::fromUtf16(kMoments) : QString()},
                         {u"ROW_LOOP"_s, rowLoop},
                         {u"CACHED"_s, QString::fromUtf16(onePass ? kLayerNormCachedWelford
                                                                  : kLayerNormCachedTwoPass)},
                         {u"STREAMING"_s, QString::fromUtf16(onePass ? kLayerNormStreamWelford
                                                                     : kLayerNormStreamTwoPass)}});
        const QString layerNormArgs =
            u"(\n"
            "        static_cast<const ElemX*>(args->inputs[0].data),\n"
            "        static_cast<const ElemW*>(args->inputs[1].data),\n"
            "        static_cast<const ElemB*>(args->inputs[2].data),\n"
            "        static_cast<ElemY*>(args->outputs[0].data), M, N, ldx, KEVOLVE_LDY(args),\n"
            "        static_cast<float>(args->scalars[0]));"_s;
        launch = u"layerNormRows<<<grid, THREADS, 0, stream>>>"_s + layerNormArgs;
        const QMap<QString, QString> weightsParts{
            {u"WEIGHTS_HELPERS"_s,
             weightsInRegisters(s) ? QString::fromUtf16(kWeightsInRegisters) : QString()},
            {u"WEIGHTS_ROW"_s,
             weightsInRegisters(s) ? u"        keepPacked(weights);\n"_s : QString()},
            {u"WEIGHTS_SETUP"_s,
             weightsInRegisters(s) ? QString::fromUtf16(kWeightsSetup) : QString()},
            {u"WEIGHTS_USE"_s,
             QString::fromUtf16(weightsInRegisters(s) ? kWeightsFromRegisters : kWeightsLoaded)}};
        // Rows longer than the register cache (other shapes than the task's) stream.
        const QString nested = QString(layerNormArgs).replace(u"\n"_s, u"\n    "_s);
        if (pipelined) {
            const bool shifted = stats(s) == u"shifted_one_pass";
            auto parts = weightsParts;
            parts[u"WEIGHTS_USE"_s].replace(u"if (col + VEC <= N)"_s,
                                            u"if (FULL || col + VEC <= N)"_s);
            parts.insert(u"STATS_HELPERS"_s,
                         shifted ? QString::fromUtf16(kShiftedSums) : QString());
            parts.insert(
                u"SUM_OF"_s,
                shifted ? u"    const auto sumsOf = [](ShiftedSums a, ShiftedSums b) {\n"
                          "        return ShiftedSums{a.d + b.d, a.dd + b.dd};\n"
                          "    };\n"_s
                        : u"    const auto sumOf = [](float a, float b) { return a + b; };\n"_s);
            parts.insert(u"STATS"_s,
                         QString::fromUtf16(shifted ? kPrefetchShiftedOnePass : kPrefetchTwoPass));
            // After one statistics pass the converted row may stay live into the normalisation
            // (no reconversion); after two passes it is converted again, as it would spill.
            parts.insert(u"NORMALISE_KEEP"_s,
                         shifted ? QString() : u"        keepPacked(current);\n"_s);
            kernel += render(kPackedHelpers,
                             {{u"WEIGHT_TYPES"_s, QString::fromUtf16(kPackedWeightTypes)}}) +
                      render(kLayerNormPrefetch, parts);
            launch = u"// Rows that fit in registers take the prefetching kernel (rows of exactly "
                     "CHUNK\n"
                     "    // elements without bounds tests); longer rows stream.\n"
                     "    if (N == CHUNK)\n"
                     "        layerNormRowsPrefetch<true><<<grid, THREADS, 0, stream>>>"_s +
                     nested +
                     u"\n    else if (N <= CHUNK)\n"
                     "        layerNormRowsPrefetch<false><<<grid, THREADS, 0, stream>>>"_s +
                     nested + u"\n    else\n        layerNormRows<<<grid, THREADS, 0, stream>>>"_s +
                     nested;
        } else if (ring) {
            auto parts = weightsParts;
            parts.insert(u"DEPTH"_s, QString::number(depth(s)));
            kernel += render(kPackedHelpers,
                             {{u"WEIGHT_TYPES"_s, QString::fromUtf16(kPackedWeightTypes)}}) +
                      render(kLayerNormAsync, parts);
            launch =
                u"// Rows that fit the ring take the cp.async kernel; longer rows stream.\n"
                "    if (N <= CHUNK) {\n"
                "        // Over 48 KB of shared memory per block must be asked for; the static\n"
                "        // part (the reduction's partials, under 1 KB) counts too.\n"
                "        if (RING_BYTES + 1024 > 48 * 1024 &&\n"
                "            cudaFuncSetAttribute(layerNormRowsAsync,\n"
                "                                 cudaFuncAttributeMaxDynamicSharedMemorySize,\n"
                "                                 RING_BYTES) != cudaSuccess)\n"
                "            return 5;\n"
                "        layerNormRowsAsync<<<grid, THREADS, RING_BYTES, stream>>>"_s +
                nested + u"\n    } else {\n        layerNormRows<<<grid, THREADS, 0, stream>>>"_s +
                nested + u"\n    }"_s;
        }
        alignment =
            u"ldx % VEC != 0 || KEVOLVE_LDY(args) % VEC != 0 ||\n"
            "        reinterpret_cast<uintptr_t>(args->inputs[0].data) % (VEC * sizeof(ElemX)) != "
            "0 ||\n"
            "        reinterpret_cast<uintptr_t>(args->inputs[1].data) % (VEC * sizeof(ElemW)) != "
            "0 ||\n"
            "        reinterpret_cast<uintptr_t>(args->inputs[2].data) % (VEC * sizeof(ElemB)) != "
            "0 ||\n"
            "        reinterpret_cast<uintptr_t>(args->outputs[0].data) % (VEC * sizeof(ElemY)) != 0"_s;
        scalarCheck = u"    if (!(args->scalars[0] > 0.0))\n        return 6; // epsilon\n"_s;
    } else {
        const bool max = task.params.value(u"reduction"_s).toString() == u"max";
        kernel = render(kReduce, {{u"NAN_MAX"_s, max ? QString::fromUtf16(kNanMax) : QString()},
                                  {u"ROW_LOOP"_s, rowLoop},
                                  {u"COMBINE"_s, max ? u"maxPropagatingNaN(a, b)"_s : u"a + b"_s},
                                  {u"IDENTITY"_s, max ? u"-INFINITY"_s : u"0.0f"_s}});
        launch = u"reduceRows<<<grid, THREADS, 0, stream>>>(\n"
                 "        static_cast<const ElemX*>(args->inputs[0].data),\n"
                 "        static_cast<ElemY*>(args->outputs[0].data), M, N, ldx);"_s;
        alignment =
            u"ldx % VEC != 0 ||\n"
            "        reinterpret_cast<uintptr_t>(args->inputs[0].data) % (VEC * sizeof(ElemX)) != 0"_s;
        scalarCheck = u"    if (args->scalars[0] != %1)\n        return 6; // generated for "
                      "reduction \"%2\" only\n"_s.arg(max ? 1 : 0)
                          .arg(max ? u"max"_s : u"sum"_s);
    }
    const QString grid =
        k > 0 ? u"// Persistent: at most CTAS_PER_SM blocks per SM (all resident) loop over the "
                u"rows,\n"
                "    // as few as finish in the same number of rounds, so the last round is full\n"
                "    // (16384 rows on 4 x 132 blocks: 32 rows on each of 512, not 31 or 32 on "
                "528).\n"
                "    const long long slots = max(1LL, min(rowGroups, static_cast<long "
                "long>(CTAS_PER_SM) *\n"
                "                                                     args->device.sm_count));\n"
                "    const long long rounds = max(1LL, (rowGroups + slots - 1) / slots);\n"
                "    const long long grid = (rowGroups + rounds - 1) / rounds;"_s
              : u"const long long grid = min(rowGroups, 2147483647LL);"_s;
    const QStringList dtypes = taskDtypes(task);
    return render(
        kPrelude,
        {{u"HEADER"_s, gemmcodegen::headerComment(header)},
         {u"INCLUDES"_s, dtypeIncludes(dtypes)},
         {u"TYPES"_s, types},
         {u"ELEMENTS"_s, elementHelpers(dtypes, s.vectorWidth)},
         {u"WARPS"_s, QString::number(s.warps)},
         {u"ROW_THREADS_WHY"_s, block ? u"the whole block (one row per block)."_s
                                      : u"one warp (WARPS rows per block)."_s},
         {u"ROW_THREADS"_s, block ? u"THREADS"_s : u"32"_s},
         {u"VPT"_s, QString::number(vpt(s))},
         {u"CTAS_WHY"_s, k > 0 ? u"Blocks per SM of the persistent grid."_s
                               : u"0: one block per ROWS_PER_CTA rows (no persistent grid)."_s},
         {u"CTAS"_s, QString::number(k)},
         {u"REDUCE"_s, QString::fromUtf16(block ? kBlockReduce : kWarpReduce)},
         {u"KERNEL"_s, kernel},
         {u"CHECKS"_s, launchChecks(task, u"KEVOLVE_OP_"_s + op.toUpper())},
         {u"SCALAR_CHECK"_s, scalarCheck},
         {u"ALIGNMENT"_s, alignment},
         {u"GRID"_s, grid},
         {u"LAUNCH"_s, launch}});
}

} // namespace kev
