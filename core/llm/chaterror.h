// Turning what a server or the network said into a ChatError a person can act on.
#ifndef KEV_LLM_CHATERROR_H
#define KEV_LLM_CHATERROR_H

#include "llm/chatreply.h"

#include <QByteArray>
#include <QDateTime>
#include <QUrl>

#include <optional>

namespace kev {

struct ErrorContext {
    QUrl endpoint; // the full .../chat/completions URL
    QString model;
    QString keyEnvVar; // named in the message of a 401, never its value
    QString secret;    // scrubbed from every message
};

// The "message" of an OpenAI-style error body ({"error": {"message": ...}}, {"error": "..."},
// {"message": ...}, {"detail": ...}), or the body itself trimmed when it is not JSON.
QString serverErrorMessage(const QByteArray& body);

ChatError httpError(int status, const QByteArray& body, const ErrorContext& context);

// Replaces the secret, and any run of 8 or more of its characters (a server may echo part of a
// key), by "[redacted]".
QString scrubSecret(QString text, const QString& secret);

// scrubSecret over a stream of chunks: holds back the tail that could be the start of the
// secret until the next chunk shows whether it is, so no chunk boundary lets the key through.
class SecretScrubber {
public:
    explicit SecretScrubber(QString secret = {})
        : m_secret(std::move(secret)) {}
    QString feed(const QString& chunk);
    QString finish();

private:
    QString m_secret;
    QString m_pending;
};

// Retry-After in milliseconds: delta-seconds or an HTTP date.
std::optional<qint64> parseRetryAfter(const QByteArray& value, const QDateTime& now);

// "http://127.0.0.1:8000" for the message of a refused connection.
QString endpointOrigin(const QUrl& url);

} // namespace kev

#endif // KEV_LLM_CHATERROR_H
