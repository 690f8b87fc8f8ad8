#include "builtin/family_fma.h"

#include "builtin/cudatemplates.h"
#include "builtin/gemmcodegen.h"

#include <QJsonArray>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace kev {

namespace {

// The knobs of one configuration, parsed once from the Strategy.
struct FmaRegBlockConfig {
    int blockM = 0;
    int blockN = 0;
    int blockK = 0;
    int threadTileM = 0; // rows of C per thread
    int threadTileN = 0; // columns of C per thread

    static FmaRegBlockConfig fromStrategy(const Strategy& s) {
        return {s.blockM, s.blockN, s.blockK, s.params.value(u"thread_tile_m"_s).toInt(0),
                s.params.value(u"thread_tile_n"_s).toInt(0)};
    }

    int threads() const {
        if (threadTileM <= 0 || threadTileN <= 0)
            return 0;
        return (blockM / threadTileM) * (blockN / threadTileN);
    }

    qint64 smemBytes() const { return 2LL * blockK * ((blockM + 4) + blockN) * 4; }

    int registerEstimate() const {
        const int t = std::max(threads(), 1);
        const int prefetch = (blockM * blockK + blockK * blockN) / t;
        return threadTileM * threadTileN + threadTileM + threadTileN + prefetch + 32;
    }
};

QJsonArray ints(std::initializer_list<int> values) {
    QJsonArray out;
    for (int v : values)
        out.append(v);
    return out;
}

} // namespace

QString FmaRegBlockFamily::id() const {
    return u"fma_regblock"_s;
}

QString FmaRegBlockFamily::description() const {
    return u"CUDA-core FP32 FMA GEMM (any input type converted to fp32; no tensor cores, no "
           "TF32): block tiles in shared memory with A transposed, a register block of "
           "thread_tile_m x thread_tile_n outputs per thread in 4-wide groups, 4-element vector "
           "loads, double-buffered shared memory with a register prefetch of the next k-tile."_s;
}

bool FmaRegBlockFamily::supports(const Task& task, const DeviceInfo& device) const {
    const QStringList types{u"f32"_s, u"f16"_s, u"bf16"_s};
    return task.op == u"gemm" && types.contains(task.a) && task.b == task.a &&
           types.contains(task.c) && task.accumulate == u"f32" && task.layoutA == u"row" &&
           task.layoutB == u"row" && task.layoutC == u"row" && device.ccMajor >= 7 &&
           task.leadingDimMultiple % 4 == 0;
}

QVector<ParameterSpec> FmaRegBlockFamily::parameters() const {
    return {
        fieldParameter(u"blockM"_s, u"Rows of C per thread block"_s, ints({32, 64, 128}),
                       &Strategy::blockM),
        fieldParameter(u"blockN"_s, u"Columns of C per thread block"_s, ints({32, 64, 128}),
                       &Strategy::blockN),
        fieldParameter(u"blockK"_s, u"Depth of one k-tile"_s, ints({8, 16, 32}), &Strategy::blockK),
        paramsParameter(u"thread_tile_m"_s, u"Rows of C per thread (groups of 4)"_s, ints({4, 8})),
        paramsParameter(u"thread_tile_n"_s, u"Columns of C per thread (groups of 4)"_s,
                        ints({4, 8})),
    };
}

void FmaRegBlockFamily::normalize(Strategy& s) const {
    s.family = id();
    s.mma = u"fma"_s;
    s.vectorWidth = 4;
    s.stages = 2;
    s.warpM = 0;
    s.warpN = 0;
    s.smemLayout = u"padded"_s;
    s.smemPaddingBytes = 16;
    s.swizzleBytes = 0;
    s.splitK = 1;
    s.raster = u"row"_s;
    s.groupSize = 1;
    s.epilogue = u"direct"_s;
    const int t = FmaRegBlockConfig::fromStrategy(s).threads();
    if (t > 0 && t % 32 == 0)
        s.warps = t / 32;
}

