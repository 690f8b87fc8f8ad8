// The check before a session (kevolve-cli --check, the settings dialog's button): GET
// <base_url>/models with the key, and say whether the server answers, the key works and the
// model (and its fallback) is served. Never blocks; one finished signal per start().
#ifndef KEV_LLM_MODELCHECK_H
#define KEV_LLM_MODELCHECK_H

#include "llm/llmsettings.h"

#include <QObject>
#include <QPointer>
#include <QStringList>
#include <QTimer>

#include <memory>

class QNetworkAccessManager;
class QNetworkReply;

namespace kev {

class KeyStore;

struct ModelCheckResult {
    bool ok = false;
    QString message;    // what was found, or what is wrong and what to do; never the key
    QStringList models; // the models the server lists
};

class ModelCheck : public QObject {
    Q_OBJECT
public:
    ModelCheck(LlmSettings settings, std::shared_ptr<KeyStore> keys, QObject* parent = nullptr);
    void start();

    // The verdict on a /models answer (exposed for tests of odd server bodies).
    static ModelCheckResult judge(const LlmSettings& settings, int status, const QByteArray& body,
                                  bool keySent);

signals:
    void finished(const kev::ModelCheckResult& result);

private:
    void onFinished();
    void finish(ModelCheckResult result);

    LlmSettings m_settings;
    std::shared_ptr<KeyStore> m_keys;
    QString m_key;
    QNetworkAccessManager* m_network = nullptr;
    QPointer<QNetworkReply> m_reply;
    QTimer m_timer;
};

} // namespace kev

Q_DECLARE_METATYPE(kev::ModelCheckResult)

#endif // KEV_LLM_MODELCHECK_H
