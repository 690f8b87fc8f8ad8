// Where agents get API keys: in memory only, never written to a session, log or export. The
// system-keyring implementation lives outside core (QtKeychain pulls QtDBus).
#pragma once

#include <QProcessEnvironment>
#include <QString>

#include <optional>

namespace kev {

class KeyStore {
public:
    virtual ~KeyStore() = default;
    // The key for a service ("openai", "vllm", an endpoint preset's name), or nullopt.
    virtual std::optional<QString> key(const QString& service) = 0;
    // The key stored for this service alone, without a store's catch-all key: for servers that
    // need none (Ollama), where a general key would only be sent to a server that ignores it.
    virtual std::optional<QString> ownKey(const QString& service) { return key(service); }
};

// Reads <SERVICE>_API_KEY (the service name upper-cased, other characters as '_', e.g.
// OPENAI_API_KEY), then KEVOLVE_API_KEY. Empty variables count as unset.
class EnvironmentKeyStore : public KeyStore {
public:
    explicit EnvironmentKeyStore(
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment());

    std::optional<QString> key(const QString& service) override;
    // <SERVICE>_API_KEY only, never KEVOLVE_API_KEY.
    std::optional<QString> ownKey(const QString& service) override;

    static QString variableFor(const QString& service);

private:
    QProcessEnvironment m_environment;
};

} // namespace kev
