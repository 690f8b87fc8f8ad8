#include "llm/chatclient.h"

#include "llm/chaterror.h"

#include <QDateTime>
#include <QHostAddress>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkProxyFactory>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QRandomGenerator>

#include <algorithm>
#include <utility>

using namespace Qt::Literals::StringLiterals;

namespace kev {

namespace {

QString seconds(qint64 ms) {
    return QString::number(static_cast<double>(ms) / 1000.0, 'f', ms % 1000 == 0 ? 0 : 1);
}

bool mentionsAny(const QString& text, std::initializer_list<QString> words) {
    return std::any_of(words.begin(), words.end(), [&](const QString& word) {
        return text.contains(word, Qt::CaseInsensitive);
    });
}

// The system's proxy settings (http_proxy, https_proxy, no_proxy on Linux; the platform's
// settings elsewhere), as QNetworkProxyFactory::setUseSystemConfiguration gives them, except that
// a server on this machine is always reached directly: a corporate proxy cannot reach it.
class EndpointProxyFactory : public QNetworkProxyFactory {
public:
    QList<QNetworkProxy> queryProxy(const QNetworkProxyQuery& query) override {
        const QString host = query.peerHostName();
        if (host.compare(u"localhost"_s, Qt::CaseInsensitive) == 0 ||
            QHostAddress(host).isLoopback())
            return {QNetworkProxy(QNetworkProxy::NoProxy)};
        return systemProxyForQuery(query);
    }
};

// Scheme, host and port, with the scheme's default port filled in.
QString origin(const QUrl& url) {
    const int defaultPort = url.scheme() == u"https"_s ? 443 : 80;
    return url.scheme().toLower() + u"://"_s + url.host().toLower() + u':' +
           QString::number(url.port(defaultPort));
}

// Back-off with "equal jitter": half the exponential delay plus a random share of the other
// half, so that clients failed by the same outage do not come back in step.
qint64 jittered(qint64 backoff) {
    const qint64 half = backoff / 2;
    return half + static_cast<qint64>(
                      QRandomGenerator::global()->bounded(static_cast<double>(backoff - half + 1)));
}

// What the spend log keeps of one reply: enough to see what went wrong, never 50 MB.
constexpr qsizetype kMaxRecordedReplyChars = 256 * 1024;

} // namespace

ChatClient::ChatClient(ChatClientSettings settings, QObject* parent)
    : QObject(parent)
    , m_settings(std::move(settings)) {
    qRegisterMetaType<kev::ChatReply>();
    qRegisterMetaType<kev::ChatError>();
    qRegisterMetaType<kev::ChatAttempt>();
    qRegisterMetaType<kev::AgentProgress>();
    m_phaseTimer.setSingleShot(true);
    m_totalTimer.setSingleShot(true);
    m_retryTimer.setSingleShot(true);
    connect(&m_phaseTimer, &QTimer::timeout, this, &ChatClient::onPhaseTimeout);
    connect(&m_totalTimer, &QTimer::timeout, this, &ChatClient::onTotalTimeout);
    connect(&m_retryTimer, &QTimer::timeout, this, &ChatClient::startAttempt);
}

ChatClient::~ChatClient() {
    dropReply();
}

QUrl ChatClient::endpoint() const {
    QString base = m_settings.baseUrl.trimmed();
    while (base.endsWith(u'/'))
        base.chop(1);
    return QUrl(base + u"/chat/completions"_s);
}

ChatError ChatClient::configurationError() const {
    ChatError error;
    error.kind = ChatError::Kind::Configuration;
    const QUrl url = endpoint();
    if (m_settings.baseUrl.trimmed().isEmpty())
        error.message =
            u"no base URL is set for the LLM endpoint (e.g. http://127.0.0.1:8000/v1)"_s;
    else if (!url.isValid() || (url.scheme() != u"http"_s && url.scheme() != u"https"_s))
        error.message = u"the LLM base URL '%1' is not an http:// or https:// URL"_s.arg(
            scrub(m_settings.baseUrl));
    else if (m_request.model.trimmed().isEmpty())
        error.message = u"no model is set for the LLM endpoint %1"_s.arg(url.toString());
    else if (m_request.messages.isEmpty())
        error.message = u"a chat request needs at least one message"_s;
    return error;
}

void ChatClient::send(const ChatRequest& request) {
    if (m_busy) {
        ChatError error;
        error.kind = ChatError::Kind::Busy;
        error.message = u"a request to %1 is already in flight"_s.arg(endpoint().toString());
        emit requestFailed(error);
        return;
    }
    m_request = request;
    const ChatError invalid = configurationError();
    if (!invalid.message.isEmpty()) {
        emit requestFailed(invalid);
        return;
    }
    if (!m_network) {
        m_network = new QNetworkAccessManager(this);
        m_network->setProxyFactory(new EndpointProxyFactory);
    }
    m_busy = true;
    m_attempt = 0;
    m_silentFailures = 0;
    m_clock.start();
    startAttempt();
}

void ChatClient::cancel() {
    m_retryTimer.stop();
    dropReply();
    m_busy = false;
}

void ChatClient::resetAttempt() {
    m_phase = Phase::Connect;
    m_status = 0;
    m_eventStream = false;
    m_sent = false;
    m_gotToken = false;
    m_streamedChars = 0;
    m_textScrubber = SecretScrubber(m_settings.apiKey);
    m_reasoningScrubber = SecretScrubber(m_settings.apiKey);
    m_body.clear();
    m_bytes = 0;
    m_decoder = SseDecoder();
    m_content.clear();
    m_refusal.clear();
    m_finishReason.clear();
    m_model.clear();
    m_promptTokens.reset();
    m_completionTokens.reset();
    m_done = false;
    m_failed = false;
}

void ChatClient::startAttempt() {
    if (m_gate) {
        const QString stop = m_gate();
        if (!stop.isEmpty()) {
            ChatError error;
            error.kind = ChatError::Kind::Budget;
            error.message =
                u"%1: no further request is sent to %2"_s.arg(stop, endpointOrigin(endpoint()));
            error.attempts = m_attempt;
            m_busy = false;
            showProgress(AgentProgress::State::Failed, 0, false, error.message);
            emit requestFailed(error);
            return;
        }
    }
    ++m_attempt;
    resetAttempt();

    WireOptions wire;
    wire.dialect = m_settings.dialect;
    wire.sendSchema = !m_schemaRefused;
    wire.requestStreamUsage = m_settings.requestStreamUsage && !m_streamUsageRefused;
    wire.maxCompletionTokens = m_maxCompletionTokens;
    wire.sendTemperature = !m_temperatureRefused;
    const QByteArray body =
        QJsonDocument(chatRequestJson(m_request, wire)).toJson(QJsonDocument::Compact);

    QNetworkRequest request(endpoint());
    request.setHeader(QNetworkRequest::ContentTypeHeader, "application/json"_ba);
    request.setRawHeader("Accept"_ba,
                         m_request.stream ? "text/event-stream"_ba : "application/json"_ba);
    if (!m_settings.apiKey.isEmpty())
        request.setRawHeader("Authorization"_ba, "Bearer "_ba + m_settings.apiKey.toUtf8());
    // Each redirect is checked in onRedirected: only the endpoint's own origin is followed.
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                         QNetworkRequest::UserVerifiedRedirectPolicy);
    request.setMaximumRedirectsAllowed(5);

