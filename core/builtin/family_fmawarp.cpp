#include "builtin/family_fmawarp.h"

#include "builtin/cudatemplates.h"
#include "builtin/gemmcodegen.h"

#include <QJsonArray>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace kev {

namespace {

// The knobs of one configuration, parsed once from the Strategy.
struct FmaWarpTileConfig {
    int blockM = 0;
    int blockN = 0;
    int blockK = 0;
    int warpM = 0;
    int warpN = 0;
    int threadTileM = 0;     // rows of C per thread
    int threadTileN = 0;     // columns of C per thread
    int minBlocks = 1;       // __launch_bounds__ blocks per SM
    int groupM = 1;          // block rows per raster group (1: row-major raster)
    bool serpentine = false; // the outer product's FMA order (odd rows backwards)
    bool async = false;      // cp.async into `stages` shared buffers instead of via registers
    int stages = 2;
    int splitK = 1;  // slices of K summed by a second kernel
    int kUnroll = 0; // k steps per unrolled loop body (0: the whole k-tile)

    static FmaWarpTileConfig fromStrategy(const Strategy& s) {
        return {s.blockM,
                s.blockN,
                s.blockK,
                s.warpM,
                s.warpN,
                s.params.value(u"thread_tile_m"_s).toInt(0),
                s.params.value(u"thread_tile_n"_s).toInt(0),
                s.params.value(u"min_blocks"_s).toInt(1),
                s.raster == u"grouped"_s ? s.groupSize : 1,
                s.params.value(u"serpentine"_s).toInt(0) != 0,
                s.params.value(u"cp_async"_s).toInt(0) != 0,
                s.stages,
                s.splitK,
                s.params.value(u"k_unroll"_s).toInt(0)};
    }

    bool tilesDivide() const {
        return warpM > 0 && warpN > 0 && threadTileM > 0 && threadTileN > 0 &&
               blockM % warpM == 0 && blockN % warpN == 0 && warpM % threadTileM == 0 &&
               warpN % threadTileN == 0;
    }
    int lanes() const { return tilesDivide() ? (warpM / threadTileM) * (warpN / threadTileN) : 0; }
    int warps() const { return tilesDivide() ? (blockM / warpM) * (blockN / warpN) : 0; }
    int threads() const { return warps() * 32; }
    qint64 smemBytes() const {
        return qint64(async ? stages : 2) * blockK * ((blockM + 4) + blockN) * 4;
    }
    // Accumulators, two sets of fragments, the prefetched k-tile (4 registers per float4) and
    // about 20 for indices and addresses. Calibrated on ptxas 13.0 (sm_90a): 8x8 with blockK 8 is
    // 124 here and fits 128 without spills; with blockK 16 it is 132 and spills at 128.
    int registerEstimate() const {
        const int t = std::max(threads(), 1);
        const int vectors = (blockM * blockK + blockK * blockN) / (4 * t);
        // With cp.async nothing is staged in registers, but ptxas keeps about two registers of
        // address per 4-byte copy of A (8x8 with blockK 16 spills at 128).
        const int staging = async ? 2 * (blockM * blockK / t) : 4 * vectors;
        return threadTileM * threadTileN + 2 * (threadTileM + threadTileN) + staging + 20;
    }
};

QJsonArray ints(std::initializer_list<int> values) {
    QJsonArray out;
    for (int v : values)
        out.append(v);
    return out;
}

} // namespace

QString FmaWarpTileFamily::id() const {
    return u"fma_warptile"_s;
}

QString FmaWarpTileFamily::description() const {
    return u"Warp-tiled SGEMM on the FP32 pipes (f32 inputs; no tensor cores, no TF32): block "
           "tiles in shared memory with A transposed, warp tiles of warpM x warpN whose lanes "
           "each own thread_tile_m x thread_tile_n outputs (4, 8 or 16) in 4x4 groups (float4 "
           "shared loads, conflict-free), register double buffering of the fragments; k-tiles "
           "either prefetched through registers with float4 global loads into two buffers, or "
           "(cp_async) copied by cp.async into `stages` buffers; min_blocks sets "
           "__launch_bounds__, a grouped raster shares panels in L2, serpentine reorders the "
           "FMAs; float4 stores of f32 C."_s;
}

