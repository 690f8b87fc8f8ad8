${# wgmma/epilogue.cu: the normal orientation's stores of a finished tile (gemm.cu's consumers),}
${# rendered into every wgmma kernel: storeTile (pairs of columns from registers, or the swapped}
${# tile's own stores) and storeTileTma (shared memory and TMA bulk stores).}
// Accumulator fragment of wgmma m64nN (fp32): register 4j + 2h + e of a thread holds row
// 16 * warp + lane / 4 + 8h, column 8j + 2 * (lane % 4) + e of its 64-row slice. Stores the chunks
// ownsChunk<kPart, kParts> names (all of them but with split-K in a cluster).
template <int kPart = 0, int kParts = 1>
__device__ inline void storeTile(const float (&acc)[kSlices][kMmaN / 2], const Problem& p,
                                 TileCoord tc, int group) {
    if constexpr (kSwap) {
        storeTileSwapped<kPart, kParts>(acc, p, tc, group);
        return;
    }

    const int warp = (threadIdx.x / 32) % 4;
    const int lane = threadIdx.x % 32;
    const int sliceBase = kPingPong ? 0 : group * kSlices;
    const int colBase = tc.n * kTileN + 2 * (lane % 4);
#pragma unroll
    for (int s = 0; s < kSlices; ++s) {
        const int row = tc.m * kTileM + (sliceBase + s) * 64 + warp * 16 + lane / 4;
        OutT* rowLo = p.c + int64_t(row) * p.ldc;
        OutT* rowHi = rowLo + 8 * p.ldc;
        const bool loIn = row < p.m;
        const bool hiIn = row + 8 < p.m;
#pragma unroll
        for (int j = 0; j < kTileN / 8; ++j) {
            const int col = colBase + 8 * j;
            if (ownsChunk<kPart, kParts>(s, j) && col < p.n) {
                if (loIn) {
                    storePair(rowLo + col, acc[s][4 * j], acc[s][4 * j + 1], p);
                }
                if (hiIn) {
                    storePair(rowHi + col, acc[s][4 * j + 2], acc[s][4 * j + 3], p);
                }
            }
        }
    }
}

// The TMA-store epilogue: each warpgroup writes its slices box by box (64 rows x kCBoxCols columns)
// into two alternating staging buffers; thread 0 of the warpgroup sends each box with a bulk
// store and, before a buffer is rewritten, waits until the store issued from it two boxes earlier
// has read it. The stores run on while the next tile's main loop starts.
[[maybe_unused]] __device__ inline void storeTileTma(const float (&acc)[kSlices][kMmaN / 2],
                                                    const CUtensorMap* mapC, uint32_t smemC,
                                                    const Problem& p, TileCoord tc, int group) {
    const int local = threadIdx.x % 128;
    const int lane = local % 32;
    const int r = (local / 32) * 16 + lane / 4;
    const int sliceBase = kPingPong ? 0 : group * kSlices;
    const uint32_t buffers = smemC + group * 2 * kCBoxBytes;
    int box = 0;
#pragma unroll
    for (int s = 0; s < kSlices; ++s) {
        const int rowLo = tc.m * kTileM + (sliceBase + s) * 64 + r;
        const OutT* cLo = p.c + int64_t(rowLo) * p.ldc;
        const OutT* cHi = cLo + 8 * p.ldc;
#pragma unroll
        for (int q = 0; q < kTileN / int(kCBoxCols); ++q, ++box) {
            const uint32_t buf = buffers + (box & 1) * kCBoxBytes;
            if (local == 0) {
                asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
            }
            namedBarrier(1 + group);
            if (p.beta == 0.0f) {
                // C is not read: no bounds and no loads, only alpha.
#pragma unroll
                for (int jj = 0; jj < int(kCBoxCols) / 8; ++jj) {
                    const int j = q * int(kCBoxCols) / 8 + jj;
                    const uint32_t byteInRow = (8 * jj + 2 * (lane % 4)) * sizeof(OutT);
                    const uint32_t swz = (((byteInRow >> 4) ^ (r % 8)) << 4) | (byteInRow & 15);
                    storeShared(buf + r * 128 + swz,
                                make_float2(p.alpha * acc[s][4 * j], p.alpha * acc[s][4 * j + 1]));
                    storeShared(buf + (r + 8) * 128 + swz, make_float2(p.alpha * acc[s][4 * j + 2],
                                                                       p.alpha * acc[s][4 * j + 3]));
                }
            } else {
#pragma unroll
                for (int jj = 0; jj < int(kCBoxCols) / 8; ++jj) {
                    const int j = q * int(kCBoxCols) / 8 + jj;
                    const uint32_t byteInRow = (8 * jj + 2 * (lane % 4)) * sizeof(OutT);
                    const uint32_t swz = (((byteInRow >> 4) ^ (r % 8)) << 4) | (byteInRow & 15);
                    const int col = tc.n * kTileN + 8 * j + 2 * (lane % 4);
                    const bool colIn = col < p.n;
                    storeShared(buf + r * 128 + swz,
                                scaledPair(acc[s][4 * j], acc[s][4 * j + 1], cLo + col,
                                           colIn && rowLo < p.m, p));
                    storeShared(buf + (r + 8) * 128 + swz,
                                scaledPair(acc[s][4 * j + 2], acc[s][4 * j + 3], cHi + col,
                                           colIn && rowLo + 8 < p.m, p));
                }
            }
            // The bulk store reads the buffer through the async proxy.
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            namedBarrier(1 + group);
            if (local == 0) {
                tmaStore2d(mapC, buf, tc.n * kTileN + q * int(kCBoxCols),
                           tc.m * kTileM + (sliceBase + s) * 64);
            }
        }
    }
}
