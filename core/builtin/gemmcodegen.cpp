#include "builtin/gemmcodegen.h"

#include "builtin/cudatemplates.h"
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
    const QStringList types{task.a, task.b, task.c};
    return cudatemplates::render(u"memory/includes.cu"_s,
                                 TemplateValues()
                                     .flag(u"F16"_s, types.contains(u"f16"_s))
                                     .flag(u"BF16"_s, types.contains(u"bf16"_s)));
}

QString launchChecks(const Task& task) {
    return cudatemplates::render(u"gemm/launch_checks.cu"_s, TemplateValues()
                                                                 .set(u"A"_s, abiDtype(task.a))
                                                                 .set(u"B"_s, abiDtype(task.b))
                                                                 .set(u"C"_s, abiDtype(task.c)));
}

QString outputHelpers(const QString& dtype) {
    return cudatemplates::render(u"gemm/output_helpers.cu"_s,
                                 TemplateValues()
                                     .flag(u"F16"_s, dtype == u"f16")
                                     .flag(u"BF16"_s, dtype == u"bf16")
                                     .flag(u"F32"_s, dtype != u"f16" && dtype != u"bf16"));
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
