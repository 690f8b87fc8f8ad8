#include "windowstate.h"

#include <QSettings>

namespace kev {

using namespace Qt::StringLiterals;

WindowState WindowState::load(QSettings& settings) {
    WindowState s;
    s.geometry = settings.value(u"window/geometry"_s).toByteArray();
    s.dockState = settings.value(u"window/state"_s).toByteArray();
    s.agentSplitter = settings.value(u"window/agentSplitter"_s).toByteArray();
    s.verticalSplitter = settings.value(u"window/verticalSplitter"_s).toByteArray();
    s.lowerTab = settings.value(u"window/lowerTab"_s, 0).toInt();
    s.chartMode = settings.value(u"window/chartMode"_s, -1).toInt();
    s.lastSession = settings.value(u"sessions/last"_s).toString();
    return s;
}

void WindowState::save(QSettings& settings) const {
    settings.setValue(u"window/geometry"_s, geometry);
    settings.setValue(u"window/state"_s, dockState);
    settings.setValue(u"window/agentSplitter"_s, agentSplitter);
    settings.setValue(u"window/verticalSplitter"_s, verticalSplitter);
    settings.setValue(u"window/lowerTab"_s, lowerTab);
    settings.setValue(u"window/chartMode"_s, chartMode);
    settings.setValue(u"sessions/last"_s, lastSession);
}

} // namespace kev
