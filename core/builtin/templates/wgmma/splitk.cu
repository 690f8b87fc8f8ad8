${# wgmma/splitk.cu: split-K of the wgmma_tma family (gemm.cu renders it where SPLIT_K is set).}
// Split-K: work unit w of the persistent grid is split w % splits of tile unit w / splits; split s
// owns k-blocks [s * kBlocks / splits, (s + 1) * kBlocks / splits), never empty because splits is
// at most kBlocks. Each split stores its fp32 partial tile into its own M x N slice of the
// workspace (row stride N); reduceSplits then sums the slices in split order, so C has the same
// bits on every run whatever order the CTAs finished in.
__device__ inline void storePartials(const float (&acc)[kSlices][kMmaN / 2], const Problem& p,
                                     TileCoord tc, int group, int split) {
    if constexpr (kSwap) {
        float* const slice = p.partials + int64_t(split) * p.m * p.n;
        forEachSwapped(acc, p, tc, group,
                       [&](int m, int n, float x) { slice[int64_t(m) * p.n + n] = x; });
        return;
    }
    const int warp = (threadIdx.x / 32) % 4;
    const int lane = threadIdx.x % 32;
    const int sliceBase = group * kSlices;
    const int colBase = tc.n * kTileN + 2 * (lane % 4);
    float* slice = p.partials + int64_t(split) * p.m * p.n;
#pragma unroll
    for (int s = 0; s < kSlices; ++s) {
        const int row = tc.m * kTileM + (sliceBase + s) * 64 + warp * 16 + lane / 4;
        float* rowLo = slice + int64_t(row) * p.n;
        float* rowHi = rowLo + 8 * int64_t(p.n);
        const bool loIn = row < p.m;
        const bool hiIn = row + 8 < p.m;
#pragma unroll
        for (int j = 0; j < kTileN / 8; ++j) {
            const int col = colBase + 8 * j;
            if (col < p.n) {
                if (loIn) {
                    *reinterpret_cast<float2*>(rowLo + col) =
                        make_float2(acc[s][4 * j], acc[s][4 * j + 1]);
                }
                if (hiIn) {
                    *reinterpret_cast<float2*>(rowHi + col) =
                        make_float2(acc[s][4 * j + 2], acc[s][4 * j + 3]);
                }
            }
        }
    }
}

// C = alpha * (slice 0 + slice 1 + ... in order) + beta * C, four elements a thread (N is a
// multiple of 8, so four consecutive elements never straddle a row). Launched as a programmatic
// dependent of gemmKernel: its blocks start while the GEMM drains and wait for it to finish
// (griddepcontrol.wait), so the second kernel costs no launch gap.
__global__ void __launch_bounds__(256) reduceSplits(Problem p) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    const int64_t elements = int64_t(p.m) * p.n;
    for (int64_t first = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) * 4; first < elements;
         first += int64_t(gridDim.x) * blockDim.x * 4) {
        float4 sum = *reinterpret_cast<const float4*>(p.partials + first);
        for (int s = 1; s < p.splits; ++s) {
            const float4 q = *reinterpret_cast<const float4*>(p.partials + s * elements + first);
            sum.x += q.x;
            sum.y += q.y;
            sum.z += q.z;
            sum.w += q.w;
        }
        const int64_t row = first / p.n;
        const int col = int(first - row * p.n);
        OutT* out = p.c + row * p.ldc + col;
        storePair(out, sum.x, sum.y, p);
        storePair(out + 2, sum.z, sum.w, p);
    }
}
