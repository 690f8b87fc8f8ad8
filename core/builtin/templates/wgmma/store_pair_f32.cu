${# wgmma/store_pair_f32.cu: alpha/beta stores of two columns of an f32 C.}
[[maybe_unused]] __device__ inline void storePair(OutT* dst, float x0, float x1, const Problem& p) {
    float2* out = reinterpret_cast<float2*>(dst);
    x0 *= p.alpha;
    x1 *= p.alpha;
    if (p.beta != 0.0f) {
        const float2 old = *out;
        const float2 prev = old;
        x0 += p.beta * prev.x;
        x1 += p.beta * prev.y;
    }
    *out = make_float2(x0, x1);
}

__device__ inline float2 scaledPair(float x0, float x1, const OutT* src, bool inside,
                                  const Problem& p) {
    float2 v = make_float2(p.alpha * x0, p.alpha * x1);
    if (p.beta != 0.0f && inside) {
        const float2 old = *reinterpret_cast<const float2*>(src);
        const float2 prev = old;
        v.x += p.beta * prev.x;
        v.y += p.beta * prev.y;
    }
    return v;
}

__device__ inline void storeShared(uint32_t address, float2 v) {
    asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(address), "f"(v.x), "f"(v.y)
                 : "memory");
}
