#include "builtin/family_wgmma.h"

#include "builtin/cudatemplates.h"
#include "builtin/gemmcodegen.h"
#include "core/jsonschema.h"
#include "core/task.h"

#include <algorithm>

using namespace Qt::StringLiterals;

namespace kev {

namespace {

constexpr int kBlockK = kWgmmaBlockK;
constexpr int kProducerRegs = 40;
// sm_90's opt-in shared memory per block, the only devices this family runs on (the kernel's
// static_assert; constraints use the device's own figure).
constexpr qint64 kSm90SmemPerBlock = 232448;
constexpr qint64 kBarrierBytes = 16;    // one full and one empty mbarrier per stage, 8 bytes each
constexpr qint64 kCBoxBytes = 64 * 128; // one TMA-store staging box: 64 rows of 128 bytes
// Registers a consumer thread needs besides its accumulators (addresses, loop state, epilogue).
constexpr int kConsumerOverheadRegs = 48;
// ptxas allocates the whole kernel within the launch bounds' cap (65536 / threads, a multiple of
// 8, at most 255), whatever setmaxnreg grants at run time: 128x256 with two consumers (128
// accumulators) compiles to exactly 168 registers without a spill, so a consumer's other values
// fit in 40 there.
constexpr int kCompiledOverheadRegs = 40;

int consumerRegs(int consumerWarpgroups) {
    // The register file (64 K) less the producer's 128 x kProducerRegs, shared by the consumers'
    // threads and rounded down to a multiple of 8: 240, 232, 152.
    const int perThread = (65536 - 128 * kProducerRegs) / (128 * consumerWarpgroups);
    return std::min(240, perThread / 8 * 8);
}

int launchBoundsCap(int threads) {
    return std::min(255, 65536 / threads / 8 * 8);
}

// `count` items (item(i) for i = 0 .. count - 1) joined by ", ", `perLine` a line, each line
// `open` + items + `close`; lines but the last end with `more` after their items.
template <typename Item>
QString wrappedList(int count, int perLine, const QString& open, const QString& more,
                    const QString& close, Item item) {
    QStringList lines;
    for (int first = 0; first < count; first += perLine) {
        QStringList items;
        for (int i = first; i < std::min(count, first + perLine); ++i)
            items << item(i);
        lines << open + items.join(QStringLiteral(", ")) +
                     (first + perLine >= count ? QString() : more) + close;
    }
    return lines.join(u'\n');
}

// The wgmma instruction's accumulator operands for gemm.cu's wgmmaTile: "%0, %1, ..." and
// "+f"(d[0]), ... for N / 2 registers, in lines the width of the hand-written ones.
QString accumulatorOperands(int count) {
    return wrappedList(count, 8, QStringLiteral("                 \""), QStringLiteral(", "),
                       QStringLiteral("\""),
                       [](int i) -> QString { return u'%' + QString::number(i); });
}

QString accumulatorBindings(int count) {
    return wrappedList(count, 6, QStringLiteral("                   "), QStringLiteral(","),
                       QString(), [](int i) -> QString {
                           return QStringLiteral("\"+f\"(d[") + QString::number(i) +
                                  QStringLiteral("])");
                       });
}

bool isHalfType(const QString& dtype) {
    return dtype == QLatin1String("f16") || dtype == QLatin1String("bf16");
}

// " of 2x4-CTA clusters multicasting B and A" for the generated file's header.
QString clusterText(const WgmmaParams& params) {
    if (params.clusterM * params.clusterN == 1)
        return QString();
    const QString shared = params.clusterM > 1 && params.clusterN > 1 ? u"B and A"_s
                           : params.clusterM > 1                      ? u"B"_s
                                                                      : u"A"_s;
    return u" of %1x%2-CTA clusters multicasting %3%4"_s.arg(params.clusterM)
        .arg(params.clusterN)
        .arg(shared)
        .arg(params.bSlabs > 1 ? u" (each CTA half of its k-rows)"_s : QString());
}

// "clusterM: M = 160 fits in fewer tile rows of 160 than the 2 CTAs of a cluster stacked along M
// (one would have no rows)": a cluster with a CTA past the matrix.
QString idleClusterCta(const QString& knob, qint64 extent, const QString& tiles, int block,
                       int cluster, const QString& arrangement, const QString& owned) {
    return knob + QString::number(extent) + u" fits in fewer "_s + tiles + u" of "_s +
           QString::number(block) + u" than the "_s + QString::number(cluster) +
           u" CTAs of a cluster "_s + arrangement + u" (one would have no "_s + owned + u')';
}

QString tensorMapType(const QString& dtype) {
    return dtype == QLatin1String("bf16") ? QStringLiteral("CU_TENSOR_MAP_DATA_TYPE_BFLOAT16")
                                          : QStringLiteral("CU_TENSOR_MAP_DATA_TYPE_FLOAT16");
}

} // namespace

int wgmmaCBoxColumns(const QString& dtypeC) {
    return dtypeC == QLatin1String("f32") ? 32 : 64;
}

WgmmaParams WgmmaParams::fromStrategy(const Strategy& strategy) {
    WgmmaParams p;
    p.blockM = strategy.blockM;
    p.blockN = strategy.blockN;
    p.stages = strategy.stages;
    p.consumerWarpgroups = strategy.consumerWarpgroups;
    p.groupedRaster = strategy.raster == QLatin1String("grouped");
    p.groupM = strategy.groupSize;
    p.clusterM = strategy.clusterM;
    p.clusterN = strategy.clusterN;
    p.tmaStore = strategy.epilogue == QLatin1String("tma_store");
    p.pingPong =
        strategy.params.value(QLatin1String("schedule")).toString() == QLatin1String("pingpong");
    p.splitK = strategy.splitK;
    p.splitInCluster =
        strategy.params.value(QLatin1String("split_reduce")).toString() == QLatin1String("cluster");
    p.bSlabs = strategy.params.value(QLatin1String("b_slabs")).toInt(1);
    const int swapRows = strategy.params.value(QLatin1String("swap_rows")).toInt(0);
    if (swapRows > 0) {
        p.swapped = true;
        p.blockM = swapRows;
    }
    return p;
}

void WgmmaParams::applyTo(Strategy& strategy) const {
    strategy.family = QStringLiteral("wgmma_tma");
    strategy.mma = QStringLiteral("wgmma");
    strategy.blockM = blockM;
    strategy.blockN = blockN;
    strategy.blockK = kBlockK;
    strategy.stages = stages;
    strategy.consumerWarpgroups = consumerWarpgroups;
    strategy.warps = 4 * (consumerWarpgroups + 1);
    strategy.warpM = 0;
    strategy.warpN = 0;
    strategy.vectorWidth = 8;
    strategy.smemLayout = QStringLiteral("swizzled");
    strategy.smemPaddingBytes = 0;
    strategy.swizzleBytes = 128;
    strategy.splitK = splitK;
    strategy.clusterM = clusterM;
    strategy.clusterN = clusterN;
    strategy.raster = groupedRaster ? QStringLiteral("grouped") : QStringLiteral("row");
    strategy.groupSize = groupedRaster ? groupM : 1;
    strategy.epilogue = tmaStore ? QStringLiteral("tma_store") : QStringLiteral("direct");
    strategy.params.insert(QStringLiteral("schedule"),
                           pingPong ? QStringLiteral("pingpong") : QStringLiteral("cooperative"));
    strategy.params.insert(QStringLiteral("swap_rows"), swapped ? blockM : 0);
    strategy.params.insert(QStringLiteral("split_reduce"),
                           splitInCluster ? QStringLiteral("cluster") : QStringLiteral("kernel"));
    if (bSlabs != 1)
        strategy.params.insert(QStringLiteral("b_slabs"), bSlabs);
}

qint64 WgmmaParams::stageBytes() const {
    // B is loaded in whole 64-column chunks (templates/wgmma/gemm.cu), however wide the tile.
    const qint64 loadedN = 64 * ((qint64(blockN) + 63) / 64);
    return qint64(aRowsLoaded()) * kBlockK * 2 + qint64(kBlockK) * loadedN * 2;
}

qint64 WgmmaParams::smemBytes() const {
    const qint64 stage = stageBytes();
    const qint64 staging = tmaStore ? qint64(consumerWarpgroups) * 2 * kCBoxBytes : 0;
    const qint64 splitBarriers = splitsInCluster() ? 3 * 8 : 0; // partials ready, read, ring free
    return 1024 + stage * stages + staging + kBarrierBytes * stages + splitBarriers;
}

QStringList wgmmaConstraints(const WgmmaParams& params, const Task& task,
                             const DeviceInfo& device) {
    QStringList problems;
    if (device.ccMajor != 9)
        problems << QStringLiteral("device: wgmma and setmaxnreg need sm_90a, the device is sm_") +
                        QString::number(device.ccMajor) + QString::number(device.ccMinor);
    if (task.op != QLatin1String("gemm"))
        problems << QStringLiteral("task.op: the wgmma family implements gemm, not ") + task.op;
    if (!isHalfType(task.a) || task.b != task.a)
        problems << QStringLiteral("task.dtypes: A and B must both be f16 or both bf16 (A=") +
                        task.a + QStringLiteral(", B=") + task.b + u')';
    if (task.c != QLatin1String("f32") && !isHalfType(task.c))
        problems << QStringLiteral("task.dtypes.C: ") + task.c +
                        QStringLiteral(" is not f32, f16 or bf16");
    if (task.layoutA != QLatin1String("row") || task.layoutB != QLatin1String("row") ||
        task.layoutC != QLatin1String("row"))
        problems << QStringLiteral(
            "task.layout: the wgmma family is written for row-major A, B, C");
    if (task.leadingDimMultiple % 8 != 0)
        problems << QStringLiteral("task.alignment.leading_dim_multiple: TMA needs 16-byte rows "
                                   "(a multiple of 8 elements), the task guarantees ") +
                        QString::number(task.leadingDimMultiple);
    if (params.consumerWarpgroups < 1 || params.consumerWarpgroups > 3) {
        problems << QStringLiteral("consumerWarpgroups: ") +
                        QString::number(params.consumerWarpgroups) +
                        QStringLiteral(" is not 1, 2 or 3");
        return problems;
    }
    const int slices = params.mmaSlicesPerWarpgroup();
    if (params.swapped) {
        // A cluster multicasts the B chunks as in the normal orientation (the loads do not
        // depend on which operand each buffer feeds): cuBLAS's own choice at M = 160 is 80-row
        // swapped tiles in pairs (nvjet_sm90_hsh_128x80_64x8_1x2).
        if (params.pingPong || params.tmaStore)
            problems << QStringLiteral("swap_rows: swapped operands need the cooperative "
                                       "schedule and the direct epilogue");
        if (params.blockM < 16 || params.blockM > 256 || params.blockM % 16 != 0)
            problems << QStringLiteral("swap_rows: ") + QString::number(params.blockM) +
                            QStringLiteral(" is not a multiple of 16 from 16 to 256 (the wgmma N "
                                           "of swapped operands)");
        if (params.blockN % (64 * params.consumerWarpgroups) != 0 || slices < 1 || slices > 2)
            problems << QStringLiteral("blockN: ") + QString::number(params.blockN) +
                            QStringLiteral(" must be one or two 64-column slices per consumer "
                                           "warpgroup with swapped operands (") +
                            QString::number(params.consumerWarpgroups) +
                            QStringLiteral(" consumer warpgroup(s))");
    } else if (params.blockN < 64 || params.blockN > 256 || params.blockN % 16 != 0)
        problems << QStringLiteral("blockN: ") + QString::number(params.blockN) +
                        QStringLiteral(" is not a multiple of 16 from 64 to 256 (the wgmma N)");
    else if (params.tmaStore && params.blockN % wgmmaCBoxColumns(task.c) != 0)
        problems << QStringLiteral("blockN: the TMA-store epilogue writes C in boxes of ") +
                        QString::number(wgmmaCBoxColumns(task.c)) +
                        QStringLiteral(" columns, which do not divide ") +
                        QString::number(params.blockN) +
                        QStringLiteral(" (use the direct epilogue)");
    if (params.splitK < 1 || params.splitK > 16)
        problems << QStringLiteral("splitK: ") + QString::number(params.splitK) +
                        QStringLiteral(" is outside 1..16");
    else if (params.splitK > 1 && (params.pingPong || params.tmaStore))
        problems << QStringLiteral("splitK: ") + QString::number(params.splitK) +
                        QStringLiteral(" needs the cooperative schedule and the direct epilogue "
                                       "(the partials are stored from registers)");
    if (params.splitsInCluster()) {
        const qint64 stage = params.stageBytes();
        const qint64 tile = 4 * qint64(params.blockM) * params.blockN;
        if (params.splitK > 8)
            problems << QStringLiteral("split_reduce: cluster puts a tile's splitK CTAs in one "
                                       "cluster, at most 8, and splitK is ") +
                            QString::number(params.splitK);
        if (params.clusterM * params.clusterN > 1)
            problems << QStringLiteral("split_reduce: a cluster of splits shares no operand, so "
                                       "it cannot also multicast (clusterM=") +
                            QString::number(params.clusterM) + QStringLiteral(", clusterN=") +
                            QString::number(params.clusterN) + QStringLiteral("; use 1x1)");
        if (tile > qint64(params.stages) * stage)
            problems << QStringLiteral("split_reduce: the fp32 partial tile (") +
                            QString::number(tile) +
                            QStringLiteral(
                                " B) does not fit in the stage ring it is summed from (") +
                            QString::number(params.stages) + QStringLiteral(" stages of ") +
                            QString::number(stage) +
                            QStringLiteral(" B); more stages or split_reduce kernel");
    }
    const int tileGroups = params.pingPong ? 1 : params.consumerWarpgroups;
    if (!params.swapped && (params.blockM % (64 * tileGroups) != 0 || slices < 1 || slices > 2))
        problems << QStringLiteral("blockM: ") + QString::number(params.blockM) +
                        QStringLiteral(" must be 64 or 128 rows per consumer warpgroup (") +
                        QString::number(tileGroups) +
                        QStringLiteral(" consumer warpgroup(s) per tile)");
    if (params.pingPong && params.consumerWarpgroups != 2)
        problems << QStringLiteral("schedule: pingpong alternates two consumer warpgroups, "
                                   "consumerWarpgroups is ") +
                        QString::number(params.consumerWarpgroups);
    if (params.stages < 3 || params.stages > 16)
        problems << QStringLiteral("stages: ") + QString::number(params.stages) +
                        QStringLiteral(" is outside 3..16");
    if (params.clusterM != 1 && params.clusterM != 2)
        problems << QStringLiteral("clusterM: ") + QString::number(params.clusterM) +
                        QStringLiteral(" is not 1 or 2");
    else if (params.clusterM == 2 && params.bSlabs == 1 && params.blockN % 128 != 0)
        problems << QStringLiteral("clusterM: a 2-CTA cluster splits the B tile's 64-column "
                                   "chunks between its CTAs, so blockN must be 128 or 256, or "
                                   "each chunk in two k-slabs (params.b_slabs 2), not ") +
                        QString::number(params.blockN);
    else if (params.clusterM > 1 && task.m <= qint64(params.blockM) * (params.clusterM - 1))
        // Correct but wasteful: the cluster's CTAs stack along M, and the last would have no
        // rows (a session at M = 160 spent a step on 160-row swapped tiles in pairs: 0.56x).
        problems << idleClusterCta(u"clusterM: M = "_s, task.m, u"tile rows"_s, params.blockM,
                                   params.clusterM, u"stacked along M"_s, u"rows"_s);
    if (params.bSlabs != 1 && (params.bSlabs != 2 || params.clusterM != 2))
        problems << QStringLiteral("b_slabs: ") + QString::number(params.bSlabs) +
                        QStringLiteral(" slabs of B's k-rows: one for each CTA of a 2-CTA "
                                       "cluster along M (b_slabs 2, clusterM 2); 1 otherwise");
    if (params.clusterN != 1 && params.clusterN != 2 && params.clusterN != 4)
        problems << QStringLiteral("clusterN: ") + QString::number(params.clusterN) +
                        QStringLiteral(" is not 1, 2 or 4");
    else if (params.clusterN > 1 && task.n <= qint64(params.blockN) * (params.clusterN - 1))
        problems << idleClusterCta(u"clusterN: N = "_s, task.n, u"tile columns"_s, params.blockN,
                                   params.clusterN, u"side by side along N"_s, u"columns"_s);
    if (params.groupedRaster && (params.groupM < 1 || params.groupM > 64))
        problems << QStringLiteral("groupSize: ") + QString::number(params.groupM) +
                        QStringLiteral(" is outside 1..64");
    // Two register limits: what setmaxnreg gives a consumer at run time, and the launch bounds'
    // cap within which ptxas allocates the whole kernel (the tighter one is named).
    const int regLimit = consumerRegs(params.consumerWarpgroups);
    const int cap = launchBoundsCap(params.threads());
    const int accumulators = params.accumulatorsPerThread();
    const bool overSetmaxnreg = accumulators + kConsumerOverheadRegs > regLimit;
    if (overSetmaxnreg || accumulators + kCompiledOverheadRegs > cap) {
        const QString limit =
            overSetmaxnreg
                ? QString(QString::number(regLimit) +
                          QStringLiteral(" that setmaxnreg gives a consumer"))
                : QString(QString::number(cap) + QStringLiteral(" registers ptxas may use at ") +
                          QString::number(params.threads()) + QStringLiteral(" threads per block"));
        problems << QStringLiteral("registers: ") + QString::number(accumulators) +
                        QStringLiteral(" fp32 accumulators per consumer thread (blockM=") +
                        QString::number(params.blockM) + QStringLiteral(", blockN=") +
                        QString::number(params.blockN) + QStringLiteral(", consumerWarpgroups=") +
                        QString::number(params.consumerWarpgroups) +
                        QStringLiteral(") plus about ") +
                        QString::number(overSetmaxnreg ? kConsumerOverheadRegs
                                                       : kCompiledOverheadRegs) +
                        QStringLiteral(" others exceed the ") + limit;
    }
    if (params.smemBytes() > device.smemPerBlockOptin)
        problems << QStringLiteral("shared memory ") + QString::number(params.smemBytes()) +
                        QStringLiteral(" B per block exceeds the device's opt-in limit ") +
                        QString::number(device.smemPerBlockOptin) + QStringLiteral(" B (blockM=") +
                        QString::number(params.blockM) + QStringLiteral(", blockN=") +
                        QString::number(params.blockN) + QStringLiteral(", blockK=64, stages=") +
                        QString::number(params.stages) +
                        (params.tmaStore ? QStringLiteral(", tma_store staging") : QString()) +
                        u')';
    return problems;
}

QString generateWgmmaGemm(const WgmmaParams& params, const Task& task) {
    using gemmcodegen::abiDtype;
    using gemmcodegen::cudaType;
    TemplateValues values;
    values.flag(u"BF16"_s, task.a == u"bf16" || task.c == u"bf16")
        .set(u"IN_T"_s, cudaType(task.a))
        .set(u"OUT_T"_s, cudaType(task.c))
        .set(u"BLOCK_M"_s, params.blockM)
        .set(u"BLOCK_N"_s, params.blockN)
        .set(u"STAGES"_s, params.stages)
        .set(u"CONSUMERS"_s, params.consumerWarpgroups)
        .set(u"SLICES"_s, params.mmaSlicesPerWarpgroup())
        .flag(u"GROUPED"_s, params.groupedRaster)
        .set(u"GROUP_M"_s, params.groupM)
        .set(u"CLUSTER_M"_s, params.clusterM)
        .set(u"CLUSTER_N"_s, params.clusterN)
        .set(u"A_SLICE_ROWS"_s, params.aSliceRows())
        .set(u"PING_PONG"_s, params.pingPong ? u"true"_s : u"false"_s)
        .set(u"TMA_STORE"_s, params.tmaStore ? u"true"_s : u"false"_s)
        .set(u"TMAP_C_TYPE"_s,
             task.c == u"f32" ? u"CU_TENSOR_MAP_DATA_TYPE_FLOAT32"_s : tensorMapType(task.c))
        .set(u"PRODUCER_REGS"_s, kProducerRegs)
        .set(u"CONSUMER_REGS"_s, consumerRegs(params.consumerWarpgroups))
        .set(u"SMEM_LIMIT"_s, kSm90SmemPerBlock)
        .set(u"SWAP"_s, params.swapped ? u"true"_s : u"false"_s)
        .set(u"MMA_N"_s, params.mmaN())
        .set(u"ACC"_s, params.mmaN() / 2)
        .set(u"ACC_OPERANDS"_s, accumulatorOperands(params.mmaN() / 2))
        .set(u"ACC_BINDINGS"_s, accumulatorBindings(params.mmaN() / 2))
        .set(u"DESC_A"_s, params.mmaN() / 2)
        .set(u"DESC_B"_s, params.mmaN() / 2 + 1)
        .set(u"SCALE_D"_s, params.mmaN() / 2 + 2)
        .set(u"TRANS_A"_s, params.swapped ? 1 : 0)
        .set(u"TRANS_B"_s, params.swapped ? 0 : 1)
        .set(u"OPERAND_LAYOUT"_s, params.swapped ? u"A MN-major (a B chunk), B K-major (A rows)"_s
                                                 : u"A K-major, B N-major"_s)
        .set(u"MMA_TYPE"_s, task.a == u"bf16" ? u"bf16"_s : u"f16"_s)
        .set(u"SPLIT"_s, params.splitK)
        .flag(u"SPLIT_K"_s, params.splitK > 1)
        .flag(u"SPLIT_KERNEL"_s, params.splitK > 1 && !params.splitInCluster)
        .flag(u"SPLIT_CLUSTER"_s, params.splitsInCluster())
        .set(u"SPLIT_CLUSTER_SIZE"_s, params.splitsInCluster() ? params.splitK : 1)
        .flag(u"B_SLABBED"_s, params.bSlabs > 1)
        .set(u"B_SLABS"_s, params.bSlabs)
        // Stores two adjacent columns of C, applying alpha and beta, to global memory (direct
        // epilogue) or to a staging buffer (TMA-store epilogue); one file per type of C.
        .set(u"STORE_PAIR"_s,
             cudatemplates::render(u"wgmma/store_pair_%1.cu"_s.arg(task.c), TemplateValues()))
        .set(u"TMAP_TYPE"_s, tensorMapType(task.a))
        .set(u"ABI_A"_s, abiDtype(task.a))
        .set(u"ABI_B"_s, abiDtype(task.b))
        .set(u"ABI_C"_s, abiDtype(task.c));
    values.set(u"WGMMA_TILE"_s, cudatemplates::render(u"wgmma/wgmma_tile.cu"_s, values))
        .set(u"SWAPPED_EPILOGUE"_s,
             cudatemplates::render(u"wgmma/swapped_epilogue.cu"_s, TemplateValues()))
        .set(u"EPILOGUE"_s, cudatemplates::render(u"wgmma/epilogue.cu"_s, TemplateValues()))
        .set(u"LAUNCH"_s, cudatemplates::render(u"wgmma/launch.cu"_s, values))
        .set(u"SPLIT_K_CODE"_s,
             params.splitK == 1 ? QString()
             : params.splitInCluster
                 ? cudatemplates::render(u"wgmma/splitk_cluster.cu"_s, TemplateValues())
                 : cudatemplates::render(u"wgmma/splitk.cu"_s, values));
    const QString header =
        QStringLiteral("// expect: ok\n// task: ") + task.name +
        QStringLiteral(
            ".json\n//\n// Generated by Kevolve's built-in backend, family wgmma_tma: ") +
        QString::number(params.blockM) + u'x' + QString::number(params.blockN) +
        QStringLiteral("x64 tile, ") + QString::number(params.stages) +
        QStringLiteral(" stages, ") + QString::number(params.consumerWarpgroups) +
        QStringLiteral(" consumer warpgroup(s) ") +
        (params.pingPong ? QStringLiteral("in ping-pong (one tile each)")
                         : QStringLiteral("cooperative")) +
        QStringLiteral(" of\n// ") + QString::number(params.mmaSlicesPerWarpgroup()) +
        QStringLiteral(" m64n") + QString::number(params.mmaN()) + QStringLiteral("k16 slice(s)") +
        (params.swapped ? QStringLiteral(" on swapped operands (C transposed: its rows are the "
                                         "wgmma N)")
                        : QString()) +
        QStringLiteral(", ") +
        (params.groupedRaster ? QStringLiteral("grouped raster (") +
                                    QString::number(params.groupM) + QStringLiteral(" tile rows)")
                              : QStringLiteral("row raster")) +
        QStringLiteral(",\n// balanced persistent grid") +
        (params.splitsInCluster()
             ? QStringLiteral(", split-K ") + QString::number(params.splitK) +
                   QStringLiteral(" in clusters of the splits (fp32 partials summed in split "
                                  "order through distributed shared memory)")
         : params.splitK > 1 ? QStringLiteral(", split-K ") + QString::number(params.splitK) +
                                   QStringLiteral(" (fp32 partials summed in split order)")
                             : QString()) +
        clusterText(params) + QStringLiteral("; ") + task.a + u'*' + task.b + QStringLiteral("->") +
        task.c +
        QStringLiteral(", fp32 accumulate; TMA loads with 128-byte swizzle, mbarrier "
                       "pipeline,\n// producer/consumer warpgroups with setmaxnreg, ") +
        (params.tmaStore ? QStringLiteral("epilogue through shared memory and TMA stores.\n")
                         : QStringLiteral("bounded epilogue from registers.\n"));
    return header + cudatemplates::render(u"wgmma/gemm.cu"_s, values);
}

} // namespace kev