    m_attemptClock.start();
    showProgress(AgentProgress::State::Sending);
    m_reply = m_network->post(request, body);
    connect(m_reply, &QNetworkReply::requestSent, this, &ChatClient::onRequestSent);
    connect(m_reply, &QNetworkReply::redirected, this, &ChatClient::onRedirected);
    connect(m_reply, &QNetworkReply::metaDataChanged, this, &ChatClient::onReadyRead);
    connect(m_reply, &QNetworkReply::readyRead, this, &ChatClient::onReadyRead);
    connect(m_reply, &QNetworkReply::finished, this, &ChatClient::onFinished);
    m_phaseTimer.start(m_settings.connectTimeoutMs);
    m_totalTimer.start(m_settings.totalTimeoutMs);
}

void ChatClient::onRequestSent() {
    m_sent = true;
    if (m_phase == Phase::Connect) {
        m_phase = Phase::FirstToken;
        m_phaseTimer.start(m_settings.firstTokenTimeoutMs);
        showProgress(AgentProgress::State::Waiting);
    }
}

void ChatClient::onRedirected(const QUrl& target) {
    if (!m_reply)
        return;
    if (origin(target) == origin(endpoint())) {
        // What came with the redirect is not the answer: the answer starts again.
        m_status = 0;
        m_eventStream = false;
        m_body.clear();
        m_bytes = 0;
        m_decoder = SseDecoder();
        if (m_phase == Phase::Streaming)
            m_phase = Phase::FirstToken;
        emit m_reply->redirectAllowed();
        return;
    }
    ChatError error;
    error.kind = ChatError::Kind::Configuration;
    error.httpStatus = m_reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    error.message =
        u"%1 redirected the request (HTTP %2) to another origin, %3; Kevolve follows redirects "
        u"only within %4, so that the API key and the prompt are not sent to another server "
        u"(set the base URL to that server if you trust it)"_s.arg(
            endpoint().toString(), QString::number(error.httpStatus),
            scrub(target.toString(QUrl::RemoveUserInfo)), origin(endpoint()));
    failAttempt(error);
}

