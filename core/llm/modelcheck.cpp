#include "llm/modelcheck.h"

#include "keystore.h"
#include "llm/chaterror.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>

using namespace Qt::Literals::StringLiterals;

namespace kev {

namespace {

QUrl modelsUrl(const QString& baseUrl) {
    QString base = baseUrl.trimmed();
    while (base.endsWith(u'/'))
        base.chop(1);
    return QUrl(base + u"/models"_s);
}

QString origin(const QUrl& url) {
    return url.scheme().toLower() + u"://"_s + url.host().toLower() + u':' +
           QString::number(url.port(url.scheme() == u"https"_s ? 443 : 80));
}

} // namespace

ModelCheck::ModelCheck(LlmSettings settings, std::shared_ptr<KeyStore> keys, QObject* parent)
    : QObject(parent)
    , m_settings(std::move(settings))
    , m_keys(keys ? std::move(keys) : std::make_shared<EnvironmentKeyStore>()) {
    qRegisterMetaType<kev::ModelCheckResult>();
    m_timer.setSingleShot(true);
    connect(&m_timer, &QTimer::timeout, this, [this] {
        finish({false,
                u"%1 did not answer within %2 s"_s.arg(
                    modelsUrl(m_settings.baseUrl).toString(),
                    QString::number(m_settings.connectTimeoutS + m_settings.firstTokenTimeoutS)),
                {}});
    });
}

void ModelCheck::start() {
    m_key = (m_settings.generalKey ? m_keys->key(m_settings.keyService)
                                   : m_keys->ownKey(m_settings.keyService))
                .value_or(QString());
    if (m_key.isEmpty() && m_settings.keyRequired) {
        QTimer::singleShot(0, this, [this] {
            finish({false,
                    u"no API key for the %1 endpoint %2: set $%3 (or $KEVOLVE_API_KEY)"_s.arg(
                        m_settings.preset, m_settings.baseUrl, m_settings.keyVariable()),
                    {}});
        });
        return;
    }
    if (!m_network)
        m_network = new QNetworkAccessManager(this);
    QNetworkRequest request(modelsUrl(m_settings.baseUrl));
    request.setRawHeader("Accept"_ba, "application/json"_ba);
    if (!m_key.isEmpty())
        request.setRawHeader("Authorization"_ba, "Bearer "_ba + m_key.toUtf8());
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                         QNetworkRequest::UserVerifiedRedirectPolicy);
    m_reply = m_network->get(request);
    connect(m_reply, &QNetworkReply::redirected, this, [this](const QUrl& target) {
        if (origin(target) == origin(modelsUrl(m_settings.baseUrl))) {
            emit m_reply->redirectAllowed();
            return;
        }
        finish({false,
                u"%1 redirects to another origin, %2; Kevolve does not follow it so that the key "
                u"is not sent there (set the base URL to that server if you trust it)"_s.arg(
                    modelsUrl(m_settings.baseUrl).toString(),
                    scrubSecret(target.toString(QUrl::RemoveUserInfo), m_key)),
                {}});
    });
    connect(m_reply, &QNetworkReply::finished, this, &ModelCheck::onFinished);
    m_timer.start(
        static_cast<int>((m_settings.connectTimeoutS + m_settings.firstTokenTimeoutS) * 1000.0));
}

void ModelCheck::onFinished() {
    QNetworkReply* reply = m_reply.data();
    if (!reply)
        return;
    const QVariant status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute);
    if (!status.isValid()) {
        const QString what = reply->error() == QNetworkReply::ConnectionRefusedError
                                 ? u"nothing listens there (connection refused); is the server "
                                   u"running?"_s
                                 : reply->errorString();
        finish({false,
                u"cannot reach %1: %2"_s.arg(modelsUrl(m_settings.baseUrl).toString(),
                                             scrubSecret(what, m_key)),
                {}});
        return;
    }
    ModelCheckResult result = judge(m_settings, status.toInt(), reply->readAll(), !m_key.isEmpty());
    result.message = scrubSecret(result.message, m_key);
    finish(result);
}

ModelCheckResult ModelCheck::judge(const LlmSettings& settings, int status, const QByteArray& body,
                                   bool keySent) {
    const QString url = modelsUrl(settings.baseUrl).toString();
    const QString variable = u"$"_s + settings.keyVariable() +
                             (settings.generalKey && settings.keyVariable() != u"KEVOLVE_API_KEY"_s
                                  ? u" (or $KEVOLVE_API_KEY)"_s
                                  : QString());
    if (status == 401 || status == 403)
        return {false,
                keySent ? u"%1 refused the key (HTTP %2: %3); check %4"_s.arg(
                              url, QString::number(status), serverErrorMessage(body), variable)
                        : u"%1 wants a key (HTTP %2): set %3"_s.arg(url, QString::number(status),
                                                                    variable),
                {}};
    if (status / 100 != 2)
        return {false,
                u"%1 answered HTTP %2 (%3); is the base URL right (it usually ends in /v1)?"_s.arg(
                    url, QString::number(status), serverErrorMessage(body).left(300)),
                {}};
    const QJsonDocument doc = QJsonDocument::fromJson(body);
    // OpenAI: {"data": [{"id": ...}]}; Ollama's native /api/tags: {"models": [{"name": ...}]}.
    const QJsonArray list = doc.object().contains(u"data"_s)
                                ? doc.object().value(u"data"_s).toArray()
                                : doc.object().value(u"models"_s).toArray();
    ModelCheckResult result;
    for (const QJsonValue& entry : list) {
        const QJsonObject object = entry.toObject();
        QString id = object.value(u"id"_s).toString();
        if (id.isEmpty())
            id = object.value(u"name"_s).toString();
        if (id.isEmpty())
            id = object.value(u"model"_s).toString();
        if (!id.isEmpty())
            result.models << id;
    }
    if (!doc.isObject() || result.models.isEmpty()) {
        result.message = u"%1 answered, but not with a list of models: %2"_s.arg(
            url, QString::fromUtf8(body.left(200)));
        return result;
    }
    const auto listed = [&](const QString& model) {
        // Ollama lists "qwen2.5-coder:32b"; a request for "qwen2.5-coder" means ":latest".
        return result.models.contains(model) ||
               (!model.contains(u':') && result.models.contains(model + u":latest"_s));
    };
    const QString shown = result.models.mid(0, 20).join(u", "_s) +
                          (result.models.size() > 20 ? u", ..."_s : QString());
    if (!listed(settings.model)) {
        result.message =
            u"%1 does not serve the model \"%2\"; it serves: %3"_s.arg(url, settings.model, shown);
        return result;
    }
    if (!settings.fallbackModel.isEmpty() && !listed(settings.fallbackModel)) {
        result.message = u"%1 serves \"%2\" but not the fallback model \"%3\"; it serves: %4"_s.arg(
            url, settings.model, settings.fallbackModel, shown);
        return result;
    }
    result.ok = true;
    result.message = u"%1 serves \"%2\"%3%4"_s.arg(
        settings.baseUrl, settings.model,
        settings.fallbackModel.isEmpty()
            ? QString()
            : u" and the fallback \"%1\""_s.arg(settings.fallbackModel),
        keySent ? u"; the key works"_s : u" (no key sent)"_s);
    return result;
}

void ModelCheck::finish(ModelCheckResult result) {
    m_timer.stop();
    QNetworkReply* reply = m_reply.data();
    m_reply = nullptr;
    if (reply) {
        reply->disconnect(this);
        reply->abort();
        reply->deleteLater();
    }
    emit finished(result);
}

} // namespace kev
