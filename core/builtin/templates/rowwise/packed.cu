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