QStringList FmaRegBlockFamily::constraints(const Strategy& s, const Task& task,
                                           const DeviceInfo& device) const {
    QStringList problems;
    if (!supports(task, device))
        problems << u"family fma_regblock needs a row-major GEMM with A and B of the same type "
                    "(f32, f16 or bf16) and f32 accumulation (task %1)"_s.arg(task.summary());
    if (s.family != id())
        problems << u"family: \"%1\" is not %2"_s.arg(s.family, id());
    const FmaRegBlockConfig c = FmaRegBlockConfig::fromStrategy(s);
    const int tm = c.threadTileM;
    const int tn = c.threadTileN;
    if ((tm != 4 && tm != 8) || (tn != 4 && tn != 8)) {
        problems << u"params.thread_tile_m=%1, params.thread_tile_n=%2: each must be 4 or 8"_s
                        .arg(tm)
                        .arg(tn);
        return problems;
    }
    if (s.blockM % tm != 0 || s.blockN % tn != 0 || s.blockK % 4 != 0)
        problems << u"block tile %1x%2x%3 must be a multiple of the thread tile %4x%5 (and "
                    "blockK of 4)"_s.arg(s.blockM)
                        .arg(s.blockN)
                        .arg(s.blockK)
                        .arg(tm)
                        .arg(tn);
    const int t = c.threads();
    if (t < 32 || t > 1024 || t % 32 != 0)
        problems << u"%1 threads per block: must be a multiple of 32 in 32..1024"_s.arg(t);
    else if ((s.blockM * s.blockK) % (4 * t) != 0 || (s.blockK * s.blockN) % (4 * t) != 0)
        problems << u"tile loads: %1x%2 A and %2x%3 B elements do not split into 4-element "
                    "loads over %4 threads"_s.arg(s.blockM)
                        .arg(s.blockK)
                        .arg(s.blockN)
                        .arg(t);
    else if (s.warps != t / 32)
        problems << u"warps=%1 but the tiles make %2"_s.arg(s.warps).arg(t / 32);
    if (c.smemBytes() > 48 * 1024)
        problems << u"static shared memory %1 B exceeds 49152 B (blockK=%2)"_s.arg(c.smemBytes())
                        .arg(s.blockK);
    const int regs = c.registerEstimate();
    if (regs > 255)
        problems << u"about %1 registers per thread: more than 255"_s.arg(regs);
    else if (t > 0 && qint64(regs) * t > device.regsPerSm)
        problems << u"about %1 registers x %2 threads exceeds the %3 registers of an SM"_s.arg(regs)
                        .arg(t)
                        .arg(device.regsPerSm);
    return problems;
}

ResourceEstimate FmaRegBlockFamily::resources(const Strategy& s, const Task&,
                                              const DeviceInfo& device) const {
    const FmaRegBlockConfig c = FmaRegBlockConfig::fromStrategy(s);
    ResourceEstimate r =
        estimateResources(c.threads(), c.smemBytes(), c.registerEstimate(), device);
    return r;
}

Strategy FmaRegBlockFamily::defaultStrategy(const Task& task, const DeviceInfo& device) const {
    Strategy s;
    s.family = id();
    const qint64 tiles128 = ((task.m + 127) / 128) * ((task.n + 127) / 128);
    const bool large = tiles128 >= std::max(device.smCount, 1);
    s.blockM = large ? 128 : 64;
    s.blockN = large ? 128 : 64;
    // 64x64 with 4x4 per thread is 256 threads: a k-tile of 16 gives each one float4 of A and
    // of B (at 8 the tile does not split over the threads).
    s.blockK = large ? 8 : 16;
    s.params.insert(u"thread_tile_m"_s, large ? 8 : 4);
    s.params.insert(u"thread_tile_n"_s, large ? 8 : 4);
    normalize(s);
    s.rationale = large ? u"Large output: 128x128 tiles, 8x8 outputs per thread (256 threads) for "
                          "64 FMAs per 16 shared-memory bytes loaded; double-buffered."_s
                        : u"Small output: 64x64 tiles with 4x4 per thread so more blocks run."_s;
    return s;
}

QString FmaRegBlockFamily::generate(const Strategy& s, const Task& task) const {
    using namespace gemmcodegen;
    const FmaRegBlockConfig c = FmaRegBlockConfig::fromStrategy(s);
    const int tm = c.threadTileM;
    const int tn = c.threadTileN;
    QStringList header{
        u"Kevolve built-in kernel, family fma_regblock (generated; edit freely)."_s,
        u"Task: %1 (%2)."_s.arg(task.name, task.summary()),
        u"Strategy: block %1x%2x%3, %4x%5 outputs per thread (%6 threads), FP32 FMA, "_s
            .arg(s.blockM)
            .arg(s.blockN)
            .arg(s.blockK)
            .arg(tm)
            .arg(tn)
            .arg(c.threads()),
        u"  double-buffered shared memory, C written as %1."_s.arg(task.c),
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
        .set(u"THREAD_M"_s, tm)
        .set(u"THREAD_N"_s, tn)
        .flag(u"A_F32"_s, task.a == u"f32")
        .flag(u"A_BF16"_s, task.a == u"bf16")
        .set(u"OUTPUT_HELPERS"_s, outputHelpers(task.c))
        .set(u"CHECKS"_s, launchChecks(task));
    return cudatemplates::render(u"fma/fma_regblock.cu"_s, values);
}

} // namespace kev