namespace kev {

namespace {

class WgmmaTmaFamily : public KernelFamily {
public:
    QString id() const override { return QStringLiteral("wgmma_tma"); }

    QString description() const override {
        return QStringLiteral(
            "Hopper (sm_90a) GEMM on wgmma.mma_async: TMA loads of A and B tiles (128-byte "
            "swizzle, zero fill out of bounds) into a multi-stage shared-memory ring completing on "
            "mbarriers; a producer warpgroup and one to three consumer warpgroups (setmaxnreg "
            "moves registers to the consumers), each issuing m64nNk16 wgmma (N any multiple of "
            "16 from 64 to 256) from shared memory with fp32 accumulators in registers, either "
            "splitting each tile by rows (cooperative) or taking whole tiles in turns "
            "(ping-pong, two consumers); split-K with a deterministic reduction; a persistent grid "
            "of at most one CTA per SM "
            "walking output tiles in row or grouped order, as few CTAs as finish in the same "
            "number of rounds; an epilogue through shared memory and TMA stores or from "
            "registers. Its "
            "bottlenecks are the tensor pipe (tile shape, wgmma issue), barrier waits (too few "
            "stages), DRAM/L2 (raster order) and the epilogue (C bytes per tile).");
    }

    bool supports(const Task& task, const DeviceInfo& device) const override {
        return device.ccMajor == 9 && device.ccMinor == 0 && task.op == QLatin1String("gemm") &&
               isHalfType(task.a) && task.b == task.a &&
               (task.c == QLatin1String("f32") || isHalfType(task.c)) &&
               task.layoutA == QLatin1String("row") && task.layoutB == QLatin1String("row") &&
               task.layoutC == QLatin1String("row") && task.leadingDimMultiple % 8 == 0;
    }

