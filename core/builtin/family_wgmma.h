// Hopper GEMM through `wgmma.mma_async` (sm_90a): TMA loads of A and B tiles into a multi-stage
// shared-memory ring with 128-byte swizzle, completing on mbarriers; one producer warpgroup and one
// to three consumer warpgroups (setmaxnreg moves registers to the consumers); a persistent grid
// that walks output tiles in row or grouped order, optionally in clusters whose CTAs multicast the
// B tile they share along M and the A tile they share along N; a bounded epilogue from registers
// or one staged through shared memory and TMA stores. Row-major A is K-major for wgmma, row-major
// B is N-major (the instruction's transpose bit for B).
#ifndef KEV_BUILTIN_FAMILY_WGMMA_H
#define KEV_BUILTIN_FAMILY_WGMMA_H

#include "builtin/kernelfamily.h"

#include <QString>
#include <QStringList>

#include <algorithm>
#include <memory>

namespace kev {

// The knobs of one wgmma_tma configuration, as the generator reads them.
struct WgmmaParams {
    int blockM = 128; // 64 * m64 slices per warpgroup (1 or 2) * consumer warpgroups per tile
    int blockN = 256; // the wgmma N: a multiple of 16 from 64 to 256
    int stages = 4;   // shared-memory ring depth, 3..8 (deep rings for small tiles)
    int consumerWarpgroups = 2; // 1..3 (3: the 192-row cooperative tile)
    bool groupedRaster = true;  // false: row-major tile order
    // Tile rows per raster group when grouped. 16 keeps one wave's operands at about 16 A panels
    // and 8 B panels of 128x256 tiles on 132 SMs, fewer DRAM reads than 8 (docs/benchmarks.md,
    // "wgmma: TMA-store epilogue and clusters").
    int groupM = 16;
    int clusterM = 1; // CTAs per cluster along M, sharing B through TMA multicast (1, 2)
    // CTAs per cluster along N, sharing A through TMA multicast (1, 2, 4): each loads a slice of
    // the A tile's rows, whole 8-row swizzle groups (aRowsLoaded).
    int clusterN = 1;
    bool tmaStore = false; // epilogue through shared-memory staging and TMA bulk stores
    // Ping-pong: each consumer warpgroup computes whole blockM x blockN tiles, the two alternating
    // on the tensor cores so that one's epilogue overlaps the other's main loop (needs two consumer
    // warpgroups); cooperative: both split each tile by rows. Strategy::params["schedule"].
    bool pingPong = false;
    // Split-K: blocks sharing one output tile along K, their fp32 partials summed in split order
    // by a second (programmatic dependent) kernel, so C is deterministic. For small-M tasks whose
    // tiles are fewer than the SMs (templates/wgmma/splitk.cu).
    int splitK = 1;
    // Split-K summed inside a cluster (Strategy::params["split_reduce"] "cluster"; "kernel" is the
    // second kernel above): the splitK CTAs of a tile form a cluster and each sums its part of the
    // tile from the others' stage rings through distributed shared memory, in split order, with
    // no workspace and no second kernel (templates/wgmma/splitk_cluster.cu). At most 8 splits, no
    // multicast cluster, the fp32 tile within the stage ring.
    bool splitInCluster = false;
    // Swapped operands (Strategy::params["swap_rows"] > 0, then blockM): the MMA computes the
    // tile transposed, so C's rows are the wgmma N (a multiple of 16, 16..256, no padding to
    // 64-row slices) and C's columns are m64 slices of one 64-column B chunk each (blockN = 64 x
    // slices x consumer warpgroups). Cooperative, direct epilogue.
    bool swapped = false;
    // B chunks loaded in this many slabs of k-rows (Strategy::params["b_slabs"], 1 or 2): with 2,
    // a tile in a 2-CTA cluster along M, each CTA loading half of every chunk's 64 k-rows and
    // multicasting it, so any chunk count can be shared (one at 64 columns, three at 192).
    // cuBLAS's shapes at M = 64 (nvjet_sm90_tst_64x32_64x16_1x2) and at M = 128 and 256 with
    // N = 12288 (..._192x64_..._1x2, ..._192x128_..._1x2). Not in the search's parameters: on the
    // H200 it tied or lost to the defaults (docs/benchmarks.md, sessions 21 and 26).
    int bSlabs = 1;

