#include "keystore.h"

namespace kev {

EnvironmentKeyStore::EnvironmentKeyStore(QProcessEnvironment environment)
    : m_environment(std::move(environment)) {}

QString EnvironmentKeyStore::variableFor(const QString& service) {
    QString name;
    for (const QChar c : service)
        name += (c.isLetterOrNumber() && c.unicode() < 128) ? c.toUpper() : QChar(u'_');
    return name + QStringLiteral("_API_KEY");
}

std::optional<QString> EnvironmentKeyStore::key(const QString& service) {
    if (!service.isEmpty()) {
        const QString specific = m_environment.value(variableFor(service));
        if (!specific.isEmpty())
            return specific;
    }
    const QString general = m_environment.value(QStringLiteral("KEVOLVE_API_KEY"));
    if (!general.isEmpty())
        return general;
    return std::nullopt;
}

std::optional<QString> EnvironmentKeyStore::ownKey(const QString& service) {
    const QString specific = m_environment.value(variableFor(service));
    if (service.isEmpty() || specific.isEmpty())
        return std::nullopt;
    return specific;
}

} // namespace kev