    QVector<ParameterSpec> parameters() const override {
        return {
            fieldParameter(QStringLiteral("blockM"),
                           QStringLiteral("output tile rows: 64 or 128 per consumer warpgroup "
                                          "(192: three consumer warpgroups of 64)"),
                           QJsonArray{64, 128, 192, 256}, &Strategy::blockM),
            fieldParameter(QStringLiteral("blockN"),
                           QStringLiteral("output tile columns, the wgmma N (a width that is not "
                                          "a multiple of 64 fits the tile count to the SMs)"),
                           QJsonArray{64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256},
                           &Strategy::blockN),
            fieldParameter(QStringLiteral("stages"),
                           QStringLiteral("depth of the TMA shared-memory ring"),
                           QJsonArray{3, 4, 5, 6, 7, 8, 10, 12, 16}, &Strategy::stages),
            fieldParameter(QStringLiteral("consumerWarpgroups"),
                           QStringLiteral("warpgroups issuing wgmma (one more produces)"),
                           QJsonArray{1, 2, 3}, &Strategy::consumerWarpgroups),
            fieldParameter(QStringLiteral("raster"),
                           QStringLiteral("order in which the persistent CTAs walk output tiles"),
                           QJsonArray{QStringLiteral("row"), QStringLiteral("grouped")},
                           &Strategy::raster),
            fieldParameter(QStringLiteral("groupSize"),
                           QStringLiteral("tile rows per group of the grouped raster"),
                           QJsonArray{1, 2, 4, 8, 16}, &Strategy::groupSize),
            // clusterM 2 runs within 1% of clusterM 1: the kernel is tensor-bound, not L2-bound,
            // so halving B's L2 traffic buys little (docs/benchmarks.md, "wgmma: TMA-store
            // epilogue and clusters").
            fieldParameter(QStringLiteral("clusterM"),
                           QStringLiteral("CTAs per cluster along M sharing the B tile through "
                                          "TMA multicast"),
                           QJsonArray{1, 2}, &Strategy::clusterM),
            // cuBLAS's choice at M = 96 and 224 (nvjet ..._4x1): the small A tile, which every
            // column tile reads, multicast to four column neighbours.
            fieldParameter(QStringLiteral("clusterN"),
                           QStringLiteral("CTAs per cluster along N sharing the A tile through "
                                          "TMA multicast (each loads a slice of its rows)"),
                           QJsonArray{1, 2, 4}, &Strategy::clusterN),
            paramsParameter(QStringLiteral("schedule"),
                            QStringLiteral("consumer warpgroups splitting each tile "
                                           "(cooperative) or taking whole tiles in turns so "
                                           "that epilogues overlap main loops (pingpong)"),
                            QJsonArray{QStringLiteral("cooperative"), QStringLiteral("pingpong")}),
            fieldParameter(QStringLiteral("splitK"),
                           QStringLiteral("blocks sharing one output tile along K (fp32 partials "
                                          "in the workspace, summed in split order): fills the "
                                          "SMs when the output has fewer tiles than SMs"),
                           QJsonArray{1, 2, 3, 4, 6, 8, 12, 16}, &Strategy::splitK),
            paramsParameter(QStringLiteral("split_reduce"),
                            QStringLiteral("where split-K's partials are summed: a second kernel "
                                           "over a workspace (kernel), or inside a cluster of the "
                                           "tile's splits through distributed shared memory "
                                           "(cluster: no workspace, no second launch)"),
                            QJsonArray{QStringLiteral("kernel"), QStringLiteral("cluster")}),
            paramsParameter(QStringLiteral("swap_rows"),
                            QStringLiteral("swapped operands (C computed transposed) with this "
                                           "many rows of C per tile as the wgmma N, 0 for the "
                                           "normal orientation: no 64-row padding at small M"),
                            QJsonArray{0, 16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208,
                                       224, 240, 256}),
            fieldParameter(QStringLiteral("epilogue"),
                           QStringLiteral("direct register stores, or staging through shared "
                                          "memory and asynchronous TMA bulk stores"),
                           QJsonArray{QStringLiteral("direct"), QStringLiteral("tma_store")},
                           &Strategy::epilogue),
        };
    }

