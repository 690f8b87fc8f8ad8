// A line diff of two texts (dtl's shortest edit script), aligned for a side-by-side view: a run of
// removed lines followed by added ones is paired row by row as changed lines.
#pragma once

#include <QString>
#include <QVector>

namespace kev {

struct DiffRow {
    enum class Kind { Same, Changed, Removed, Added };
    Kind kind = Kind::Same;
    // 1-based line numbers; 0 where the side has no line (Removed has no right, Added no left).
    int leftLine = 0;
    int rightLine = 0;
    QString left;
    QString right;
};

QVector<DiffRow> diffLines(const QString& left, const QString& right);

} // namespace kev
