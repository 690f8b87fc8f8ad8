${# wgmma/streamk.cu: stream-K of the wgmma_tma family (gemm.cu renders it after wgmma/fixup.cu as}
${# PARTIALS_CODE where STREAM_K is set).}
// Stream-K: the I = tiles x kBlocks k-block iterations, in tile order, are shared evenly by the G
// CTAs of the grid: CTA g takes [g * I / G, (g + 1) * I / G), so every SM streams the same share
// of B however few tiles there are (86 tiles on 132 SMs: 41.7 k-blocks each instead of 64 on 86).
// A CTA's range is a run of segments, each the k-blocks of one tile; only its first and its last
// can be part of a tile, and those go to its two slots of the workspace. The CTAs sharing a tile
// are summed by the last to finish (wgmma/fixup.cu), in CTA order.
struct Work {
    TileCoord unit;
    int tile;
    int kBegin;
    int kEnd;
    int64_t end; // this CTA's last iteration + 1
    bool valid;
};

__device__ inline int64_t streamIterations(const Schedule& sc) {
    return int64_t(sc.units) * sc.kBlocks;
}

// CTA g's first iteration.
__device__ inline int64_t streamBegin(int64_t iterations, int g) {
    return int64_t(g) * iterations / int64_t(gridDim.x);
}

// The CTA whose range holds iteration x: the last g with streamBegin(g) <= x.
__device__ inline int streamOwner(int64_t iterations, int64_t x) {
    return int(((x + 1) * int64_t(gridDim.x) - 1) / iterations);
}

__device__ inline Work segment(const Schedule& sc, int64_t x, int64_t end) {
    Work w;
    w.valid = x < end;
    w.end = end;
    w.tile = int(x / sc.kBlocks);
    const int64_t base = int64_t(w.tile) * sc.kBlocks;
    w.kBegin = int(x - base);
    w.kEnd = int(min(end - base, int64_t(sc.kBlocks)));
    w.unit = unitCoord(w.tile, sc.unitsM, sc.unitsN);
    return w;
}

__device__ inline Work firstWork(const Schedule& sc) {
    const int64_t iterations = streamIterations(sc);
    return segment(sc, streamBegin(iterations, blockIdx.x),
                   streamBegin(iterations, blockIdx.x + 1));
}

__device__ inline Work nextWork(const Schedule& sc, const Work& w) {
    return segment(sc, int64_t(w.tile) * sc.kBlocks + w.kEnd, w.end);
}

// The end of segment `w`: a whole tile is stored; a part of one is stored as a partial and
// counted in, and the last CTA of the tile sums all parts and stores C. `flag` is a shared-memory
// word.
__device__ inline void finishWork(float (&acc)[kSlices][kMmaN / 2], const Problem& p,
                                  const Schedule& sc, const Work& w, TileCoord tc, int group,
                                  uint32_t flag) {
    if (w.kBegin == 0 && w.kEnd == sc.kBlocks) {
        storeTile(acc, p, tc, group);
        return;
    }
    const int64_t iterations = streamIterations(sc);
    const int64_t tileBegin = int64_t(w.tile) * sc.kBlocks;
    const int first = streamOwner(iterations, tileBegin);
    const int last = streamOwner(iterations, tileBegin + sc.kBlocks - 1);
    // Slots: a CTA's first segment uses slot 2g, a later one 2g + 1. The tile is the first
    // segment of every CTA sharing it but the first, which may have begun in an earlier tile.
    const int firstSlot = 2 * first + (streamBegin(iterations, first) >= tileBegin ? 0 : 1);
    float* const slots = p.partials + (int(threadIdx.x) - 128);
    const auto slotOf = [&](int q) {
        const int g = first + q;
        return slots + int64_t(g == first ? firstSlot : 2 * g) * kSlotFloats;
    };
    if (storeAndCountIn(acc, slotOf(int(blockIdx.x) - first), p.counters + w.tile, p.epoch,
                        last - first + 1, flag)) {
        sumPartials(acc, last - first + 1, slotOf);
        storeTile(acc, p, tc, group);
    }
}