    QStringList constraints(const Strategy& strategy, const Task& task,
                            const DeviceInfo& device) const override {
        QStringList problems = wgmmaConstraints(WgmmaParams::fromStrategy(strategy), task, device);
        if (strategy.blockK != kBlockK)
            problems << QStringLiteral("blockK: ") + QString::number(strategy.blockK) +
                            QStringLiteral(" is not 64 (one 128-byte swizzle row)");
        if (strategy.epilogue != QLatin1String("direct") &&
            strategy.epilogue != QLatin1String("tma_store"))
            problems << QStringLiteral("epilogue: ") + strategy.epilogue +
                            QStringLiteral(" is not direct or tma_store");
        const QJsonValue reduce = strategy.params.value(QLatin1String("split_reduce"));
        if (!reduce.isUndefined() && reduce != QJsonValue(QStringLiteral("kernel")) &&
            reduce != QJsonValue(QStringLiteral("cluster")))
            problems << QStringLiteral("params.split_reduce: ") + jsonBrief(reduce) +
                            QStringLiteral(" is not \"kernel\" or \"cluster\"");
        const QJsonValue slabs = strategy.params.value(QLatin1String("b_slabs"));
        if (!slabs.isUndefined() && slabs != QJsonValue(1) && slabs != QJsonValue(2))
            problems << QStringLiteral("params.b_slabs: ") + jsonBrief(slabs) +
                            QStringLiteral(" is not 1 or 2");
        // params.swap_rows as written (fromStrategy reads it as an integer): absent or 0 is the
        // normal orientation, else the swapped tile's rows, which block_m must repeat.
        const QJsonValue swap = strategy.params.value(QLatin1String("swap_rows"));
        if (!swap.isUndefined()) {
            const double rows = swap.toDouble(-1.0);
            if (!swap.isDouble() || rows != double(qint64(rows)) || rows < 0)
                problems << QStringLiteral("params.swap_rows: ") + jsonBrief(swap) +
                                QStringLiteral(" is not 0 (normal operands) or a row count");
            else if (rows > 0 && strategy.blockM != int(rows))
                problems << QStringLiteral("block_m: ") + QString::number(strategy.blockM) +
                                QStringLiteral(" differs from params.swap_rows ") +
                                QString::number(int(rows)) +
                                QStringLiteral(" (with swapped operands the tile's rows are "
                                               "params.swap_rows)");
        }
        return problems;
    }

