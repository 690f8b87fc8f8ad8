${# wgmma/swapped_epilogue.cu: the stores of swapped-operand tiles (gemm.cu's kSwap), rendered into}
${# every wgmma kernel: storeTile and storePartials name them under `if constexpr`.}
// The accumulators in chunks of four registers, acc[s][4j .. 4j + 3], chunk s * kMmaN / 8 + j:
// with split-K in a cluster (wgmma/splitk_cluster.cu) CTA kPart of kParts sums and stores the
// chunks whose index is kPart modulo kParts; every other epilogue stores them all (0 of 1).
template <int kPart, int kParts>
__device__ constexpr bool ownsChunk(int s, int j) {
    return (s * (kMmaN / 8) + j) % kParts == kPart;
}

// C = alpha * x + beta * C for one element (the swapped epilogue: a thread's two adjacent
// accumulator columns are two rows of C).
[[maybe_unused]] __device__ inline void storeOne(OutT* dst, float x, const Problem& p) {
    float v = p.alpha * x;
    if (p.beta != 0.0f) {
        v += p.beta * float(*dst);
    }
    *dst = OutT(v);
}

// The swapped tile: register 4j + 2h + e of slice s holds D row 16 * warp + lane / 4 + 8h (a
// column of C: n) and D column 8j + 2 * (lane % 4) + e (a row of C: m). Eight lanes store eight
// consecutive columns of one row of C.
template <int kPart = 0, int kParts = 1, typename Store>
__device__ inline void forEachSwapped(const float (&acc)[kSlices][kMmaN / 2], const Problem& p,
                                      TileCoord tc, int group, Store store) {
    const int warp = (threadIdx.x / 32) % 4;
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int s = 0; s < kSlices; ++s) {
        const int n0 = tc.n * kTileN + (group * kSlices + s) * 64 + warp * 16 + lane / 4;
#pragma unroll
        for (int j = 0; j < kMmaN / 8; ++j) {
            if (!ownsChunk<kPart, kParts>(s, j)) {
                continue;
            }
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

// Transposes the 8x8 matrix of 16-bit values whose row lane / 4, columns 2 * (lane % 4) + 0, 1
// this lane holds (the fragment layout), into the same layout.
[[maybe_unused]] __device__ inline uint32_t transpose8x8(uint32_t pair) {
    uint32_t out;
    asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(out) : "r"(pair));
    return out;
}

template <int kPart, int kParts>
__device__ inline void storeTileSwapped(const float (&acc)[kSlices][kMmaN / 2], const Problem& p,
                                        TileCoord tc, int group) {
    if constexpr (sizeof(OutT) == 2) {
        if (p.beta == 0.0f) {
            // 16-bit C, not read: each 8x8 block of the fragment (8 columns of C across lane / 4,
            // 8 rows across the accumulator pairs) is transposed in registers (movmatrix), so a
            // thread writes two adjacent columns of one row of C in one 32-bit store: half the
            // stores of the single-element path, one bounds test per pair (N is a multiple of 8).
            const int warp = (threadIdx.x / 32) % 4;
            const int lane = threadIdx.x % 32;
#pragma unroll
            for (int s = 0; s < kSlices; ++s) {
                const int nBase = tc.n * kTileN + (group * kSlices + s) * 64 + warp * 16 +
                                  2 * (lane % 4);
#pragma unroll
                for (int j = 0; j < kMmaN / 8; ++j) {
                    if (!ownsChunk<kPart, kParts>(s, j)) {
                        continue;
                    }
                    const int m = tc.m * kTileM + 8 * j + lane / 4;
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        const OutT pair[2] = {OutT(p.alpha * acc[s][4 * j + 2 * h]),
                                              OutT(p.alpha * acc[s][4 * j + 2 * h + 1])};
                        uint32_t bits;
                        memcpy(&bits, pair, sizeof(bits));
                        // Every lane takes part in the transpose; only the store is guarded.
                        const uint32_t rowPair = transpose8x8(bits);
                        const int n = nBase + 8 * h;
                        if (m < p.m && n < p.n) {
                            *reinterpret_cast<uint32_t*>(p.c + int64_t(m) * p.ldc + n) = rowPair;
                        }
                    }
                }
            }
            return;
        }
    }
    forEachSwapped<kPart, kParts>(
        acc, p, tc, group,
        [&](int m, int n, float x) { storeOne(p.c + int64_t(m) * p.ldc + n, x, p); });
}
