#include "builtin/family_smallmgemv.h"

#include "builtin/cudatemplates.h"
#include "builtin/gemmcodegen.h"
#include "builtin/memorycodegen.h"

#include <QJsonArray>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace kev {

namespace {

// Columns of C per block: 32 lanes of 8 adjacent columns (one 16-byte load of a B row each).
constexpr int kColumns = 256;

// The knobs of one configuration, parsed once from the Strategy.
struct GemvLikeConfig {
    int warps = 0;
    int rowsInFlight = 0; // rows of B each warp loads per step (params.vectors_per_thread)
    int splitK = 0;

    static GemvLikeConfig fromStrategy(const Strategy& s) {
        return {s.warps, memorycodegen::intParam(s, u"vectors_per_thread"_s), s.splitK};
    }

    // The largest M of the task's shapes rounded up to a power of two: the kernel is
    // instantiated for 1, 2, 4, ... up to it rows and launches the smallest that covers M.
    static int maxM(const Task& task) {
        qint64 largest = task.m;
        for (const auto& shape : task.validationShapes)
            largest = std::max<qint64>(largest, shape.m);
        int m = 1;
        while (m < largest)
            m *= 2;
        return m;
    }
    int registerEstimate(const Task& task) const {
        // Accumulators, the loaded B vectors and A values in flight, addressing.
        return maxM(task) * 8 + rowsInFlight * (8 + maxM(task)) + 32;
    }
};

} // namespace

QString SmallMGemvFamily::id() const {
    return u"gemv_smallm"_s;
}

QString SmallMGemvFamily::description() const {
    return u"GEMV path of small-M GEMMs (M <= 8, decode): a GEMV over B with M fp32 "
           "accumulators per column on the CUDA cores; each lane owns 8 adjacent columns (16-byte "
           "loads of B rows), each warp walks rows of B with vectors_per_thread rows in flight, "
           "the A values are warp-wide broadcasts; splitK k-ranges per column block fill at least "
           "two waves, their fp32 partials summed in split order by a second kernel "
           "(deterministic). Judged by its share of the DRAM floor."_s;
}

bool SmallMGemvFamily::supports(const Task& task, const DeviceInfo& device) const {
    const bool half = task.a == u"f16" || task.a == u"bf16";
    const QStringList outputs{u"f16"_s, u"bf16"_s, u"f32"_s};
    return task.op == u"gemm" && half && task.b == task.a && outputs.contains(task.c) &&
           task.accumulate == u"f32" && task.layoutA == u"row" && task.layoutB == u"row" &&
           task.layoutC == u"row" && device.ccMajor >= 8 && task.leadingDimMultiple % 8 == 0 &&
           task.m >= 1 && GemvLikeConfig::maxM(task) <= kSmallMGemvLimit;
}

QVector<ParameterSpec> SmallMGemvFamily::parameters() const {
    using memorycodegen::ints;
    return {
        fieldParameter(u"warps"_s, u"Warps per block, each walking its own rows of B"_s,
                       ints({4, 8, 16}), &Strategy::warps),
        paramsParameter(u"vectors_per_thread"_s,
                        u"Rows of B each warp loads per step (16 bytes a lane each): bytes in "
                        "flight"_s,
                        ints({1, 2, 4, 8})),
        fieldParameter(u"splitK"_s, u"k-ranges per column block, summed by a second kernel"_s,
                       ints({1, 2, 4, 8, 16, 32, 64}), &Strategy::splitK),
    };
}

void SmallMGemvFamily::normalize(Strategy& s) const {
    s.family = id();
    s.mma = u"fma"_s;
    s.vectorWidth = 8;
    const int splitK = s.splitK; // a knob here, unlike in the other memory-bound families
    memorycodegen::setTileFieldsUnused(s);
    s.splitK = splitK;
    s.blockM = kSmallMGemvLimit;
    s.blockN = kColumns;
}

QStringList SmallMGemvFamily::constraints(const Strategy& s, const Task& task,
                                          const DeviceInfo& device) const {
    QStringList problems;
    if (!supports(task, device))
        problems << u"family gemv_smallm needs a row-major GEMM with M <= %1, f16 or bf16 A and "
                    "B of the same type, f32 accumulation, leading dimensions a multiple of 8 "
                    "and an sm_80 or newer GPU (task %2, device %3 sm_%4%5)"_s.arg(kSmallMGemvLimit)
                        .arg(task.summary(), device.name)
                        .arg(device.ccMajor)
                        .arg(device.ccMinor);
    if (s.family != id())
        problems << u"family: \"%1\" is not %2"_s.arg(s.family, id());
    const GemvLikeConfig c = GemvLikeConfig::fromStrategy(s);
    if (c.warps != 4 && c.warps != 8 && c.warps != 16)
        problems << u"warps=%1: must be 4, 8 or 16"_s.arg(c.warps);
    const int v = c.rowsInFlight;
    if (v != 1 && v != 2 && v != 4 && v != 8)
        problems << u"params.vectors_per_thread=%1: must be 1, 2, 4 or 8"_s.arg(v);
    if (c.splitK < 1 || c.splitK > 64)
        problems << u"splitK=%1: must be 1..64"_s.arg(c.splitK);
    const int regs = c.registerEstimate(task);
    if (regs > 160)
        problems << u"about %1 registers per thread (M up to %2 x 8 accumulators, "
                    "vectors_per_thread %3): more than 160 spills"_s.arg(regs)
                        .arg(GemvLikeConfig::maxM(task))
                        .arg(v);
    return problems;
}