void ChatClient::gotFirstToken() {
    if (m_phase != Phase::Streaming) {
        m_phase = Phase::Streaming;
        m_gotToken = true;
    }
    m_phaseTimer.start(m_settings.stallTimeoutMs);
}

void ChatClient::onReadyRead() {
    if (!m_reply)
        return;
    const QVariant status = m_reply->attribute(QNetworkRequest::HttpStatusCodeAttribute);
    if (!status.isValid())
        return;
    // The answer of a redirect that is being followed: the final answer comes on this reply.
    if (status.toInt() / 100 == 3 &&
        (m_reply->attribute(QNetworkRequest::RedirectionTargetAttribute).isValid() ||
         m_reply->hasRawHeader("Location"_ba))) {
        m_reply->readAll();
        return;
    }
    if (m_status == 0) {
        m_status = status.toInt();
        const QString type = m_reply->header(QNetworkRequest::ContentTypeHeader).toString();
        m_eventStream = m_status / 100 == 2 && type.contains(u"text/event-stream"_s);
        if (m_phase == Phase::Connect) {
            m_phase = Phase::FirstToken;
            m_phaseTimer.start(m_settings.firstTokenTimeoutMs);
        }
    }
    const QByteArray bytes = m_reply->readAll();
    // A reply that is not streamed is its own first token; a stream's first token is its first
    // delta (handleEvent), not its headers or keep-alive comments.
    const bool streamed = m_eventStream || (m_request.stream && m_status / 100 == 2 &&
                                            m_body.isEmpty() && bytes.startsWith("data:"));
    if (m_phase == Phase::Streaming || (!bytes.isEmpty() && !streamed))
        gotFirstToken();
    consume(bytes);
}

void ChatClient::consume(const QByteArray& bytes) {
    if (bytes.isEmpty())
        return;
    m_bytes += bytes.size();
    if (m_bytes > m_settings.maxReplyBytes) {
        ChatError error;
        error.kind = ChatError::Kind::TooLarge;
        error.httpStatus = m_status;
        error.message = u"the reply from %1 exceeded the limit of %2 MiB"_s.arg(
            endpoint().toString(), QString::number(m_settings.maxReplyBytes >> 20));
        failAttempt(error);
        return;
    }
    // Some servers stream without the text/event-stream content type.
    if (!m_eventStream && m_request.stream && m_status / 100 == 2 && m_body.isEmpty() &&
        bytes.startsWith("data:"))
        m_eventStream = true;
    if (!m_eventStream) {
        m_body.append(bytes);
        return;
    }
    const QList<QByteArray> events = m_decoder.feed(bytes);
    for (const QByteArray& event : events) {
        handleEvent(event);
        if (!m_reply)
            return;
    }
    // [DONE] ends the reply: a server that keeps the connection open after it is not waited for.
    if (m_done) {
        dropReply();
        completeReply();
    }
}

