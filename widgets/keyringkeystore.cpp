#include "keyringkeystore.h"

#include <qt6keychain/keychain.h>

#include <QHash>
#include <QMutex>

namespace kev {

using namespace Qt::StringLiterals;

struct KeyringKeyStore::State {
    QMutex mutex;
    QHash<QString, QString> keys;
};

KeyringKeyStore::KeyringKeyStore(std::shared_ptr<KeyStore> fallback)
    : m_state(std::make_shared<State>())
    , m_fallback(std::move(fallback)) {}

KeyringKeyStore::~KeyringKeyStore() = default;

QString KeyringKeyStore::keyringService() {
    return u"kevolve"_s;
}

std::optional<QString> KeyringKeyStore::key(const QString& service) {
    {
        QMutexLocker lock(&m_state->mutex);
        const auto it = m_state->keys.constFind(service);
        if (it != m_state->keys.constEnd() && !it->isEmpty())
            return *it;
    }
    return m_fallback ? m_fallback->key(service) : std::nullopt;
}

std::optional<QString> KeyringKeyStore::ownKey(const QString& service) {
    {
        QMutexLocker lock(&m_state->mutex);
        const auto it = m_state->keys.constFind(service);
        if (it != m_state->keys.constEnd() && !it->isEmpty())
            return *it;
    }
    return m_fallback ? m_fallback->ownKey(service) : std::nullopt;
}

void KeyringKeyStore::load(const QString& service, std::function<void(bool, const QString&)> done) {
    auto* job = new QKeychain::ReadPasswordJob(keyringService());
    job->setAutoDelete(true);
    job->setKey(service);
    // The state outlives the job even when the store is destroyed first.
    std::weak_ptr<State> state = m_state;
    QObject::connect(job, &QKeychain::Job::finished, job,
                     [state, service, done = std::move(done)](QKeychain::Job* finished) {
                         auto* read = static_cast<QKeychain::ReadPasswordJob*>(finished);
                         const bool found = read->error() == QKeychain::NoError;
                         if (auto s = state.lock(); s && found) {
                             QMutexLocker lock(&s->mutex);
                             s->keys.insert(service, read->textData());
                         }
                         if (done)
                             done(found, found || read->error() == QKeychain::EntryNotFound
                                             ? QString()
                                             : read->errorString());
                     });
    job->start();
}

void KeyringKeyStore::store(const QString& service, const QString& key,
                            std::function<void(bool, const QString&)> done) {
    {
        QMutexLocker lock(&m_state->mutex);
        if (key.isEmpty())
            m_state->keys.remove(service);
        else
            m_state->keys.insert(service, key);
    }
    QKeychain::Job* job = nullptr;
    if (key.isEmpty()) {
        auto* remove = new QKeychain::DeletePasswordJob(keyringService());
        remove->setKey(service);
        job = remove;
    } else {
        auto* write = new QKeychain::WritePasswordJob(keyringService());
        write->setKey(service);
        write->setTextData(key);
        job = write;
    }
    job->setAutoDelete(true);
    QObject::connect(job, &QKeychain::Job::finished, job,
                     [done = std::move(done)](QKeychain::Job* finished) {
                         if (done)
                             done(finished->error() == QKeychain::NoError, finished->errorString());
                     });
    job->start();
}

} // namespace kev
