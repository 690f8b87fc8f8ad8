#include "builtin/family_fmatiled.h"

#include "builtin/cudatemplates.h"
#include "builtin/gemmcodegen.h"

#include <QJsonArray>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace kev {

namespace {

// The knobs of one configuration, parsed once from the Strategy.
struct FmaTiledConfig {
    int tile = 0;     // rows and columns of C per block, and the k-tile depth (blockM)
    int outputsN = 0; // params.thread_tile_n: outputs per thread along a row of C

    static FmaTiledConfig fromStrategy(const Strategy& s) {
        return {s.blockM, s.params.value(u"thread_tile_n"_s).toInt(0)};
    }

    int threads() const { return outputsN > 0 ? tile * (tile / outputsN) : 0; }
    qint64 smemBytes() const { return 2LL * tile * (tile + 1) * 4; }
    // Accumulators, the staged elements' addresses and values, and about 24 for indices and the
    // epilogue.
    int registerEstimate() const { return 3 * std::max(outputsN, 1) + 24; }
};

QJsonArray ints(std::initializer_list<int> values) {
    QJsonArray out;
    for (int v : values)
        out.append(v);
    return out;
}

bool isType(const QString& dtype) {
    return dtype == u"f32" || dtype == u"f16" || dtype == u"bf16";
}

} // namespace

QString FmaTiledFamily::id() const {
    return u"fma_tiled"_s;
}

QString FmaTiledFamily::description() const {
    return u"Shared-memory tiled CUDA-core GEMM, the baseline: a tile x tile block of C per "
           "thread block, square k-tiles of A and B staged in shared memory as fp32 (rows padded "
           "by one word against bank conflicts), each thread accumulating thread_tile_n outputs "
           "of one row with FP32 FMA. Any of f16, bf16, f32 in and out; no tensor cores, no "
           "TF32."_s;
}

bool FmaTiledFamily::supports(const Task& task, const DeviceInfo& device) const {
    return task.op == u"gemm" && isType(task.a) && isType(task.b) && isType(task.c) &&
           task.accumulate == u"f32" && task.layoutA == u"row" && task.layoutB == u"row" &&
           task.layoutC == u"row" && device.ccMajor >= 7;
}

QVector<ParameterSpec> FmaTiledFamily::parameters() const {
    ParameterSpec tile{u"tile"_s, u"Rows and columns of C per block and the depth of one k-tile"_s,
                       ints({16, 32}), [](const Strategy& s) { return QJsonValue(s.blockM); },
                       [](Strategy& s, const QJsonValue& v) {
                           s.blockM = v.toInt();
                           s.blockN = s.blockM;
                           s.blockK = s.blockM;
                       }};
    return {tile, paramsParameter(u"thread_tile_n"_s,
                                  u"Outputs per thread along a row of C (tile / thread_tile_n "
                                  "columns apart)"_s,
                                  ints({1, 2, 4}))};
}

void FmaTiledFamily::normalize(Strategy& s) const {
    s.family = id();
    s.mma = u"fma"_s;
    s.blockN = s.blockM;
    s.blockK = s.blockM;
    s.warpM = 0;
    s.warpN = 0;
    s.vectorWidth = 1;
    s.stages = 1;
    s.smemLayout = u"padded"_s;
    s.smemPaddingBytes = 4;
    s.swizzleBytes = 0;
    s.splitK = 1;
    s.raster = u"row"_s;
    s.groupSize = 1;
    s.epilogue = u"direct"_s;
    const int t = FmaTiledConfig::fromStrategy(s).threads();
    if (t > 0 && t % 32 == 0)
        s.warps = t / 32;
}

