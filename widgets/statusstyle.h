// How a harness status or a gate decision looks everywhere in the window: one colour, one icon and
// one label per status, so the timeline, the chart and the panels agree.
#pragma once

#include <QColor>
#include <QIcon>
#include <QString>

namespace kev {

class StatusStyle {
public:
    // For a report status ("ok", "compile_error", ...); unknown strings get a neutral grey.
    static QColor color(const QString& status);
    static QIcon icon(const QString& status, bool suspicious = false);
    static QString label(const QString& status);
    // For a decision kind ("approved", "rejected", ...).
    static QString decisionLabel(const QString& decision);
    static QColor decisionColor(const QString& decision);

    // A speedup as "0.93×".
    static QString speedup(double value);
};

} // namespace kev
