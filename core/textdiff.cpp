#include "textdiff.h"

#include <dtl/dtl.hpp>

#include <QStringList>

#include <algorithm>
#include <vector>

using namespace Qt::StringLiterals;

namespace kev {

namespace {

std::vector<QString> lines(const QString& text) {
    QStringList list = text.split(u'\n');
    // A final newline does not start another line.
    if (!list.isEmpty() && list.last().isEmpty())
        list.removeLast();
    return std::vector<QString>(list.begin(), list.end());
}

// The shortest edit script, deletions before additions where lines are replaced.
auto editScript(const std::vector<QString>& a, const std::vector<QString>& b) {
    dtl::Diff<QString> diff(a, b, true);
    diff.compose();
    return diff.getSes().getSequence();
}

struct Edit {
    char op;              // ' ', '-', '+'
    qsizetype beforeLine; // 0-based position in `before` (where an added line goes)
    qsizetype afterLine;  // 0-based position in `after`
    QString text;
};

} // namespace

QVector<DiffRow> diffLines(const QString& left, const QString& right) {
    const std::vector<QString> a = lines(left);
    const std::vector<QString> b = lines(right);
    const auto sequence = editScript(a, b);

    QVector<DiffRow> rows;
    QVector<DiffRow> removed;
    QVector<DiffRow> added;
    const auto flush = [&] {
        const qsizetype paired = std::min(removed.size(), added.size());
        for (qsizetype i = 0; i < paired; ++i)
            rows.append({DiffRow::Kind::Changed, removed[i].leftLine, added[i].rightLine,
                         removed[i].left, added[i].right});
        for (qsizetype i = paired; i < removed.size(); ++i)
            rows.append(removed[i]);
        for (qsizetype i = paired; i < added.size(); ++i)
            rows.append(added[i]);
        removed.clear();
        added.clear();
    };
    for (const auto& [text, info] : sequence) {
        switch (info.type) {
        case dtl::SES_DELETE:
            removed.append({DiffRow::Kind::Removed, int(info.beforeIdx), 0, text, QString()});
            break;
        case dtl::SES_ADD:
            added.append({DiffRow::Kind::Added, 0, int(info.afterIdx), QString(), text});
            break;
        default:
            flush();
            rows.append({DiffRow::Kind::Same, int(info.beforeIdx), int(info.afterIdx), text, text});
            break;
        }
    }
    flush();
    return rows;
}

QString lineDiff(const QString& before, const QString& after, int context) {
    const QStringList beforeLines = before.split(u'\n');
    const QStringList afterLines = after.split(u'\n');
    if (beforeLines == afterLines)
        return {};
    QVector<Edit> edits;
    qsizetype ai = 0;
    qsizetype bi = 0;
    for (const auto& [text, info] : editScript({beforeLines.begin(), beforeLines.end()},
                                               {afterLines.begin(), afterLines.end()})) {
        switch (info.type) {
        case dtl::SES_DELETE:
            edits.append({'-', ai++, bi, text});
            break;
        case dtl::SES_ADD:
            edits.append({'+', ai, bi++, text});
            break;
        default:
            edits.append({' ', ai++, bi++, text});
            break;
        }
    }

    QStringList out;
    qsizetype k = 0;
    while (k < edits.size()) {
        if (edits.at(k).op == ' ') {
            ++k;
            continue;
        }
        // A hunk: from `context` lines before this change to `context` lines after the last
        // change that is no more than 2 * context unchanged lines from the next.
        const qsizetype start = std::max<qsizetype>(0, k - context);
        qsizetype end = k;
        qsizetype quiet = 0;
        for (qsizetype e = k; e < edits.size(); ++e) {
            if (edits.at(e).op != ' ') {
                end = e;
                quiet = 0;
            } else if (++quiet > 2 * context) {
                break;
            }
        }
        end = std::min<qsizetype>(edits.size() - 1, end + context);
        qsizetype beforeCount = 0;
        qsizetype afterCount = 0;
        QStringList body;
        for (qsizetype e = start; e <= end; ++e) {
            const Edit& edit = edits.at(e);
            beforeCount += edit.op != '+';
            afterCount += edit.op != '-';
            body << QChar::fromLatin1(edit.op) + edit.text;
        }
        out << u"@@ -%1,%2 +%3,%4 @@"_s.arg(edits.at(start).beforeLine + 1)
                   .arg(beforeCount)
                   .arg(edits.at(start).afterLine + 1)
                   .arg(afterCount);
        out << body;
        k = end + 1;
    }
    return out.join(u'\n');
}

} // namespace kev
