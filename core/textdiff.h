// A line diff for the record of a person's edit (the knowledge store keeps what was changed, not
// both files): the changed lines with "-" and "+" and a little context, as in `diff -u`.
#pragma once

#include <QString>

namespace kev {

// The hunks that turn `before` into `after`, each headed "@@ -a,b +c,d @@", with `context`
// unchanged lines around each change; empty when the texts have the same lines. Files too large
// to compare line by line (more than 4 million line pairs) get a one-line summary instead.
QString lineDiff(const QString& before, const QString& after, int context = 1);

} // namespace kev
