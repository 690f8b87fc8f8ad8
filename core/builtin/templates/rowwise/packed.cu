${# rowwise/packed.cu: packed vectors for the kernels that hold rows across iterations.}
${# Condition: WEIGHTS (layernorm's packed W and B types).}

using RawX = Raw<VEC * sizeof(ElemX)>::type;
${if WEIGHTS}
using RawW = Raw<VEC * sizeof(ElemW)>::type;
using RawB = Raw<VEC * sizeof(ElemB)>::type;
${endif}

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