void ChatClient::handleEvent(const QByteArray& data) {
    if (data.trimmed() == "[DONE]") {
        m_done = true;
        return;
    }
    QJsonParseError parseError{};
    const QJsonDocument doc = QJsonDocument::fromJson(data, &parseError);
    ChatError error;
    error.kind = ChatError::Kind::MalformedReply;
    error.httpStatus = m_status;
    if (!doc.isObject()) {
        error.message = u"invalid JSON in an event of the stream from %1 (%2): %3"_s.arg(
            endpoint().toString(), parseError.errorString(),
            scrub(QString::fromUtf8(data.left(200))));
        failAttempt(error);
        return;
    }
    const QJsonObject chunk = doc.object();
    if (chunk.contains(u"error"_s)) {
        const QJsonValue code = chunk.value(u"error"_s).toObject().value(u"code"_s);
        const int status = code.isDouble() ? code.toInt() : 500;
        ErrorContext context{endpoint(), m_request.model, m_settings.keyEnvVar, m_settings.apiKey};
        ChatError streamError = httpError(status >= 400 ? status : 500, data, context);
        streamError.message.prepend(u"in the stream: "_s);
        failAttempt(streamError);
        return;
    }
    const QJsonValue usage = chunk.value(u"usage"_s);
    if (usage.isObject()) {
        m_promptTokens = usage[u"prompt_tokens"_s].toInteger();
        m_completionTokens = usage[u"completion_tokens"_s].toInteger();
    }
    if (chunk.contains(u"model"_s))
        m_model = chunk.value(u"model"_s).toString();
    const QJsonValue choices = chunk.value(u"choices"_s);
    if (!choices.isArray()) {
        if (usage.isObject())
            return;
        error.message = u"an event of the stream from %1 has no \"choices\": %2"_s.arg(
            endpoint().toString(), scrub(QString::fromUtf8(data.left(200))));
        failAttempt(error);
        return;
    }
    const QJsonArray list = choices.toArray();
    if (list.isEmpty())
        return;
    const QJsonObject choice = list.first().toObject();
    const QJsonObject delta = choice.value(u"delta"_s).toObject();
    const QString text = delta.value(u"content"_s).toString();
    if (!text.isEmpty()) {
        m_content += text;
        emitText(text, false);
    }
    for (const auto& field : {u"reasoning_content"_s, u"reasoning"_s}) {
        const QString thought = delta.value(field).toString();
        if (!thought.isEmpty())
            emitText(thought, true);
    }
    m_refusal += delta.value(u"refusal"_s).toString();
    const QJsonValue finish = choice.value(u"finish_reason"_s);
    if (finish.isString())
        m_finishReason = finish.toString();
}

std::optional<ChatError> ChatClient::parseCompleteBody() {
    ChatError error;
    error.kind = ChatError::Kind::MalformedReply;
    error.httpStatus = m_status;
    QJsonParseError parseError{};
    const QJsonDocument doc = QJsonDocument::fromJson(m_body, &parseError);
    if (!doc.isObject()) {
        error.message = u"the reply from %1 is not valid JSON (%2 at byte %3): %4"_s.arg(
            endpoint().toString(), parseError.errorString(), QString::number(parseError.offset),
            scrub(QString::fromUtf8(m_body.left(200))));
        return error;
    }
    const QJsonObject object = doc.object();
    const QJsonArray choices = object.value(u"choices"_s).toArray();
    const QJsonObject message = choices.first().toObject().value(u"message"_s).toObject();
    if (choices.isEmpty() || !message.contains(u"content"_s)) {
        error.message = u"the reply from %1 has no choices[0].message.content: %2"_s.arg(
            endpoint().toString(), scrub(QString::fromUtf8(m_body.left(200))));
        return error;
    }
    m_content = message.value(u"content"_s).toString();
    m_refusal = message.value(u"refusal"_s).toString();
    m_finishReason = choices.first().toObject().value(u"finish_reason"_s).toString();
    m_model = object.value(u"model"_s).toString();
    const QJsonValue usage = object.value(u"usage"_s);
    if (usage.isObject()) {
        m_promptTokens = usage[u"prompt_tokens"_s].toInteger();
        m_completionTokens = usage[u"completion_tokens"_s].toInteger();
    }
    if (!m_content.isEmpty())
        emitText(m_content, false);
    return std::nullopt;
}

