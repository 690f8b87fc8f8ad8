${# wgmma/swapped_epilogue.cu: the stores of swapped-operand tiles (gemm.cu's kSwap), rendered into}
${# every wgmma kernel: storeTile and storePartials name them under `if constexpr`.}
// C = alpha * x + beta * C for one element (the swapped epilogue: a thread's two adjacent
// accumulator columns are two rows of C).
__device__ inline void storeOne(OutT* dst, float x, const Problem& p) {
    float v = p.alpha * x;
    if (p.beta != 0.0f) {
        v += p.beta * float(*dst);
    }
    *dst = OutT(v);
}

// The swapped tile: register 4j + 2h + e of slice s holds D row 16 * warp + lane / 4 + 8h (a
// column of C: n) and D column 8j + 2 * (lane % 4) + e (a row of C: m). Eight lanes store eight
// consecutive columns of one row of C.
template <typename Store>
__device__ inline void forEachSwapped(const float (&acc)[kSlices][kMmaN / 2], const Problem& p,
                                      TileCoord tc, int group, Store store) {
    const int warp = (threadIdx.x / 32) % 4;
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int s = 0; s < kSlices; ++s) {
        const int n0 = tc.n * kTileN + (group * kSlices + s) * 64 + warp * 16 + lane / 4;
#pragma unroll
        for (int j = 0; j < kMmaN / 8; ++j) {
            const int m0 = tc.m * kTileM + 8 * j + 2 * (lane % 4);
#pragma unroll
            for (int h = 0; h < 2; ++h) {
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const int n = n0 + 8 * h;
                    const int m = m0 + e;
                    if (m < p.m && n < p.n) {
                        store(m, n, acc[s][4 * j + 2 * h + e]);
                    }
                }
            }
        }
    }
}

__device__ inline void storeTileSwapped(const float (&acc)[kSlices][kMmaN / 2], const Problem& p,
                                        TileCoord tc, int group) {
    forEachSwapped(acc, p, tc, group,
                   [&](int m, int n, float x) { storeOne(p.c + int64_t(m) * p.ldc + n, x, p); });
}