bool FmaWarpTileFamily::supports(const Task& task, const DeviceInfo& device) const {
    const QStringList outputs{u"f32"_s, u"f16"_s, u"bf16"_s};
    return task.op == u"gemm" && task.a == u"f32" && task.b == u"f32" && outputs.contains(task.c) &&
           task.accumulate == u"f32" && task.layoutA == u"row" && task.layoutB == u"row" &&
           task.layoutC == u"row" && device.ccMajor >= 7 && task.leadingDimMultiple % 4 == 0;
}

QVector<ParameterSpec> FmaWarpTileFamily::parameters() const {
    return {
        fieldParameter(u"blockM"_s, u"Rows of C per thread block"_s, ints({64, 128, 256}),
                       &Strategy::blockM),
        fieldParameter(u"blockN"_s, u"Columns of C per thread block"_s, ints({64, 128, 256}),
                       &Strategy::blockN),
        fieldParameter(u"blockK"_s, u"Depth of one k-tile"_s, ints({8, 16, 32}), &Strategy::blockK),
        fieldParameter(u"warpM"_s, u"Rows of C per warp"_s, ints({16, 32, 64, 128}),
                       &Strategy::warpM),
        fieldParameter(u"warpN"_s, u"Columns of C per warp"_s, ints({16, 32, 64, 128}),
                       &Strategy::warpN),
        paramsParameter(u"thread_tile_m"_s, u"Rows of C per thread (groups of 4)"_s,
                        ints({4, 8, 16})),
        paramsParameter(u"thread_tile_n"_s, u"Columns of C per thread (groups of 4)"_s,
                        ints({4, 8, 16})),
        paramsParameter(u"min_blocks"_s, u"Blocks per SM promised to ptxas (__launch_bounds__)"_s,
                        ints({1, 2, 4})),
        fieldParameter(u"raster"_s, u"Block order: row-major, or grouped (groupSize block rows)"_s,
                       QJsonArray{u"row"_s, u"grouped"_s}, &Strategy::raster),
        fieldParameter(u"groupSize"_s, u"Block rows per group of the grouped raster"_s,
                       ints({4, 8, 16}), &Strategy::groupSize),
        paramsParameter(u"cp_async"_s,
                        u"1: cp.async copies k-tiles straight into `stages` shared buffers (no "
                        "register staging); 0: loads through registers into two buffers"_s,
                        ints({0, 1})),
        fieldParameter(u"splitK"_s,
                       u"Slices of K per output tile (fp32 partials in the workspace, summed in "
                       "order by a second kernel): more blocks when the output has few tiles"_s,
                       ints({1, 2, 3, 4, 6, 8}), &Strategy::splitK),
        fieldParameter(u"stages"_s, u"Shared-memory buffers of the cp.async pipeline"_s,
                       ints({2, 3, 4}), &Strategy::stages),
        paramsParameter(u"k_unroll"_s,
                        u"k steps per unrolled loop body (0: the whole k-tile; fewer keep the "
                        "main loop's code small)"_s,
                        ints({0, 4, 8})),
        paramsParameter(u"serpentine"_s,
                        u"FMA order: 1 walks odd rows of the thread tile backwards (operand reuse; "
                        "ptxas allocates registers differently)"_s,
                        ints({0, 1})),
    };
}

