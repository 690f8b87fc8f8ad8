#include "builtin/gemmcodegen.h"

#include "task.h"

#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace kev::gemmcodegen {

QString cudaType(const QString& dtype) {
    if (dtype == u"f16")
        return QStringLiteral("__half");
    if (dtype == u"bf16")
        return QStringLiteral("__nv_bfloat16");
    return QStringLiteral("float");
}

QString abiDtype(const QString& dtype) {
    if (dtype == u"f16")
        return QStringLiteral("KEVOLVE_F16");
    if (dtype == u"bf16")
        return QStringLiteral("KEVOLVE_BF16");
    return QStringLiteral("KEVOLVE_F32");
}

QString fromFloat(const QString& dtype, const QString& x) {
    if (dtype == u"f16")
        return u"__float2half_rn("_s + x + u')';
    if (dtype == u"bf16")
        return u"__float2bfloat16_rn("_s + x + u')';
    return x;
}

QString toFloat(const QString& dtype, const QString& x) {
    if (dtype == u"f16")
        return u"__half2float("_s + x + u')';
    if (dtype == u"bf16")
        return u"__bfloat162float("_s + x + u')';
    return x;
}

QString dtypeIncludes(const Task& task) {
    QString out;
    const QStringList types{task.a, task.b, task.c};
    if (types.contains(u"f16"_s))
        out += u"#include <cuda_fp16.h>\n"_s;
    if (types.contains(u"bf16"_s))
        out += u"#include <cuda_bf16.h>\n"_s;
    return out;
}

QString launchChecks(const Task& task) {
    return render(
        uR"(    // This file was generated for one task; refuse any other so a mismatch is an error.
    if (args->abi_version != KEVOLVE_ABI_VERSION || args->op != KEVOLVE_OP_GEMM ||
        args->num_inputs != 2 || args->num_outputs != 1)
        return 1;
    if (args->inputs[0].dtype != ${A} || args->inputs[1].dtype != ${B} ||
        args->outputs[0].dtype != ${C})
        return 2;
    if (args->inputs[0].stride[1] != 1 || args->inputs[1].stride[1] != 1 ||
        args->outputs[0].stride[1] != 1)
        return 3;
)"_s,
        {{u"A"_s, abiDtype(task.a)}, {u"B"_s, abiDtype(task.b)}, {u"C"_s, abiDtype(task.c)}});
}

QString outputHelpers(const QString& dtype) {
    QString conversions;
    if (dtype == u"f16") {
        conversions =
            uR"CU(__device__ __forceinline__ float outputToFloat(Output x) { return __half2float(x); }
__device__ __forceinline__ void storeOutputPair(Output* p, float v0, float v1)
{
    *reinterpret_cast<__half2*>(p) = __floats2half2_rn(v0, v1);
}
)CU"_s;
    } else if (dtype == u"bf16") {
        conversions =
            uR"CU(__device__ __forceinline__ float outputToFloat(Output x) { return __bfloat162float(x); }
__device__ __forceinline__ void storeOutputPair(Output* p, float v0, float v1)
{
    *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(v0, v1);
}
)CU"_s;
    } else {
        conversions = uR"CU(__device__ __forceinline__ float outputToFloat(Output x) { return x; }
__device__ __forceinline__ void storeOutputPair(Output* p, float v0, float v1)
{
    *reinterpret_cast<float2*>(p) = make_float2(v0, v1);
}
)CU"_s;
    }
    return conversions + uR"CU(
// C = alpha * (x0, x1) + beta * C at columns col and col + 1 of `row`. N is a multiple of 8 and col
// is even, so col < N means both columns are inside. C is read only when beta is non-zero: the
// harness poisons it, and 0 * NaN is NaN.
__device__ __forceinline__ void epiloguePair(Output* __restrict__ C, long long ldc, int M, int N,
                                             int row, int col, float x0, float x1, float alpha,
                                             float beta)
{
    if (row >= M || col >= N)
        return;
    Output* p = C + row * ldc + col;
    float v0 = alpha * x0;
    float v1 = alpha * x1;
    if (beta != 0.0f) {
        v0 += beta * outputToFloat(p[0]);
        v1 += beta * outputToFloat(p[1]);
    }
    storeOutputPair(p, v0, v1);
}
)CU"_s;
}

QStringList wrapText(const QString& text, int width) {
    QStringList lines;
    QString line;
    const QStringList words = text.simplified().split(u' ', Qt::SkipEmptyParts);
    for (const QString& word : words) {
        if (!line.isEmpty() && line.size() + 1 + word.size() > width) {
            lines << line;
            line.clear();
        }
        line += line.isEmpty() ? word : u' ' + word;
    }
    if (!line.isEmpty())
        lines << line;
    return lines;
}

QString render(QStringView text, const QMap<QString, QString>& vars, QStringList* missing) {
    static const QRegularExpression placeholder(u"\\$\\{([A-Z0-9_]+)\\}"_s);
    QString out;
    out.reserve(text.size() + text.size() / 4);
    qsizetype last = 0;
    auto it = placeholder.globalMatch(text);
    while (it.hasNext()) {
        const auto match = it.next();
        out += QStringView(text).mid(last, match.capturedStart() - last);
        const QString name = match.captured(1);
        const auto value = vars.constFind(name);
        if (value == vars.constEnd()) {
            out += match.captured(0);
            if (missing)
                missing->append(name);
        } else {
            out += *value;
        }
        last = match.capturedEnd();
    }
    out += QStringView(text).mid(last);
    return out;
}

QString headerComment(const QStringList& lines) {
    QString out;
    for (const QString& line : lines)
        out += line.isEmpty() ? u"//\n"_s : u"// "_s + line + u'\n';
    return out;
}

} // namespace kev::gemmcodegen
