#include "builtin/family_mmasync.h"

#include "builtin/cudatemplates.h"
#include "builtin/gemmcodegen.h"

#include <QJsonArray>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace kev {

namespace {

QJsonArray ints(std::initializer_list<int> values) {
    QJsonArray out;
    for (int v : values)
        out.append(v);
    return out;
}

} // namespace

MmaSyncConfig MmaSyncConfig::fromStrategy(const Strategy& s) {
    MmaSyncConfig c;
    c.blockM = s.blockM;
    c.blockN = s.blockN;
    c.blockK = s.blockK;
    c.warpM = s.warpM;
    c.warpN = s.warpN;
    c.warps = s.warps;
    c.stages = s.stages;
    c.groupSize = s.groupSize;
    c.splitK = s.splitK;
    if (s.smemLayout == layoutName(Layout::Padded))
        c.layout = Layout::Padded;
    else if (s.smemLayout != layoutName(Layout::Swizzled))
        c.invalidLayout = s.smemLayout;
    if (s.raster == rasterName(Raster::Grouped))
        c.raster = Raster::Grouped;
    else if (s.raster != rasterName(Raster::Row))
        c.invalidRaster = s.raster;
    return c;
}

QString MmaSyncConfig::layoutName(Layout layout) {
    return layout == Layout::Padded ? u"padded"_s : u"swizzled"_s;
}

QString MmaSyncConfig::rasterName(Raster raster) {
    return raster == Raster::Grouped ? u"grouped"_s : u"row"_s;
}

qint64 MmaSyncConfig::smemBytes() const {
    return qint64(stages) * (qint64(blockM) * aRowElems() + qint64(blockK) * bRowElems()) * 2;
}

int MmaSyncConfig::registerEstimate() const {
    if (warpM <= 0 || warpN <= 0)
        return 0;
    return warpM * warpN / 32 + (warpM / 16) * 4 + (warpN / 8) * 2 + 40;
}

MmaSyncFamily::MmaSyncFamily(bool splitK)
    : m_splitK(splitK) {}

QString MmaSyncFamily::id() const {
    return m_splitK ? u"mma_sync_splitk"_s : u"mma_sync"_s;
}

QString MmaSyncFamily::description() const {
    const QString base =
        u"Tensor cores through mma.sync.m16n8k16 (fp16/bf16 in, fp32 accumulate): each warp owns a "
        "warp tile of m16n8 accumulators in registers; A and B k-tiles stream into shared memory "
        "with a multi-stage cp.async pipeline (zero-filled outside M and K), in an XOR-swizzled "
        "or padded layout so ldmatrix (ldmatrix.trans for row-major B) is free of bank conflicts."_s;
    if (!m_splitK)
        return base;
    return base +
           u" Split-K: K is divided over split_k blocks per output tile that write fp32 partials "
           "to the workspace, summed by a second kernel; for shapes whose M x N tiles are too few "
           "to fill the GPU while K is long."_s;
}

bool MmaSyncFamily::supports(const Task& task, const DeviceInfo& device) const {
    const bool dtypes = (task.a == u"f16" || task.a == u"bf16") && task.b == task.a &&
                        (task.c == u"f32" || task.c == u"f16" || task.c == u"bf16") &&
                        task.accumulate == u"f32";
    return task.op == u"gemm" && dtypes && task.layoutA == u"row" && task.layoutB == u"row" &&
           task.layoutC == u"row" && device.ccMajor >= 8 && task.leadingDimMultiple % 8 == 0;
}