void FmaWarpTileFamily::normalize(Strategy& s) const {
    s.family = id();
    s.mma = u"fma"_s;
    s.vectorWidth = 4;
    if (s.params.value(u"cp_async"_s).toInt(0) == 0)
        s.stages = 2; // the register-staged pipeline has two buffers
    s.smemLayout = u"padded"_s;
    s.smemPaddingBytes = 16;
    s.swizzleBytes = 0;
    if (s.raster != u"grouped"_s) {
        s.raster = u"row"_s;
        s.groupSize = 1;
    }
    s.epilogue = u"direct"_s;
    if (!s.params.contains(u"min_blocks"_s))
        s.params.insert(u"min_blocks"_s, 1);
    if (!s.params.contains(u"serpentine"_s))
        s.params.insert(u"serpentine"_s, 0);
    if (!s.params.contains(u"cp_async"_s))
        s.params.insert(u"cp_async"_s, 0);
    const int w = FmaWarpTileConfig::fromStrategy(s).warps();
    if (w > 0)
        s.warps = w;
}

QStringList FmaWarpTileFamily::constraints(const Strategy& s, const Task& task,
                                           const DeviceInfo& device) const {
    QStringList problems;
    if (!supports(task, device))
        problems << u"family fma_warptile needs a row-major GEMM with f32 A and B, f32 "
                    "accumulation and leading dimensions a multiple of 4 (task %1)"_s.arg(
                        task.summary());
    if (s.family != id())
        problems << u"family: \"%1\" is not %2"_s.arg(s.family, id());
    const FmaWarpTileConfig c = FmaWarpTileConfig::fromStrategy(s);
    const auto tileOk = [](int v) { return v == 4 || v == 8 || v == 16; };
    if (!tileOk(c.threadTileM) || !tileOk(c.threadTileN)) {
        problems << u"params.thread_tile_m=%1, params.thread_tile_n=%2: each must be 4, 8 or 16"_s
                        .arg(c.threadTileM)
                        .arg(c.threadTileN);
        return problems;
    }
    if (c.minBlocks < 1 || c.minBlocks > 4)
        problems << u"params.min_blocks=%1: must be 1..4"_s.arg(c.minBlocks);
    // Switches default to 0 when absent (a strategy file written before they existed).
    const auto switchValue = [&s](const QString& key) {
        const QJsonValue v = s.params.value(key);
        return v.isUndefined() ? 0 : v.toInt(-1);
    };
    const int serpentine = switchValue(u"serpentine"_s);
    if (serpentine != 0 && serpentine != 1)
        problems << u"params.serpentine: must be 0 or 1"_s;
    const int async = switchValue(u"cp_async"_s);
    if (async != 0 && async != 1)
        problems << u"params.cp_async: must be 0 or 1"_s;
    else if (async == 1 && device.ccMajor < 8)
        problems << u"params.cp_async=1 needs cp.async (sm_80 or newer; device is sm_%1%2)"_s
                        .arg(device.ccMajor)
                        .arg(device.ccMinor);
    else if (async == 1 && (s.stages < 2 || s.stages > 4))
        problems << u"stages=%1: the cp.async pipeline has 2..4 shared-memory buffers"_s.arg(
            s.stages);
    else if (async == 0 && s.stages != 2)
        problems << u"stages=%1: without cp_async the pipeline has exactly 2 buffers"_s.arg(
            s.stages);
    const QJsonValue unroll = s.params.value(u"k_unroll"_s);
    if (!unroll.isUndefined() &&
        (unroll.toInt(-1) < 0 || unroll.toInt(-1) % 2 != 0 ||
         (unroll.toInt(-1) > 0 && (c.blockK <= 0 || c.blockK % unroll.toInt(-1) != 0))))
        problems << u"params.k_unroll: 0 (the whole k-tile) or an even divisor of blockK=%1"_s.arg(
            c.blockK);
    if (s.splitK < 1 || s.splitK > 16)
        problems << u"splitK=%1: must be 1..16"_s.arg(s.splitK);
    if (s.raster != u"row"_s && s.raster != u"grouped"_s)
        problems << u"raster: \"%1\" must be row or grouped"_s.arg(s.raster);
    else if (s.raster == u"grouped"_s && (s.groupSize < 2 || s.groupSize > 64))
        problems << u"groupSize=%1: a grouped raster needs 2..64 block rows per group"_s.arg(
            s.groupSize);
    if (!c.tilesDivide()) {
        problems << u"tiles do not nest: block %1x%2, warp %3x%4, thread %5x%6 (each must divide "
                    "the one above)"_s.arg(c.blockM)
                        .arg(c.blockN)
                        .arg(c.warpM)
                        .arg(c.warpN)
                        .arg(c.threadTileM)
                        .arg(c.threadTileN);
        return problems;
    }
    if (c.lanes() != 32)
        problems << u"warp tile %1x%2 over thread tile %3x%4 makes %5 lanes: must be 32"_s
                        .arg(c.warpM)
                        .arg(c.warpN)
                        .arg(c.threadTileM)
                        .arg(c.threadTileN)
                        .arg(c.lanes());
    const int t = c.threads();
    if (t < 64 || t > 1024)
        problems << u"%1 threads per block: must be 64..1024"_s.arg(t);
    else if (c.blockK % 8 != 0 || (c.blockM * c.blockK) % (4 * t) != 0 ||
             (c.blockK * c.blockN) % (4 * t) != 0)
        problems << u"tile loads: %1x%2 A and %2x%3 B elements do not split into float4 loads "
                    "over %4 threads (blockK must be a multiple of 8)"_s.arg(c.blockM)
                        .arg(c.blockK)
                        .arg(c.blockN)
                        .arg(t);
    else if (s.warps != c.warps())
        problems << u"warps=%1 but the tiles make %2"_s.arg(s.warps).arg(c.warps());
    if (c.smemBytes() > device.smemPerBlockOptin)
        problems << u"shared memory %1 B exceeds the %2 B a block may have (blockK=%3)"_s
                        .arg(c.smemBytes())
                        .arg(device.smemPerBlockOptin)
                        .arg(c.blockK);
    const int regs = c.registerEstimate();
    if (regs > 255)
        problems << u"about %1 registers per thread: more than 255"_s.arg(regs);
    else if (t > 0 && qint64(regs) * t * c.minBlocks > device.regsPerSm)
        problems << u"about %1 registers x %2 threads x min_blocks %3 exceeds the %4 registers of "
                    "an SM"_s.arg(regs)
                        .arg(t)
                        .arg(c.minBlocks)
                        .arg(device.regsPerSm);
    return problems;
}

