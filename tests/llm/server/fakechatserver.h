// A local OpenAI-compatible chat server for tests: HTTP/1.1 on 127.0.0.1 (port 0), the real wire
// format (JSON replies, server-sent events in chunked transfer encoding with delta chunks, usage
// and [DONE]), the known dialects of real servers, and scripted faults.
#ifndef KEV_TESTS_FAKECHATSERVER_H
#define KEV_TESTS_FAKECHATSERVER_H

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QQueue>
#include <QString>
#include <QStringList>

#include <functional>
#include <optional>

class QTcpServer;
class QTcpSocket;

namespace kev::test {

// How the server behaves where real servers differ.
enum class ServerDialect {
    OpenAi,             // response_format only (other schema fields are 400); usage when asked
    Vllm,               // guided_json or response_format; usage when asked
    LlamaCpp,           // json_schema or response_format; usage in the last chunk always
    Ollama,             // format or response_format; usage when asked
    RejectsSchema,      // any schema field is a 400 naming response_format
    RejectsStreamUsage, // stream_options is a 400
    OpenAiReasoning,    // like OpenAi, but max_tokens and a temperature other than 1 are 400s
};

std::optional<ServerDialect> serverDialectFromString(const QString& text);
QString serverDialectToString(ServerDialect dialect);

struct ScriptedReply {
    enum class Fault {
        None,
        Status,         // `status` with an OpenAI-style error body `errorMessage`
        Reset,          // the connection is reset once the request is read
        CutStream,      // the stream stops half-way, before [DONE]
        InvalidJson,    // the body (or an event) is not JSON
        MissingChoices, // valid JSON without "choices"
        Silent,         // reads the request and never answers
    };
    Fault fault = Fault::None;
    int status = 200;
    QString errorMessage;
    QString errorCode;
    QByteArray retryAfter;
    QString content;
    QString finishReason = QStringLiteral("stop");
    QString refusal;
    QString reasoning; // streamed as delta.reasoning_content before the content
    int firstByteDelayMs = 0;
    // Streams only: the headers and a keep-alive comment go out at once, the first event after
    // this delay (vLLM queueing or prefilling).
    int firstTokenDelayMs = 0;
    int chunkChars = 16;
    int chunkDelayMs = 0;
    bool holdOpenAfterDone = false; // the chunked stream is not ended after [DONE]

    static ScriptedReply text(const QString& content);
    static ScriptedReply error(int status, const QString& message, const QString& code = {});
    static ScriptedReply withFault(Fault fault);
};

struct ReceivedRequest {
    QByteArray method;
    QByteArray path;
    QByteArray authorization;
    QJsonObject body;
    QByteArray rawBody;
};

class FakeChatServer : public QObject {
    Q_OBJECT
public:
    explicit FakeChatServer(ServerDialect dialect = ServerDialect::OpenAi,
                            QObject* parent = nullptr);
    ~FakeChatServer() override;

    bool listen(quint16 port = 0);
    quint16 port() const;
    QString baseUrl() const; // http://127.0.0.1:PORT/v1

    ServerDialect dialect() const { return m_dialect; }
    // When set, requests must carry "Authorization: Bearer KEY", else 401.
    void setApiKey(const QString& key) { m_apiKey = key; }
    // When non-empty, another model is a 404 "model not found".
    void setModels(const QStringList& models) { m_models = models; }
    void enqueue(const ScriptedReply& reply) { m_script.enqueue(reply); }
    // A request for `path` is answered with `status` and "Location: location" (absolute or not).
    void addRedirect(const QByteArray& path, const QByteArray& location, int status = 307) {
        m_redirects.append({path, location, status});
    }
    // Answers requests when the script is empty.
    void setResponder(std::function<ScriptedReply(const QJsonObject& request)> responder) {
        m_responder = std::move(responder);
    }

    const QList<ReceivedRequest>& requests() const { return m_requests; }
    int connectionCount() const { return m_connections; }

signals:
    void requestReceived(int index);

private:
    struct Connection;
    void onNewConnection();
    void onReadyRead(QTcpSocket* socket);
    void handle(QTcpSocket* socket, const ReceivedRequest& request);
    void answer(QTcpSocket* socket, const ReceivedRequest& request, const ScriptedReply& reply);
    void listModels(QTcpSocket* socket);
    void sendJson(QTcpSocket* socket, int status, const QJsonObject& body,
                  const QByteArray& extraHeaders = {});
    void sendError(QTcpSocket* socket, int status, const QString& message, const QString& code = {},
                   const QByteArray& extraHeaders = {});
    void stream(QTcpSocket* socket, const ReceivedRequest& request, const ScriptedReply& reply);
    std::optional<QString> rejectedField(const QJsonObject& body) const;
    QJsonObject usage(const QJsonObject& request, const QString& content) const;

    ServerDialect m_dialect;
    QTcpServer* m_server = nullptr;
    QString m_apiKey;
    QStringList m_models;
    struct Redirect {
        QByteArray path;
        QByteArray location;
        int status = 307;
    };
    QList<Redirect> m_redirects;
    QQueue<ScriptedReply> m_script;
    std::function<ScriptedReply(const QJsonObject&)> m_responder;
    QList<ReceivedRequest> m_requests;
    int m_connections = 0;
};

// Bytes of one HTTP/1.1 chunk.
QByteArray httpChunk(const QByteArray& data);

} // namespace kev::test

#endif // KEV_TESTS_FAKECHATSERVER_H