ResourceEstimate SmallMGemvFamily::resources(const Strategy& s, const Task& task,
                                             const DeviceInfo& device) const {
    const GemvLikeConfig c = GemvLikeConfig::fromStrategy(s);
    ResourceEstimate r = estimateResources(c.warps * 32, qint64(c.warps) * kColumns * 4,
                                           c.registerEstimate(task), device);
    r.workspaceBytes = qint64(c.splitK) * task.m * task.n * 4;
    return r;
}

Strategy SmallMGemvFamily::defaultStrategy(const Task& task, const DeviceInfo& device) const {
    Strategy s;
    s.family = id();
    s.warps = 8;
    s.params.insert(u"vectors_per_thread"_s, task.m <= 2 ? 4 : 2);
    normalize(s);
    // The smallest split that gives two waves of the blocks that fit at once, keeping at least
    // four steps of every warp's rows per k-range.
    const GemvLikeConfig probe = GemvLikeConfig::fromStrategy(s);
    const ResourceEstimate fit = estimateResources(s.warps * 32, qint64(s.warps) * kColumns * 4,
                                                   probe.registerEstimate(task), device);
    const qint64 blockSlots = qint64(std::max(device.smCount, 1)) * std::max(fit.blocksPerSm, 1);
    const qint64 columnBlocks = std::max<qint64>(1, (task.n + kColumns - 1) / kColumns);
    const qint64 rowsPerStep = qint64(s.warps) * probe.rowsInFlight;
    int split = 1;
    while (split < 64 && columnBlocks * split < 2 * blockSlots &&
           task.k / (split * 2) >= 4 * rowsPerStep)
        split *= 2;
    s.splitK = split;
    s.rationale = u"Decode-size GEMM (M=%1): a GEMV over B (%2 MB, read once with 16-byte loads) "
                  "with %1 accumulators per column; %3 column blocks x split-K %4 for %5 block "
                  "slots (at least two waves), %6 rows of B in flight per warp."_s.arg(task.m)
                      .arg(2.0 * double(task.k) * double(task.n) / 1e6, 0, 'f', 0)
                      .arg(columnBlocks)
                      .arg(split)
                      .arg(blockSlots)
                      .arg(probe.rowsInFlight);
    return s;
}

QString SmallMGemvFamily::generate(const Strategy& s, const Task& task) const {
    const GemvLikeConfig c = GemvLikeConfig::fromStrategy(s);
    const QStringList dtypes{task.a, task.c};
    QStringList header{
        u"Kevolve built-in kernel, family gemv_smallm (generated; edit freely)."_s,
        u"Task: %1 (%2)."_s.arg(task.name, task.summary()),
        u"Strategy: a GEMV over B for M <= %1; blocks of %2 warps own 256 columns and one of %3 "
        "k-ranges, %4 rows of B in flight per warp, partials summed in split order."_s
            .arg(GemvLikeConfig::maxM(task))
            .arg(c.warps)
            .arg(c.splitK)
            .arg(c.rowsInFlight),
    };
    if (!s.rationale.isEmpty()) {
        header << u"Rationale:"_s;
        for (const QString& line : gemmcodegen::wrapText(s.rationale))
            header << u"  "_s + line;
    }
    TemplateValues values;
    values.set(u"HEADER"_s, gemmcodegen::headerComment(header))
        .set(u"INCLUDES"_s, memorycodegen::dtypeIncludes(dtypes))
        .set(u"IN_T"_s, gemmcodegen::cudaType(task.a))
        .set(u"OUT_T"_s, gemmcodegen::cudaType(task.c))
        .set(u"ELEMENTS"_s, memorycodegen::elementHelpers(dtypes, 8))
        .set(u"MAX_M"_s, GemvLikeConfig::maxM(task))
        .flag(u"ROWS2"_s, GemvLikeConfig::maxM(task) >= 2)
        .flag(u"ROWS4"_s, GemvLikeConfig::maxM(task) >= 4)
        .flag(u"ROWS8"_s, GemvLikeConfig::maxM(task) >= 8)
        .set(u"WARPS"_s, c.warps)
        .set(u"VPT"_s, c.rowsInFlight)
        .set(u"SPLIT"_s, c.splitK)
        .set(u"CHECKS"_s, gemmcodegen::launchChecks(task));
    return cudatemplates::render(u"smallm/gemv_like.cu"_s, values);
}

} // namespace kev
