#include "llm/promptlibrary.h"

#include <QDir>
#include <QFile>
#include <QProcessEnvironment>
#include <QStandardPaths>

using namespace Qt::Literals::StringLiterals;

namespace kev {

namespace {

std::optional<QString> readText(const QString& path, QString* error) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        if (error)
            *error = u"cannot read %1: %2"_s.arg(path, file.errorString());
        return std::nullopt;
    }
    return QString::fromUtf8(file.readAll());
}

} // namespace

PromptLibrary::PromptLibrary(QStringList overrideDirs)
    : m_overrideDirs(std::move(overrideDirs)) {}

QStringList PromptLibrary::defaultOverrideDirs() {
    QStringList dirs;
    const QString fromEnvironment =
        QProcessEnvironment::systemEnvironment().value(u"KEVOLVE_PROMPTS_DIR"_s);
    if (!fromEnvironment.isEmpty())
        dirs << fromEnvironment;
    const QString config = QStandardPaths::writableLocation(QStandardPaths::GenericConfigLocation);
    if (!config.isEmpty())
        dirs << config + u"/kevolve/prompts"_s;
    return dirs;
}

QStringList PromptLibrary::builtinNames() {
    QStringList names;
    const QStringList files = QDir(u":/prompts"_s).entryList({u"*.txt"_s}, QDir::Files);
    for (const QString& file : files)
        names << file.chopped(4);
    return names;
}

std::optional<PromptTemplate> PromptLibrary::load(const QString& name, QString* error) const {
    const QString file = name + u".txt"_s;
    for (const QString& dir : m_overrideDirs) {
        const QString path = QDir(dir).filePath(file);
        if (!QFile::exists(path))
            continue;
        const auto text = readText(path, error);
        if (!text)
            return std::nullopt;
        return PromptTemplate(name, *text, path);
    }
    const QString resource = u":/prompts/"_s + file;
    if (!QFile::exists(resource)) {
        if (error)
            *error = u"no prompt template named '%1' (looked for %2 in %3 and the built-in "
                     u"templates)"_s.arg(name, file,
                                         m_overrideDirs.isEmpty() ? u"no user folder"_s
                                                                  : m_overrideDirs.join(u", "_s));
        return std::nullopt;
    }
    const auto text = readText(resource, error);
    if (!text)
        return std::nullopt;
    return PromptTemplate(name, *text, resource);
}

QString PromptLibrary::abiText() {
    QString error;
    return readText(u":/prompts/abi.h"_s, &error).value_or(QString());
}

} // namespace kev