    static WgmmaParams fromStrategy(const Strategy& strategy);
    void applyTo(Strategy& strategy) const;

    int mmaSlicesPerWarpgroup() const {
        return (swapped ? blockN : blockM) / (64 * (pingPong ? 1 : consumerWarpgroups));
    }
    int mmaN() const { return swapped ? blockM : blockN; } // the wgmma N
    int accumulatorsPerThread() const { return mmaSlicesPerWarpgroup() * mmaN() / 2; }
    int threads() const { return 128 * (consumerWarpgroups + 1); }
    // Output tiles of an M x N product.
    qint64 tiles(qint64 m, qint64 n) const {
        return ((m + blockM - 1) / blockM) * ((n + blockN - 1) / blockN);
    }
    // Rows of the A tile one CTA loads: the tile's, or in a cluster along N its slice, whole
    // 8-row swizzle groups (80 rows in 4 slices: 24 each). The kernel's kARows.
    int aSliceRows() const {
        return clusterN <= 1 ? blockM : (blockM + 8 * clusterN - 1) / (8 * clusterN) * 8;
    }
    // Rows of A a stage holds: the slices of the whole cluster row (80 rows in 4 slices: 96).
    int aRowsLoaded() const { return std::max(1, clusterN) * aSliceRows(); }
    // Bytes of one stage of the ring: the A rows loaded and whole 64-column B chunks.
    qint64 stageBytes() const;
    // Dynamic shared memory of the kernel: the stage ring, the C staging buffers of the TMA-store
    // epilogue, the mbarriers and 1 KiB of alignment slack.
    qint64 smemBytes() const;
    bool splitsInCluster() const { return splitK > 1 && splitInCluster; }
    // The split-K partials in the ABI workspace for an M x N output (0 without split-K or with
    // the splits summed in the cluster).
    qint64 workspaceBytes(qint64 m, qint64 n) const {
        return splitK > 1 && !splitInCluster ? splitK * m * n * 4 : 0;
    }
};

// The k-block of every wgmma_tma tile: one 128-byte swizzle row of fp16/bf16.
inline constexpr int kWgmmaBlockK = 64;

// Columns of C in one TMA-store box of the family's epilogue (128 bytes a row).
int wgmmaCBoxColumns(const QString& dtypeC);

// Rows of a swapped tile holding `rows` rows of C: the wgmma N, a multiple of 16.
inline int wgmmaRowsOf16(qint64 rows) {
    return int((rows + 15) / 16 * 16);
}

// Why `params` cannot run `task` on `device`; empty when feasible. Each message names the knob.
QStringList wgmmaConstraints(const WgmmaParams& params, const Task& task, const DeviceInfo& device);

// The complete candidate .cu file for this configuration (precondition: no constraint applies).
QString generateWgmmaGemm(const WgmmaParams& params, const Task& task);

// Up to this M a GEMM is memory-bound on B and the family's default is smallMWgmmaParams.
inline constexpr int kSmallMWgmmaLimit = 256;
// From this M up to kSmallMWgmmaLimit the planner starts on wgmma's small-M default; below it on
// mma_smallm, whose 16-row tiles waste no tensor work on padding (H200: mma_smallm 1.04-1.08x
// cuBLAS at M = 1 and 16, wgmma's best 0.95-1.00x; wgmma ahead from M = 64).
inline constexpr int kSmallMWgmmaFirstM = 33;

// The default for a small-M (inference) GEMM: tile width and split-K chosen to fill every SM in
// whole rounds for the least traffic, the deepest ring that fits; *why says so.
WgmmaParams smallMWgmmaParams(const Task& task, const DeviceInfo& device, QString* why);

// The reviewer's move for a plan whose two splits a second kernel sums: why summing them in a
// 2-CTA cluster instead applies (every cluster in one round, feasible), or empty when it does not.
// Measured on the H200 (docs/benchmarks.md, session 12): 0.954-0.968x against 0.911x cuBLAS at
// M = 64, 1.000-1.021x against 0.974-0.978x at M = 128; one loss (64x128 tiles, 64 CTAs).
QString wgmmaClusterSumMove(const Strategy& strategy, const Task& task, const DeviceInfo& device);

std::unique_ptr<KernelFamily> makeWgmmaTmaFamily();

} // namespace kev

#endif // KEV_BUILTIN_FAMILY_WGMMA_H
