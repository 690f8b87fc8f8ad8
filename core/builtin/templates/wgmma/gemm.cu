${# wgmma/gemm.cu: the wgmma_tma family (family_wgmma.cpp) below its header comment. Values: IN_T,}
${# OUT_T, BLOCK_M/N, STAGES, CONSUMERS, SLICES, GROUP_M, CLUSTER_M/N, A_SLICE_ROWS, PING_PONG,}
${# TMA_STORE, SWAP, TMAP_TYPE, TMAP_C_TYPE, PRODUCER_REGS, CONSUMER_REGS, SMEM_LIMIT, MMA_TYPE, STORE_PAIR (store_pair_<C>.cu),}
${# ABI_A/B/C, WGMMA_TILE (wgmma/wgmma_tile.cu), SWAPPED_EPILOGUE (wgmma/swapped_epilogue.cu),}
${# EPILOGUE (wgmma/epilogue.cu), SPLIT, SPLIT_CLUSTER_SIZE, SPLIT_K_CODE (wgmma/splitk.cu or}
${# wgmma/splitk_cluster.cu) and LAUNCH (wgmma/launch.cu, the host side).}
${# Conditions: BF16, GROUPED, SPLIT_K (SPLIT > 1: split-K, its code only where it is set),}
${# SPLIT_KERNEL (partials summed by a second kernel), SPLIT_CLUSTER (summed in the cluster).}
#include <kevolve/abi.h>

#include <cuda_fp16.h>
${if BF16}
#include <cuda_bf16.h>
${endif}

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "this kernel needs sm_90a: compile with -gencode=arch=compute_90a,code=sm_90a"
#endif

namespace {

using InT = ${IN_T};
using OutT = ${OUT_T};

constexpr int kTileM = ${BLOCK_M};
constexpr int kTileN = ${BLOCK_N};
constexpr int kTileK = 64; // one 128-byte swizzle row of 16-bit elements
constexpr int kStages = ${STAGES};
constexpr int kConsumerGroups = ${CONSUMERS};
constexpr int kSlices = ${SLICES}; // m64 wgmma slices per consumer warpgroup
// Ping-pong: each consumer warpgroup owns whole tiles (the CTA's odd or even ones) and the two take
// turns on the tensor cores, so one's epilogue runs under the other's main loop; cooperative: the
// consumer warpgroups (one to three) split every tile by rows and run the epilogue together.
constexpr bool kPingPong = ${PING_PONG};
constexpr int kTileWarpgroups = kPingPong ? 1 : kConsumerGroups; // consumer warpgroups per tile
constexpr int kThreads = 128 * (kConsumerGroups + 1);
// Clusters of kClusterM x kClusterN tiles (rank = rankM + kClusterM * rankN): the CTAs of a cluster
// column (same tile column) share the B tile, those of a cluster row (same tile row) the A tile,
// each CTA loading its share and multicasting it to the others. Split-K in a cluster
// (wgmma/splitk_cluster.cu) instead makes a cluster of the kSplitCluster CTAs of one tile, which
// share no operand: each sums its part of the tile from the others' shared memory.
constexpr int kClusterM = ${CLUSTER_M};
constexpr int kClusterN = ${CLUSTER_N};
constexpr int kShare = kClusterM * kClusterN; // CTAs whose stages receive each other's multicasts
constexpr int kSplitCluster = ${SPLIT_CLUSTER_SIZE};
constexpr int kCluster = kShare * kSplitCluster;
static_assert(kShare == 1 || kSplitCluster == 1, "a cluster multicasts or splits K, not both");
constexpr bool kTmaStore = ${TMA_STORE}; // epilogue through shared memory and TMA bulk stores
// Swapped operands: the MMA computes the tile of C transposed, D (kTileN x kTileM) = B^T * A^T, so
// C's rows are the wgmma N (any multiple of 16: a small M is not padded to 64-row slices) and C's
// columns the m64 slices, one 64-column B chunk each. The B chunk in shared memory is the
// MN-major A operand (imm-trans-a = 1), the A tile the K-major B operand (imm-trans-b = 0).
constexpr bool kSwap = ${SWAP};
constexpr int kMmaN = kSwap ? kTileM : kTileN; // the wgmma N
${if GROUPED}
constexpr int kGroupM = ${GROUP_M}; // tile rows per raster group
constexpr int kGroupUnits = kGroupM / kClusterM > 0 ? kGroupM / kClusterM : 1;
${endif}
${if SPLIT_K}
// Blocks sharing one output tile along K (wgmma/splitk.cu, wgmma/splitk_cluster.cu).
constexpr int kSplitK = ${SPLIT};
static_assert(!kPingPong && !kTmaStore, "split-K runs cooperative, with the direct epilogue");
${endif}
constexpr int kProducerRegs = ${PRODUCER_REGS};
constexpr int kConsumerRegs = ${CONSUMER_REGS};

// Shared-memory layouts (every buffer 1024-byte aligned, so the 128-byte swizzle pattern starts at
// each buffer and the wgmma descriptors' base offset is 0):
//   A stage: kTileM rows of 64 elements (128 bytes), TMA box {64, kARows}: the K-major 128B-swizzle
//            canonical layout, 8-row groups 1024 bytes apart (SBO), LBO unused; a k16 step is +32
//            bytes. Slice s of consumer warpgroup g starts at row 64 * s (ping-pong) or
//            64 * (g * kSlices + s) (cooperative). In a cluster along N each CTA loads kARows
//            rows (whole 8-row swizzle groups) and multicasts them; the kClusterN slices may
//            cover more rows than the tile (80 in 4 x 24), so the stage holds them all and the
//            MMA reads the first kTileM (the rest are the next tile's rows or TMA's zeros).
//   B stage: ceil(kTileN / 64) chunks of 64 K-rows x 64 elements (8192 bytes), one TMA box {64, 64}
//            each. Row-major B is N-major for wgmma (imm-trans-b = 1): LBO is the distance between
//            64-element N chunks (8192 bytes), SBO between 8-row K groups (1024 bytes); a k16 step
//            is 16 rows = +2048 bytes. A tile width that is not a multiple of 64 (96, 160, ...)
//            loads its last chunk whole and multiplies only its first kTileN % 64 columns: the
//            swizzle atom stays 128 bytes wide, and the columns past the tile are the next
//            tile's, which its own CTA reads in the same wave (an L2 hit, not a second DRAM read).
//   C staging (TMA-store epilogue): per consumer warpgroup two boxes of 64 rows x 128 bytes, 128B
//            swizzle (16-byte chunk index XOR row % 8), so a warp's 8-row store of column pairs hits
//            each bank group the minimum number of times.
// Tails: TMA fills out-of-bounds elements with zeros, so partial K blocks add nothing; the direct
// epilogue stores only rows < M and columns < N (N is a multiple of 8, so a column pair never
// straddles), the TMA stores clip at the tensor's bounds.
constexpr int kARows = ${A_SLICE_ROWS}; // rows of the A tile this CTA loads
static_assert(kClusterN == 1 ? kARows == kTileM : kARows % 8 == 0 && kClusterN * kARows >= kTileM,
              "the A slices: whole 8-row swizzle groups that cover the tile");
constexpr uint32_t kABytes = kClusterN * kARows * kTileK * sizeof(InT);
constexpr uint32_t kBChunkBytes = kTileK * 64 * sizeof(InT);
constexpr uint32_t kBChunks = (kTileN + 63) / 64;
constexpr uint32_t kBBytes = kBChunks * kBChunkBytes;
${if B_SLABBED}
// B chunks in slabs of k-rows (params.b_slabs), for a 2-CTA cluster along M whose tile has any
// number of chunks (one at 64 columns, three at 192: whole chunks cannot be halved): each CTA
// loads kBSlabRows of every chunk's k-rows, whole 8-row swizzle groups at a 1024-byte-aligned
// offset, so each slab lands where one box of the whole chunk would have put its rows, and
// multicasts it to the other.
constexpr uint32_t kBSlabs = ${B_SLABS};
constexpr int kBSlabRows = kTileK / int(kBSlabs);
static_assert(kBSlabs == uint32_t(kClusterM) && kBSlabRows % 8 == 0,
              "one slab of every B chunk a CTA of the cluster column");
${endif}
constexpr uint32_t kStageBytes = kABytes + kBBytes;
constexpr uint32_t kCBoxCols = 128 / sizeof(OutT);
constexpr uint32_t kCBoxBytes = 64 * 128;
constexpr uint32_t kCBytes = kTmaStore ? kConsumerGroups * 2 * kCBoxBytes : 0;
// Split-K in a cluster: three more mbarriers (the tile's partials ready, read, the ring free).
constexpr uint32_t kSplitBarBytes = kSplitCluster > 1 ? 3 * 8 : 0;
${if SPLIT_CLUSTER}
constexpr int kPartialsReady = 0; // every CTA of the cluster has stored its partial tile
constexpr int kPartialsRead = 1;  // every CTA has read its part of this CTA's partial tile
constexpr int kRingFree = 2;      // this CTA's consumers are done with the partials
${endif}
constexpr size_t kSmemBytes =
    1024 + size_t(kStages) * kStageBytes + kCBytes + 2 * kStages * 8 + kSplitBarBytes;
static_assert(kSmemBytes <= ${SMEM_LIMIT}, "shared memory over the device's opt-in limit");
static_assert(kConsumerGroups * 128 * kConsumerRegs + 128 * kProducerRegs <= 65536,
              "register file over budget");
${if !B_SLABBED}
static_assert(kBChunks % kClusterM == 0, "a cluster column splits the B chunks evenly");
${endif}
static_assert(kCluster <= 8, "at most 8 CTAs a cluster (the portable size)");
static_assert(kTileN % 16 == 0 && kTileN >= 64 && kTileN <= 256, "tile width: 64..256, step 16");
static_assert(kMmaN % 16 == 0 && kMmaN >= 16 && kMmaN <= 256, "the wgmma N: 16..256, step 16");
static_assert(!kSwap || (kTileN == 64 * kSlices * kConsumerGroups && !kPingPong && !kTmaStore),
              "swapped operands: one 64-column B chunk a slice, cooperative, direct epilogue");
static_assert(!kTmaStore || kTileN % kCBoxCols == 0, "TMA stores write whole boxes of C");
static_assert(kPingPong ? kConsumerGroups == 2 : kConsumerGroups >= 1 && kConsumerGroups <= 3,
              "one to three cooperative consumer warpgroups, or two in ping-pong");

struct TileCoord {
    int m;
    int n;
};

struct Problem {
    OutT* c;
    int m;
    int n;
    int k;
    int64_t ldc;
    float alpha;
    float beta;
${if SPLIT_KERNEL}
    float* partials; // `splits` fp32 slices of M x N in the workspace
    int splits;      // split-K factor of this shape: min(kSplitK, k-blocks)
${endif}
};

${if GROUPED}
// Grouped raster over units (a cluster's kClusterM x kClusterN tiles): kGroupUnits unit rows
// sweep all unit columns before the next group starts, so the CTAs of one wave share B panels
// (and a few A panels) in L2.
__device__ inline TileCoord unitCoord(int unit, int unitsM, int unitsN) {
    const int perGroup = kGroupUnits * unitsN;
    const int group = unit / perGroup;
    const int firstM = group * kGroupUnits;
    const int rows = min(unitsM - firstM, kGroupUnits);
    const int inGroup = unit - group * perGroup;
    return {firstM + inGroup % rows, inGroup / rows};
}
${else}
// Row-major order of units (a cluster's kClusterM x kClusterN tiles): consecutive clusters share
// the A panels of a unit row.
__device__ inline TileCoord unitCoord(int unit, int unitsM, int unitsN) {
    (void)unitsM;
    return {unit / unitsN, unit % unitsN};
}
${endif}

__device__ inline uint32_t smemAddress(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ inline uint32_t clusterRank() {
    uint32_t rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    return rank;
}

__device__ inline void clusterSync() {
    asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
}

__device__ inline void namedBarrier(int id) {
    asm volatile("bar.sync %0, 128;" ::"r"(id) : "memory");
}

// The ping-pong turn: warpgroup g waits on barrier 3 + g until the other warpgroup has arrived,
// i.e. has issued its whole main loop.
[[maybe_unused]] __device__ inline void waitTurn(int group) {
    asm volatile("bar.sync %0, 256;" ::"r"(3 + group) : "memory");
}

__device__ inline void passTurn(int group) {
    asm volatile("bar.arrive %0, 256;" ::"r"(3 + (1 - group)) : "memory");
}

__device__ inline void mbarInit(uint32_t bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

// kClusterAcquire: the wait acquires at cluster scope, so the peers' shared-memory accesses
// before their releasing arrivals are visible (split-K in a cluster); else the default CTA scope.
template <bool kClusterAcquire = false>
__device__ inline bool mbarTryWait(uint32_t bar, uint32_t parity) {
    uint32_t done;
    if constexpr (kClusterAcquire) {
        asm volatile("{\n\t.reg .pred p;\n\t"
                     "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
    } else {
        asm volatile("{\n\t.reg .pred p;\n\t"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
    }
    return done != 0;
}

// Waits until the phase of `bar` with the given parity has completed.
template <bool kClusterAcquire = false>
__device__ inline void mbarWait(uint32_t bar, uint32_t parity) {
    while (!mbarTryWait<kClusterAcquire>(bar, parity)) {
    }
}

// The address in the cluster's shared window of `local` in the CTA of rank `rank`.
__device__ inline uint32_t mapaRank(uint32_t local, uint32_t rank) {
    uint32_t remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
    return remote;
}

__device__ inline void mbarArrive(uint32_t bar) {
    asm volatile("{\n\t.reg .b64 state;\n\t"
                 "mbarrier.arrive.shared::cta.b64 state, [%0];\n\t}" ::"r"(bar)
                 : "memory");
}

// One arrival of the calling warp on the mbarrier at `bar` in each of the cluster's CTAs 0 ..
// kCtas - 1 (lane i signals CTA i; with one CTA, lane 0 on its own). kClusterRelease: released
// at cluster scope, so the warp's shared-memory accesses before it (ordered by __syncwarp) are
// visible to, or done before, what the waiting CTAs do next; else the default CTA scope.
template <int kCtas, bool kClusterRelease>
__device__ inline void arriveOnCtas(uint32_t bar) {
    const uint32_t lane = threadIdx.x % 32;
    if constexpr (kCtas == 1) {
        static_assert(!kClusterRelease, "a cluster-scope release signals other CTAs");
        if (lane == 0) {
            mbarArrive(bar);
        }
    } else if (lane < kCtas) {
        const uint32_t remote = mapaRank(bar, lane);
        if constexpr (kClusterRelease) {
            asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(
                             remote)
                         : "memory");
        } else {
            asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
        }
    }
}

// Hands a stage back, called by every consumer thread: one arrival per warp on the stage's empty
// barrier, in a cluster on the barrier of every CTA (lane i signals CTA i): a producer multicasts
// into the stage buffers of its cluster row or column, and waiting for the whole cluster covers
// both (and keeps every CTA's ring in step). The remote arrival keeps the default
// CTA-scope release: the stage's readers are wgmma and its writer is TMA, both async proxy, so no
// generic store has to become visible cluster-wide first, and a cluster-scope release would put a
// memory fence into every k-block of every consumer warp.
__device__ inline void releaseStage(uint32_t bar) {
    arriveOnCtas<kShare, false>(bar);
}

__device__ inline void mbarArriveExpectTx(uint32_t bar, uint32_t bytes) {
    asm volatile("{\n\t.reg .b64 state;\n\t"
                 "mbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1;\n\t}" ::"r"(bar),
                 "r"(bytes)
                 : "memory");
}

__device__ inline void tmaLoad2d(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0,
                                 int c1) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar)
                 : "memory");
}

// The same box lands at the same shared offset in every CTA of `mask` and completes on the
// mbarrier at the same offset in each.
__device__ inline void tmaLoad2dMulticast(uint32_t dst, const CUtensorMap* map, uint32_t bar,
                                          int c0, int c1, uint16_t mask) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
                 : "memory");
}

__device__ inline void tmaStore2d(const CUtensorMap* map, uint32_t src, int c0, int c1) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
                 ::"l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(src)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

// Shared-memory matrix descriptor with 128-byte swizzle (layout type 1); addresses and offsets in
// 16-byte units.
__device__ inline uint64_t matrixDescriptor(uint32_t address, uint32_t lbo, uint32_t sbo) {
    return uint64_t((address & 0x3FFFF) >> 4) | (uint64_t(lbo >> 4) << 16) |
           (uint64_t(sbo >> 4) << 32) | (uint64_t(1) << 62);
}

__device__ inline void wgmmaFence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }

__device__ inline void wgmmaCommit() {
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

template <int N>
__device__ inline void wgmmaWait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

${WGMMA_TILE}
${STORE_PAIR}

${SWAPPED_EPILOGUE}
struct Schedule {
    int unitsM; // cluster units (kClusterM x kClusterN tiles) per column of units
    int unitsN; // cluster units per row of units
${if SPLIT_K}
    // Work units: cluster units times the splits of each (a second kernel sums them), or the
    // cluster units (split-K in the cluster: a cluster's CTAs are the splits of its tile).
    int units;
    int splits;
${else}
    int units;
${endif}
    int kBlocks;
    int first;  // this CTA's cluster's first unit
    int stride; // clusters in the grid
    int rankM;  // this CTA's tile row inside its unit
    int rankN;  // this CTA's tile column inside its unit
${if SPLIT_CLUSTER}
    int split; // this CTA's split of every tile: its rank in the split-K cluster
${endif}
};

__device__ inline Schedule schedule(const Problem& p) {
    Schedule s;
    const int tilesM = (p.m + kTileM - 1) / kTileM;
    const int tilesN = (p.n + kTileN - 1) / kTileN;
    s.unitsM = (tilesM + kClusterM - 1) / kClusterM;
    s.unitsN = (tilesN + kClusterN - 1) / kClusterN;
${if SPLIT_CLUSTER}
    s.splits = kSplitK;
    s.units = s.unitsM * s.unitsN;
${endif}
${if SPLIT_KERNEL}
    s.splits = p.splits;
    s.units = s.unitsM * s.unitsN * s.splits;
${endif}
${if !SPLIT_K}
    s.units = s.unitsM * s.unitsN;
${endif}
    s.kBlocks = (p.k + kTileK - 1) / kTileK;
    s.first = blockIdx.x / kCluster;
    s.stride = gridDim.x / kCluster;
    const int rank = kCluster == 1 ? 0 : int(clusterRank());
    s.rankM = rank % kClusterM;
    s.rankN = rank / kClusterM % kClusterN;
${if SPLIT_CLUSTER}
    s.split = rank / kShare;
${endif}
    return s;
}

// The tile this CTA computes of cluster unit `unit`.
__device__ inline TileCoord tileOf(const Schedule& sc, TileCoord unit) {
    return {unit.m * kClusterM + sc.rankM, unit.n * kClusterN + sc.rankN};
}
${if SPLIT_K}

// Work unit `unit` of the schedule: its cluster unit, its split and that split's k-blocks.
struct Work {
    TileCoord unit;
    int split;
    int kBegin;
    int kEnd;
};

__device__ inline Work work(const Schedule& sc, int unit) {
    Work w;
${if SPLIT_CLUSTER}
    // Every CTA of the cluster takes the cluster's unit; its split is its rank, and a split may
    // be empty when the task has fewer k-blocks than splits.
    w.split = sc.split;
    w.unit = unitCoord(unit, sc.unitsM, sc.unitsN);
${else}
    const int tileUnit = unit / sc.splits;
    w.split = unit - tileUnit * sc.splits;
    w.unit = unitCoord(tileUnit, sc.unitsM, sc.unitsN);
${endif}
    w.kBegin = w.split * sc.kBlocks / sc.splits;
    w.kEnd = (w.split + 1) * sc.kBlocks / sc.splits;
    return w;
}
${endif}

__device__ inline void produce(const CUtensorMap* mapA, const CUtensorMap* mapB, uint32_t smemA,
                               uint32_t smemB, uint32_t fullBars, uint32_t emptyBars,
                               const Problem& p) {
    const Schedule sc = schedule(p);
${if !B_SLABBED}
    constexpr uint32_t kOwnChunks = kBChunks / kClusterM;
${endif}
    // Multicast masks: the B chunks go to this CTA's cluster column, the A slice to its row.
    const uint16_t maskB = uint16_t(((1u << kClusterM) - 1) << (kClusterM * sc.rankN));
    uint16_t maskA = 0;
#pragma unroll
    for (int q = 0; q < kClusterN; ++q) {
        maskA |= uint16_t(1u << (sc.rankM + kClusterM * q));
    }
    uint32_t it = 0;
    for (int unit = sc.first; unit < sc.units; unit += sc.stride) {
${if SPLIT_K}
        const Work w = work(sc, unit);
        const TileCoord tile = tileOf(sc, w.unit);
${if SPLIT_CLUSTER}
        // The previous tile's partials occupy the ring until the cluster has summed them.
        if (unit != sc.first) {
            const uint32_t done = uint32_t(unit - sc.first) / uint32_t(sc.stride) - 1;
            mbarWait(emptyBars + 8 * kStages + 8 * kRingFree, done & 1);
        }
${endif}
        for (int kb = w.kBegin; kb < w.kEnd; ++kb, ++it) {
${else}
        const TileCoord tile = tileOf(sc, unitCoord(unit, sc.unitsM, sc.unitsN));
        for (int kb = 0; kb < sc.kBlocks; ++kb, ++it) {
${endif}
            const uint32_t s = it % kStages;
            // The first pass over the ring finds every slot free: parity 1 names the phase before
            // the barrier's initial phase 0, which counts as complete.
            mbarWait(emptyBars + 8 * s, ((it / kStages) & 1) ^ 1);
            const uint32_t full = fullBars + 8 * s;
            // The whole stage completes here: the own A rows and B chunks and, in a cluster,
            // the rows and chunks the other CTAs multicast.
            mbarArriveExpectTx(full, kStageBytes);
            if constexpr (kClusterN == 1) {
                tmaLoad2d(smemA + s * kABytes, mapA, full, kb * kTileK, tile.m * kTileM);
            } else {
                tmaLoad2dMulticast(smemA + s * kABytes + sc.rankN * kARows * 128, mapA, full,
                                   kb * kTileK, tile.m * kTileM + sc.rankN * kARows, maskA);
            }
${if B_SLABBED}
            // This CTA's slab of every chunk, to every CTA of the cluster column.
#pragma unroll
            for (uint32_t j = 0; j < kBChunks; ++j) {
                tmaLoad2dMulticast(smemB + s * kBBytes + j * kBChunkBytes +
                                       sc.rankM * kBSlabRows * 128,
                                   mapB, full, tile.n * kTileN + 64 * int(j),
                                   kb * kTileK + int(sc.rankM) * kBSlabRows, maskB);
            }
${else}
#pragma unroll
            for (uint32_t i = 0; i < kOwnChunks; ++i) {
                const uint32_t j = sc.rankM * kOwnChunks + i;
                const uint32_t dst = smemB + s * kBBytes + j * kBChunkBytes;
                const int col = tile.n * kTileN + 64 * int(j);
                if constexpr (kClusterM == 1) {
                    tmaLoad2d(dst, mapB, full, col, kb * kTileK);
                } else {
                    tmaLoad2dMulticast(dst, mapB, full, col, kb * kTileK, maskB);
                }
            }
${endif}
        }
    }
}

${EPILOGUE}
${if SPLIT_K}
${SPLIT_K_CODE}
${endif}
__device__ inline void zeroAccumulators(float (&acc)[kSlices][kMmaN / 2]) {
#pragma unroll
    for (int s = 0; s < kSlices; ++s) {
#pragma unroll
        for (int i = 0; i < kMmaN / 2; ++i) {
            acc[s][i] = 0.0f;
        }
    }
}

__device__ inline void consume(uint32_t smemA, uint32_t smemB, uint32_t smemC, uint32_t fullBars,
                               uint32_t emptyBars, const CUtensorMap* mapC, const Problem& p) {
    const int group = threadIdx.x / 128 - 1;
    const Schedule sc = schedule(p);
    float acc[kSlices][kMmaN / 2];
    zeroAccumulators(acc);
    // Ping-pong: warpgroup g takes the CTA's tiles g, g + 2, ...; the producer fills the ring in
    // tile order, so tile j's k-blocks are ring iterations j * kBlocks onwards.
    // Swapped: this warpgroup's slices are B chunks (MN-major, one 64-element atom along M: LBO
    // unused), the whole A tile is the K-major B operand.
    const uint64_t descA0 =
        kSwap ? matrixDescriptor(smemB + group * kSlices * kBChunkBytes, kBChunkBytes, 1024)
              : matrixDescriptor(smemA + (kPingPong ? 0 : group * kSlices * 64 * 128), 16, 1024);
    const uint64_t descB0 =
        kSwap ? matrixDescriptor(smemA, 16, 1024) : matrixDescriptor(smemB, kBChunkBytes, 1024);
    // Byte steps of the descriptors: a stage, an m64 slice of the A operand, a k16 step of each
    // (K-major: 32 bytes along the 128-byte row; MN-major: 16 rows of 128 bytes).
    constexpr uint32_t kStageA = kSwap ? kBBytes : kABytes;
    constexpr uint32_t kStageB = kSwap ? kABytes : kBBytes;
    constexpr uint32_t kSliceA = kSwap ? kBChunkBytes : 64 * 128;
    constexpr uint32_t kStepA = kSwap ? 2048 : 32;
    constexpr uint32_t kStepB = kSwap ? 32 : 2048;
    const int firstTile = kPingPong ? group : 0;
    const int tileStep = kPingPong ? 2 : 1;
${if SPLIT_K}
    // The ring position carries over from tile to tile: splits differ in k-blocks by one.
    uint32_t ring = 0;
    (void)firstTile;
    (void)tileStep;
    for (int unit = sc.first; unit < sc.units; unit += sc.stride) {
        const Work w = work(sc, unit);
        const TileCoord tc = tileOf(sc, w.unit);
        uint32_t it = ring;
        const int kBegin = w.kBegin;
        const int kEnd = w.kEnd;
${else}
    for (int j = firstTile, unit = sc.first + firstTile * sc.stride; unit < sc.units;
         j += tileStep, unit += tileStep * sc.stride) {
        const TileCoord tc = tileOf(sc, unitCoord(unit, sc.unitsM, sc.unitsN));
        uint32_t it = uint32_t(j) * uint32_t(sc.kBlocks);
        if constexpr (kPingPong) {
            if (j > 0) {
                waitTurn(group);
            }
        }
${endif}
${if SPLIT_K}
        for (int kb = kBegin; kb < kEnd; ++kb, ++it) {
${else}
        for (int kb = 0; kb < sc.kBlocks; ++kb, ++it) {
${endif}
            const uint32_t st = it % kStages;
            mbarWait(fullBars + 8 * st, (it / kStages) & 1);
            // This stage's descriptors: the base descriptors plus the stage offset in 16-byte units
            // (the 14-bit address field cannot carry, shared memory is below 256 KiB). Rebuilding
            // them from addresses cost a quarter of the kernel's instructions (H200, ncu).
            const uint64_t da = descA0 + ((st * kStageA) >> 4);
            const uint64_t db = descB0 + ((st * kStageB) >> 4);
            wgmmaFence();
#pragma unroll
            for (int kk = 0; kk < kTileK / 16; ++kk) {
#pragma unroll
                for (int s = 0; s < kSlices; ++s) {
                    wgmmaTile(acc[s], da + ((s * kSliceA + kk * kStepA) >> 4), db + ((kk * kStepB) >> 4),
${if SPLIT_K}
                              (kb > kBegin || kk > 0) ? 1 : 0);
${else}
                              (kb > 0 || kk > 0) ? 1 : 0);
${endif}
                }
            }
            wgmmaCommit();
            // Keep this block's MMAs in flight; the previous block's are done, so its slot goes
            // back to the producer(s) (one arrival per consumer warp and CTA).
            wgmmaWait<1>();
${if SPLIT_K}
            if (kb > kBegin) {
${else}
            if (kb > 0) {
${endif}
                releaseStage(emptyBars + 8 * ((it - 1) % kStages));
            }
        }
        if constexpr (kPingPong) {
            // The other warpgroup's next tile may start issuing; only passed when it exists, so
            // every arrival meets a wait.
            if (unit + sc.stride < sc.units) {
                passTurn(group);
            }
        }
        wgmmaWait<0>();
${if SPLIT_CLUSTER}
        if (kEnd > kBegin) {
            releaseStage(emptyBars + 8 * ((it - 1) % kStages));
        } else {
            zeroAccumulators(acc); // an empty split (fewer k-blocks than splits) adds zeros
        }
        ring = it;
        // The ring is free of this tile's stages (every one was waited for and read); the
        // producer loads the next tile's only once the cluster has summed this one's partials.
        sumInCluster(acc, p, tc, group, smemA, emptyBars + 8 * kStages,
                     uint32_t(unit - sc.first) / uint32_t(sc.stride), sc.split);
${endif}
${if SPLIT_KERNEL}
        releaseStage(emptyBars + 8 * ((it - 1) % kStages));
        ring = it;
        storePartials(acc, p, tc, group, w.split);
${endif}
${if !SPLIT_K}
        releaseStage(emptyBars + 8 * ((it - 1) % kStages));
        if constexpr (kTmaStore) {
            storeTileTma(acc, mapC, smemC, p, tc, group);
        } else {
            storeTile(acc, p, tc, group);
        }
${endif}
    }
    if constexpr (kTmaStore) {
        // Shared memory must outlive the bulk stores that read it.
        if (threadIdx.x % 128 == 0) {
            asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
        }
    }
}

__global__ void __launch_bounds__(kThreads, 1)
    gemmKernel(const __grid_constant__ CUtensorMap mapA, const __grid_constant__ CUtensorMap mapB,
               const __grid_constant__ CUtensorMap mapC, Problem p) {
    extern __shared__ uint8_t smemRaw[];
    const uint32_t base = (smemAddress(smemRaw) + 1023) & ~1023u;
    const uint32_t smemA = base;
    const uint32_t smemB = base + kStages * kABytes;
    const uint32_t smemC = base + kStages * kStageBytes;
    const uint32_t fullBars = smemC + kCBytes;
    const uint32_t emptyBars = fullBars + kStages * 8;

    if (threadIdx.x == 0) {
        for (int s = 0; s < kStages; ++s) {
            mbarInit(fullBars + 8 * s, 1);
            mbarInit(emptyBars + 8 * s, kTileWarpgroups * 4 * kShare);
        }
${if SPLIT_CLUSTER}
        // One arrival per consumer warp of every CTA of the cluster, or of this CTA.
        mbarInit(emptyBars + 8 * kStages + 8 * kPartialsReady, kConsumerGroups * 4 * kCluster);
        mbarInit(emptyBars + 8 * kStages + 8 * kPartialsRead, kConsumerGroups * 4 * kCluster);
        mbarInit(emptyBars + 8 * kStages + 8 * kRingFree, kConsumerGroups * 4);
${endif}
        // Make the initialised barriers visible to the async proxy (TMA complete_tx) and to the
        // other CTAs of the cluster.
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    // In a cluster no CTA may multicast into, or arrive on, a peer before the peer's barriers exist.
    if constexpr (kCluster > 1) {
        clusterSync();
    } else {
        __syncthreads();
    }

${if SPLIT_KERNEL}
    // reduceSplits may be scheduled now; it waits for this grid's completion before reading.
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
${endif}
    if (threadIdx.x < 128) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kProducerRegs));
        if (threadIdx.x == 0) {
            asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(&mapA))
                         : "memory");
            asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(&mapB))
                         : "memory");
            produce(&mapA, &mapB, smemA, smemB, fullBars, emptyBars, p);
        }
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kConsumerRegs));
        consume(smemA, smemB, smemC, fullBars, emptyBars, &mapC, p);
    }
    // A CTA's shared memory (stage buffers, barriers) must outlive the peers' multicasts and
    // remote arrivals.
    if constexpr (kCluster > 1) {
        __syncwarp();
        clusterSync();
    }
}

${LAUNCH}