bool ChatClient::tryFallback(int status) {
    if (status != 400 && status != 422)
        return false;
    const QString said = serverErrorMessage(m_body);
    if (m_request.maxTokens > 0 && !m_maxCompletionTokens &&
        said.contains(u"max_completion_tokens"_s)) {
        m_maxCompletionTokens = true;
        emit statusChanged(u"%1 wants max_completion_tokens instead of max_tokens; asking "
                           u"again"_s.arg(endpoint().toString()));
        return true;
    }
    if (m_request.temperature && !m_temperatureRefused && said.contains(u"temperature"_s)) {
        m_temperatureRefused = true;
        emit statusChanged(u"%1 rejected the temperature (%2); asking with the model's "
                           u"default"_s.arg(endpoint().toString(), scrub(said)));
        return true;
    }
    const bool schemaSent =
        m_request.jsonSchema && m_settings.dialect != SchemaDialect::None && !m_schemaRefused;
    if (schemaSent &&
        mentionsAny(said, {u"response_format"_s, u"json_schema"_s, u"guided_json"_s, u"format"_s,
                           u"schema"_s, u"structured"_s, u"grammar"_s})) {
        m_schemaRefused = true;
        emit statusChanged(
            u"%1 rejected the JSON-schema field (%2); asking without it and "
            u"validating the reply instead"_s.arg(endpoint().toString(), scrub(said)));
        return true;
    }
    const bool usageSent =
        m_request.stream && m_settings.requestStreamUsage && !m_streamUsageRefused;
    if (usageSent && mentionsAny(said, {u"stream_options"_s, u"include_usage"_s})) {
        m_streamUsageRefused = true;
        emit statusChanged(
            u"%1 rejected stream_options; asking without it"_s.arg(endpoint().toString()));
        return true;
    }
    return false;
}

void ChatClient::onFinished() {
    if (!m_reply)
        return;
    m_phaseTimer.stop();
    m_totalTimer.stop();
    QNetworkReply* reply = m_reply;
    const QVariant statusAttribute = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute);
    if (statusAttribute.isValid())
        onReadyRead();
    if (!m_reply)
        return;
    const QNetworkReply::NetworkError networkError = reply->error();
    const QString networkMessage = scrub(reply->errorString());
    const QByteArray retryAfter = reply->rawHeader("Retry-After"_ba);
    m_reply = nullptr;
    reply->disconnect(this);
    reply->deleteLater();

    ChatError error;
    error.httpStatus = m_status;
    if (!statusAttribute.isValid()) {
        error.kind = ChatError::Kind::Connection;
        switch (networkError) {
        case QNetworkReply::ConnectionRefusedError:
            error.message = u"nothing listens at %1 (connection refused); is the server "
                            u"running?"_s.arg(endpointOrigin(endpoint()));
            break;
        case QNetworkReply::HostNotFoundError:
            error.message =
                u"the host of %1 was not found (%2)"_s.arg(endpoint().toString(), networkMessage);
            break;
        case QNetworkReply::SslHandshakeFailedError:
            error.message = u"the TLS handshake with %1 failed (%2)"_s.arg(
                endpointOrigin(endpoint()), networkMessage);
            break;
        case QNetworkReply::TimeoutError:
            error.kind = ChatError::Kind::Timeout;
            error.message = u"the connection to %1 timed out"_s.arg(endpointOrigin(endpoint()));
            break;
        default:
            error.transient = true;
            error.message = u"the connection to %1 failed before a reply (%2)"_s.arg(
                endpointOrigin(endpoint()), networkMessage);
            break;
        }
        failAttempt(error);
        return;
    }

    if (m_status / 100 != 2) {
        if (tryFallback(m_status)) {
            recordAttempt(u"HTTP %1: %2 (asked again without the field)"_s.arg(
                QString::number(m_status), serverErrorMessage(m_body)));
            --m_attempt;
            startAttempt();
            return;
        }
        ErrorContext context{endpoint(), m_request.model, m_settings.keyEnvVar, m_settings.apiKey};
        const auto retryAfterMs = parseRetryAfter(retryAfter, QDateTime::currentDateTimeUtc());
        failAttempt(httpError(m_status, m_body, context), retryAfterMs);
        return;
    }

    if (m_eventStream) {
        for (const QByteArray& event : m_decoder.finish()) {
            handleEvent(event);
            if (m_failed)
                return;
        }
        const bool complete =
            m_done || (!m_finishReason.isEmpty() && networkError == QNetworkReply::NoError);
        if (!complete) {
            error.kind = ChatError::Kind::MalformedReply;
            error.message = u"the stream from %1 ended before [DONE] after %2 characters%3"_s.arg(
                endpoint().toString(), QString::number(m_content.size()),
                networkError == QNetworkReply::NoError ? QString()
                                                       : u" (%1)"_s.arg(networkMessage));
            failAttempt(error);
            return;
        }
    } else {
        if (networkError != QNetworkReply::NoError) {
            error.kind = ChatError::Kind::Connection;
            error.transient = true;
            error.message = u"the reply from %1 was cut short (%2)"_s.arg(endpoint().toString(),
                                                                          networkMessage);
            failAttempt(error);
            return;
        }
        if (auto malformed = parseCompleteBody()) {
            failAttempt(*malformed);
            return;
        }
    }
    completeReply();
}

