#include "examples.h"

#include "sessionstore.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

namespace kev {

namespace {

const QString kRelativeDir = QStringLiteral("share/kevolve/examples");
// bin/ -> prefix (installed); app/kevolve/ -> app/ -> build/<preset> (build tree); tests sit two
// levels deep as well. A third parent leaves room for a nested build folder without searching far.
constexpr int kParents = 3;

bool isDir(const QString& path) {
    return !path.isEmpty() && QFileInfo(path).isDir();
}

} // namespace

QString exampleSessionsDirFrom(const QString& programDir) {
    const QString fromEnv = qEnvironmentVariable("KEVOLVE_EXAMPLES");
    if (isDir(fromEnv))
        return QDir(fromEnv).absolutePath();
    if (!programDir.isEmpty()) {
        QDir dir(programDir);
        for (int level = 0; level <= kParents; ++level) {
            const QString candidate = dir.absoluteFilePath(kRelativeDir);
            if (isDir(candidate))
                return QDir::cleanPath(candidate);
            if (!dir.cdUp())
                break;
        }
    }
    const QString system =
        QStandardPaths::locate(QStandardPaths::GenericDataLocation,
                               QStringLiteral("kevolve/examples"), QStandardPaths::LocateDirectory);
    return isDir(system) ? QDir::cleanPath(system) : QString();
}

QString exampleSessionsDir() {
    // Without a QCoreApplication (a library caller) only the override and the data folders apply.
    return exampleSessionsDirFrom(
        QCoreApplication::instance() ? QCoreApplication::applicationDirPath() : QString());
}

QStringList exampleSessionsIn(const QString& dir) {
    if (!isDir(dir))
        return {};
    if (SessionStore::isSession(dir))
        return {QDir(dir).absolutePath()};
    QStringList sessions;
    const QDir root(dir);
    for (const QString& name : root.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
        if (SessionStore::isSession(root.filePath(name)))
            sessions << QDir(root.filePath(name)).absolutePath();
    }
    return sessions;
}

QStringList exampleSessions() {
    return exampleSessionsIn(exampleSessionsDir());
}

} // namespace kev
