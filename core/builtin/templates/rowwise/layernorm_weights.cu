${# rowwise/layernorm_weights.cu: W and B kept packed in registers across a block's rows.}

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