    ResourceEstimate resources(const Strategy& strategy, const Task& task,
                               const DeviceInfo& device) const override {
        const WgmmaParams p = WgmmaParams::fromStrategy(strategy);
        ResourceEstimate r;
        r.threadsPerBlock = p.threads();
        r.smemBytesPerBlock = p.smemBytes();
        r.registersPerThread = p.accumulatorsPerThread() + kConsumerOverheadRegs;
        r.blocksPerSm = wgmmaConstraints(p, task, device).isEmpty() ? 1 : 0;
        r.workspaceBytes = p.workspaceBytes(task.m, task.n);
        return r;
    }

    Strategy defaultStrategy(const Task& task, const DeviceInfo& device) const override {
        if (task.m <= kSmallMWgmmaLimit) {
            QString why;
            Strategy s;
            smallMWgmmaParams(task, device, &why).applyTo(s);
            s.rationale = why;
            return s;
        }
        WgmmaParams p;
        // Staging C through shared memory lets TMA write whole lines asynchronously, faster than
        // the direct epilogue (docs/benchmarks.md, "wgmma: TMA-store epilogue and clusters").
        p.tmaStore = true;
        const qint64 sms = device.smCount > 0 ? device.smCount : 132;
        const qint64 bigTiles = ((task.m + 127) / 128) * ((task.n + 255) / 256);
        QString why;
        if (bigTiles >= sms) {
            why = QStringLiteral(
                "128x256x64 tiles with two consumer warpgroups (m64n256k16 each) give the "
                "highest operand reuse that fits the register file; 4 stages of 48 KiB fill "
                "shared memory next to 32 KiB of C staging for TMA stores; a grouped raster of 8 "
                "tile rows keeps B panels in L2.");
        } else {
            p.blockN = 128;
            p.stages = 6;
            why = QStringLiteral("The task has fewer 128x256 tiles than SMs, so 128x128 tiles "
                                 "keep more SMs busy; 6 stages of 32 KiB hide load latency.");
        }
        Strategy s;
        p.applyTo(s);
        s.rationale = why;
        return s;
    }