QStringList FmaTiledFamily::constraints(const Strategy& s, const Task& task,
                                        const DeviceInfo& device) const {
    QStringList problems;
    if (!supports(task, device))
        problems << u"family fma_tiled needs a row-major GEMM with f32, f16 or bf16 operands, "
                    "f32 accumulation and an sm_70 or newer GPU (task %1, device %2 sm_%3%4)"_s
                        .arg(task.summary(), device.name)
                        .arg(device.ccMajor)
                        .arg(device.ccMinor);
    if (s.family != id())
        problems << u"family: \"%1\" is not %2"_s.arg(s.family, id());
    if (s.blockM != 16 && s.blockM != 32)
        problems << u"tile=%1 (blockM): must be 16 or 32"_s.arg(s.blockM);
    if (s.blockN != s.blockM || s.blockK != s.blockM)
        problems << u"blockM=%1, blockN=%2, blockK=%3: the tile is square, all three equal"_s
                        .arg(s.blockM)
                        .arg(s.blockN)
                        .arg(s.blockK);
    const FmaTiledConfig c = FmaTiledConfig::fromStrategy(s);
    const int r = c.outputsN;
    if (r != 1 && r != 2 && r != 4) {
        problems << u"params.thread_tile_n=%1: must be 1, 2 or 4"_s.arg(r);
        return problems;
    }
    const int t = c.threads();
    if (t < 32 || t > 1024 || t % 32 != 0)
        problems << u"%1 threads per block (tile %2, thread_tile_n %3): must be a multiple of 32 "
                    "in 32..1024"_s.arg(t)
                        .arg(s.blockM)
                        .arg(r);
    else if (s.warps != t / 32)
        problems << u"warps=%1 but tile %2 with thread_tile_n %3 makes %4"_s.arg(s.warps)
                        .arg(s.blockM)
                        .arg(r)
                        .arg(t / 32);
    if (c.smemBytes() > 48 * 1024)
        problems << u"static shared memory %1 B exceeds 49152 B (tile %2)"_s.arg(c.smemBytes())
                        .arg(s.blockM);
    const int regs = c.registerEstimate();
    if (t > 0 && qint64(regs) * t > device.regsPerSm)
        problems << u"about %1 registers x %2 threads exceeds the %3 registers of an SM"_s.arg(regs)
                        .arg(t)
                        .arg(device.regsPerSm);
    return problems;
}

ResourceEstimate FmaTiledFamily::resources(const Strategy& s, const Task&,
                                           const DeviceInfo& device) const {
    const FmaTiledConfig c = FmaTiledConfig::fromStrategy(s);
    ResourceEstimate r =
        estimateResources(c.threads(), c.smemBytes(), c.registerEstimate(), device);
    return r;
}

Strategy FmaTiledFamily::defaultStrategy(const Task& task, const DeviceInfo& device) const {
    Strategy s;
    s.family = id();
    const qint64 tiles32 = ((task.m + 31) / 32) * ((task.n + 31) / 32);
    const bool large = tiles32 >= 4LL * std::max(device.smCount, 1);
    s.blockM = large ? 32 : 16;
    s.params.insert(u"thread_tile_n"_s, large ? 4 : 1);
    normalize(s);
    s.rationale = large ? u"Baseline for a large output: 32x32 tiles (each staged element used 32 "
                          "times), 4 outputs per thread so 256 threads share one A value per k."_s
                        : u"Baseline for a small output: 16x16 tiles with one output per thread "
                          "(256 threads), so more blocks cover the GPU."_s;
    return s;
}

QString FmaTiledFamily::generate(const Strategy& s, const Task& task) const {
    using namespace gemmcodegen;
    const FmaTiledConfig c = FmaTiledConfig::fromStrategy(s);
    QStringList header{
        u"Kevolve built-in kernel, family fma_tiled (generated; edit freely)."_s,
        u"Task: %1 (%2)."_s.arg(task.name, task.summary()),
        u"Strategy: %1x%1 tiles of A and B in shared memory (rows padded by one word), %2 "
        "output(s) per thread (%3 threads), FP32 FMA, C written as %4."_s.arg(s.blockM)
            .arg(c.outputsN)
            .arg(c.threads())
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
        .set(u"A_T"_s, cudaType(task.a))
        .set(u"B_T"_s, cudaType(task.b))
        .set(u"OUT_T"_s, cudaType(task.c))
        .set(u"TILE"_s, s.blockM)
        .set(u"OUTPUTS_N"_s, c.outputsN);
    // Conversions to and from float for the storage type of each operand.
    const QList<std::pair<QString, QString>> operands{
        {u"A"_s, task.a}, {u"B"_s, task.b}, {u"C"_s, task.c}};
    for (const auto& [name, dtype] : operands)
        values.flag(name + u"_F16"_s, dtype == u"f16").flag(name + u"_BF16"_s, dtype == u"bf16");
    values.set(u"CHECKS"_s, launchChecks(task));
    return cudatemplates::render(u"fmatiled/fma_tiled.cu"_s, values);
}

} // namespace kev