ResourceEstimate FmaWarpTileFamily::resources(const Strategy& s, const Task&,
                                              const DeviceInfo& device) const {
    const FmaWarpTileConfig c = FmaWarpTileConfig::fromStrategy(s);
    return estimateResources(c.threads(), c.smemBytes(), c.registerEstimate(), device);
}

Strategy FmaWarpTileFamily::defaultStrategy(const Task& task, const DeviceInfo& device) const {
    // Three shapes of kernel, each with the share of cuBLAS it reached on the H200 (the sweep of
    // tests/inference/sweep, docs/benchmarks.md) and the blocks an SM holds; the default is the
    // one whose tiles, in slices of K where K is deep, fill the SMs best.
    struct KernelShape {
        int blockM, blockN, blockK, warpM, warpN, threadM, threadN, minBlocks, stages;
        int kUnroll; // k steps per loop body (0: the whole k-tile)
        bool serpentine;
        double speed;     // share of cuBLAS when the grid fills the SMs
        int blocksPerSm;  // resident blocks (registers)
        const char* what; // for the rationale

        // cp.async needs sm_80; older GPUs take the register-staged pipeline (two buffers).
        bool async(const DeviceInfo& d) const { return stages > 2 && d.ccMajor >= 8; }
        qint64 smemBytes(const DeviceInfo& d) const {
            FmaWarpTileConfig c;
            c.blockM = blockM;
            c.blockN = blockN;
            c.blockK = blockK;
            c.async = async(d);
            c.stages = stages;
            return c.smemBytes();
        }
    };
    static const KernelShape shapes[] = {
        // 0.972x (4096^3), 0.969x (2048x2048x8192), session 10: 235 registers, one block of 8
        // warps per SM, 194 KiB of shared memory. The 8-step loop body (17 KiB of code) beat the
        // whole unrolled k-tile of 32 (0.933x, 70 KiB) and blockK 16 (0.943x).
        {128, 256, 32, 64, 64, 16, 8, 1, 4, 8, true, 0.97, 1,
         "128x256x32 block tile, 8 warps of 64x64 (lanes 4x8 of 16x8 outputs: 128 FMAs per 6 "
         "float4 shared loads), k-tiles by cp.async into 4 buffers (no register staging), 8 k "
         "steps per loop body"},
        // 0.939x at blockK 16 and 3 stages (session 10): where 4 stages of blockK 32 do not fit.
        {128, 256, 16, 64, 64, 16, 8, 1, 3, 0, true, 0.94, 1,
         "128x256x16 block tile, 8 warps of 64x64 (lanes 4x8 of 16x8 outputs), k-tiles by "
         "cp.async into 3 buffers"},
        // 0.816x: 128 registers, two blocks per SM.
        {128, 128, 8, 32, 64, 8, 8, 2, 2, 0, false, 0.81, 2,
         "128x128x8 block tile, 8 warps of 32x64 (8x8 per lane), k-tiles through registers, 128 "
         "registers for two blocks per SM"},
        // Not measured on the SGEMM tasks (their outputs are large); four blocks per SM.
        {64, 64, 8, 32, 32, 8, 4, 1, 2, 0, false, 0.6, 4,
         "64x64x8 block tile, 4 warps of 32x32 (8x4 per lane), many small blocks"},
    };
    const qint64 sms = std::max(device.smCount, 1);
    const KernelShape* best = &shapes[0];
    int bestSplit = 1;
    double bestScore = -1.0;
    qint64 bestTiles = 0;
    for (const KernelShape& shape : shapes) {
        if (shape.smemBytes(device) > device.smemPerBlockOptin)
            continue;
        const qint64 tiles = ((task.m + shape.blockM - 1) / shape.blockM) *
                             ((task.n + shape.blockN - 1) / shape.blockN);
        const qint64 kTiles = (task.k + shape.blockK - 1) / shape.blockK;
        const qint64 resident = sms * shape.blocksPerSm;
        for (int split : {1, 2, 3, 4, 6, 8}) {
            // A slice keeps at least 32 k-tiles, so the partials' traffic stays small next to
            // the main loop's; slicing costs the second kernel's pass over the partials (about
            // 4% at 2 slices, 16% at 8), so a marginal gain in wave fill does not split.
            if (split > 1 && kTiles < 32LL * split)
                break;
            const qint64 blocks = tiles * split;
            const qint64 waves = (blocks + resident - 1) / resident;
            const double fill = double(blocks) / double(waves * resident);
            const double score = shape.speed * fill * (split > 1 ? 0.96 - 0.015 * split : 1.0);
            if (score > bestScore + 1e-9) {
                bestScore = score;
                best = &shape;
                bestSplit = split;
                bestTiles = tiles;
            }
        }
    }
    Strategy s;
    s.family = id();
    s.blockM = best->blockM;
    s.blockN = best->blockN;
    s.blockK = best->blockK;
    s.warpM = best->warpM;
    s.warpN = best->warpN;
    s.splitK = bestSplit;
    s.stages = best->stages;
    s.params.insert(u"thread_tile_m"_s, best->threadM);
    s.params.insert(u"thread_tile_n"_s, best->threadN);
    s.params.insert(u"min_blocks"_s, best->minBlocks);
    s.params.insert(u"serpentine"_s, best->serpentine ? 1 : 0);
    s.params.insert(u"cp_async"_s, best->async(device) ? 1 : 0);
    if (best->kUnroll > 0)
        s.params.insert(u"k_unroll"_s, best->kUnroll);
    if (best->blocksPerSm < 4) {
        // Eight block rows per raster group: the blocks resident at once share A and B panels.
        s.raster = u"grouped"_s;
        s.groupSize = 8;
    }
    normalize(s);
    s.rationale =
        QString::fromLatin1(best->what) +
        u", grouped raster; chosen for %1 output tiles on %2 SMs"_s.arg(bestTiles).arg(sms);
    if (best->blocksPerSm == 4)
        s.rationale.replace(u", grouped raster;"_s, u";"_s);
    if (s.splitK > 1)
        s.rationale +=
            u", K in %1 slices (fp32 partials summed in order by a second kernel)"_s.arg(s.splitK);
    s.rationale += u"."_s;
    return s;
}