    // The generic steps, but the orientation moves as whole tiles: a swapped tile's rows halve
    // or double (M in two tiles or one; a step of 16 rows below M leaves a second tile row of a
    // few rows, measured 0.37x at M = 160 and 192), or it turns back to the normal orientation,
    // and a normal tile swaps keeping its rows.
    QVector<Strategy> neighbours(const Strategy& strategy) const override {
        QVector<Strategy> out;
        const WgmmaParams p = WgmmaParams::fromStrategy(strategy);
        const QVector<Strategy> steps = KernelFamily::neighbours(strategy);
        for (const Strategy& n : steps) {
            if (!n.rationale.startsWith(QLatin1String("swap_rows ")))
                out << n;
        }
        const auto add = [&](WgmmaParams q, const QString& why) {
            // The ring keeps its depth where the new tile fits, else as deep as fits.
            while (q.stages > 3 && q.smemBytes() > kSm90SmemPerBlock)
                --q.stages;
            Strategy moved = strategy;
            q.applyTo(moved);
            normalize(moved);
            moved.rationale = why;
            out << moved;
        };
        if (p.swapped) {
            if (p.blockM >= 32) {
                WgmmaParams q = p;
                q.blockM = wgmmaRowsOf16(p.blockM / 2);
                add(q, u"swap_rows %1 -> %2 (C's rows in twice the tiles)"_s.arg(p.blockM).arg(
                           q.blockM));
            }
            if (p.blockM * 2 <= 256) {
                WgmmaParams q = p;
                q.blockM = p.blockM * 2;
                add(q, u"swap_rows %1 -> %2 (C's rows in half the tiles)"_s.arg(p.blockM).arg(
                           q.blockM));
            }
            WgmmaParams q = p;
            q.swapped = false;
            q.blockM = std::min(256, (p.blockM + 63) / 64 * 64);
            q.consumerWarpgroups = q.blockM == 192 ? 3 : q.blockM == 64 ? 1 : 2;
            add(q, u"swap_rows %1 -> 0 (the normal orientation, %2 rows)"_s.arg(p.blockM).arg(
                       q.blockM));
        } else if (!p.pingPong && p.clusterM == 1) {
            WgmmaParams q = p;
            q.swapped = true;
            q.tmaStore = false;
            q.consumerWarpgroups = std::min(2, p.consumerWarpgroups);
            q.blockN = 64 * q.consumerWarpgroups;
            add(q,
                u"swap_rows 0 -> %1 (swapped operands: C's rows on the wgmma N)"_s.arg(p.blockM));
        }
        // Split-K one more or one less with the tile width scaled to keep the work units (tiles x
        // splits) and so the rounds: a single knob's step changes the units by a third or more
        // and lands in a second round or on idle SMs (H200, session 13, M = 256, N = 4096,
        // K = 11008: 128x192 split 3 0.94x cuBLAS, 128x128 split 3 and 128x192 split 2 0.76x,
        // 128x128 split 2, this move, 0.98x).
        if (!p.swapped) {
            for (const int split : {p.splitK - 1, p.splitK + 1}) {
                if (split < 1 || split > 16)
                    continue;
                const int width = (p.blockN * split / p.splitK + 8) / 16 * 16;
                if (width < 64 || width > 256 || width == p.blockN)
                    continue;
                WgmmaParams q = p;
                q.splitK = split;
                q.blockN = width;
                add(q,
                    u"split_k %1 -> %2 with block_n %3 -> %4 (the same work units)"_s.arg(p.splitK)
                        .arg(split)
                        .arg(p.blockN)
                        .arg(width));
            }
        }
        return out;
    }

