${# wgmma/streamk.cu: stream-K of the wgmma_tma family (gemm.cu renders it as PARTIALS_CODE where}
${# STREAM_K is set).}
// Stream-K: the I = tiles x kBlocks k-block iterations, in tile order, are shared evenly by the G
// CTAs of the grid: CTA g takes [g * I / G, (g + 1) * I / G), so every SM streams the same share
// of B however few tiles there are (86 tiles on 132 SMs: 41.7 k-blocks each instead of 64 on 86).
// A CTA's range is a run of segments, each the k-blocks of one tile; only its first and its last
// can be part of a tile. The CTAs sharing a tile each store their fp32 partial in fragment order
// (accumulator i of consumer thread t at i * threads + t: coalesced, no layout) into one of the two
// slots each CTA has in the workspace, then count themselves in on the tile's counter; the last
// to arrive adds the partials in CTA order, its own registers in its place, and stores C. The sum
// has the same order whichever CTA arrives last, so C has the same bits on every run, and no CTA
// waits for another, so nothing depends on which CTAs are resident. The counters carry the
// launch's epoch (Problem::epoch), so a workspace needs no clearing.
constexpr int kConsumerThreads = kConsumerGroups * 128;
constexpr int kAccPerThread = kSlices * (kMmaN / 2);
constexpr int kSlotFloats = kConsumerThreads * kAccPerThread; // one tile of fp32

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

// The consumer warpgroups' own barrier (the producer warpgroup has left for its loop).
__device__ inline void consumerBarrier() {
    asm volatile("bar.sync 6, %0;" ::"n"(kConsumerThreads) : "memory");
}

// Counts this CTA in on the tile's counter; true when it is the last of `ctas`.
__device__ inline bool countIn(unsigned long long* counter, unsigned long long epoch, int ctas) {
    unsigned long long seen = *reinterpret_cast<volatile unsigned long long*>(counter);
    for (;;) {
        const unsigned long long next = (seen >> 16) == epoch ? seen + 1 : (epoch << 16) | 1;
        const unsigned long long before = atomicCAS(counter, seen, next);
        if (before == seen) {
            return int(next & 0xFFFF) == ctas;
        }
        seen = before;
    }
}

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
    const int self = int(blockIdx.x);
    // Slots: a CTA's first segment uses slot 2g, a later one 2g + 1. The tile is the first
    // segment of every CTA sharing it but the first, which may have begun in an earlier tile.
    const int firstSlot = 2 * first + (streamBegin(iterations, first) >= tileBegin ? 0 : 1);
    const auto slotOf = [&](int g) { return g == first ? firstSlot : 2 * g; };
    const int t = int(threadIdx.x) - 128;
    float* own = p.partials + int64_t(slotOf(self)) * kSlotFloats + t;
#pragma unroll
    for (int s = 0; s < kSlices; ++s) {
#pragma unroll
        for (int i = 0; i < kMmaN / 2; ++i) {
            own[(s * (kMmaN / 2) + i) * kConsumerThreads] = acc[s][i];
        }
    }
    // Every thread's partial is visible device-wide before the CTA counts in (the pattern of
    // the CUDA programming guide's last-block reduction).
    __threadfence();
    consumerBarrier();
    if (t == 0) {
        const bool finishes = countIn(p.counters + w.tile, p.epoch, last - first + 1);
        asm volatile("st.shared.u32 [%0], %1;" ::"r"(flag), "r"(finishes ? 1u : 0u) : "memory");
    }
    consumerBarrier();
    uint32_t finishes;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(finishes) : "r"(flag) : "memory");
    // The flag word is read by all before thread 0 may write it again (the next shared tile).
    consumerBarrier();
    if (finishes == 0) {
        return;
    }
    __threadfence();
    // In CTA order: (P_first + ... + P_{self-1}) + own, then + P_{self+1} + ... + P_last, which
    // is the left-to-right sum P_first + ... + P_last (addition commutes exactly).
#pragma unroll
    for (int s = 0; s < kSlices; ++s) {
#pragma unroll
        for (int i = 0; i < kMmaN / 2; ++i) {
            const int64_t at = int64_t(s * (kMmaN / 2) + i) * kConsumerThreads + t;
            float sum = acc[s][i];
            if (self > first) {
                float before = __ldcg(p.partials + int64_t(firstSlot) * kSlotFloats + at);
                for (int g = first + 1; g < self; ++g) {
                    before += __ldcg(p.partials + int64_t(2 * g) * kSlotFloats + at);
                }
                sum = before + sum;
            }
            for (int g = self + 1; g <= last; ++g) {
                sum += __ldcg(p.partials + int64_t(2 * g) * kSlotFloats + at);
            }
            acc[s][i] = sum;
        }
    }
    storeTile(acc, p, tc, group);
}
