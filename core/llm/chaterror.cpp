#include "llm/chaterror.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>

#include <algorithm>
#include <utility>

using namespace Qt::Literals::StringLiterals;

namespace kev {

bool ChatError::retryable() const {
    switch (kind) {
    case Kind::Connection:
        return transient;
    case Kind::Timeout:
    case Kind::RateLimited:
    case Kind::Server:
    case Kind::MalformedReply:
        return true;
    case Kind::Busy:
    case Kind::Configuration:
    case Kind::Auth:
    case Kind::NotFound:
    case Kind::ContextTooLong:
    case Kind::Refused:
    case Kind::BadRequest:
    case Kind::TooLarge:
    case Kind::Budget:
        return false;
    }
    return false;
}

QString ChatError::kindToString(Kind kind) {
    switch (kind) {
    case Kind::Busy:
        return u"busy"_s;
    case Kind::Budget:
        return u"budget"_s;
    case Kind::Configuration:
        return u"configuration"_s;
    case Kind::Connection:
        return u"connection"_s;
    case Kind::Timeout:
        return u"timeout"_s;
    case Kind::Auth:
        return u"auth"_s;
    case Kind::NotFound:
        return u"not_found"_s;
    case Kind::RateLimited:
        return u"rate_limited"_s;
    case Kind::Server:
        return u"server"_s;
    case Kind::ContextTooLong:
        return u"context_too_long"_s;
    case Kind::Refused:
        return u"refused"_s;
    case Kind::BadRequest:
        return u"bad_request"_s;
    case Kind::MalformedReply:
        return u"malformed_reply"_s;
    case Kind::TooLarge:
        return u"too_large"_s;
    }
    return u"connection"_s;
}

QString serverErrorMessage(const QByteArray& body) {
    const QJsonDocument doc = QJsonDocument::fromJson(body);
    if (doc.isObject()) {
        const QJsonObject object = doc.object();
        const QJsonValue error = object.value(u"error"_s);
        if (error.isObject()) {
            const QString message = error.toObject().value(u"message"_s).toString();
            if (!message.isEmpty())
                return message;
        }
        if (error.isString())
            return error.toString();
        for (const auto& key : {u"message"_s, u"detail"_s}) {
            const QJsonValue value = object.value(key);
            if (value.isString())
                return value.toString();
        }
        return QString::fromUtf8(doc.toJson(QJsonDocument::Compact)).left(500);
    }
    return QString::fromUtf8(body).simplified().left(500);
}

namespace {

QString errorCode(const QByteArray& body) {
    const QJsonObject error = QJsonDocument::fromJson(body).object().value(u"error"_s).toObject();
    const QJsonValue code = error.value(u"code"_s);
    if (code.isString())
        return code.toString();
    return error.value(u"type"_s).toString();
}

bool mentionsContextLimit(const QString& message, const QString& code) {
    const QString text = message.toLower();
    if (code == u"context_length_exceeded"_s || code == u"exceed_context_size_error"_s)
        return true;
    return text.contains(u"context"_s) &&
           (text.contains(u"length"_s) || text.contains(u"exceed"_s) ||
            text.contains(u"maximum"_s) || text.contains(u"too long"_s) ||
            text.contains(u"size"_s));
}

bool mentionsModel(const QString& message, const QString& code, const QString& model) {
    return code.contains(u"model"_s) || message.contains(u"model"_s, Qt::CaseInsensitive) ||
           (!model.isEmpty() && message.contains(model));
}

} // namespace

ChatError httpError(int status, const QByteArray& body, const ErrorContext& context) {
    const QString server = scrubSecret(serverErrorMessage(body), context.secret);
    const QString code = errorCode(body);
    const QString url = context.endpoint.toString();
    const QString said = server.isEmpty() ? QString() : u" (server: %1)"_s.arg(server);
    ChatError error;
    error.httpStatus = status;

    if (status == 401 || status == 403) {
        error.kind = ChatError::Kind::Auth;
        const QString where =
            context.keyEnvVar.isEmpty()
                ? u"the API key"_s
                : u"the API key in $%1 (or $KEVOLVE_API_KEY)"_s.arg(context.keyEnvVar);
        error.message = status == 401
                            ? u"HTTP 401 from %1: the server rejected %2%3"_s.arg(url, where, said)
                            : u"HTTP 403 from %1: %2 is not allowed to use model '%3'%4"_s.arg(
                                  url, where, context.model, said);
    } else if (status == 404) {
        error.kind = ChatError::Kind::NotFound;
        if (mentionsModel(server, code, context.model) && !server.isEmpty())
            error.message =
                u"HTTP 404 from %1: model '%2' was not found%3"_s.arg(url, context.model, said);
        else
            error.message = u"HTTP 404 from %1: no chat-completions endpoint there; check the "
                            u"base URL (it usually ends in /v1)%2"_s.arg(url, said);
    } else if (status == 429) {
        error.kind = ChatError::Kind::RateLimited;
        error.message = u"HTTP 429 from %1: rate limited%2"_s.arg(url, said);
    } else if (status >= 500) {
        error.kind = ChatError::Kind::Server;
        error.message = u"HTTP %1 from %2: server error%3"_s.arg(status).arg(url, said);
    } else if (mentionsContextLimit(server, code)) {
        error.kind = ChatError::Kind::ContextTooLong;
        error.message = u"HTTP %1 from %2: the prompt is longer than model '%3' accepts; "
                        u"lower the context size in the LLM settings%4"_s.arg(status)
                            .arg(url, context.model, said);
    } else if (status == 408) {
        error.kind = ChatError::Kind::Timeout;
        error.message = u"HTTP 408 from %1: the server timed out%2"_s.arg(url, said);
    } else {
        error.kind = ChatError::Kind::BadRequest;
        error.message =
            u"HTTP %1 from %2: the server rejected the request%3"_s.arg(status).arg(url, said);
    }
    return error;
}

QString scrubSecret(QString text, const QString& secret) {
    constexpr int minRun = 8;
    if (secret.isEmpty())
        return text;
    text.replace(secret, u"[redacted]"_s);
    if (secret.size() < minRun)
        return text;
    // Longest runs first, so a partial echo is replaced whole.
    for (qsizetype length = secret.size() - 1; length >= minRun; --length) {
        for (qsizetype start = 0; start + length <= secret.size(); ++start) {
            const QStringView run = QStringView(secret).mid(start, length);
            if (text.contains(run))
                text.replace(run.toString(), u"[redacted]"_s);
        }
    }
    return text;
}

std::optional<qint64> parseRetryAfter(const QByteArray& value, const QDateTime& now) {
    const QByteArray trimmed = value.trimmed();
    if (trimmed.isEmpty())
        return std::nullopt;
    bool ok = false;
    const double seconds = trimmed.toDouble(&ok);
    if (ok)
        return seconds < 0 ? 0 : static_cast<qint64>(seconds * 1000.0);
    const QDateTime when =
        QLocale::c().toDateTime(QString::fromLatin1(trimmed), u"ddd, dd MMM yyyy HH:mm:ss 'GMT'"_s);
    if (!when.isValid())
        return std::nullopt;
    const QDateTime utc(when.date(), when.time(), Qt::UTC);
    return std::max<qint64>(0, now.msecsTo(utc));
}

QString endpointOrigin(const QUrl& url) {
    QString origin = url.scheme() + u"://"_s + url.host();
    const int port = url.port(url.scheme() == u"https"_s ? 443 : 80);
    return origin + u":"_s + QString::number(port);
}

QString SecretScrubber::feed(const QString& chunk) {
    if (m_secret.isEmpty())
        return chunk;
    m_pending += chunk;
    qsizetype cut = m_pending.size() - m_secret.size();
    if (cut <= 0)
        return {};
    // The longest run of the key's characters that ends at the cut stays behind, so that it is
    // scrubbed with the rest of the key when that arrives.
    for (qsizetype j = std::min<qsizetype>(m_secret.size(), cut); j > 0; --j) {
        if (m_secret.contains(QStringView(m_pending).mid(cut - j, j))) {
            cut -= j;
            break;
        }
    }
    const QString ready = scrubSecret(m_pending.left(cut), m_secret);
    m_pending.remove(0, cut);
    return ready;
}

QString SecretScrubber::finish() {
    return scrubSecret(std::exchange(m_pending, QString()), m_secret);
}

} // namespace kev
