${# wgmma/store_pair_f16.cu: alpha/beta stores of two columns of an f16 C.}
[[maybe_unused]] __device__ inline void storePair(OutT* dst, float x0, float x1, const Problem& p) {
    __half2* out = reinterpret_cast<__half2*>(dst);
    x0 *= p.alpha;
    x1 *= p.alpha;
    if (p.beta != 0.0f) {
        const __half2 old = *out;
        const float2 prev = __half22float2(old);
        x0 += p.beta * prev.x;
        x1 += p.beta * prev.y;
    }
    *out = __floats2half2_rn(x0, x1);
}

__device__ inline float2 scaledPair(float x0, float x1, const OutT* src, bool inside,
                                  const Problem& p) {
    float2 v = make_float2(p.alpha * x0, p.alpha * x1);
    if (p.beta != 0.0f && inside) {
        const __half2 old = *reinterpret_cast<const __half2*>(src);
        const float2 prev = __half22float2(old);
        v.x += p.beta * prev.x;
        v.y += p.beta * prev.y;
    }
    return v;
}

__device__ inline void storeShared(uint32_t address, float2 v) {
    const float x0 = v.x;
    const float x1 = v.y;
    const __half2 h = __floats2half2_rn(x0, x1);
    asm volatile("st.shared.b32 [%0], %1;" ::"r"(address),
                 "r"(*reinterpret_cast<const uint32_t*>(&h))
                 : "memory");
}
