#include "builtin/gemmcodegen.h"

#include "builtin/cudatemplates.h"
#include "task.h"

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

QString headerComment(const QStringList& lines) {
    QString out;
    for (const QString& line : lines)
        out += line.isEmpty() ? u"//\n"_s : u"// "_s + line + u'\n';
    return out;
}

} // namespace kev::gemmcodegen