void ChatClient::completeReply() {
    if (!m_refusal.isEmpty() || m_finishReason == u"content_filter"_s) {
        ChatError error;
        error.httpStatus = m_status;
        error.kind = ChatError::Kind::Refused;
        error.message =
            m_refusal.isEmpty()
                ? u"model '%1' stopped: its content filter refused the reply"_s.arg(m_request.model)
                : u"model '%1' refused: %2"_s.arg(m_request.model, scrub(m_refusal.left(500)));
        failAttempt(error);
        return;
    }
    succeed();
}

void ChatClient::emitText(const QString& chunk, bool reasoning) {
    gotFirstToken();
    m_streamedChars += chunk.size();
    // The other stream's held-back tail goes out first, so reasoning and answer keep their order.
    const QString other = (reasoning ? m_textScrubber : m_reasoningScrubber).finish();
    if (!other.isEmpty()) {
        if (reasoning)
            emit textAvailable(other);
        else
            emit reasoningAvailable(other);
    }
    const QString clean = (reasoning ? m_reasoningScrubber : m_textScrubber).feed(chunk);
    if (!clean.isEmpty()) {
        if (reasoning)
            emit reasoningAvailable(clean);
        else
            emit textAvailable(clean);
    }
    showProgress(AgentProgress::State::Streaming);
}

void ChatClient::showProgress(AgentProgress::State state, qint64 waitMs, bool retryAfter,
                              const QString& detail) {
    AgentProgress progress;
    progress.model = m_request.model;
    progress.state = state;
    progress.attempt = std::max(1, m_attempt);
    progress.maxAttempts = m_settings.maxRetries + 1;
    progress.tokensEstimated = !m_completionTokens;
    progress.tokens = m_completionTokens ? *m_completionTokens : (m_streamedChars + 3) / 4;
    progress.elapsedMs = m_clock.isValid() ? m_clock.elapsed() : 0;
    progress.waitMs = waitMs;
    progress.retryAfter = retryAfter;
    progress.detail = detail;
    emit progressChanged(progress);
}

void ChatClient::recordAttempt(const QString& error) {
    ChatAttempt attempt;
    attempt.attempt = m_attempt;
    attempt.model = m_model.isEmpty() ? m_request.model : m_model;
    attempt.httpStatus = m_status;
    attempt.error = scrub(error);
    attempt.usageEstimated = !m_promptTokens || !m_completionTokens;
    // Without usage figures: a request the server accepted (2xx), or one it may have processed
    // before going silent, counts its prompt; a refusal (4xx, 5xx) or no connection counts none.
    const bool processed = m_status / 100 == 2 || (m_status == 0 && m_sent);
    attempt.promptTokens =
        m_promptTokens ? *m_promptTokens : (processed ? (m_request.characterCount() + 3) / 4 : 0);
    attempt.completionTokens = m_completionTokens ? *m_completionTokens : (m_streamedChars + 3) / 4;
    attempt.seconds = static_cast<double>(m_attemptClock.elapsed()) / 1000.0;
    QString reply = !m_content.isEmpty() || m_eventStream ? m_content : QString::fromUtf8(m_body);
    if (reply.size() > kMaxRecordedReplyChars)
        reply =
            reply.left(kMaxRecordedReplyChars) +
            u"\n[... %1 more characters not recorded]"_s.arg(reply.size() - kMaxRecordedReplyChars);
    attempt.reply = scrub(reply);
    emit attemptFinished(attempt);
}

void ChatClient::succeed() {
    for (SecretScrubber* scrubber : {&m_reasoningScrubber, &m_textScrubber}) {
        const QString tail = scrubber->finish();
        if (!tail.isEmpty()) {
            if (scrubber == &m_reasoningScrubber)
                emit reasoningAvailable(tail);
            else
                emit textAvailable(tail);
        }
    }
    recordAttempt({});
    showProgress(AgentProgress::State::Done);
    ChatReply reply;
    // A key a server reflects into its answer would otherwise reach the session's files.
    reply.content = scrub(m_content);
    reply.finishReason = m_finishReason;
    reply.model = m_model.isEmpty() ? m_request.model : m_model;
    reply.usageEstimated = !m_promptTokens || !m_completionTokens;
    reply.promptTokens = m_promptTokens ? *m_promptTokens : (m_request.characterCount() + 3) / 4;
    reply.completionTokens = m_completionTokens ? *m_completionTokens : (m_content.size() + 3) / 4;
    reply.schemaEnforced =
        m_request.jsonSchema && m_settings.dialect != SchemaDialect::None && !m_schemaRefused;
    reply.attempts = m_attempt;
    reply.seconds = static_cast<double>(m_clock.elapsed()) / 1000.0;
    m_busy = false;
    emit replyAvailable(reply);
}

