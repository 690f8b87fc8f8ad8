${# wgmma/splitk.cu: split-K of the wgmma_tma family (gemm.cu renders it as SPLIT_K_CODE where}
${# SPLIT_K is set).}
// Split-K: work unit w of the persistent grid is split w % splits of tile unit w / splits; split s
// owns k-blocks [s * kBlocks / splits, (s + 1) * kBlocks / splits), never empty because splits is
// at most kBlocks. The splits of a tile are summed in the kernel, by the last of them to finish:
// each stores its fp32 partial in fragment order (accumulator i of consumer thread t at
// i * threads + t: coalesced, no layout) into its own slot of the workspace and counts itself in
// on the tile's counter; the last to arrive adds the partials in split order, its own registers
// in its place, and stores C. The sum has the same order whichever split arrives last, so C has
// the same bits on every run; no CTA waits for another, so nothing depends on which CTAs are
// resident; and no second kernel reads the partials back from memory (the reduction kernel this
// replaced cost about 2 us a launch). The counters carry the launch's epoch (Problem::epoch), so
// the workspace needs no clearing.
constexpr int kConsumerThreads = kConsumerGroups * 128;
constexpr int kSlotFloats = kConsumerThreads * kSlices * (kMmaN / 2); // one tile of fp32

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

// The consumer warpgroups' own barrier (the producer warpgroup runs its loop meanwhile).
__device__ inline void consumerBarrier() {
    asm volatile("bar.sync 6, %0;" ::"n"(kConsumerThreads) : "memory");
}

// Counts this split in on the tile's counter; true when it is the last of `splits`.
__device__ inline bool countIn(unsigned long long* counter, unsigned long long epoch, int splits) {
    unsigned long long seen = *reinterpret_cast<volatile unsigned long long*>(counter);
    for (;;) {
        const unsigned long long next = (seen >> 16) == epoch ? seen + 1 : (epoch << 16) | 1;
        const unsigned long long before = atomicCAS(counter, seen, next);
        if (before == seen) {
            return int(next & 0xFFFF) == splits;
        }
        seen = before;
    }
}

// The end of work unit `w`: its partial stored and counted in; the last split of the tile sums
// all of them and stores C. `flag` is a shared-memory word.
__device__ inline void finishWork(float (&acc)[kSlices][kMmaN / 2], const Problem& p,
                                  const Schedule& sc, const Work& w, TileCoord tc, int group,
                                  uint32_t flag) {
    // Each CTA of a cluster has its own tile of the unit.
    const int64_t tile = int64_t(w.index / sc.splits) * kCluster + sc.rankM + kClusterM * sc.rankN;
    const int t = int(threadIdx.x) - 128;
    float* const slots = p.partials + tile * sc.splits * kSlotFloats + t;
#pragma unroll
    for (int s = 0; s < kSlices; ++s) {
#pragma unroll
        for (int i = 0; i < kMmaN / 2; ++i) {
            slots[int64_t(w.split) * kSlotFloats + (s * (kMmaN / 2) + i) * kConsumerThreads] =
                acc[s][i];
        }
    }
    // Every thread's partial is visible device-wide before the split counts in (the CUDA
    // programming guide's last-block pattern).
    __threadfence();
    consumerBarrier();
    if (t == 0) {
        const bool last = countIn(p.counters + tile, p.epoch, sc.splits);
        asm volatile("st.shared.u32 [%0], %1;" ::"r"(flag), "r"(last ? 1u : 0u) : "memory");
    }
    consumerBarrier();
    uint32_t last;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(last) : "r"(flag) : "memory");
    // Everyone has read the word before thread 0 may write it for the next unit.
    consumerBarrier();
    if (last == 0) {
        return;
    }
    __threadfence();
    // (P_0 + ... + P_{own-1}) + own, then + P_{own+1} + ... : the left-to-right sum in split
    // order (addition commutes exactly). L2 reads: the partials were written by other SMs.
#pragma unroll
    for (int s = 0; s < kSlices; ++s) {
#pragma unroll
        for (int i = 0; i < kMmaN / 2; ++i) {
            const float* const at = slots + (s * (kMmaN / 2) + i) * kConsumerThreads;
            float sum = acc[s][i];
            if (w.split > 0) {
                float before = __ldcg(at);
                for (int q = 1; q < w.split; ++q) {
                    before += __ldcg(at + int64_t(q) * kSlotFloats);
                }
                sum = before + sum;
            }
            for (int q = w.split + 1; q < sc.splits; ++q) {
                sum += __ldcg(at + int64_t(q) * kSlotFloats);
            }
            acc[s][i] = sum;
        }
    }
    storeTile(acc, p, tc, group);
}