QVector<ParameterSpec> MmaSyncFamily::parameters() const {
    QVector<ParameterSpec> specs{
        fieldParameter(u"blockM"_s, u"Rows of C per thread block"_s, ints({64, 128, 256}),
                       &Strategy::blockM),
        fieldParameter(u"blockN"_s, u"Columns of C per thread block"_s, ints({64, 128, 256}),
                       &Strategy::blockN),
        fieldParameter(u"blockK"_s, u"Depth of one pipelined k-tile"_s, ints({16, 32, 64}),
                       &Strategy::blockK),
        fieldParameter(u"warpM"_s, u"Rows of C per warp (multiples of the m16 MMA)"_s,
                       ints({16, 32, 64, 128}), &Strategy::warpM),
        fieldParameter(u"warpN"_s, u"Columns of C per warp (multiples of two n8 MMAs)"_s,
                       ints({16, 32, 64, 128}), &Strategy::warpN),
        fieldParameter(u"stages"_s, u"k-tiles in flight in the cp.async pipeline"_s,
                       ints({2, 3, 4, 5, 6}), &Strategy::stages),
        fieldParameter(u"smemLayout"_s, u"Bank-conflict avoidance for ldmatrix"_s,
                       QJsonArray{u"padded"_s, u"swizzled"_s}, &Strategy::smemLayout),
        fieldParameter(u"raster"_s, u"Order of output tiles over the grid"_s,
                       QJsonArray{u"row"_s, u"grouped"_s}, &Strategy::raster),
    };
    if (m_splitK)
        specs.append(fieldParameter(u"splitK"_s, u"Blocks sharing one output tile along K"_s,
                                    ints({2, 3, 4, 6, 8, 12, 16}), &Strategy::splitK));
    return specs;
}

void MmaSyncFamily::normalize(Strategy& s) const {
    s.family = id();
    s.mma = u"mma.sync"_s;
    s.vectorWidth = 8;
    s.epilogue = u"direct"_s;
    if (s.warpM > 0 && s.warpN > 0 && s.blockM % s.warpM == 0 && s.blockN % s.warpN == 0)
        s.warps = (s.blockM / s.warpM) * (s.blockN / s.warpN);
    const MmaSyncConfig c = MmaSyncConfig::fromStrategy(s);
    s.smemPaddingBytes = c.padded() ? 16 : 0;
    s.swizzleBytes = c.swizzled() ? 128 : 0;
    if (c.grouped() && s.groupSize <= 1)
        s.groupSize = 8;
    if (!c.invalidRaster && c.raster == MmaSyncConfig::Raster::Row)
        s.groupSize = 1;
    if (!m_splitK)
        s.splitK = 1;
}

