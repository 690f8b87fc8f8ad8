#include "textdiff.h"

#include <dtl/dtl.hpp>

#include <vector>

namespace kev {

namespace {

std::vector<QString> lines(const QString& text) {
    QStringList list = text.split(u'\n');
    // A final newline does not start another line.
    if (!list.isEmpty() && list.last().isEmpty())
        list.removeLast();
    return std::vector<QString>(list.begin(), list.end());
}

} // namespace

QVector<DiffRow> diffLines(const QString& left, const QString& right) {
    const std::vector<QString> a = lines(left);
    const std::vector<QString> b = lines(right);
    dtl::Diff<QString> diff(a, b, true);
    diff.compose();
    const auto sequence = diff.getSes().getSequence();

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

} // namespace kev
