#include "compilelog.h"

#include <QRegularExpression>

namespace kev {

using namespace Qt::StringLiterals;

QVector<CompileDiagnostic> parseCompileLog(const QString& log) {
    static const QRegularExpression frontEnd(
        u"^(.*\\.cu)\\((\\d+)\\): (error|warning)[^:]*: (.*)$"_s);
    static const QRegularExpression hostCompiler(
        u"^(.*\\.cu):(\\d+):(\\d+): (fatal error|error|warning): (.*)$"_s);
    QVector<CompileDiagnostic> result;
    const QStringList lines = log.split(u'\n');
    for (const QString& raw : lines) {
        const QString line = raw.trimmed();
        if (const auto m = frontEnd.match(line); m.hasMatch()) {
            result.append({m.captured(2).toInt(), 0, m.captured(3) == u"error", m.captured(4)});
        } else if (const auto h = hostCompiler.match(line); h.hasMatch()) {
            result.append({h.captured(2).toInt(), h.captured(3).toInt(),
                           h.captured(4) != u"warning", h.captured(5)});
        }
    }
    return result;
}

} // namespace kev
