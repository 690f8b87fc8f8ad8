#include "builtin/family_gemv.h"

#include "builtin/cudatemplates.h"
#include "builtin/gemmcodegen.h"
#include "builtin/memorycodegen.h"

#include <QJsonArray>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace kev {

namespace {

using namespace memorycodegen;

// The orientation the task asks for (params.transpose): y = A x or y = A^T x.
enum class Orientation { Rows, Columns };

Orientation orientationOf(const Task& task) {
    return task.params.value(u"transpose"_s).toBool() ? Orientation::Columns : Orientation::Rows;
}

bool transposed(const Task& task) {
    return orientationOf(task) == Orientation::Columns;
}

// The knobs of one configuration, parsed once from the Strategy.
struct GemvConfig {
    int warps = 0;
    int vectorWidth = 0;
    int vectorsPerThread = 0; // vectors of a row (A x) or rows (A^T x) in flight per step
    int splitM = 0;           // A^T x: row ranges per column block, summed by a second kernel

    static GemvConfig fromStrategy(const Strategy& s) {
        return {s.warps, s.vectorWidth, intParam(s, u"vectors_per_thread"_s),
                intParam(s, u"split_m"_s)};
    }
};

QStringList tensorDtypes(const Task& task) {
    return {task.dtypeOf(u"A"_s), task.dtypeOf(u"x"_s), task.dtypeOf(u"y"_s)};
}

// Tensors read with vectors: A always, x too for y = A x.
QStringList vectorDtypes(const Task& task) {
    if (transposed(task))
        return {task.dtypeOf(u"A"_s)};
    return {task.dtypeOf(u"A"_s), task.dtypeOf(u"x"_s)};
}

int registerEstimate(const GemvConfig& c, const Task& task) {
    const int vpt = c.vectorsPerThread;
    const int loaded =
        transposed(task) ? vpt * (c.vectorWidth + 1) + c.vectorWidth : 2 * vpt * c.vectorWidth;
    return loaded + 32;
}

} // namespace

QString GemvFamily::id() const {
    return u"gemv"_s;
}

QString GemvFamily::description() const {
    return u"Matrix-vector product, fp32 accumulation, both orientations. y = A x: one warp per "
           "row of A, lanes on neighbouring vectors (vectorWidth elements) of A and x, "
           "vectors_per_thread vectors in flight. y = A^T x: each block owns 32 x vectorWidth "
           "columns and one of split_m row ranges; warps walk rows, vectors_per_thread rows in "
           "flight, and sum in shared memory; split_m > 1 writes fp32 partials to the workspace "
           "and a second kernel adds them (no atomics, no zeroed memory)."_s;
}

bool GemvFamily::supports(const Task& task, const DeviceInfo& device) const {
    if (task.op != u"gemv" || device.ccMajor < 7)
        return false;
    const QStringList dtypes = tensorDtypes(task);
    return std::all_of(dtypes.begin(), dtypes.end(),
                       [](const QString& d) { return d == u"f32" || d == u"f16" || d == u"bf16"; });
}

QVector<ParameterSpec> GemvFamily::parameters() const {
    return {
        fieldParameter(u"warps"_s, u"Warps per block"_s, ints({1, 2, 4, 8, 16}), &Strategy::warps),
        fieldParameter(u"vectorWidth"_s, u"Elements of A per load"_s, ints({1, 2, 4, 8}),
                       &Strategy::vectorWidth),
        paramsParameter(u"vectors_per_thread"_s,
                        u"Loads a thread has in flight per step (vectors of a row, or rows for "
                        "A^T x)"_s,
                        ints({1, 2, 4, 8})),
        paramsParameter(u"split_m"_s,
                        u"A^T x only: row ranges per column block, summed by a second kernel"_s,
                        ints({1, 2, 4, 8, 16, 32})),
    };
}

void GemvFamily::normalize(Strategy& s) const {
    s.family = id();
    s.mma = u"fma"_s;
    s.blockM = s.warps;
    s.blockN = 32 * s.vectorWidth;
    setTileFieldsUnused(s);
}

QStringList GemvFamily::constraints(const Strategy& s, const Task& task,
                                    const DeviceInfo& device) const {
    const GemvConfig c = GemvConfig::fromStrategy(s);
    QStringList problems;
    if (!supports(task, device))
        problems << u"family gemv needs a gemv task with f32, f16 or bf16 tensors on an sm_70 or "
                    "newer GPU (task %1, device %2 sm_%3%4)"_s.arg(task.summary(), device.name)
                        .arg(device.ccMajor)
                        .arg(device.ccMinor);
    if (s.family != id())
        problems << u"family: \"%1\" is not %2"_s.arg(s.family, id());
    if (s.warps < 1 || s.warps > 16 || (s.warps & (s.warps - 1)) != 0)
        problems << u"warps=%1: must be a power of two in 1..16"_s.arg(s.warps);
    problems << vectorWidthProblems(s.vectorWidth, task, vectorDtypes(task));
    const int v = c.vectorsPerThread;
    if (v != 1 && v != 2 && v != 4 && v != 8)
        problems << u"params.vectors_per_thread=%1: must be 1, 2, 4 or 8"_s.arg(v);
    const int k = c.splitM;
    if (k != 1 && k != 2 && k != 4 && k != 8 && k != 16 && k != 32)
        problems << u"params.split_m=%1: must be 1, 2, 4, 8, 16 or 32"_s.arg(k);
    else if (!transposed(task) && k != 1)
        problems << u"split_m=%1: y = A x gives each row to one warp; split_m is for A^T x "
                    "(transpose true) only"_s.arg(k);
    const int regs = registerEstimate(c, task);
    if (regs > 128)
        problems << u"about %1 registers per thread (vectorWidth %2 x vectors_per_thread %3): "
                    "more than 128 risks spills"_s.arg(regs)
                        .arg(s.vectorWidth)
                        .arg(v);
    return problems;
}

