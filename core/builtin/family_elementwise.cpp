#include "builtin/family_elementwise.h"

#include "builtin/cudatemplates.h"
#include "builtin/gemmcodegen.h"
#include "builtin/memorycodegen.h"

#include <QJsonArray>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace kev {

namespace {

using namespace memorycodegen;

// The knobs of one configuration, parsed once from the Strategy.
struct ElementwiseConfig {
    int warps = 0;
    int vectorWidth = 0;
    int vectorsPerThread = 0;
    int ctasPerSm = -1; // 0: one pass of the grid; k > 0: k persistent blocks per SM

    static ElementwiseConfig fromStrategy(const Strategy& s) {
        return {s.warps, s.vectorWidth, intParam(s, u"vectors_per_thread"_s),
                intParam(s, u"ctas_per_sm"_s, -1)};
    }
};

// The task's function (params.function), the one string of the task this family reads.
enum class Function { Gelu, Silu };

Function functionOf(const Task& task) {
    return task.params.value(u"function"_s).toString() == u"silu" ? Function::Silu : Function::Gelu;
}

QStringList dtypes(const Task& task) {
    return {task.dtypeOf(u"X"_s), task.dtypeOf(u"Y"_s)};
}

int registerEstimate(const ElementwiseConfig& c) {
    return c.vectorsPerThread * c.vectorWidth + 32;
}

} // namespace

QString ElementwiseFamily::id() const {
    return u"elementwise"_s;
}

QString ElementwiseFamily::description() const {
    return u"Elementwise GELU (erf form) or SiLU in fp32 on any storage type: vectorWidth "
           "elements per access, vectors_per_thread vectors loaded before any math (bytes in "
           "flight), ctas_per_sm 0 for one pass of the grid or k for a persistent grid-stride "
           "loop of k blocks per SM."_s;
}

bool ElementwiseFamily::supports(const Task& task, const DeviceInfo& device) const {
    if (task.op != u"elementwise" || device.ccMajor < 7)
        return false;
    const QStringList d = dtypes(task);
    return std::all_of(d.begin(), d.end(),
                       [](const QString& t) { return t == u"f32" || t == u"f16" || t == u"bf16"; });
}

QVector<ParameterSpec> ElementwiseFamily::parameters() const {
    return {
        fieldParameter(u"warps"_s, u"Warps per block"_s, ints({2, 4, 8, 16}), &Strategy::warps),
        fieldParameter(u"vectorWidth"_s, u"Elements per load and store"_s, ints({1, 2, 4, 8}),
                       &Strategy::vectorWidth),
        paramsParameter(u"vectors_per_thread"_s, u"Vectors per thread in flight per step"_s,
                        ints({1, 2, 4, 8})),
        paramsParameter(u"ctas_per_sm"_s,
                        u"0: enough blocks for one pass; k > 0: k blocks per SM in a grid-stride "
                        "loop"_s,
                        ints({0, 1, 2, 4, 8})),
    };
}

void ElementwiseFamily::normalize(Strategy& s) const {
    s.family = id();
    s.mma = u"fma"_s;
    s.blockM = 1;
    s.blockN = std::min(512, 32 * s.warps);
    setTileFieldsUnused(s);
}

QStringList ElementwiseFamily::constraints(const Strategy& s, const Task& task,
                                           const DeviceInfo& device) const {
    const ElementwiseConfig c = ElementwiseConfig::fromStrategy(s);
    QStringList problems;
    if (!supports(task, device))
        problems << u"family elementwise needs an elementwise task with f32, f16 or bf16 tensors "
                    "on an sm_70 or newer GPU (task %1, device %2 sm_%3%4)"_s
                        .arg(task.summary(), device.name)
                        .arg(device.ccMajor)
                        .arg(device.ccMinor);
    if (s.family != id())
        problems << u"family: \"%1\" is not %2"_s.arg(s.family, id());
    if (s.warps < 2 || s.warps > 16 || (s.warps & (s.warps - 1)) != 0)
        problems << u"warps=%1: must be 2, 4, 8 or 16 (the tail needs at least VEC threads)"_s.arg(
            s.warps);
    // Vectors of a 1-D tensor start at multiples of VEC from a 256-byte aligned base, so only
    // the access size limits the width.
    if (s.vectorWidth != 1 && s.vectorWidth != 2 && s.vectorWidth != 4 && s.vectorWidth != 8)
        problems << u"vectorWidth=%1: must be 1, 2, 4 or 8"_s.arg(s.vectorWidth);
    for (const QString& d : dtypes(task)) {
        if (s.vectorWidth * Task::dtypeBytes(d) > 16)
            problems << u"vectorWidth=%1 with %2 is %3 bytes per access; the widest access is "
                        "16 bytes"_s.arg(s.vectorWidth)
                            .arg(d)
                            .arg(s.vectorWidth * Task::dtypeBytes(d));
    }
    const int v = c.vectorsPerThread;
    if (v != 1 && v != 2 && v != 4 && v != 8)
        problems << u"params.vectors_per_thread=%1: must be 1, 2, 4 or 8"_s.arg(v);
    else if (v * s.vectorWidth > 64)
        problems << u"vectors_per_thread=%1 x vectorWidth=%2 holds %3 floats per thread; at most "
                    "64"_s.arg(v)
                        .arg(s.vectorWidth)
                        .arg(v * s.vectorWidth);
    const int k = c.ctasPerSm;
    if (k != 0 && k != 1 && k != 2 && k != 4 && k != 8)
        problems << u"params.ctas_per_sm=%1: must be 0, 1, 2, 4 or 8"_s.arg(k);
    else if (k > 0 && k * s.warps * 32 > 2048)
        problems << u"ctas_per_sm=%1 x %2 threads exceeds the 2048 threads of an SM"_s.arg(k).arg(
            s.warps * 32);
    return problems;
}