void ChatClient::failAttempt(ChatError error, std::optional<qint64> retryAfterMs) {
    dropReply();
    m_failed = true;
    error.message = scrub(error.message);
    error.attempts = m_attempt;
    recordAttempt(error.message);
    // A server that never sent a token is probably down or stuck: retried less.
    const bool silent = error.kind == ChatError::Kind::Timeout && !m_gotToken;
    if (silent)
        ++m_silentFailures;
    const bool retry = error.retryable() && m_attempt <= m_settings.maxRetries &&
                       (!silent || m_silentFailures <= m_settings.maxSilentRetries);
    if (retry) {
        const qint64 backoff =
            jittered(std::min<qint64>(m_settings.maxBackoffMs, qint64(m_settings.initialBackoffMs)
                                                                   << std::min(m_attempt - 1, 20)));
        if (retryAfterMs && *retryAfterMs > m_settings.maxRetryAfterMs) {
            error.message +=
                u"; the server asks to retry after %1 s, longer than the limit of "
                u"%2 s"_s.arg(seconds(*retryAfterMs), seconds(m_settings.maxRetryAfterMs));
        } else {
            const qint64 delay = retryAfterMs ? *retryAfterMs : backoff;
            emit statusChanged(u"%1; retrying in %2 s (attempt %3 of %4)"_s.arg(
                error.message, seconds(delay), QString::number(m_attempt + 1),
                QString::number(m_settings.maxRetries + 1)));
            showProgress(AgentProgress::State::Retrying, delay, retryAfterMs.has_value(),
                         error.message);
            m_retryTimer.start(static_cast<int>(delay));
            return;
        }
    } else if (silent && m_attempt <= m_settings.maxRetries && error.retryable()) {
        error.message += u" (no token in %1 attempt%2: the server looks stuck)"_s.arg(
            QString::number(m_attempt), m_attempt == 1 ? QString() : u"s"_s);
    } else if (error.retryable() && m_attempt > 1) {
        error.message += u" (after %1 attempts)"_s.arg(m_attempt);
    }
    m_busy = false;
    showProgress(AgentProgress::State::Failed, 0, false, error.message);
    emit requestFailed(error);
}

void ChatClient::onPhaseTimeout() {
    ChatError error;
    error.kind = ChatError::Kind::Timeout;
    error.httpStatus = m_status;
    switch (m_phase) {
    case Phase::Connect:
        error.message = u"could not send the request to %1 within %2 s (connect time-out)"_s.arg(
            endpointOrigin(endpoint()), seconds(m_settings.connectTimeoutMs));
        break;
    case Phase::FirstToken:
        error.message = u"%1 sent %2 within %3 s of the request (first-token time-out)"_s.arg(
            endpoint().toString(), m_status == 0 ? u"nothing"_s : u"its headers but no token"_s,
            seconds(m_settings.firstTokenTimeoutMs));
        break;
    case Phase::Streaming:
        error.message =
            u"%1 went silent for %2 s in the middle of the reply (stall time-out)"_s.arg(
                endpoint().toString(), seconds(m_settings.stallTimeoutMs));
        break;
    }
    failAttempt(error);
}

void ChatClient::onTotalTimeout() {
    ChatError error;
    error.kind = ChatError::Kind::Timeout;
    error.httpStatus = m_status;
    error.message = u"the reply from %1 took longer than %2 s (total time-out)"_s.arg(
        endpoint().toString(), seconds(m_settings.totalTimeoutMs));
    failAttempt(error);
}

void ChatClient::dropReply() {
    m_phaseTimer.stop();
    m_totalTimer.stop();
    QNetworkReply* reply = m_reply.data();
    if (!reply)
        return;
    m_reply = nullptr;
    reply->disconnect(this);
    reply->abort();
    reply->deleteLater();
}

QString ChatClient::scrub(const QString& text) const {
    return scrubSecret(text, m_settings.apiKey);
}

} // namespace kev