ResourceEstimate GemvFamily::resources(const Strategy& s, const Task& task,
                                       const DeviceInfo& device) const {
    const GemvConfig c = GemvConfig::fromStrategy(s);
    const bool t = transposed(task);
    const qint64 smem = t ? qint64(s.warps) * 32 * s.vectorWidth * 4 : 0;
    ResourceEstimate r = estimateResources(s.warps * 32, smem, registerEstimate(c, task), device);
    if (t && c.splitM > 1)
        r.workspaceBytes = qint64(c.splitM) * task.n * 4;
    return r;
}

Strategy GemvFamily::defaultStrategy(const Task& task, const DeviceInfo& device) const {
    Strategy s;
    s.family = id();
    s.vectorWidth = 8;
    for (const QString& d : vectorDtypes(task))
        s.vectorWidth = std::min(s.vectorWidth, maxVectorWidth(task, d));
    if (!transposed(task)) {
        s.warps = 4;
        s.params.insert(u"vectors_per_thread"_s, 2);
        s.params.insert(u"split_m"_s, 1);
        normalize(s);
        s.rationale = u"y = A x is a stream over A: one warp per row with %1-element vector "
                      "loads of A and x, two vectors per lane in flight, 4 rows per block."_s.arg(
                          s.vectorWidth);
        return s;
    }
    s.warps = 8;
    s.params.insert(u"vectors_per_thread"_s, 4);
    // Enough blocks for about four waves of 8-warp blocks.
    const qint64 columnBlocks =
        std::max<qint64>(1, (task.n + 32 * s.vectorWidth - 1) / (32 * s.vectorWidth));
    int k = 1;
    while (k < 32 && columnBlocks * k < 4LL * std::max(device.smCount, 1) &&
           task.m / (k * 2) >= 256)
        k *= 2;
    s.params.insert(u"split_m"_s, k);
    normalize(s);
    s.rationale = u"y = A^T x: lanes on neighbouring %1-element vectors of a row of A "
                  "(coalesced), 8 warps walking rows with 4 rows in flight; %2 column blocks x "
                  "split_m %3 row ranges fill the GPU, partial sums added by a second kernel."_s
                      .arg(s.vectorWidth)
                      .arg(columnBlocks)
                      .arg(k);
    return s;
}

QString GemvFamily::generate(const Strategy& s, const Task& task) const {
    const GemvConfig c = GemvConfig::fromStrategy(s);
    const bool t = transposed(task);
    const int k = c.splitM;
    QStringList header{
        u"Kevolve built-in kernel, family gemv (generated; edit freely)."_s,
        u"Task: %1 (%2)."_s.arg(task.name, task.summary()),
        t ? u"Strategy: y = A^T x; blocks of %1 warps own %2 columns and one of %3 row ranges; "
            "%4-element loads of A, %5 rows in flight per warp; %6."_s.arg(s.warps)
                .arg(32 * s.vectorWidth)
                .arg(k)
                .arg(s.vectorWidth)
                .arg(c.vectorsPerThread)
                .arg(k > 1 ? u"fp32 partials in the workspace, summed by gemvFinish"_s
                           : u"each block writes its columns of y"_s)
          : u"Strategy: y = A x; one warp per row (%1 per block), %2-element loads of A and x, "
            "%3 vectors per lane in flight, fp32 accumulation and a shuffle reduction."_s
                .arg(s.warps)
                .arg(s.vectorWidth)
                .arg(c.vectorsPerThread),
    };
    if (!s.rationale.isEmpty()) {
        header << u"Rationale:"_s;
        for (const QString& line : gemmcodegen::wrapText(s.rationale))
            header << u"  "_s + line;
    }
    const QStringList dtypes = tensorDtypes(task);
    TemplateValues values;
    values.set(u"HEADER"_s, gemmcodegen::headerComment(header))
        .flag(u"F16"_s, dtypes.contains(u"f16"_s))
        .flag(u"BF16"_s, dtypes.contains(u"bf16"_s))
        .set(u"A_T"_s, gemmcodegen::cudaType(task.dtypeOf(u"A"_s)))
        .set(u"X_T"_s, gemmcodegen::cudaType(task.dtypeOf(u"x"_s)))
        .set(u"Y_T"_s, gemmcodegen::cudaType(task.dtypeOf(u"y"_s)))
        .set(u"ELEMENTS"_s, elementHelpers(dtypes, s.vectorWidth))
        .set(u"WARPS"_s, s.warps)
        .set(u"VPT"_s, c.vectorsPerThread)
        .flag(u"TRANSPOSED"_s, t)
        .set(u"SPLIT"_s, k)
        .flag(u"PARTIALS"_s, k > 1)
        .set(u"CHECKS"_s, launchChecks(task, u"KEVOLVE_OP_GEMV"_s));
    return cudatemplates::render(u"gemv/gemv.cu"_s, values);
}

} // namespace kev