ResourceEstimate ElementwiseFamily::resources(const Strategy& s, const Task&,
                                              const DeviceInfo& device) const {
    return estimateResources(s.warps * 32, 0, registerEstimate(ElementwiseConfig::fromStrategy(s)),
                             device);
}

Strategy ElementwiseFamily::defaultStrategy(const Task& task, const DeviceInfo&) const {
    Strategy s;
    s.family = id();
    int widest = 0;
    for (const QString& d : dtypes(task))
        widest = std::max(widest, Task::dtypeBytes(d));
    s.vectorWidth = 16 / std::max(widest, 1);
    s.warps = 8;
    s.params.insert(u"vectors_per_thread"_s, 2);
    s.params.insert(u"ctas_per_sm"_s, 0);
    normalize(s);
    s.rationale = u"Elementwise %1: 16-byte accesses (%2 elements), two vectors per thread in "
                  "flight, 256-thread blocks, one pass of the grid."_s
                      .arg(task.params.value(u"function"_s).toString())
                      .arg(s.vectorWidth);
    return s;
}

QString ElementwiseFamily::generate(const Strategy& s, const Task& task) const {
    const ElementwiseConfig c = ElementwiseConfig::fromStrategy(s);
    const bool silu = functionOf(task) == Function::Silu;
    const int k = c.ctasPerSm;
    QStringList header{
        u"Kevolve built-in kernel, family elementwise (generated; edit freely)."_s,
        u"Task: %1 (%2)."_s.arg(task.name, task.summary()),
        u"Strategy: %1 in fp32, %2-element accesses, %3 vectors per thread in flight, %4 threads "
        "per block, %5."_s.arg(silu ? u"SiLU"_s : u"GELU (erf form)"_s)
            .arg(s.vectorWidth)
            .arg(c.vectorsPerThread)
            .arg(s.warps * 32)
            .arg(k > 0 ? u"a persistent grid-stride loop of %1 blocks per SM"_s.arg(k)
                       : u"one pass of the grid"_s),
    };
    if (!s.rationale.isEmpty()) {
        header << u"Rationale:"_s;
        for (const QString& line : gemmcodegen::wrapText(s.rationale))
            header << u"  "_s + line;
    }
    const QStringList d = dtypes(task);
    TemplateValues values;
    values.set(u"HEADER"_s, gemmcodegen::headerComment(header))
        .flag(u"F16"_s, d.contains(u"f16"_s))
        .flag(u"BF16"_s, d.contains(u"bf16"_s))
        .set(u"X_T"_s, gemmcodegen::cudaType(task.dtypeOf(u"X"_s)))
        .set(u"Y_T"_s, gemmcodegen::cudaType(task.dtypeOf(u"Y"_s)))
        .set(u"ELEMENTS"_s, elementHelpers(d, s.vectorWidth))
        .set(u"WARPS"_s, s.warps)
        .set(u"VPT"_s, c.vectorsPerThread)
        .set(u"CTAS"_s, k)
        .flag(u"PERSISTENT"_s, k > 0)
        .flag(u"SILU"_s, silu)
        .set(u"CHECKS"_s, launchChecks(task, u"KEVOLVE_OP_ELEMENTWISE"_s));
    return cudatemplates::render(u"elementwise/elementwise.cu"_s, values);
}

} // namespace kev