    // The local search's order, from what moved this family's kernels on the H200
    // (docs/benchmarks.md, sessions 10-14): the ring's depth first (one stage moved small-M
    // kernels 3-8%: M = 160, N = 14336, 6 stages 0.909x cuBLAS, 5 stages 0.940x); then clusters,
    // epilogue and split sum (2-4%); then raster, consumer warpgroups, split-K and tile width;
    // last the tile's rows and orientation (a swapped tile's rows halved: 0.54x at M = 96, 0.63x
    // at M = 224; the normal orientation where a swapped tile holds all of M: 0.61-1.02x against
    // the swapped 0.82-1.48x).
    int moveTier(const Strategy& from, const Strategy& to) const override {
        const WgmmaParams a = WgmmaParams::fromStrategy(from);
        const WgmmaParams b = WgmmaParams::fromStrategy(to);
        if (a.swapped != b.swapped || a.blockM != b.blockM)
            return 3;
        if (a.blockN != b.blockN || a.splitK != b.splitK ||
            a.consumerWarpgroups != b.consumerWarpgroups || a.pingPong != b.pingPong ||
            a.groupedRaster != b.groupedRaster || a.groupM != b.groupM)
            return 2;
        return a.stages != b.stages ? 0 : 1;
    }

    void normalize(Strategy& strategy) const override {
        WgmmaParams p = WgmmaParams::fromStrategy(strategy);
        // Three consumer warpgroups exist only as the 192-row cooperative tile (64 rows each): a
        // move of either knob lands on that pair.
        if (!p.swapped && !p.pingPong && p.blockM == 192)
            p.consumerWarpgroups = 3;
        else if (!p.swapped && p.consumerWarpgroups == 3)
            p.blockM = 192;
        // The grouped raster counts cluster units (kGroupUnits = groupM / clusterM, at least 1):
        // with a cluster of 2, groups of 1, 2 and 3 rows are one kernel, measured twice in a
        // session before this (M = 160: 0.921x and 0.932x, the same code).
        if (p.clusterM > 1 && p.groupedRaster)
            p.groupM = std::max(1, p.groupM / p.clusterM) * p.clusterM;
        // Without split-K there is nothing to sum: one kernel, one name for it.
        if (p.splitK == 1)
            p.splitInCluster = false;
        p.applyTo(strategy);
    }

    QString generate(const Strategy& strategy, const Task& task) const override {
        return generateWgmmaGemm(WgmmaParams::fromStrategy(strategy), task);
    }
};

} // namespace

std::unique_ptr<KernelFamily> makeWgmmaTmaFamily() {
    return std::make_unique<WgmmaTmaFamily>();
}

} // namespace kev
