// API keys in the system keyring (QtKeychain: Secret Service, KWallet, macOS Keychain, Windows
// Credential Store). The keyring answers asynchronously, but agents ask for keys synchronously on
// the engine's thread, so keys are read into memory ahead of time (load) and served from there;
// a service with no key in the keyring falls back to the environment (KEVOLVE_API_KEY, ...).
#pragma once

#include "core/keystore.h"

#include <QString>

#include <functional>
#include <memory>

namespace kev {

class KeyringKeyStore : public KeyStore {
public:
    explicit KeyringKeyStore(
        std::shared_ptr<KeyStore> fallback = std::make_shared<EnvironmentKeyStore>());
    ~KeyringKeyStore() override;

    // Thread-safe.
    std::optional<QString> key(const QString& service) override;
    // The keyring's entry for the service, else the fallback's own key (never KEVOLVE_API_KEY).
    std::optional<QString> ownKey(const QString& service) override;

    // Reads a service's key from the keyring into memory; done(found, error) is called on the
    // calling thread when the keyring answers.
    void load(const QString& service, std::function<void(bool, const QString&)> done = {});
    // Writes a key to the keyring (and memory at once); an empty key deletes it.
    void store(const QString& service, const QString& key,
               std::function<void(bool, const QString&)> done = {});

    // The keyring's service name; entries are keyed by the agent service ("openai", ...).
    static QString keyringService();

private:
    struct State;
    std::shared_ptr<State> m_state;
    std::shared_ptr<KeyStore> m_fallback;
};

} // namespace kev
