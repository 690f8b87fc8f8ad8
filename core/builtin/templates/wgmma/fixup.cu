${# wgmma/fixup.cu: the tile fix-up shared by split-K (wgmma/splitk.cu) and stream-K}
${# (wgmma/streamk.cu): gemm.cu renders it ahead of either as part of PARTIALS_CODE.}
// A tile whose k-blocks are shared by several work units is summed in the kernel, by the last of
// them to finish: each stores its fp32 partial in fragment order (accumulator i of consumer
// thread t at i * threads + t: coalesced, no layout) into its own slot of the workspace and
// counts itself in on the tile's counter; the last to arrive reads every partial back, its own
// too, adds them left to right in the units' order and stores C. The sum has the same order
// whoever finishes last, so C has the same bits on every run; no CTA waits for another, so
// nothing depends on which CTAs are resident; no second kernel reads the partials back from
// memory. The counters carry the launch's epoch (Problem::epoch), so the workspace needs no
// clearing.
constexpr int kConsumerThreads = kConsumerGroups * 128;
constexpr int kSlotFloats = kConsumerThreads * kSlices * (kMmaN / 2); // one tile of fp32

// The consumer warpgroups' own barrier (the producer warpgroup runs its loop meanwhile).
__device__ inline void consumerBarrier() {
    asm volatile("bar.sync 6, %0;" ::"n"(kConsumerThreads) : "memory");
}

// Counts a unit in on the tile's counter; true when it is the last of `units`.
__device__ inline bool countIn(unsigned long long* counter, unsigned long long epoch, int units) {
    unsigned long long seen = *reinterpret_cast<volatile unsigned long long*>(counter);
    for (;;) {
        const unsigned long long next = (seen >> 16) == epoch ? seen + 1 : (epoch << 16) | 1;
        const unsigned long long before = atomicCAS(counter, seen, next);
        if (before == seen) {
            return int(next & 0xFFFF) == units;
        }
        seen = before;
    }
}

// Stores this unit's partial into `slot` (this thread's first float) and counts it in on
// `counter`; true in every consumer thread of the CTA that is the last of `units`. `flag` is a
// shared-memory word.
__device__ inline bool storeAndCountIn(const float (&acc)[kSlices][kMmaN / 2], float* slot,
                                       unsigned long long* counter, unsigned long long epoch,
                                       int units, uint32_t flag) {
#pragma unroll
    for (int s = 0; s < kSlices; ++s) {
#pragma unroll
        for (int i = 0; i < kMmaN / 2; ++i) {
            slot[(s * (kMmaN / 2) + i) * kConsumerThreads] = acc[s][i];
        }
    }
    // Every thread's partial is visible device-wide before the unit counts in (the CUDA
    // programming guide's last-block pattern).
    __threadfence();
    consumerBarrier();
    if (threadIdx.x == 128) {
        const bool last = countIn(counter, epoch, units);
        asm volatile("st.shared.u32 [%0], %1;" ::"r"(flag), "r"(last ? 1u : 0u) : "memory");
    }
    consumerBarrier();
    uint32_t last;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(last) : "r"(flag) : "memory");
    // Everyone has read the word before thread 128 may write it for the next unit.
    consumerBarrier();
    if (last != 0) {
        __threadfence();
    }
    return last != 0;
}

// acc = partial(0) + partial(1) + ... + partial(units - 1), left to right, where partial(q) is
// the slot slotOf(q) returns (this thread's first float). The loads of one partial are
// independent and unrolled, so they are in flight together (a loop per element waited for each
// load in turn and cost 2-5x the kernel on the H200, session 11); __ldcg reads L2, where other
// SMs wrote.
template <typename SlotOf>
__device__ inline void sumPartials(float (&acc)[kSlices][kMmaN / 2], int units, SlotOf slotOf) {
    // The first partial lands in the accumulators themselves (their values are stored), so no
    // register is needed besides the loads in flight.
    const float* const first = slotOf(0);
#pragma unroll
    for (int s = 0; s < kSlices; ++s) {
#pragma unroll
        for (int i = 0; i < kMmaN / 2; ++i) {
            acc[s][i] = __ldcg(first + (s * (kMmaN / 2) + i) * kConsumerThreads);
        }
    }
    for (int q = 1; q < units; ++q) {
        const float* const slot = slotOf(q);
#pragma unroll
        for (int s = 0; s < kSlices; ++s) {
#pragma unroll
            for (int i = 0; i < kMmaN / 2; ++i) {
                acc[s][i] += __ldcg(slot + (s * (kMmaN / 2) + i) * kConsumerThreads);
            }
        }
    }
}
