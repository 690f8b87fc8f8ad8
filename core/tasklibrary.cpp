// TaskLibrary: the built-in tasks and the user's task files.
#include "jsonschema.h"
#include "safefile.h"
#include "task.h"

#include <QDir>
#include <QFileInfo>

#include <utility>

namespace kev {

TaskLibrary::TaskLibrary(QStringList userDirs)
    : m_userDirs(std::move(userDirs)) {}

std::optional<Task> TaskLibrary::loadFile(const QString& path, QString* error) {
    QString readError;
    const auto text = readRegularFile(path, kMaxTaskFileBytes, &readError);
    const auto json = text ? parseJsonObject(*text, &readError) : std::nullopt;
    if (!json) {
        if (error)
            *error = text ? path + QStringLiteral(": ") + readError : readError;
        return std::nullopt;
    }
    QString parseError;
    auto task = Task::fromJson(*json, &parseError);
    // The text as written too: QJsonDocument keeps the last of duplicate keys silently and reads
    // 4096.0 as 4096; the harness's reader refuses both.
    if (task)
        parseError = harnessTaskError(*text);
    if (!task || !parseError.isEmpty()) {
        if (error)
            *error = path + QStringLiteral(": ") + parseError;
        return std::nullopt;
    }
    task->sourcePath = path;
    if (task->reference == QLatin1String("file") && !resolveReferenceFile(*task, &parseError)) {
        if (error)
            *error = path + QStringLiteral(": ") + parseError;
        return std::nullopt;
    }
    return task;
}

bool TaskLibrary::resolveReferenceFile(Task& task, QString* error) {
    const QString written = task.referenceFile;
    QString resolved = written;
    if (QDir::isRelativePath(written)) {
        if (task.sourcePath.startsWith(QLatin1String(":/"))) {
            if (error)
                *error = QStringLiteral("task.reference.file: \"") + written +
                         QStringLiteral("\" is relative, and a built-in task has no folder to "
                                        "resolve it against");
            return false;
        }
        resolved = QFileInfo(task.sourcePath).absoluteDir().absoluteFilePath(written);
    }
    resolved = QDir::cleanPath(resolved);
    if (!QFileInfo(resolved).isFile()) {
        if (error)
            *error = QStringLiteral("task.reference.file: no such file ") + resolved +
                     (resolved == written ? QString()
                                          : QStringLiteral(" (\"") + written +
                                                QStringLiteral("\" is relative to the task "
                                                               "file's folder)"));
        return false;
    }
    // The harness resolves an inline task's reference on its own host, where only an absolute
    // path means the same file (PROTOCOL.md, "Requests").
    task.referenceFile = resolved;
    if (!task.document.isEmpty())
        task.document.insert(QStringLiteral("reference"),
                             QJsonObject{{QStringLiteral("file"), resolved}});
    return true;
}

QVector<Task> TaskLibrary::tasks(QStringList* problems) const {
    QVector<Task> result;
    QStringList names;
    QStringList files;
    const QDir builtin(QStringLiteral(":/tasks"));
    for (const auto& entry : builtin.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name))
        files << builtin.filePath(entry);
    for (const auto& dir : m_userDirs) {
        const QDir d(dir);
        for (const auto& entry : d.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name))
            files << d.filePath(entry);
    }
    for (const auto& file : files) {
        QString error;
        auto task = loadFile(file, &error);
        if (!task) {
            if (problems)
                problems->append(error);
            continue;
        }
        if (names.contains(task->name))
            continue;
        names << task->name;
        result.append(*task);
    }
    return result;
}

std::optional<Task> TaskLibrary::resolve(const QString& nameOrPath, QString* error) const {
    if (nameOrPath.isEmpty()) {
        if (error)
            *error = QStringLiteral("no task given");
        return std::nullopt;
    }
    const QFileInfo info(nameOrPath);
    if (info.isFile())
        return loadFile(info.absoluteFilePath(), error);
    if (nameOrPath.contains(u'/') || nameOrPath.endsWith(QLatin1String(".json"))) {
        if (error)
            *error = nameOrPath + QStringLiteral(": no such task file");
        return std::nullopt;
    }
    QStringList names;
    for (const auto& task : tasks()) {
        if (task.name == nameOrPath)
            return task;
        names << task.name;
    }
    if (error)
        *error = QStringLiteral("unknown task \"") + nameOrPath + QStringLiteral("\" (known: ") +
                 names.join(QStringLiteral(", ")) + u')';
    return std::nullopt;
}

} // namespace kev
