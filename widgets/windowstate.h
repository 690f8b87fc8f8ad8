// How the window looked when it was closed: geometry, docks and toolbars, the splitters between
// the panels, the lower tab, the chart mode the person picked and the session that was open. Kept
// in QSettings beside AppSettings and restored on the next start.
#pragma once

#include <QByteArray>
#include <QString>

class QSettings;

namespace kev {

struct WindowState {
    QByteArray geometry;
    QByteArray dockState;
    QByteArray agentSplitter;
    QByteArray verticalSplitter;
    int lowerTab = 0;
    // PerformanceChart::Mode as an int; -1 = the person never picked one (the task decides).
    int chartMode = -1;
    // The session open at close; empty = none (the start page shows).
    QString lastSession;

    static WindowState load(QSettings& settings);
    void save(QSettings& settings) const;
};

} // namespace kev
