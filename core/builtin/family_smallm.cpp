#include "builtin/family_smallm.h"

#include "builtin/cudatemplates.h"
#include "builtin/gemmcodegen.h"

#include <QJsonArray>

#include <algorithm>
#include <cstdlib>

using namespace Qt::StringLiterals;

namespace kev {

namespace {

// The knobs of one configuration, parsed once from the Strategy.
struct SmallMConfig {
    int blockM = 0;
    int blockN = 0;
    int blockK = 0;
    int warpN = 0;
    int stages = 0;
    int splitK = 1;

    static SmallMConfig fromStrategy(const Strategy& s) {
        return {s.blockM, s.blockN, s.blockK, s.warpN, s.stages, s.splitK};
    }

    int warps() const { return warpN > 0 ? blockN / warpN : 0; }
    int threads() const { return warps() * 32; }
    qint64 stageBytes() const { return 2LL * blockK * (blockM + blockN); }
    qint64 smemBytes() const { return stages * stageBytes(); }
    int accumulators() const { return warpN > 0 ? blockM * warpN / 32 : 0; }
    int registerEstimate() const {
        // Accumulators, the A fragments of all row tiles and the B fragments of one k step,
        // addressing.
        return accumulators() + blockM / 4 + warpN / 4 + 40;
    }
    qint64 workspaceBytes(const Task& task) const {
        return splitK > 1 ? qint64(splitK) * task.m * task.n * 4 : 0;
    }
};

QJsonArray ints(std::initializer_list<int> values) {
    QJsonArray out;
    for (int v : values)
        out.append(v);
    return out;
}

int roundUp(int x, int to) {
    return (x + to - 1) / to * to;
}

} // namespace

QString SmallMFamily::id() const {
    return u"mma_smallm"_s;
}

QString SmallMFamily::description() const {
    return u"Small-M tensor-core GEMM for inference shapes (M <= 256, B the bulk of the bytes): a "
           "block owns a band of blockM rows (usually all of M) and blockN columns, its warps "
           "split "
           "the columns only (warpN each) so B is read from shared memory once; mma.sync m16n8k16 "
           "fed by ldmatrix from XOR-swizzled tiles; a deep cp.async pipeline (stages) with an "
           "L2 evict-first hint on B; row bands vary fastest so B leaves DRAM once; split-K "
           "(splitK) with fp32 partials in the workspace summed in split order by a second kernel "
           "(deterministic). Judged by its share of the DRAM floor."_s;
}

bool SmallMFamily::supports(const Task& task, const DeviceInfo& device) const {
    const bool tensorType = task.a == u"f16" || task.a == u"bf16";
    const QStringList outputs{u"f16"_s, u"bf16"_s, u"f32"_s};
    return task.op == u"gemm" && tensorType && task.b == task.a && outputs.contains(task.c) &&
           task.accumulate == u"f32" && task.layoutA == u"row" && task.layoutB == u"row" &&
           task.layoutC == u"row" && device.ccMajor >= 8 && task.leadingDimMultiple % 8 == 0 &&
           task.m >= 1 && task.m <= kSmallMLimit;
}

QVector<ParameterSpec> SmallMFamily::parameters() const {
    return {
        fieldParameter(u"blockM"_s, u"Rows of C per block (the row band; 16 per MMA tile)"_s,
                       ints({16, 32, 64, 128}), &Strategy::blockM),
        fieldParameter(u"blockN"_s, u"Columns of C per block"_s, ints({64, 128, 256}),
                       &Strategy::blockN),
        fieldParameter(u"blockK"_s, u"Depth of one k-tile"_s, ints({32, 64, 128}),
                       &Strategy::blockK),
        fieldParameter(u"warpN"_s, u"Columns of C per warp (all blockM rows)"_s, ints({16, 32, 64}),
                       &Strategy::warpN),
        fieldParameter(u"stages"_s, u"cp.async pipeline depth"_s, ints({2, 3, 4, 5, 6, 7, 8}),
                       &Strategy::stages),
        fieldParameter(u"splitK"_s, u"Blocks sharing one output tile along K (1: no split)"_s,
                       ints({1, 2, 3, 4, 6, 8, 12, 16}), &Strategy::splitK),
    };
}

void SmallMFamily::normalize(Strategy& s) const {
    s.family = id();
    s.mma = u"mma.sync"_s;
    s.vectorWidth = 8;
    s.epilogue = u"direct"_s;
    s.smemLayout = u"swizzled"_s;
    s.smemPaddingBytes = 0;
    s.swizzleBytes = 128;
    // The grid order (row bands fastest) is fixed by the design, not a knob.
    s.raster = u"row"_s;
    s.groupSize = 1;
    s.warpM = s.blockM;
    if (s.warpN > 0 && s.blockN % s.warpN == 0)
        s.warps = s.blockN / s.warpN;
}

QStringList SmallMFamily::constraints(const Strategy& s, const Task& task,
                                      const DeviceInfo& device) const {
    QStringList problems;
    if (!supports(task, device))
        problems << u"family mma_smallm needs a row-major GEMM with M <= %1, f16 or bf16 A and B "
                    "of the same type, f32 accumulation, leading dimensions a multiple of 8 and "
                    "an sm_80 or newer GPU (task %2, device %3 sm_%4%5)"_s.arg(kSmallMLimit)
                        .arg(task.summary(), device.name)
                        .arg(device.ccMajor)
                        .arg(device.ccMinor);
    if (s.family != id())
        problems << u"family: \"%1\" is not %2"_s.arg(s.family, id());
    const SmallMConfig c = SmallMConfig::fromStrategy(s);
    if (c.blockM < 16 || c.blockM > 128 || c.blockM % 16 != 0)
        problems << u"blockM=%1: must be a multiple of 16 in 16..128 (m16 MMA tiles)"_s.arg(
            c.blockM);
    if (c.blockN != 64 && c.blockN != 128 && c.blockN != 256)
        problems << u"blockN=%1: must be 64, 128 or 256 (swizzled B rows of whole 128-byte "
                    "lines)"_s.arg(c.blockN);
    if (c.blockK != 32 && c.blockK != 64 && c.blockK != 128)
        problems << u"blockK=%1: must be 32, 64 or 128"_s.arg(c.blockK);
    if (c.warpN < 16 || c.warpN % 16 != 0 || (c.blockN > 0 && c.blockN % c.warpN != 0))
        problems << u"warpN=%1: must be a multiple of 16 that divides blockN=%2"_s.arg(c.warpN).arg(
            c.blockN);
    else if (s.warps != c.warps())
        problems << u"warps=%1 but blockN=%2 over warpN=%3 makes %4"_s.arg(s.warps)
                        .arg(c.blockN)
                        .arg(c.warpN)
                        .arg(c.warps());
    else if (c.threads() < 64 || c.threads() > 512)
        problems << u"%1 threads per block (blockN/warpN warps): must be 64..512"_s.arg(
            c.threads());
    if (c.stages < 2 || c.stages > 8)
        problems << u"stages=%1: must be 2..8"_s.arg(c.stages);
    if (c.splitK < 1 || c.splitK > 16)
        problems << u"splitK=%1: must be 1..16"_s.arg(c.splitK);
    if (c.accumulators() > 128)
        problems << u"blockM x warpN = %1x%2 needs %3 fp32 accumulators a thread: more than 128 "
                    "spills"_s.arg(c.blockM)
                        .arg(c.warpN)
                        .arg(c.accumulators());
    if (c.smemBytes() > device.smemPerBlockOptin)
        problems << u"shared memory %1 B per block exceeds the device's opt-in limit %2 B "
                    "(stages=%3 x (blockM=%4 + blockN=%5) x blockK=%6 x 2 B)"_s.arg(c.smemBytes())
                        .arg(device.smemPerBlockOptin)
                        .arg(c.stages)
                        .arg(c.blockM)
                        .arg(c.blockN)
                        .arg(c.blockK);
    return problems;
}

ResourceEstimate SmallMFamily::resources(const Strategy& s, const Task& task,
                                         const DeviceInfo& device) const {
    const SmallMConfig c = SmallMConfig::fromStrategy(s);
    ResourceEstimate r =
        estimateResources(c.threads(), c.smemBytes(), c.registerEstimate(), device);
    r.workspaceBytes = c.workspaceBytes(task);
    return r;
}

Strategy SmallMFamily::defaultStrategy(const Task& task, const DeviceInfo& device) const {
    // Measured on the H200 (docs/benchmarks.md, session 8): 64-column tiles 128 deep in 4 stages,
    // 2 warps, split along K so that the grid holds about two blocks per SM, reached the best
    // figure of every M <= 32 task swept (M = 1 f16 4096x4096: 256 blocks 1.157x cuBLAS; M = 1
    // bf16 14336x4096: 224 blocks 1.103x; M = 8 bf16 8192x8192: 256 blocks 1.014x, where 192
    // blocks of the older 128-column default ran 0.925x and 128 blocks of this tile 0.740x;
    // M = 32 f16 5120x5120: 240 blocks 1.000x against 0.923x).
    Strategy s;
    s.family = id();
    s.blockM = std::clamp(roundUp(int(std::min<qint64>(task.m, 64)), 16), 16, 64);
    s.blockN = 64;
    s.warpN = 32;
    s.blockK = 128;
    s.stages = 4;
    normalize(s);

    const SmallMConfig probe{s.blockM, s.blockN, s.blockK, s.warpN, s.stages, 1};
    const int sms = std::max(device.smCount, 1);
    const ResourceEstimate fit =
        estimateResources(probe.threads(), probe.smemBytes(), probe.registerEstimate(), device);
    const qint64 target = qint64(sms) * std::clamp(fit.blocksPerSm, 1, 2);
    const qint64 tiles =
        ((task.m + s.blockM - 1) / s.blockM) * ((task.n + s.blockN - 1) / s.blockN);
    const qint64 kTiles = (task.k + s.blockK - 1) / s.blockK;
    // The split whose grid is nearest the target, each split keeping at least `stages` k-tiles
    // so the pipeline reaches its steady state.
    int bestSplit = 1;
    for (int split : {1, 2, 3, 4, 6, 8, 12, 16}) {
        if (split > 1 && kTiles / split < s.stages)
            break;
        if (std::llabs(tiles * split - target) < std::llabs(tiles * bestSplit - target))
            bestSplit = split;
    }
    s.splitK = bestSplit;
    s.rationale = u"Memory-bound small-M GEMM (M=%1, B %2 MB): %3 rows x %4 columns a block, %5 "
                  "warps of %4/%5 columns each so B is read from shared memory once; %6-stage "
                  "cp.async pipeline of %7-deep k-tiles; %8 output tiles, split-K %9 makes %10 "
                  "blocks for about %11 (two per SM where they fit: each SM keeps two blocks' "
                  "loads in flight)."_s.arg(task.m)
                      .arg(2.0 * double(task.k) * double(task.n) / 1e6, 0, 'f', 0)
                      .arg(s.blockM)
                      .arg(s.blockN)
                      .arg(s.warps)
                      .arg(s.stages)
                      .arg(s.blockK)
                      .arg(tiles)
                      .arg(s.splitK)
                      .arg(tiles * s.splitK)
                      .arg(target);
    return s;
}

QString SmallMFamily::generate(const Strategy& s, const Task& task) const {
    using namespace gemmcodegen;
    const SmallMConfig c = SmallMConfig::fromStrategy(s);
    QStringList header{
        u"Kevolve built-in kernel, family mma_smallm (generated; edit freely)."_s,
        u"Task: %1 (%2)."_s.arg(task.name, task.summary()),
        u"Strategy: block %1x%2x%3, %4 warps of %1x%5, mma.sync m16n8k16 %6 -> f32, %7-stage "
        "cp.async,"_s.arg(c.blockM)
            .arg(c.blockN)
            .arg(c.blockK)
            .arg(c.warps())
            .arg(c.warpN)
            .arg(task.a)
            .arg(c.stages),
        c.splitK > 1 ? u"  split-K %1 (fp32 partials in the workspace, summed in split order), C "
                       "written as %2."_s.arg(c.splitK)
                           .arg(task.c)
                     : u"  no split, C written as %1."_s.arg(task.c),
    };
    if (!s.rationale.isEmpty()) {
        header << u"Rationale:"_s;
        for (const QString& line : wrapText(s.rationale))
            header << u"  "_s + line;
    }
    TemplateValues values;
    values.set(u"HEADER"_s, headerComment(header))
        .set(u"INCLUDES"_s, dtypeIncludes(task))
        .set(u"IN_T"_s, cudaType(task.a))
        .set(u"OUT_T"_s, cudaType(task.c))
        .set(u"BLOCK_M"_s, c.blockM)
        .set(u"BLOCK_N"_s, c.blockN)
        .set(u"BLOCK_K"_s, c.blockK)
        .set(u"WARP_N"_s, c.warpN)
        .set(u"STAGES"_s, c.stages)
        .set(u"SPLIT"_s, c.splitK)
        .flag(u"SPLIT_K"_s, c.splitK > 1)
        // A rows of 64 bytes (blockK 32) hold two rows per 128-byte line; longer rows are whole
        // lines.
        .set(u"A_SWIZZLE"_s, c.blockK == 32 ? u"((row >> 1) & 3)"_s : u"(row & 7)"_s)
        .set(u"MMA_TYPE"_s, task.a)
        .set(u"OUTPUT_HELPERS"_s, outputHelpers(task.c))
        .set(u"CHECKS"_s, launchChecks(task));
    return cudatemplates::render(u"smallm/smallm.cu"_s, values);
}

} // namespace kev
