#include "builtin/memorycodegen.h"

#include "builtin/cudatemplates.h"
#include "builtin/gemmcodegen.h"
#include "task.h"

#include <QJsonArray>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace kev::memorycodegen {

namespace {

TemplateValues dtypeFlags(const QString& dtype) {
    TemplateValues v;
    v.flag(u"F16"_s, dtype == u"f16")
        .flag(u"BF16"_s, dtype == u"bf16")
        .flag(u"F32"_s, dtype != u"f16" && dtype != u"bf16");
    return v;
}

} // namespace

QString elementHelpers(const QStringList& dtypes, int vectorWidth) {
    QString out;
    QStringList done;
    for (const QString& d : dtypes) {
        if (done.contains(d))
            continue;
        done << d;
        out += cudatemplates::render(u"memory/conversion.cu"_s, dtypeFlags(d));
    }
    return out + cudatemplates::render(u"memory/vectors.cu"_s,
                                       TemplateValues().set(u"VEC"_s, vectorWidth));
}

QString dtypeIncludes(const QStringList& dtypes) {
    return cudatemplates::render(u"memory/includes.cu"_s,
                                 TemplateValues()
                                     .flag(u"F16"_s, dtypes.contains(u"f16"_s))
                                     .flag(u"BF16"_s, dtypes.contains(u"bf16"_s)));
}

QString launchChecks(const Task& task, const QString& abiOp) {
    // The tensors in the task's order: inputs first, then the one output every memory-bound op
    // has (the template checks up to three inputs).
    const QStringList names = Task::tensorNames(task.op);
    const int inputs = std::clamp(int(names.size()) - 1, 1, 3);
    const auto dtype = [&](int i) {
        return i < names.size() ? gemmcodegen::abiDtype(task.dtypeOf(names.at(i))) : QString();
    };
    TemplateValues v;
    v.set(u"OP"_s, abiOp)
        .set(u"INPUTS"_s, inputs)
        .set(u"IN0"_s, dtype(0))
        .flag(u"HAS_IN1"_s, inputs > 1)
        .set(u"IN1"_s, dtype(1))
        .flag(u"HAS_IN2"_s, inputs > 2)
        .set(u"IN2"_s, dtype(2))
        .set(u"OUT0"_s, dtype(inputs));
    return cudatemplates::render(u"memory/launch_checks.cu"_s, v);
}

int maxVectorWidth(const Task& task, const QString& dtype) {
    const int bytes = Task::dtypeBytes(dtype);
    int width = 16 / bytes;
    while (width > 1 && task.leadingDimMultiple % width != 0)
        width /= 2;
    return width;
}

QStringList vectorWidthProblems(int vectorWidth, const Task& task, const QStringList& dtypes) {
    QStringList problems;
    if (vectorWidth != 1 && vectorWidth != 2 && vectorWidth != 4 && vectorWidth != 8) {
        problems << u"vectorWidth=%1: must be 1, 2, 4 or 8"_s.arg(vectorWidth);
        return problems;
    }
    for (const QString& d : dtypes) {
        if (vectorWidth * Task::dtypeBytes(d) > 16)
            problems << u"vectorWidth=%1 with %2 is %3 bytes per access; the widest access is "
                        "16 bytes"_s.arg(vectorWidth)
                            .arg(d)
                            .arg(vectorWidth * Task::dtypeBytes(d));
    }
    if (task.leadingDimMultiple % vectorWidth != 0)
        problems << u"vectorWidth=%1 does not divide alignment.leading_dim_multiple %2, so rows "
                    "are not aligned to a vector"_s.arg(vectorWidth)
                        .arg(task.leadingDimMultiple);
    return problems;
}

QJsonArray ints(std::initializer_list<int> values) {
    QJsonArray out;
    for (int v : values)
        out.append(v);
    return out;
}

QJsonArray strings(std::initializer_list<const char16_t*> values) {
    QJsonArray out;
    for (const char16_t* v : values)
        out.append(QString::fromUtf16(v));
    return out;
}

void setTileFieldsUnused(Strategy& s) {
    s.blockK = 16;
    s.warpM = 0;
    s.warpN = 0;
    s.stages = 1;
    s.smemLayout = u"plain"_s;
    s.smemPaddingBytes = 0;
    s.swizzleBytes = 0;
    s.splitK = 1;
    s.raster = u"row"_s;
    s.groupSize = 1;
    s.epilogue = u"direct"_s;
}

int intParam(const Strategy& s, const QString& name, int fallback) {
    return s.params.value(name).toInt(fallback);
}

QString stringParam(const Strategy& s, const QString& name) {
    return s.params.value(name).toString();
}

} // namespace kev::memorycodegen
