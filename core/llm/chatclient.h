// A chat-completions client for OpenAI-compatible servers on QtNetwork: one request at a time,
// streamed (server-sent events) or not, with time-outs, bounded retries with jittered back-off
// that honour Retry-After, redirects followed only within the endpoint's origin (the key never
// goes to another host), the system proxy, cancellation, and errors that name the problem.
// Never blocks; results by signal.
#ifndef KEV_LLM_CHATCLIENT_H
#define KEV_LLM_CHATCLIENT_H

#include "agentprogress.h"
#include "llm/chaterror.h"
#include "llm/chatreply.h"
#include "llm/chatrequest.h"
#include "llm/ssedecoder.h"

#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QTimer>
#include <QUrl>

#include <functional>
#include <optional>

class QNetworkAccessManager;
class QNetworkReply;

namespace kev {

struct ChatClientSettings {
    QString baseUrl;   // e.g. http://127.0.0.1:8000/v1
    QString apiKey;    // held in memory only: no settings file, session or log ever sees it
    QString keyEnvVar; // named (not its value) in the message of a 401
    SchemaDialect dialect = SchemaDialect::None;
    bool requestStreamUsage = true;
    int connectTimeoutMs = 10'000;
    // From sending the request to the first token of the reply (or the first byte of a reply that
    // is not streamed): covers queueing, prefill and loading the model. Headers or keep-alive
    // comments sent before it do not count.
    int firstTokenTimeoutMs = 60'000;
    int stallTimeoutMs = 120'000;   // longest silence once tokens flow
    int totalTimeoutMs = 1'800'000; // one attempt, from sending to the last byte
    int maxRetries = 3;
    // A server that never produced a token is retried at most this many times (of maxRetries),
    // so that a dead server fails within about two minutes with the defaults.
    int maxSilentRetries = 1;
    int initialBackoffMs = 1'000;
    int maxBackoffMs = 30'000;
    int maxRetryAfterMs = 300'000; // a longer Retry-After fails the request instead of waiting
    qint64 maxReplyBytes = qint64(32) << 20;
};

class ChatClient : public QObject {
    Q_OBJECT
public:
    explicit ChatClient(ChatClientSettings settings, QObject* parent = nullptr);
    ~ChatClient() override;

    const ChatClientSettings& settings() const { return m_settings; }
    QUrl endpoint() const;
    bool isBusy() const { return m_busy; }
    // True once the server rejected the JSON-schema field: later requests go without it.
    bool schemaFieldRefused() const { return m_schemaRefused; }

    // Ends with exactly one replyAvailable or requestFailed, unless cancelled first.
    void send(const ChatRequest& request);
    // Aborts the request in flight (or the wait before a retry); no signal follows.
    void cancel();
    // Asked before every attempt (retries and re-sends included): a non-empty answer (a used-up
    // budget) ends the request with a Budget error instead of sending it.
    void setRequestGate(std::function<QString()> gate) { m_gate = std::move(gate); }

signals:
    void textAvailable(const QString& chunk); // streamed content, as it arrives
    // Streamed reasoning of a thinking model (delta.reasoning_content or delta.reasoning): shown
    // live, never part of the reply's content.
    void reasoningAvailable(const QString& chunk);
    void replyAvailable(const kev::ChatReply& reply);
    void requestFailed(const kev::ChatError& error);
    void statusChanged(const QString& status); // retries and fallbacks, for the live panel
    // Where the request stands (role left empty: the caller knows it).
    void progressChanged(const kev::AgentProgress& progress);
    // Every attempt, failed ones too, before the signal that ends the request (or the retry).
    void attemptFinished(const kev::ChatAttempt& attempt);

private:
    enum class Phase { Connect, FirstToken, Streaming };

    void startAttempt();
    void onRequestSent();
    void onReadyRead();
    void onFinished();
    void onRedirected(const QUrl& target);
    void onPhaseTimeout();
    void gotFirstToken();
    void showProgress(AgentProgress::State state, qint64 waitMs = 0, bool retryAfter = false,
                      const QString& detail = {});
    void recordAttempt(const QString& error);
    void emitText(const QString& chunk, bool reasoning);
    void onTotalTimeout();
    void consume(const QByteArray& bytes);
    void handleEvent(const QByteArray& data);
    std::optional<ChatError> parseCompleteBody();
    bool tryFallback(int status);
    void completeReply();
    void succeed();
    void failAttempt(ChatError error, std::optional<qint64> retryAfterMs = std::nullopt);
    void dropReply();
    void resetAttempt();
    ChatError configurationError() const;
    QString scrub(const QString& text) const;

    ChatClientSettings m_settings;
    QNetworkAccessManager* m_network = nullptr;
    QPointer<QNetworkReply> m_reply;
    QTimer m_phaseTimer;
    QTimer m_totalTimer;
    QTimer m_retryTimer;
    QElapsedTimer m_clock;

    ChatRequest m_request;
    std::function<QString()> m_gate;
    bool m_busy = false;
    bool m_schemaRefused = false;
    bool m_streamUsageRefused = false;
    bool m_maxCompletionTokens = false;
    bool m_temperatureRefused = false;
    int m_attempt = 0;
    int m_silentFailures = 0;

    // State of the attempt in flight.
    Phase m_phase = Phase::Connect;
    int m_status = 0;
    bool m_eventStream = false;
    bool m_sent = false;
    bool m_gotToken = false;
    qint64 m_streamedChars = 0;
    QElapsedTimer m_attemptClock;
    SecretScrubber m_textScrubber;
    SecretScrubber m_reasoningScrubber;
    bool m_failed = false;
    QByteArray m_body;
    qint64 m_bytes = 0;
    SseDecoder m_decoder;
    QString m_content;
    QString m_refusal;
    QString m_finishReason;
    QString m_model;
    std::optional<qint64> m_promptTokens;
    std::optional<qint64> m_completionTokens;
    bool m_done = false;
};

} // namespace kev

#endif // KEV_LLM_CHATCLIENT_H
