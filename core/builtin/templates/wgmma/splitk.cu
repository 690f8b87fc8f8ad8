${# wgmma/splitk.cu: split-K of the wgmma_tma family (gemm.cu renders it after wgmma/fixup.cu as}
${# PARTIALS_CODE where SPLIT_K is set).}
// Split-K: work unit w of the persistent grid is split w % splits of tile unit w / splits; split s
// owns k-blocks [s * kBlocks / splits, (s + 1) * kBlocks / splits), never empty because splits is
// at most kBlocks. The splits of a tile are summed by the last to finish (wgmma/fixup.cu), in
// split order; this replaced a second reduction kernel (about 2 us a launch).

// Work unit `unit` of the schedule: its cluster unit, its split and that split's k-blocks. The
// CTAs of a cluster take the same units, so they multicast the same k-blocks.
struct Work {
    TileCoord unit;
    int index;
    int split;
    int kBegin;
    int kEnd;
    bool valid;
};

__device__ inline Work work(const Schedule& sc, int unit) {
    Work w;
    w.index = unit;
    w.valid = unit < sc.units;
    const int tileUnit = unit / sc.splits;
    w.split = unit - tileUnit * sc.splits;
    w.unit = unitCoord(tileUnit, sc.unitsM, sc.unitsN);
    w.kBegin = w.split * sc.kBlocks / sc.splits;
    w.kEnd = (w.split + 1) * sc.kBlocks / sc.splits;
    return w;
}

__device__ inline Work firstWork(const Schedule& sc) { return work(sc, sc.first); }

__device__ inline Work nextWork(const Schedule& sc, const Work& w) {
    return work(sc, w.index + sc.stride);
}

// The end of work unit `w`: its partial stored and counted in; the last split of the tile sums
// all of them and stores C. `flag` is a shared-memory word.
__device__ inline void finishWork(float (&acc)[kSlices][kMmaN / 2], const Problem& p,
                                  const Schedule& sc, const Work& w, TileCoord tc, int group,
                                  uint32_t flag) {
    // Each CTA of a cluster has its own tile of the unit.
    const int64_t tile = int64_t(w.index / sc.splits) * kCluster + sc.rankM + kClusterM * sc.rankN;
    float* const slots = p.partials + tile * sc.splits * kSlotFloats + (int(threadIdx.x) - 128);
    if (storeAndCountIn(acc, slots + int64_t(w.split) * kSlotFloats, p.counters + tile, p.epoch,
                        sc.splits, flag)) {
        sumPartials(acc, sc.splits, [&](int q) { return slots + int64_t(q) * kSlotFloats; });
        storeTile(acc, p, tc, group);
    }
}
