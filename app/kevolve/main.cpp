// kevolve: the workbench window. `kevolve [SESSION_DIR]` opens a recorded session; without one it
// reopens the session of the last start, or shows the start page.
#include "mainwindow.h"
#include "stallprobe.h"

#include "core/metatypes.h"

#include <QCommandLineParser>
#include <QIcon>

using namespace Qt::StringLiterals;

int main(int argc, char** argv) {
    kev::EventTimingApplication app(argc, argv);
    QApplication::setOrganizationName(u"kevolve"_s);
    QApplication::setApplicationName(u"kevolve"_s);
    QApplication::setApplicationVersion(QStringLiteral(KEVOLVE_VERSION));
    QApplication::setDesktopFileName(u"io.github.kevolve.Kevolve"_s);
    QApplication::setWindowIcon(QIcon(u":/icons/kevolve.svg"_s));
    kev::registerMetaTypes();

    QCommandLineParser parser;
    parser.setApplicationDescription(u"Agents write GPU kernels; real hardware judges them."_s);
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(u"session"_s, u"A session folder to open."_s, u"[SESSION_DIR]"_s);
    const QCommandLineOption stallProbe(
        u"debug-stall-probe"_s,
        u"Measure the GUI's event loop during each run and log, when the run ends, the worst "
        "delay and the slowest events (receiver and event type) to stderr."_s);
    parser.addOption(stallProbe);
    parser.process(app);

    kev::MainWindow window;
    kev::StallProbe probe;
    if (parser.isSet(stallProbe)) {
        app.setTiming(true);
        QObject::connect(window.engine(), &kev::Engine::stateChanged, &probe,
                         [&probe, &app](kev::Engine::State state) {
                             if (state != kev::Engine::State::Starting)
                                 return;
                             app.resetTiming();
                             probe.start();
                         });
        const auto report = [&probe, &app] {
            if (!probe.isRunning())
                return;
            probe.stop();
            qInfo("kevolve: stall probe: %s", qPrintable(probe.summary()));
            for (const QString& line : probe.worstGapEvents())
                qInfo("kevolve: stall probe: in the worst gap: %s", qPrintable(line));
            for (const QString& line : probe.busiestGapEvents())
                qInfo("kevolve: stall probe: in the busiest gap: %s", qPrintable(line));
            for (const auto& e : app.slowest())
                qInfo("kevolve: stall probe: %4lld ms GUI-thread CPU (%lld ms wall) in %s", e.cpuMs,
                      e.wallMs, qPrintable(e.what));
        };
        QObject::connect(window.engine(), &kev::Engine::finished, &probe, report);
        QObject::connect(window.engine(), &kev::Engine::failed, &probe, report);
    }
    window.show();
    const QStringList args = parser.positionalArguments();
    if (!args.isEmpty()) {
        QString error;
        if (!window.openSession(args.first(), &error)) {
            qCritical("kevolve: cannot open %s: %s", qPrintable(args.first()), qPrintable(error));
            return 2;
        }
    } else {
        window.restoreLastSession();
    }
    return QApplication::exec();
}
