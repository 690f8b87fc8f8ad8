#include "llm/privatepaths.h"

#include <QRegularExpression>

using namespace Qt::Literals::StringLiterals;

namespace kev {

QString withoutPrivatePaths(const QString& text) {
    // An absolute path: '/' not after a word, a '.', a closing bracket or another '/' (so that
    // "a / b", "x)/2" and "//" comments in code excerpts are left alone), one or more folders,
    // then the file. Windows drive paths ("C:\...\") likewise.
    static const QRegularExpression path(
        u"(?<![\\w.)\\]/])(/(?:[\\w.+~@-]+/)+)(?=[\\w.+~@-])|(?<![\\w])[A-Za-z]:\\\\(?:[^\\\\\\s:*?\"<>|]+\\\\)+"_s);
    QString out;
    qsizetype last = 0;
    auto it = path.globalMatch(text);
    while (it.hasNext()) {
        const auto match = it.next();
        out += QStringView(text).mid(last, match.capturedStart() - last);
        const QString folders = match.captured(0);
        const qsizetype include = folders.lastIndexOf(u"/include/"_s);
        if (include >= 0)
            out += folders.mid(include + 9);
        last = match.capturedEnd();
    }
    out += QStringView(text).mid(last);
    return out;
}

} // namespace kev
