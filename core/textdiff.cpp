#include "textdiff.h"

#include <QStringList>
#include <QVector>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace kev {

namespace {

struct Edit {
    char op; // ' ', '-', '+'
    qsizetype beforeLine;
    qsizetype afterLine;
    QString text;
};

} // namespace

QString lineDiff(const QString& before, const QString& after, int context) {
    const QStringList a = before.split(u'\n');
    const QStringList b = after.split(u'\n');
    if (a == b)
        return {};
    // The common head and tail are cut first, so an edit in a long file costs little.
    qsizetype head = 0;
    while (head < a.size() && head < b.size() && a.at(head) == b.at(head))
        ++head;
    qsizetype tail = 0;
    while (tail < a.size() - head && tail < b.size() - head &&
           a.at(a.size() - 1 - tail) == b.at(b.size() - 1 - tail))
        ++tail;
    const qsizetype n = a.size() - head - tail;
    const qsizetype m = b.size() - head - tail;
    if ((n + 1) * (m + 1) > 4'000'000)
        return u"@@ %1 lines replaced by %2 lines (too large to compare line by line) @@"_s.arg(n)
            .arg(m);
    // Longest common subsequence of the middle parts.
    QVector<int> lcs((n + 1) * (m + 1), 0);
    const auto at = [&](qsizetype i, qsizetype j) -> int& { return lcs[i * (m + 1) + j]; };
    for (qsizetype i = n - 1; i >= 0; --i) {
        for (qsizetype j = m - 1; j >= 0; --j) {
            at(i, j) = a.at(head + i) == b.at(head + j) ? at(i + 1, j + 1) + 1
                                                        : std::max(at(i + 1, j), at(i, j + 1));
        }
    }
    QVector<Edit> edits;
    for (qsizetype i = 0; i < head; ++i)
        edits.append({' ', i, i, a.at(i)});
    qsizetype i = 0;
    qsizetype j = 0;
    while (i < n || j < m) {
        if (i < n && j < m && a.at(head + i) == b.at(head + j)) {
            edits.append({' ', head + i, head + j, a.at(head + i)});
            ++i;
            ++j;
        } else if (i < n && (j == m || at(i + 1, j) >= at(i, j + 1))) {
            edits.append({'-', head + i, head + j, a.at(head + i)});
            ++i;
        } else {
            edits.append({'+', head + i, head + j, b.at(head + j)});
            ++j;
        }
    }
    for (qsizetype t = 0; t < tail; ++t)
        edits.append({' ', a.size() - tail + t, b.size() - tail + t, a.at(a.size() - tail + t)});

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
