#include "builtin/family_wgmma.h"

#include "builtin/cudatemplates.h"
#include "builtin/gemmcodegen.h"
#include "core/task.h"

using namespace Qt::StringLiterals;

namespace kev {

namespace {

constexpr int kBlockK = 64; // one 128-byte swizzle row of fp16/bf16
constexpr int kProducerRegs = 40;
constexpr qint64 kBarrierBytes = 16;    // one full and one empty mbarrier per stage, 8 bytes each
constexpr qint64 kCBoxBytes = 64 * 128; // one TMA-store staging box: 64 rows of 128 bytes
// Registers a consumer thread needs besides its accumulators (addresses, loop state, epilogue).
constexpr int kConsumerOverheadRegs = 48;

int consumerRegs(int consumerWarpgroups) {
    return consumerWarpgroups == 2 ? 232 : 240;
}

bool isHalfType(const QString& dtype) {
    return dtype == QLatin1String("f16") || dtype == QLatin1String("bf16");
}

QString tensorMapType(const QString& dtype) {
    return dtype == QLatin1String("bf16") ? QStringLiteral("CU_TENSOR_MAP_DATA_TYPE_BFLOAT16")
                                          : QStringLiteral("CU_TENSOR_MAP_DATA_TYPE_FLOAT16");
}

} // namespace

WgmmaParams WgmmaParams::fromStrategy(const Strategy& strategy) {
    WgmmaParams p;
    p.blockM = strategy.blockM;
    p.blockN = strategy.blockN;
    p.stages = strategy.stages;
    p.consumerWarpgroups = strategy.consumerWarpgroups;
    p.groupedRaster = strategy.raster == QLatin1String("grouped");
    p.groupM = strategy.groupSize;
    p.clusterM = strategy.clusterM;
    p.tmaStore = strategy.epilogue == QLatin1String("tma_store");
    p.pingPong =
        strategy.params.value(QLatin1String("schedule")).toString() == QLatin1String("pingpong");
    p.splitK = strategy.splitK;
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
    strategy.clusterN = 1;
    strategy.raster = groupedRaster ? QStringLiteral("grouped") : QStringLiteral("row");
    strategy.groupSize = groupedRaster ? groupM : 1;
    strategy.epilogue = tmaStore ? QStringLiteral("tma_store") : QStringLiteral("direct");
    strategy.params.insert(QStringLiteral("schedule"),
                           pingPong ? QStringLiteral("pingpong") : QStringLiteral("cooperative"));
}

qint64 WgmmaParams::smemBytes() const {
    const qint64 stage = qint64(blockM) * kBlockK * 2 + qint64(kBlockK) * blockN * 2;
    const qint64 staging = tmaStore ? qint64(consumerWarpgroups) * 2 * kCBoxBytes : 0;
    return 1024 + stage * stages + staging + kBarrierBytes * stages;
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
    if (params.consumerWarpgroups != 1 && params.consumerWarpgroups != 2) {
        problems << QStringLiteral("consumerWarpgroups: ") +
                        QString::number(params.consumerWarpgroups) +
                        QStringLiteral(" is not 1 or 2");
        return problems;
    }
    if (params.blockN != 64 && params.blockN != 128 && params.blockN != 192 && params.blockN != 256)
        problems << QStringLiteral("blockN: ") + QString::number(params.blockN) +
                        QStringLiteral(" is not 64, 128, 192 or 256");
    if (params.splitK < 1 || params.splitK > 16)
        problems << QStringLiteral("splitK: ") + QString::number(params.splitK) +
                        QStringLiteral(" is outside 1..16");
    else if (params.splitK > 1 && (params.pingPong || params.tmaStore || params.clusterM != 1))
        problems << QStringLiteral("splitK: ") + QString::number(params.splitK) +
                        QStringLiteral(" needs the cooperative schedule, the direct epilogue and "
                                       "clusterM 1 (the partials are stored from registers)");
    const int tileGroups = params.pingPong ? 1 : params.consumerWarpgroups;
    const int slices = params.mmaSlicesPerWarpgroup();
    if (params.blockM % (64 * tileGroups) != 0 || slices < 1 || slices > 2)
        problems << QStringLiteral("blockM: ") + QString::number(params.blockM) +
                        QStringLiteral(" must be 64 or 128 rows per consumer warpgroup (") +
                        QString::number(tileGroups) +
                        QStringLiteral(" consumer warpgroup(s) per tile)");
    if (params.pingPong && params.consumerWarpgroups != 2)
        problems << QStringLiteral("schedule: pingpong alternates two consumer warpgroups, "
                                   "consumerWarpgroups is ") +
                        QString::number(params.consumerWarpgroups);
    if (params.stages < 3 || params.stages > 8)
        problems << QStringLiteral("stages: ") + QString::number(params.stages) +
                        QStringLiteral(" is outside 3..8");
    if (params.clusterM != 1 && params.clusterM != 2)
        problems << QStringLiteral("clusterM: ") + QString::number(params.clusterM) +
                        QStringLiteral(" is not 1 or 2");
    else if (params.clusterM == 2 && params.blockN % 128 != 0)
        problems << QStringLiteral("clusterM: a 2-CTA cluster splits the B tile's 64-column "
                                   "chunks between its CTAs, so blockN must be 128 or 256, not ") +
                        QString::number(params.blockN);
    if (params.groupedRaster && (params.groupM < 1 || params.groupM > 64))
        problems << QStringLiteral("groupSize: ") + QString::number(params.groupM) +
                        QStringLiteral(" is outside 1..64");
    const int regs = params.accumulatorsPerThread() + kConsumerOverheadRegs;
    const int regLimit = consumerRegs(params.consumerWarpgroups);
    if (regs > regLimit)
        problems << QStringLiteral("registers: ") +
                        QString::number(params.accumulatorsPerThread()) +
                        QStringLiteral(" fp32 accumulators per consumer thread (blockM=") +
                        QString::number(params.blockM) + QStringLiteral(", blockN=") +
                        QString::number(params.blockN) + QStringLiteral(", consumerWarpgroups=") +
                        QString::number(params.consumerWarpgroups) +
                        QStringLiteral(") plus about ") + QString::number(kConsumerOverheadRegs) +
                        QStringLiteral(" others exceed the ") + QString::number(regLimit) +
                        QStringLiteral(" that setmaxnreg gives a consumer");
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
        .set(u"CLUSTER"_s, params.clusterM)
        .set(u"PING_PONG"_s, params.pingPong ? u"true"_s : u"false"_s)
        .set(u"TMA_STORE"_s, params.tmaStore ? u"true"_s : u"false"_s)
        .set(u"TMAP_C_TYPE"_s,
             task.c == u"f32" ? u"CU_TENSOR_MAP_DATA_TYPE_FLOAT32"_s : tensorMapType(task.c))
        .set(u"PRODUCER_REGS"_s, kProducerRegs)
        .set(u"CONSUMER_REGS"_s, consumerRegs(params.consumerWarpgroups))
        .set(u"SMEM_LIMIT"_s, 232448)
        .flag(u"N64"_s, params.blockN == 64)
        .flag(u"N128"_s, params.blockN == 128)
        .flag(u"N192"_s, params.blockN == 192)
        .flag(u"N256"_s, params.blockN == 256)
        .set(u"MMA_TYPE"_s, task.a == u"bf16" ? u"bf16"_s : u"f16"_s)
        .set(u"SPLIT"_s, params.splitK)
        .flag(u"SPLIT_K"_s, params.splitK > 1)
        // Stores two adjacent columns of C, applying alpha and beta, to global memory (direct
        // epilogue) or to a staging buffer (TMA-store epilogue); one file per type of C.
        .set(u"STORE_PAIR"_s,
             cudatemplates::render(u"wgmma/store_pair_%1.cu"_s.arg(task.c), TemplateValues()))
        .set(u"TMAP_TYPE"_s, tensorMapType(task.a))
        .set(u"ABI_A"_s, abiDtype(task.a))
        .set(u"ABI_B"_s, abiDtype(task.b))
        .set(u"ABI_C"_s, abiDtype(task.c));
    values.set(u"WGMMA_TILE"_s, cudatemplates::render(u"wgmma/wgmma_tile.cu"_s, values))
        .set(u"SPLIT_K_CODE"_s,
             params.splitK > 1 ? cudatemplates::render(u"wgmma/splitk.cu"_s, values) : QString());
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
        QStringLiteral(" m64n") + QString::number(params.blockN) +
        QStringLiteral("k16 slice(s), ") +
        (params.groupedRaster ? QStringLiteral("grouped raster (") +
                                    QString::number(params.groupM) + QStringLiteral(" tile rows)")
                              : QStringLiteral("row raster")) +
        QStringLiteral(",\n// balanced persistent grid") +
        (params.splitK > 1 ? QStringLiteral(", split-K ") + QString::number(params.splitK) +
                                 QStringLiteral(" (fp32 partials summed in split order)")
                           : QString()) +
        (params.clusterM > 1 ? QStringLiteral(" of ") + QString::number(params.clusterM) +
                                   QStringLiteral("-CTA clusters multicasting B")
                             : QString()) +
        QStringLiteral("; ") + task.a + u'*' + task.b + QStringLiteral("->") + task.c +
        QStringLiteral(", fp32 accumulate; TMA loads with 128-byte swizzle, mbarrier "
                       "pipeline,\n// producer/consumer warpgroups with setmaxnreg, ") +
        (params.tmaStore ? QStringLiteral("epilogue through shared memory and TMA stores.\n")
                         : QStringLiteral("bounded epilogue from registers.\n"));
    return header + cudatemplates::render(u"wgmma/gemm.cu"_s, values);
}

WgmmaParams smallMWgmmaParams(const Task& task, const DeviceInfo& device, QString* why) {
    // Memory-bound: B (K x N) is nearly all the bytes and must stream at the DRAM rate. Measured
    // on the H200 (docs/benchmarks.md, session 7): a tile as tall as M (64 rows in one consumer
    // warpgroup up to M = 64, 128 in two up to 128, 256 in two of two m64 slices beyond: B leaves
    // DRAM exactly once; 256x128 beat 128x256 at M = 256), whole rounds of work units with few
    // splits (every split adds a second kernel and its partials: 64x128 without a split beat
    // split-K 4 at M = 16, N = 12288), and not every SM needed (96 CTAs of 128x128 at M = 128,
    // N = 12288 beat 384 split units). The model: each round moves its units' bytes (their B
    // strip, their partials) at the DRAM rate shared by the round's CTAs, a CTA pulling at most
    // a 96th of it; a split costs the reduction's launch and pass. (A 10% penalty on 64-column
    // tiles, from the first sweep, is gone: in the second, with the L2 left clean, 64-column
    // tiles with split-K 2 beat the model's 128-column split-K 3 at N = 4096 by 5-7%: bf16
    // M = 64 0.910x vs 0.853x, bf16 M = 128 0.967x vs 0.913x cuBLAS.)
    WgmmaParams best;
    best.blockM = task.m <= 64 ? 64 : task.m <= 128 ? 128 : 256;
    best.consumerWarpgroups = task.m <= 64 ? 1 : 2;
    // Row tiles vary fastest (a grouped raster as tall as the output), so the CTAs that share a
    // B panel run together when M spans several tiles (validation shapes past 256 rows).
    best.groupedRaster = true;
    const qint64 sms = device.smCount > 0 ? device.smCount : 132;
    const qint64 kBlocks = (task.k + kBlockK - 1) / kBlockK;
    const qint64 tilesM = (task.m + best.blockM - 1) / best.blockM;
    best.groupM = int(std::min<qint64>(tilesM, 16));
    const double bBytes = 2.0 * double(task.k) * double(task.n);
    const double peakBytesPerS = 4.8e12;
    const double ctaBytesPerS = peakBytesPerS / 96.0;
    const double reductionS = 2.0e-6;
    double bestTime = 0;
    for (int blockN : {256, 128, 64}) {
        WgmmaParams probe = best;
        probe.blockN = blockN;
        probe.stages = 3;
        if (!wgmmaConstraints(probe, task, device).isEmpty())
            continue; // e.g. 256 x 256: more accumulators than a consumer's registers
        const qint64 tilesN = (task.n + blockN - 1) / blockN;
        const qint64 tiles = tilesM * tilesN;
        for (int split : {1, 2, 3, 4, 6, 8, 12, 16}) {
            // At least 8 k-blocks a split, so the ring reaches its steady state.
            if (split > 1 && kBlocks / split < 8)
                break;
            const qint64 units = tiles * split;
            const qint64 rounds = (units + sms - 1) / sms;
            const qint64 perRound = (units + rounds - 1) / rounds;
            const double unitBytes =
                bBytes / double(tilesN * split) +
                (split > 1 ? 8.0 * std::min<qint64>(task.m, best.blockM) * blockN : 0.0);
            const double rate = std::min(ctaBytesPerS, peakBytesPerS / double(perRound));
            double time = double(rounds) * unitBytes / rate + (split > 1 ? reductionS : 0.0);
            // Ties go to the wider tile and the smaller split (checked first).
            if (bestTime == 0 || time < bestTime * 0.98) {
                bestTime = time;
                best.blockN = blockN;
                best.splitK = split;
            }
        }
    }
    // As deep a ring as fits in shared memory (at most 8): bytes in flight hide DRAM latency.
    best.tmaStore = best.splitK == 1;
    best.stages = 3;
    for (int stages = 8; stages >= 3; --stages) {
        WgmmaParams probe = best;
        probe.stages = stages;
        if (probe.smemBytes() <= device.smemPerBlockOptin) {
            best.stages = stages;
            break;
        }
    }
    const qint64 tiles = tilesM * ((task.n + best.blockN - 1) / best.blockN);
    *why = QStringLiteral("Small-M (M=%1, memory-bound: B is %2 MB): %3x%4x64 tiles, %5 consumer "
                          "warpgroup(s), %6 stages; %7 tiles x split-K %8 = %9 work units for %10 "
                          "SMs%11.")
               .arg(task.m)
               .arg(bBytes / 1e6, 0, 'f', 0)
               .arg(best.blockM)
               .arg(best.blockN)
               .arg(best.consumerWarpgroups)
               .arg(best.stages)
               .arg(tiles)
               .arg(best.splitK)
               .arg(tiles * best.splitK)
               .arg(sms)
               .arg(best.splitK > 1 ? QStringLiteral(" (fp32 partials summed in split order)")
                                    : QStringLiteral(", TMA-store epilogue"));
    return best;
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
            "mbarriers; a producer warpgroup and one or two consumer warpgroups (setmaxnreg "
            "moves registers to the consumers), each issuing m64nNk16 wgmma from shared memory "
            "with fp32 accumulators in registers, either splitting each tile (cooperative) or "
            "taking whole tiles in turns (ping-pong); a persistent grid of at most one CTA per SM "
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
                           QStringLiteral("output tile rows: 64 or 128 per consumer warpgroup"),
                           QJsonArray{64, 128, 256}, &Strategy::blockM),
            fieldParameter(QStringLiteral("blockN"),
                           QStringLiteral("output tile columns, the wgmma N"),
                           QJsonArray{64, 128, 192, 256}, &Strategy::blockN),
            fieldParameter(QStringLiteral("stages"),
                           QStringLiteral("depth of the TMA shared-memory ring"),
                           QJsonArray{3, 4, 5, 6, 7, 8}, &Strategy::stages),
            fieldParameter(QStringLiteral("consumerWarpgroups"),
                           QStringLiteral("warpgroups issuing wgmma (one more produces)"),
                           QJsonArray{1, 2}, &Strategy::consumerWarpgroups),
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
        if (strategy.clusterN != 1)
            problems << QStringLiteral("clusterN: clusters run along M only (clusterN 1, not ") +
                            QString::number(strategy.clusterN) + u')';
        if (strategy.epilogue != QLatin1String("direct") &&
            strategy.epilogue != QLatin1String("tma_store"))
            problems << QStringLiteral("epilogue: ") + strategy.epilogue +
                            QStringLiteral(" is not direct or tma_store");
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

    void normalize(Strategy& strategy) const override {
        WgmmaParams::fromStrategy(strategy).applyTo(strategy);
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
