// kevolve: the workbench window. `kevolve [SESSION_DIR]` opens a recorded session.
#include "mainwindow.h"

#include "core/metatypes.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>

using namespace Qt::StringLiterals;

int main(int argc, char** argv) {
    QApplication app(argc, argv);
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
    parser.process(app);

    kev::MainWindow window;
    window.show();
    const QStringList args = parser.positionalArguments();
    if (!args.isEmpty()) {
        QString error;
        if (!window.openSession(args.first(), &error)) {
            qCritical("kevolve: cannot open %s: %s", qPrintable(args.first()), qPrintable(error));
            return 2;
        }
    }
    return QApplication::exec();
}