QStringList MmaSyncFamily::constraints(const Strategy& s, const Task& task,
                                       const DeviceInfo& device) const {
    const MmaSyncConfig c = MmaSyncConfig::fromStrategy(s);
    QStringList problems;
    if (!supports(task, device))
        problems << u"family %1 needs a row-major GEMM with f16 or bf16 A and B of the same type, "
                    "f32 accumulation, leading dimensions a multiple of 8 and an sm_80 or newer "
                    "GPU (task %2, device %3 sm_%4%5)"_s.arg(id(), task.summary(), device.name)
                        .arg(device.ccMajor)
                        .arg(device.ccMinor);
    if (s.family != id())
        problems << u"family: \"%1\" is not %2"_s.arg(s.family, id());
    if (s.warpM <= 0 || s.warpN <= 0 || s.warpM % 16 != 0 || s.warpN % 16 != 0)
        problems << u"warpM=%1, warpN=%2: each must be a positive multiple of 16"_s.arg(s.warpM)
                        .arg(s.warpN);
    else if (s.blockM % s.warpM != 0 || s.blockN % s.warpN != 0)
        problems << u"warp tile %1x%2 does not divide block tile %3x%4"_s.arg(s.warpM)
                        .arg(s.warpN)
                        .arg(s.blockM)
                        .arg(s.blockN);
    else if (s.warps != (s.blockM / s.warpM) * (s.blockN / s.warpN))
        problems << u"warps=%1 but block tile %2x%3 over warp tile %4x%5 makes %6 warps"_s
                        .arg(s.warps)
                        .arg(s.blockM)
                        .arg(s.blockN)
                        .arg(s.warpM)
                        .arg(s.warpN)
                        .arg((s.blockM / s.warpM) * (s.blockN / s.warpN));
    const int threads = s.warps * 32;
    if (threads > 1024 || threads < 32)
        problems << u"%1 threads per block: must be 32..1024"_s.arg(threads);
    if (c.swizzled()) {
        if (s.blockK != 32 && s.blockK != 64)
            problems << u"blockK=%1: the swizzled layout needs 32 or 64 (4 or 8 chunks per A "
                        "row)"_s.arg(s.blockK);
        if (s.blockN % 64 != 0)
            problems << u"blockN=%1: the swizzled layout needs a multiple of 64 (B rows of whole "
                        "128-byte lines)"_s.arg(s.blockN);
    } else if (c.padded()) {
        if (s.blockK % 16 != 0)
            problems << u"blockK=%1: must be a multiple of 16 (the MMA k)"_s.arg(s.blockK);
    } else {
        problems << u"smemLayout=\"%1\": this family uses \"swizzled\" or \"padded\""_s.arg(
            s.smemLayout);
    }
    if (threads > 0 && threads <= 1024) {
        const qint64 aChunks = qint64(s.blockM) * s.blockK / 8;
        const qint64 bChunks = qint64(s.blockK) * s.blockN / 8;
        if (aChunks % threads != 0 || bChunks % threads != 0)
            problems << u"tile loads: %1 A chunks and %2 B chunks of 16 bytes do not split evenly "
                        "over %3 threads"_s.arg(aChunks)
                            .arg(bChunks)
                            .arg(threads);
    }
    if (s.stages < 2)
        problems << u"stages=%1: a cp.async pipeline needs at least 2"_s.arg(s.stages);
    const qint64 smem = c.smemBytes();
    if (smem > device.smemPerBlockOptin)
        problems << u"shared memory %1 B per block exceeds the device's opt-in limit %2 B "
                    "(blockM=%3, blockN=%4, blockK=%5, stages=%6)"_s.arg(smem)
                        .arg(device.smemPerBlockOptin)
                        .arg(s.blockM)
                        .arg(s.blockN)
                        .arg(s.blockK)
                        .arg(s.stages);
    const int regs = c.registerEstimate();
    if (regs > 255)
        problems << u"about %1 registers per thread for warp tile %2x%3: more than 255, it would "
                    "spill"_s.arg(regs)
                        .arg(s.warpM)
                        .arg(s.warpN);
    else if (qint64(regs) * threads > device.regsPerSm)
        problems << u"about %1 registers x %2 threads exceeds the %3 registers of an SM"_s.arg(regs)
                        .arg(threads)
                        .arg(device.regsPerSm);
    if (m_splitK && s.splitK < 2)
        problems << u"splitK=%1: the split-K family needs at least 2"_s.arg(s.splitK);
    if (!m_splitK && s.splitK != 1)
        problems << u"splitK=%1: use family mma_sync_splitk to split K"_s.arg(s.splitK);
    if (c.invalidRaster)
        problems << u"raster=\"%1\": this family has \"row\" and \"grouped\""_s.arg(
            *c.invalidRaster);
    if (c.grouped() && s.groupSize < 1)
        problems << u"groupSize=%1: must be at least 1"_s.arg(s.groupSize);
    return problems;
}

ResourceEstimate MmaSyncFamily::resources(const Strategy& s, const Task& task,
                                          const DeviceInfo& device) const {
    const MmaSyncConfig c = MmaSyncConfig::fromStrategy(s);
    ResourceEstimate r =
        estimateResources(s.warps * 32, c.smemBytes(), c.registerEstimate(), device);
    r.workspaceBytes = m_splitK ? qint64(s.splitK) * task.m * task.n * 4 : 0;
    return r;
}

