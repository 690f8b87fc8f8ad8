// The wgmma_tma family's default for GEMMs with M up to kSmallMWgmmaLimit (family_wgmma.h): a
// model of each tile shape's time, calibrated on the H200 (docs/benchmarks.md, sessions 7 to 9).
#include "builtin/family_wgmma.h"

#include "core/deviceinfo.h"
#include "core/task.h"

#include <QVector>

#include <algorithm>
#include <cmath>
#include <utility>

using namespace Qt::StringLiterals;

namespace kev {

namespace {

qint64 smsOf(const DeviceInfo& device) {
    return device.smCount > 0 ? device.smCount : 132;
}

// `tile` (its shape and ring) with two splits summed in 2-CTA clusters: every cluster in the
// first round (the H200 holds 66, one CTA per SM) and feasible. The default model's and the
// reviewer's condition for the cluster sum.
bool twoSplitsFitInClusters(WgmmaParams tile, const Task& task, const DeviceInfo& device) {
    tile.splitK = 2;
    tile.splitInCluster = true;
    return 2 * tile.tiles(task.m, task.n) <= smsOf(device) &&
           wgmmaConstraints(tile, task, device).isEmpty();
}

} // namespace

QString wgmmaClusterSumMove(const Strategy& strategy, const Task& task, const DeviceInfo& device) {
    const WgmmaParams p = WgmmaParams::fromStrategy(strategy);
    if (strategy.family != u"wgmma_tma"_s || p.splitK != 2 || p.splitInCluster ||
        !twoSplitsFitInClusters(p, task, device))
        return QString();
    return QStringLiteral("sum the two splits of each tile in a 2-CTA cluster (%1 clusters in one "
                          "round on %2 SMs): no fp32 partials through DRAM, no second kernel")
        .arg(p.tiles(task.m, task.n))
        .arg(smsOf(device));
}

WgmmaParams smallMWgmmaParams(const Task& task, const DeviceInfo& device, QString* why) {
    // Measured on the H200 (docs/benchmarks.md, sessions 7 to 9). Up to M = 128 the GEMM is
    // memory-bound: B (K x N) is nearly all the bytes and must stream at the DRAM rate; a tile as
    // tall as M (B leaves DRAM once), whole rounds of work units, few splits (each adds a second
    // kernel and its partials), not every SM needed (96 CTAs of 128x128 at M = 128, N = 12288 beat
    // 384 split units), and whole 64-column B chunks (128x112 and 128x96 tiles, which load a chunk
    // they use part of, lost 7-10% to 128x128 at M = 80 to 128). Beyond M = 128 the tensor work
    // decides: 256-row tiles at M = 160 to 224 waste up to 37% of it, and 96 tiles for 132 SMs
    // leave a quarter idle (M = 192, N = 6144: 128x128 0.68x cuBLAS; 192x96 in three consumer
    // warpgroups with split-K 2, 128 units, 0.89x).
    //
    // The model, per round of work units (a tile and a slice of K each, one CTA per SM): the
    // slower of
    //   - DRAM: the unit's B strip and partials, a CTA pulling at most a 96th of the DRAM rate
    //     and the round at most all of it (the part of a chunk a tile loads but does not use is
    //     its neighbour's, read in the same round: an L2 hit);
    //   - tensor (M > 128 only): the unit's padded tile at 5.8 TFLOP/s an SM (764 TFLOP/s measured
    //     / 132), slowed by shared memory: each k16 step, every m64 slice's wgmma reads its A
    //     slice (2 KiB) and the B tile (32 N bytes) and TMA writes the A and B rows, about 128
    //     bytes a clock against N / 2 clocks of MMA a slice. This predicts the measured rates of
    //     256x96 (0.79 of 256x128's), 256x112 and 192x64 (half);
    //   - in the tensor-bound case, the epilogue after the unit's last MMA: about 6.1 G elements
    //     a second a CTA stored from registers (C pairs or fp32 partials: 128x192 bf16 tiles
    //     measured 0.889x cuBLAS with the direct epilogue, 0.987x with TMA stores), a quarter of
    //     that through TMA stores, which need a width the C box (128 bytes) divides;
    // plus, with split-K, the reduction's launch and its pass over the partials and C, or, in the
    // memory-bound case with two splits whose clusters of 2 CTAs all fit in one round, the sum in
    // the cluster (no partials in DRAM, no second kernel). Measured on the H200 (docs/
    // benchmarks.md, session 12): about 1 us less than the reduction kernel at M = 64 and 128
    // (0.954x, 1.021x, 1.095x cuBLAS against 0.913x, 0.974x, 0.998x); only 39 clusters of 3 and
    // 30 of 4 are resident (one CTA per SM), so 40 tiles in 3 splits or 32 in 4 ran two rounds
    // (0.53x, 0.95x); tensor-bound at M = 224 the model's 128x160 in clusters of 2 measured 0.72x
    // against the 224x128 swapped tiles' 0.88x, so it is not offered there. A width
    // that is not a multiple of 64 must win by 8%, not 2% (at M = 256, N = 14336, 256x112 was
    // modelled 6% ahead of 256x128 and measured 5% behind).
    struct TileRows {
        int blockM;
        int consumers;
    };
    const bool tensorBound = task.m > 128;
    const qint64 sms = smsOf(device);
    const qint64 kBlocks = (task.k + kWgmmaBlockK - 1) / kWgmmaBlockK;
    const double bBytes = 2.0 * double(task.k) * double(task.n);
    const double peakBytesPerS = 4.8e12;
    const double ctaBytesPerS = peakBytesPerS / 96.0;
    const double tensorFlopsPerSmS = 5.8e12;
    const double reductionS = 2.0e-6;
    const double clusterSumS = 1.0e-6;
    // The tile shapes: C rows x C columns, consumer warpgroups, orientation.
    struct TileShape {
        int blockM;
        int blockN;
        int consumers;
        bool swapped;
    };
    QVector<TileShape> shapes;
    if (!tensorBound) {
        const TileRows rows = task.m <= 64 ? TileRows{64, 1} : TileRows{128, 2};
        for (int blockN : {256, 128, 64})
            shapes.append({rows.blockM, blockN, rows.consumers, false});
    } else {
        QVector<TileRows> rowOptions;
        if (task.m <= 192)
            rowOptions.append(TileRows{192, 3});
        rowOptions.append(TileRows{256, 2});
        // Two tile rows of 128 (a grouped raster runs both rows of a column in the same round,
        // so B still leaves DRAM about once): a wide N tile in one m64 slice per warpgroup reads
        // shared memory less per MMA than 256 rows in two slices.
        rowOptions.append(TileRows{128, 2});
        for (const TileRows rows : rowOptions) {
            // Whole 64-column chunks first (the 8% margin below).
            for (int blockN : {256, 192, 128, 64, 240, 224, 208, 176, 160, 144, 112, 96, 80})
                shapes.append({rows.blockM, blockN, rows.consumers, false});
        }
        // Swapped operands: C's rows are the wgmma N, so M (or half or a third of it) rounded up
        // to 16, not to 64-row slices; C's columns are 64-column slices (cuBLAS's choice at
        // M = 160 and 224: 128x80 tiles, 80 rows of C each).
        for (int parts = 1; parts <= 3; ++parts) {
            const int rows = wgmmaRowsOf16((task.m + parts - 1) / parts);
            if (rows > 256 || (parts > 1 && rows == wgmmaRowsOf16(task.m)))
                continue;
            for (const auto& [consumers, blockN] :
                 {std::pair{2, 128}, std::pair{1, 64}, std::pair{1, 128}, std::pair{3, 192},
                  std::pair{2, 256}})
                shapes.append({rows, blockN, consumers, true});
        }
    }
    // TMA stores need the normal orientation, no split and a width the C box divides.
    const auto tmaStores = [&task](bool swapped, int split, int blockN) {
        return !swapped && split == 1 && blockN % wgmmaCBoxColumns(task.c) == 0;
    };
    WgmmaParams best;
    best.groupedRaster = true;
    double bestTime = 0;
    QString bestWhy;
    for (const TileShape& shape : shapes) {
        const qint64 tilesM = (task.m + shape.blockM - 1) / shape.blockM;
        WgmmaParams probe;
        probe.blockM = shape.blockM;
        probe.consumerWarpgroups = shape.consumers;
        probe.blockN = shape.blockN;
        probe.swapped = shape.swapped;
        probe.stages = 3;
        probe.groupedRaster = true;
        probe.groupM = int(std::min<qint64>(tilesM, 16));
        if (!wgmmaConstraints(probe, task, device).isEmpty())
            continue; // e.g. 256 x 256: more accumulators than a consumer's registers
        const int blockN = shape.blockN;
        const qint64 tilesN = (task.n + blockN - 1) / blockN;
        const qint64 tiles = tilesM * tilesN;
        const double loadedN = 64.0 * ((blockN + 63) / 64);
        // Shared memory per k16 step: every m64 slice's wgmma reads its 64 x 16 slice (2 KiB)
        // and the other operand (32 bytes per wgmma N), TMA writes the A and B rows.
        const double slices = probe.mmaSlicesPerWarpgroup() * probe.consumerWarpgroups;
        const double mmaN = probe.mmaN();
        const double mmaClocks = slices * mmaN / 2.0;
        const double smemClocks =
            (slices * (2048.0 + 32.0 * mmaN) + 32.0 * (shape.blockM + loadedN)) / 128.0;
        const double tensorRate = tensorFlopsPerSmS * std::min(1.0, 1.08 * mmaClocks / smemClocks);
        for (int split : {1, 2, 3, 4, 6, 8, 12, 16}) {
            // At least 8 k-blocks a split, so the ring reaches its steady state.
            if (split > 1 && kBlocks / split < 8)
                break;
            const qint64 units = tiles * split;
            const qint64 rounds = (units + sms - 1) / sms;
            const qint64 perRound = (units + rounds - 1) / rounds;
            const double kSlice = double(task.k) / split;
            const double stored = double(std::min<qint64>(task.m, shape.blockM)) * blockN;
            const double partialBytes = split > 1 ? 8.0 * stored : 0.0;
            const double dramBytes = bBytes / double(tilesN * tilesM * split) + partialBytes;
            const double dram =
                dramBytes / std::min(ctaBytesPerS, peakBytesPerS / double(perRound));
            const double tensor =
                tensorBound ? 2.0 * shape.blockM * blockN * kSlice / tensorRate : 0.0;
            // Swapped tiles store single elements (a thread's accumulator pairs are two rows of
            // C), measured no slower than the pair stores (M = 192: 192x64 swapped 0.920x
            // cuBLAS, 192x96 split-K 2 0.888x).
            const bool tmaStore = tmaStores(shape.swapped, split, blockN);
            const double epilogue = tensorBound ? stored / (tmaStore ? 4.0 : 1.0) / 6.1e9 : 0.0;
            const double reduction =
                split > 1 ? reductionS + (tensorBound ? (4.0 * split + 4.0) * double(task.m) *
                                                            double(task.n) / peakBytesPerS
                                                      : 0.0)
                          : 0.0;
            double time = double(rounds) * (std::max(dram, tensor) + epilogue) + reduction;
            // The two splits of each tile in a 2-CTA cluster, every cluster in the first round.
            bool sumInCluster = false;
            if (!tensorBound && split == 2 && twoSplitsFitInClusters(probe, task, device)) {
                const double clusterDram = (dramBytes - partialBytes) /
                                           std::min(ctaBytesPerS, peakBytesPerS / double(perRound));
                const double clusterTime = std::max(clusterDram, tensor) + epilogue + clusterSumS;
                if (clusterTime < time) {
                    time = clusterTime;
                    sumInCluster = true;
                }
            }
            // Ties go to the configuration checked first: the shorter tile, whole chunks, the
            // wider tile, the smaller split, the normal orientation.
            const double margin = blockN % 64 == 0 ? 0.98 : 0.92;
            if (bestTime == 0 || time < bestTime * margin) {
                bestTime = time;
                best = probe;
                best.splitK = split;
                best.splitInCluster = sumInCluster;
                bestWhy =
                    QStringLiteral("%1 tiles x split-K %2 = %3 work units in %4 "
                                   "round(s) on %5 SMs, modelled %6 us (%7-bound)")
                        .arg(tiles)
                        .arg(split)
                        .arg(units)
                        .arg(rounds)
                        .arg(sms)
                        .arg(time * 1e6, 0, 'f', 1)
                        .arg(tensor > dram ? QStringLiteral("tensor") : QStringLiteral("DRAM")) +
                    (sumInCluster ? QStringLiteral("; the two splits of a tile in a 2-CTA "
                                                   "cluster, summed there (no second kernel)")
                                  : QString());
            }
        }
    }
    // Memory-bound with M not a multiple of 64: the same tile on swapped operands, its rows M
    // rounded up to 16 instead of 64 (H200: M = 80 0.866x -> 0.961x, M = 96 0.800x -> 0.898x
    // cuBLAS; at M = 128 the normal tile's TMA stores win, 0.953x against 0.896x).
    if (!tensorBound && task.m % 64 != 0) {
        WgmmaParams swapped = best;
        swapped.swapped = true;
        swapped.blockM = wgmmaRowsOf16(task.m);
        swapped.consumerWarpgroups = best.blockN == 64 ? 1 : 2;
        swapped.groupM = 1;
        if (wgmmaConstraints(swapped, task, device).isEmpty()) {
            best = swapped;
            bestWhy += QStringLiteral("; rows padded to %1, not %2")
                           .arg(swapped.blockM)
                           .arg(task.m <= 64 ? 64 : 128);
        }
        // Few 128-column tiles (at most two thirds of the SMs, no split): in clusters of four
        // along N multicasting the A tile (cuBLAS's nvjet ..._4x1 at M = 96). Measured on the
        // H200 (docs/benchmarks.md, session 11), N = 11008 in 86 tiles: M = 96 0.928-0.939x
        // against 0.891-0.899x (five serves), M = 80 0.980x against 0.964x, M = 48 1.020x against
        // 1.018x; lost at 112 tiles or more (N = 14336: M = 80 0.956x against 0.988x, M = 96
        // 0.943x against 0.971x) and with 64-column tiles (128 tiles: 0.72-0.76x). At 96 tiles
        // (N = 12288, session 14) it was mixed: M = 112 0.959x against 0.945x, M = 96 0.919-0.958x
        // against 0.925x, M = 80 0.957x against 0.977x, M = 48 0.967x against 1.008x.
        const qint64 tiles = (task.n + best.blockN - 1) / best.blockN;
        WgmmaParams clustered = best;
        clustered.clusterN = 4;
        if (best.swapped && best.blockN == 128 && best.splitK == 1 && 3 * tiles <= 2 * sms &&
            wgmmaConstraints(clustered, task, device).isEmpty()) {
            best = clustered;
            bestWhy += QStringLiteral("; %1 tiles fill at most two thirds of the SMs, so "
                                      "clusters of 4 along N share the A tile (multicast)")
                           .arg(tiles);
        }
    }
    // Tensor-bound with two tile rows that fill one round: C's rows halved into a pair of
    // swapped tiles, 128 columns in two consumer warpgroups, in groups of the two tile rows, so
    // both tiles of a column strip run in the same round and the second reads B from L2. The
    // model above has no term for that reuse; measured on the H200 (docs/benchmarks.md, sessions
    // 10 and 11): the pair won where it makes 70-100% of one round (M = 160, N = 8192: 128 CTAs;
    // M = 192, N = 6144: 96) and lost at 80 CTAs (M = 224) and beyond one round (M = 80, 96, 128:
    // 172-224 CTAs). In 2-CTA clusters multicasting B (cuBLAS's nvjet 128x80 1x2 at M = 160) it
    // measured 0.960x and 0.996x cuBLAS, without them 0.984x and 1.038x (session 11, one serve);
    // in groups of one tile row 0.787x. Up to M = 240: at M = 256 the normal 128-row tiles with
    // TMA stores reach cuBLAS (0.99-1.00x), and no pair was measured there. Past M = 192 unsplit
    // only (session 15: M = 208, N = K = 7168, 112x128 pairs in 112 CTAs 0.903x against the
    // model's 208x64 in one consumer warpgroup 0.759-0.767x and 208x128 split 2 0.896x; no split
    // pair was measured there).
    // Too few column strips for 70% of a round, where the model splits narrower tiles along K:
    // the pair split along K, as few splits as reach it in one round (at least 8 k-blocks a
    // split), summed by the reduction kernel. H200 (session 14), M = 160, N = 4096, K = 11008:
    // 80x128 pairs in 2 splits (128 CTAs, 7 stages) 1.032x and 1.036x cuBLAS (two serves), against
    // the model's 160x64 split 2 0.815-0.820x and 160x128 split 4 0.980x. Where the model's tile is
    // as wide and split (M = 192, K = 11008: 192x128 split 4, 1.457x against the pair's 1.400x)
    // or needs no split (K = 4096: 64-column pairs, 128 CTAs, 1.22-1.27x), its choice stands.
    if (tensorBound && task.m <= 240) {
        WgmmaParams pair;
        pair.swapped = true;
        pair.blockM = wgmmaRowsOf16((task.m + 1) / 2);
        pair.blockN = 128;
        pair.consumerWarpgroups = 2;
        pair.stages = 3;
        pair.groupedRaster = true;
        pair.groupM = 2; // both tile rows of a column strip in one group
        const qint64 ctas = 2 * ((task.n + pair.blockN - 1) / pair.blockN);
        int split = 1;
        while (10 * ctas * split < 7 * sms && ctas * (split + 1) <= sms &&
               kBlocks / (split + 1) >= 8)
            ++split;
        pair.splitK = split;
        const qint64 units = ctas * split;
        if ((split == 1 || (task.m <= 192 && best.splitK > 1 && best.blockN < pair.blockN)) &&
            (task.m + pair.blockM - 1) / pair.blockM == 2 && units <= sms &&
            10 * units >= 7 * sms && wgmmaConstraints(pair, task, device).isEmpty()) {
            best = pair;
            bestWhy =
                QStringLiteral("C's rows in two swapped tiles of %1, both tiles of a column "
                               "strip in the same round (the second reads B from L2): %2 CTAs "
                               "in one round on %3 SMs")
                    .arg(pair.blockM)
                    .arg(units)
                    .arg(sms) +
                (split > 1
                     ? QStringLiteral(", %1 column strips x split-K %2").arg(ctas / 2).arg(split)
                     : QString());
        }
    }
    // Tensor-bound normal 128-row tiles in two tile rows and more than one round: clusters of 2
    // along M, the B tile multicast to both rows' CTAs. H200 (docs/benchmarks.md, session 15):
    // M = 256, N = 128256 (1002 tiles of 128x256, 7.6 rounds) 0.752x -> 0.991x cuBLAS (clusters
    // of 2 x 2 0.938x, 256x128 tiles 0.953x). In one round clusters lost (M = 256, N = 14336,
    // 112 tiles, session 11: 2 x 2 0.980x against 1.004x), so not there.
    if (tensorBound && !best.swapped && best.blockM == 128 && best.splitK == 1 &&
        (task.m + 127) / 128 == 2 && best.tiles(task.m, task.n) > sms) {
        WgmmaParams clustered = best;
        clustered.clusterM = 2;
        clustered.groupM = 2;
        if (wgmmaConstraints(clustered, task, device).isEmpty()) {
            best = clustered;
            bestWhy += QStringLiteral("; in clusters of 2 along M, the B tile multicast to both "
                                      "tile rows (%1 tiles: more than one round)")
                           .arg(best.tiles(task.m, task.n));
        }
    }
    // Tensor-bound normal 128-row tiles split three ways or more: 128-column tiles split in two
    // when they still make at least 90% of one round. The same tensor work a unit, fewer
    // partials and a longer ring per split; the shared-memory term above puts the wider tile
    // ahead, and the measurement did not. H200 (docs/benchmarks.md, session 13), M = 256,
    // N = 4096, K = 11008: 128x128 split 2 (128 units) 0.980x and 0.981x cuBLAS (f16, bf16),
    // 128x192 split 3 (132) 0.939x and 0.933x, 128x256 split 4 0.932x, 256x128 split 4 0.925x.
    if (tensorBound && !best.swapped && best.blockM == 128 && best.splitK >= 3) {
        WgmmaParams halves = best;
        halves.blockN = 128;
        halves.splitK = 2;
        halves.splitInCluster = false;
        const qint64 units = 2 * halves.tiles(task.m, task.n);
        if (units <= sms && 10 * units >= 9 * sms && kBlocks / 2 >= 8 &&
            wgmmaConstraints(halves, task, device).isEmpty()) {
            const int modelled = best.splitK;
            best = halves;
            bestWhy = QStringLiteral("%1 tiles of 128x128 x split-K 2 = %2 work units in one "
                                     "round on %3 SMs (fewer splits than the model's %4-way, "
                                     "which measured slower)")
                          .arg(units / 2)
                          .arg(units)
                          .arg(sms)
                          .arg(modelled);
        }
    }
    // The ring's depth from the B bytes the first round holds in flight, counting each column
    // strip's B once (the tile rows of a strip run in one round and the second reads it from
    // L2): 7.5-8.5 MB hide the DRAM latency. As deep as reaches 7.5 MB when memory-bound (at
    // most 16; 8 where that holds more, or where tensor-bound), but no deeper than the first
    // depth past 8.5 MB, and at least 4 (3 lost 9-17% to 4: M = 224 and 192, N = 14336).
    // H200 (docs/benchmarks.md):
    // - deeper to 7.5 MB (session 12): M = 32, 80 CTAs of 64 columns, 8 -> 12 stages 0.906x ->
    //   0.992x and 0.905x -> 0.995x cuBLAS; M = 64, N = 3072, a session's move to 10 stages
    //   1.019x -> 1.059x; shallower lost 2-21% (M = 96, 128, 160);
    // - no deeper than 8.5 MB (session 15, one serve, the 16 KiB B stages of 128-column swapped
    //   tiles): M = 96, N = 12288 (96 strips) 8 -> 6 stages 0.934x -> 0.990x; M = 80, N = 12288
    //   8 -> 6 0.983x -> 1.026x; M = 96 / 112, N = 14336 (112 strips) 8 / 7 -> 5 0.969x / 0.965x
    //   -> 1.002x / 0.993x; M = 120, 5120x13824, 40 strips x split-K 3, 7 -> 5 0.996x -> 1.024x;
    //   clusters of 4 at M = 80, N = 11008 (86 strips) 8 -> 7 0.982x -> 1.009x; and the pairs
    //   (two tile rows, one B) at their deepest: M = 160, N = 8192 and M = 192, N = 6144, 8
    //   stages 0.982x and 1.043x against 7 stages' 0.963x and 1.007x.
    best.tmaStore = tmaStores(best.swapped, best.splitK, best.blockN);
    best.stages = 3;
    const qint64 tileRows = (task.m + best.blockM - 1) / best.blockM;
    const bool rowsShareB = best.groupedRaster && best.groupM >= tileRows;
    const double firstRound =
        double(std::min<qint64>(best.tiles(task.m, task.n) * best.splitK, sms));
    const double streams = std::max(1.0, firstRound / double(rowsShareB ? tileRows : 1));
    const double perStage = streams * 2.0 * kWgmmaBlockK * 64.0 * ((best.blockN + 63) / 64);
    const int pastTarget = int(std::ceil(8.5e6 / perStage));
    const int deepest = std::clamp(
        std::min(tensorBound ? 8 : std::max(8, int(std::ceil(7.5e6 / perStage))), pastTarget), 4,
        16);
    // Tensor-bound swapped tiles of two consumer warpgroups that hold all of M or are split
    // along K: a ring of at most 196 KiB, though a deeper one fits. H200 (docs/benchmarks.md,
    // session 14, one serve): M = 224, N = 14336, 224x128 5 -> 4 stages (220 -> 176 KiB) 0.920x
    // -> 0.947x (3: 0.862x); M = 160, K = 11008, 80x128 pairs split 2, 8 -> 7 (208 -> 182 KiB)
    // 0.961x -> 1.036x (6: 0.980x); session 15: 192x128 and 224x128 split 4 at K = 11008, 5 -> 4
    // 1.466x -> 1.493x and 1.093x -> 1.105x. Not the unsplit pairs (above) and not one consumer
    // warpgroup (208x64 split 4 at M = 200: 6 stages, 204 KiB, 33.2% and 34.4% of the DRAM floor
    // against 5 stages' 32.3% and 33.2%). Why these kernels lose past 196 KiB (the largest
    // shared-memory carveout but one) is not known; the rule is the measurement's.
    constexpr qint64 kSwappedRingBytes = 196 * 1024;
    const bool unsplitPair = tileRows == 2 && rowsShareB && best.splitK == 1;
    const bool ringCapped =
        tensorBound && best.swapped && best.consumerWarpgroups == 2 && !unsplitPair;
    for (int stages = deepest; stages >= 3; --stages) {
        WgmmaParams probe = best;
        probe.stages = stages;
        if (probe.smemBytes() <= device.smemPerBlockOptin &&
            (!ringCapped || stages * probe.stageBytes() <= kSwappedRingBytes)) {
            best.stages = stages;
            break;
        }
    }
    *why = QStringLiteral("Small-M (M=%1, B is %2 MB): %3x%4x64 tiles%9, %5 consumer "
                          "warpgroup(s), %6 stages; %7%8.")
               .arg(task.m)
               .arg(bBytes / 1e6, 0, 'f', 0)
               .arg(best.blockM)
               .arg(best.blockN)
               .arg(best.consumerWarpgroups)
               .arg(best.stages)
               .arg(bestWhy)
               .arg(best.splitsInCluster()
                        ? QStringLiteral(", fp32 partials summed in split order in the cluster")
                    : best.splitK > 1 ? QStringLiteral(", fp32 partials summed in split order")
                    : best.tmaStore   ? QStringLiteral(", TMA-store epilogue")
                                      : QStringLiteral(", direct epilogue"))
               .arg(best.swapped ? QStringLiteral(" on swapped operands (C's rows are the wgmma N)")
                                 : QString());
    return best;
}

} // namespace kev
