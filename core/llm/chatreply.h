// A complete chat-completions reply, and the failure of a request.
#ifndef KEV_LLM_CHATREPLY_H
#define KEV_LLM_CHATREPLY_H

#include <QMetaType>
#include <QString>

namespace kev {

struct ChatReply {
    QString content;
    QString finishReason; // "stop", "length", ... (empty when the server sent none)
    QString model;        // as the server names it
    qint64 promptTokens = 0;
    qint64 completionTokens = 0;
    bool usageEstimated = false; // the server reported no usage: counts are characters / 4
    bool schemaEnforced = false; // the server accepted the JSON-schema field of the request
    int attempts = 1;
    double seconds = 0;

    bool truncated() const { return finishReason == QLatin1String("length"); }
};

// One HTTP attempt of a request, failed or not, as the session's spend log records it: what it
// cost and what came back (the key scrubbed).
struct ChatAttempt {
    int attempt = 1;
    QString model;
    int httpStatus = 0;
    QString error; // empty when the attempt produced the reply
    qint64 promptTokens = 0;
    qint64 completionTokens = 0;
    bool usageEstimated = false; // counted as characters / 4: the server reported no usage
    double seconds = 0;
    QString reply; // the content streamed, else the body the server sent
};

struct ChatError {
    enum class Kind {
        Busy,           // a request is already in flight on this client
        Configuration,  // no base URL, no model, an invalid URL
        Connection,     // refused, host not found, reset, TLS
        Timeout,        // connect, first byte, stall or total time-out
        Auth,           // 401, 403
        NotFound,       // 404: wrong model or wrong URL
        RateLimited,    // 429
        Server,         // 5xx
        ContextTooLong, // the prompt does not fit the model's context
        Refused,        // the model or a content filter refused to answer
        BadRequest,     // other 4xx
        MalformedReply, // not the wire format: invalid JSON, missing fields, stream cut
        TooLarge,       // the reply exceeded the size limit
        Budget,         // the session's token or cost budget is used up: no request was sent
    };
    Kind kind = Kind::Connection;
    int httpStatus = 0;
    QString message; // names the problem; never contains the key
    int attempts = 1;
    // A refused connection or an unknown host does not heal by itself; a reset connection may.
    bool transient = false;

    bool retryable() const;
    static QString kindToString(Kind kind);
};

} // namespace kev

Q_DECLARE_METATYPE(kev::ChatReply)
Q_DECLARE_METATYPE(kev::ChatError)
Q_DECLARE_METATYPE(kev::ChatAttempt)

#endif // KEV_LLM_CHATREPLY_H
