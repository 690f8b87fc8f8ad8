// Line diffs of two texts, one engine (dtl's shortest edit script) for both uses: the rows of the
// workbench's side-by-side view, and the `diff -u` hunks the knowledge store keeps of a person's
// edit (what was changed, not both files).
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

// Aligned for a side-by-side view: a run of removed lines followed by added ones is paired row by
// row as changed lines. A final newline does not start another line.
QVector<DiffRow> diffLines(const QString& left, const QString& right);

// The hunks that turn `before` into `after`, each headed "@@ -a,b +c,d @@", with `context`
// unchanged lines around each change; empty when the texts have the same lines.
QString lineDiff(const QString& before, const QString& after, int context = 1);

} // namespace kev