QString FmaWarpTileFamily::generate(const Strategy& s, const Task& task) const {
    using namespace gemmcodegen;
    const FmaWarpTileConfig c = FmaWarpTileConfig::fromStrategy(s);
    QStringList header{
        u"Kevolve built-in kernel, family fma_warptile (generated; edit freely)."_s,
        u"Task: %1 (%2)."_s.arg(task.name, task.summary()),
        u"Strategy: block %1x%2x%3, warps of %4x%5, %6x%7 outputs per thread (%8 threads), FP32 "
        "FMA,"_s.arg(c.blockM)
            .arg(c.blockN)
            .arg(c.blockK)
            .arg(c.warpM)
            .arg(c.warpN)
            .arg(c.threadTileM)
            .arg(c.threadTileN)
            .arg(c.threads()),
        c.async ? u"  cp.async into %1 shared-memory buffers, double-buffered fragments, C written "
                  "as %2,"_s.arg(c.stages)
                      .arg(task.c)
                : u"  double-buffered shared memory and fragments, C written as %1,"_s.arg(task.c),
        u"  %1 raster, %2 FMA order."_s.arg(
            c.groupM > 1 ? u"grouped (%1 block rows)"_s.arg(c.groupM) : u"row"_s,
            c.serpentine ? u"serpentine"_s : u"row-major"_s),
    };
    if (!s.rationale.isEmpty()) {
        header << u"Rationale:"_s;
        for (const QString& line : wrapText(s.rationale))
            header << u"  "_s + line;
    }
    TemplateValues values;
    values.set(u"HEADER"_s, headerComment(header))
        .set(u"INCLUDES"_s, dtypeIncludes(task))
        .set(u"OUT_T"_s, cudaType(task.c))
        .set(u"BLOCK_M"_s, c.blockM)
        .set(u"BLOCK_N"_s, c.blockN)
        .set(u"BLOCK_K"_s, c.blockK)
        .set(u"WARP_M"_s, c.warpM)
        .set(u"WARP_N"_s, c.warpN)
        .set(u"THREAD_M"_s, c.threadTileM)
        .set(u"THREAD_N"_s, c.threadTileN)
        .set(u"MIN_BLOCKS"_s, c.minBlocks)
        .set(u"GROUP_M"_s, c.groupM)
        .set(u"SERPENTINE"_s, c.serpentine ? u"true"_s : u"false"_s)
        .set(u"STAGES"_s, c.stages)
        .flag(u"ASYNC"_s, c.async)
        .set(u"SPLIT_K"_s, c.splitK)
        .set(u"K_UNROLL"_s, c.kUnroll > 0 ? c.kUnroll : c.blockK)
        .flag(u"SPLIT"_s, c.splitK > 1)
        .set(u"OUTPUT_HELPERS"_s, outputHelpers(task.c))
        .set(u"CHECKS"_s, launchChecks(task));
    return cudatemplates::render(u"fmawarp/fma_warptile.cu"_s, values);
}

} // namespace kev