Strategy MmaSyncFamily::defaultStrategy(const Task& task, const DeviceInfo& device) const {
    Strategy s;
    s.family = id();
    s.blockK = 32;
    s.stages = 4;
    s.smemLayout = MmaSyncConfig::layoutName(MmaSyncConfig::Layout::Swizzled);
    s.raster = MmaSyncConfig::rasterName(MmaSyncConfig::Raster::Grouped);
    s.groupSize = 8;
    const int sms = std::max(device.smCount, 1);
    const auto tiles = [&task](int bm, int bn) {
        return ((task.m + bm - 1) / bm) * ((task.n + bn - 1) / bn);
    };
    if (m_splitK) {
        s.blockM = 128;
        s.blockN = 128;
        s.warpM = 64;
        s.warpN = 64;
        const qint64 outputTiles = tiles(128, 128);
        const qint64 kTiles = (task.k + 31) / 32;
        // Enough splits for two blocks per SM, but each split keeps at least 8 k-tiles.
        const qint64 wanted = (2 * sms + outputTiles - 1) / outputTiles;
        s.splitK = int(std::clamp<qint64>(std::min(wanted, kTiles / 8), 2, 16));
        s.rationale = u"Split-K start: %1 output tiles of 128x128 cannot fill %2 SMs, so K "
                      "(%3) is split %4 ways into fp32 partials summed by a second kernel; 4 "
                      "warps of 64x64 on mma.sync m16n8k16, 4-stage cp.async pipeline, swizzled "
                      "shared memory."_s.arg(outputTiles)
                          .arg(sms)
                          .arg(task.k)
                          .arg(s.splitK);
    } else if (tiles(128, 256) >= 2 * sms) {
        s.blockM = 128;
        s.blockN = 256;
        s.warpM = 64;
        s.warpN = 64;
        s.rationale = u"Large output (%1 tiles of 128x256 for %2 SMs): 8 warps of 64x64 give the "
                      "most reuse per byte of shared memory; mma.sync m16n8k16 fed by ldmatrix "
                      "from XOR-swizzled tiles, a 4-stage cp.async pipeline with BK=32, grouped "
                      "raster for L2 reuse."_s.arg(tiles(128, 256))
                          .arg(sms);
    } else if (tiles(128, 128) >= sms) {
        s.blockM = 128;
        s.blockN = 128;
        s.warpM = 64;
        s.warpN = 64;
        s.rationale = u"Medium output (%1 tiles of 128x128 for %2 SMs): 4 warps of 64x64, "
                      "mma.sync m16n8k16 with ldmatrix from swizzled tiles, 4-stage cp.async "
                      "pipeline."_s.arg(tiles(128, 128))
                          .arg(sms);
    } else {
        s.blockM = 64;
        s.blockN = 64;
        s.warpM = 32;
        s.warpN = 32;
        s.rationale = u"Small output (%1 tiles of 128x128 for %2 SMs): 64x64 tiles with 4 warps of "
                      "32x32 to put more blocks in flight."_s.arg(tiles(128, 128))
                          .arg(sms);
    }
    normalize(s);
    return s;
}

QString MmaSyncFamily::generate(const Strategy& s, const Task& task) const {
    using namespace gemmcodegen;
    const MmaSyncConfig c = MmaSyncConfig::fromStrategy(s);
    QStringList header{
        u"Kevolve built-in kernel, family %1 (generated; edit freely)."_s.arg(id()),
        u"Task: %1 (%2)."_s.arg(task.name, task.summary()),
        u"Strategy: block %1x%2x%3, %4 warps of %5x%6, mma.sync m16n8k16 %7 -> f32,"_s.arg(s.blockM)
            .arg(s.blockN)
            .arg(s.blockK)
            .arg(s.warps)
            .arg(s.warpM)
            .arg(s.warpN)
            .arg(task.a),
        u"  %1-stage cp.async pipeline, shared memory %2,"_s.arg(s.stages).arg(
            c.padded() ? u"rows padded by 16 bytes"_s : u"128-byte XOR swizzle"_s),
        u"  %1 raster%2, split-K %3, C written as %4."_s.arg(s.raster)
            .arg(c.grouped() ? u" (group %1)"_s.arg(s.groupSize) : QString())
            .arg(s.splitK)
            .arg(task.c),
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
        .set(u"BLOCK_M"_s, s.blockM)
        .set(u"BLOCK_N"_s, s.blockN)
        .set(u"BLOCK_K"_s, s.blockK)
        .set(u"WARP_M"_s, s.warpM)
        .set(u"WARP_N"_s, s.warpN)
        .set(u"STAGES"_s, s.stages)
        .flag(u"GROUPED"_s, c.grouped())
        .set(u"GROUP_M"_s, s.groupSize)
        .flag(u"SPLIT_K"_s, m_splitK)
        .set(u"SPLIT"_s, s.splitK)
        .flag(u"PADDED"_s, c.padded())
        // The swizzle's row arithmetic: 128-byte lines of A hold 128 / (BLOCK_K * 2) rows.
        .set(u"A_ROWS_PER_LINE"_s, 128 / (s.blockK * 2))
        .set(u"A_ROW_BYTES"_s, s.blockK * 2)
        .flag(u"BLOCK_K64"_s, s.blockK == 64)
        .set(u"MMA_TYPE"_s, task.a)
        .set(u"OUTPUT_HELPERS"_s, outputHelpers(task.c))
        .set(u"CHECKS"_s, launchChecks(task));
    return cudatemplates::render(u"mmasync/mma_sync.cu"_s, values);
}

} // namespace kev
