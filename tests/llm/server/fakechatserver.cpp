#include "fakechatserver.h"

#include <QDateTime>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>

#include <sys/socket.h>

using namespace Qt::Literals::StringLiterals;

namespace kev::test {

namespace {

QByteArray reasonPhrase(int status) {
    switch (status) {
    case 200:
        return "OK"_ba;
    case 301:
        return "Moved Permanently"_ba;
    case 302:
        return "Found"_ba;
    case 307:
        return "Temporary Redirect"_ba;
    case 308:
        return "Permanent Redirect"_ba;
    case 400:
        return "Bad Request"_ba;
    case 401:
        return "Unauthorized"_ba;
    case 403:
        return "Forbidden"_ba;
    case 404:
        return "Not Found"_ba;
    case 429:
        return "Too Many Requests"_ba;
    case 500:
        return "Internal Server Error"_ba;
    case 503:
        return "Service Unavailable"_ba;
    default:
        return "Status"_ba;
    }
}

QByteArray head(int status, const QByteArray& contentType, const QByteArray& extra) {
    return "HTTP/1.1 "_ba + QByteArray::number(status) + ' ' + reasonPhrase(status) +
           "\r\nContent-Type: "_ba + contentType + "\r\n"_ba + extra;
}

QByteArray sse(const QJsonObject& object) {
    return "data: "_ba + QJsonDocument(object).toJson(QJsonDocument::Compact) + "\n\n"_ba;
}

void resetConnection(QTcpSocket* socket) {
    // SO_LINGER with a zero time-out makes close() send RST instead of FIN.
    const linger reset{1, 0};
    ::setsockopt(static_cast<int>(socket->socketDescriptor()), SOL_SOCKET, SO_LINGER, &reset,
                 sizeof reset);
    socket->abort();
}

// Writes the events of one stream, one HTTP chunk each, paced by a delay; dies with its socket.
class EventWriter : public QObject {
public:
    EventWriter(QTcpSocket* socket, QList<QByteArray> events, int delayMs, bool cut, bool holdOpen,
                int initialDelayMs)
        : QObject(socket)
        , m_socket(socket)
        , m_events(std::move(events))
        , m_delayMs(delayMs)
        , m_cut(cut)
        , m_holdOpen(holdOpen) {
        if (initialDelayMs > 0 || m_delayMs > 0)
            QTimer::singleShot(initialDelayMs > 0 ? initialDelayMs : m_delayMs, this, [this] {
                if (m_delayMs > 0)
                    writeNext();
                else
                    writeAll();
            });
        else
            writeAll();
    }

private:
    void writeAll() {
        if (m_socket->state() != QAbstractSocket::ConnectedState)
            return;
        while (!m_events.isEmpty())
            m_socket->write(httpChunk(m_events.takeFirst()));
        end();
    }
    void writeNext() {
        if (m_socket->state() != QAbstractSocket::ConnectedState)
            return;
        if (m_events.isEmpty()) {
            end();
            return;
        }
        m_socket->write(httpChunk(m_events.takeFirst()));
        QTimer::singleShot(m_delayMs, this, [this] { writeNext(); });
    }
    void end() {
        if (m_cut)
            m_socket->disconnectFromHost();
        else if (!m_holdOpen)
            m_socket->write("0\r\n\r\n"_ba);
        deleteLater();
    }

    QTcpSocket* m_socket;
    QList<QByteArray> m_events;
    int m_delayMs;
    bool m_cut;
    bool m_holdOpen;
};

} // namespace

std::optional<ServerDialect> serverDialectFromString(const QString& text) {
    for (auto dialect :
         {ServerDialect::OpenAi, ServerDialect::Vllm, ServerDialect::LlamaCpp,
          ServerDialect::Ollama, ServerDialect::RejectsSchema, ServerDialect::RejectsStreamUsage}) {
        if (serverDialectToString(dialect) == text)
            return dialect;
    }
    return std::nullopt;
}

QString serverDialectToString(ServerDialect dialect) {
    switch (dialect) {
    case ServerDialect::OpenAi:
        return u"openai"_s;
    case ServerDialect::Vllm:
        return u"vllm"_s;
    case ServerDialect::LlamaCpp:
        return u"llamacpp"_s;
    case ServerDialect::Ollama:
        return u"ollama"_s;
    case ServerDialect::RejectsSchema:
        return u"rejects-schema"_s;
    case ServerDialect::RejectsStreamUsage:
        return u"rejects-stream-usage"_s;
    case ServerDialect::OpenAiReasoning:
        return u"openai-reasoning"_s;
    }
    return u"openai"_s;
}

ScriptedReply ScriptedReply::text(const QString& content) {
    ScriptedReply reply;
    reply.content = content;
    return reply;
}

ScriptedReply ScriptedReply::error(int status, const QString& message, const QString& code) {
    ScriptedReply reply;
    reply.fault = Fault::Status;
    reply.status = status;
    reply.errorMessage = message;
    reply.errorCode = code;
    return reply;
}

ScriptedReply ScriptedReply::withFault(Fault fault) {
    ScriptedReply reply;
    reply.fault = fault;
    reply.content = u"This reply is long enough to be cut in the middle of its stream."_s;
    return reply;
}

QByteArray httpChunk(const QByteArray& data) {
    return QByteArray::number(data.size(), 16) + "\r\n"_ba + data + "\r\n"_ba;
}

FakeChatServer::FakeChatServer(ServerDialect dialect, QObject* parent)
    : QObject(parent)
    , m_dialect(dialect)
    , m_server(new QTcpServer(this)) {
    connect(m_server, &QTcpServer::newConnection, this, &FakeChatServer::onNewConnection);
}

FakeChatServer::~FakeChatServer() = default;

bool FakeChatServer::listen(quint16 port) {
    return m_server->listen(QHostAddress::LocalHost, port);
}

quint16 FakeChatServer::port() const {
    return m_server->serverPort();
}

QString FakeChatServer::baseUrl() const {
    return u"http://127.0.0.1:%1/v1"_s.arg(port());
}

void FakeChatServer::onNewConnection() {
    while (QTcpSocket* socket = m_server->nextPendingConnection()) {
        ++m_connections;
        socket->setProperty("buffer", QByteArray());
        connect(socket, &QTcpSocket::readyRead, this, [this, socket] { onReadyRead(socket); });
        connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
    }
}

void FakeChatServer::onReadyRead(QTcpSocket* socket) {
    QByteArray buffer = socket->property("buffer").toByteArray() + socket->readAll();
    for (;;) {
        const qsizetype headerEnd = buffer.indexOf("\r\n\r\n");
        if (headerEnd < 0)
            break;
        const QList<QByteArray> lines = buffer.left(headerEnd).split('\n');
        const QList<QByteArray> requestLine = lines.value(0).trimmed().split(' ');
        ReceivedRequest request;
        request.method = requestLine.value(0);
        request.path = requestLine.value(1);
        qsizetype length = 0;
        for (qsizetype i = 1; i < lines.size(); ++i) {
            const QByteArray line = lines[i].trimmed();
            const qsizetype colon = line.indexOf(':');
            const QByteArray name = line.left(colon).trimmed().toLower();
            const QByteArray value = line.mid(colon + 1).trimmed();
            if (name == "content-length")
                length = value.toLongLong();
            else if (name == "authorization")
                request.authorization = value;
        }
        if (buffer.size() < headerEnd + 4 + length)
            break;
        request.rawBody = buffer.mid(headerEnd + 4, length);
        request.body = QJsonDocument::fromJson(request.rawBody).object();
        buffer.remove(0, headerEnd + 4 + length);
        socket->setProperty("buffer", buffer);
        handle(socket, request);
        if (socket->state() != QAbstractSocket::ConnectedState)
            return;
        buffer = socket->property("buffer").toByteArray();
    }
    socket->setProperty("buffer", buffer);
}

std::optional<QString> FakeChatServer::rejectedField(const QJsonObject& body) const {
    const QStringList schemaFields = {u"response_format"_s, u"guided_json"_s, u"json_schema"_s,
                                      u"format"_s};
    switch (m_dialect) {
    case ServerDialect::OpenAiReasoning:
        if (body.contains(u"max_tokens"_s))
            return u"Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                   u"'max_completion_tokens' instead."_s;
        if (body.contains(u"temperature"_s) && body.value(u"temperature"_s).toDouble() != 1.0)
            return u"Unsupported value: 'temperature' does not support %1 with this model. Only "
                   u"the default (1) value is supported."_s.arg(
                       body.value(u"temperature"_s).toDouble());
        [[fallthrough]];
    case ServerDialect::OpenAi:
        for (const auto& field : {u"guided_json"_s, u"json_schema"_s, u"format"_s}) {
            if (body.contains(field))
                return u"Unrecognized request argument supplied: %1"_s.arg(field);
        }
        break;
    case ServerDialect::RejectsSchema:
        for (const auto& field : schemaFields) {
            if (body.contains(field))
                return u"response_format is not supported by this server (got '%1')"_s.arg(field);
        }
        break;
    case ServerDialect::RejectsStreamUsage:
        if (body.contains(u"stream_options"_s))
            return u"Unrecognized request argument supplied: stream_options"_s;
        break;
    case ServerDialect::Vllm:
    case ServerDialect::LlamaCpp:
    case ServerDialect::Ollama:
        break;
    }
    const QJsonValue format = body.value(u"response_format"_s);
    if (format.isObject() && format[u"type"_s] == u"json_schema"_s &&
        !format[u"json_schema"_s][u"schema"_s].isObject())
        return u"response_format.json_schema.schema must be an object"_s;
    return std::nullopt;
}

void FakeChatServer::handle(QTcpSocket* socket, const ReceivedRequest& request) {
    m_requests.append(request);
    emit requestReceived(static_cast<int>(m_requests.size() - 1));

    for (const Redirect& redirect : std::as_const(m_redirects)) {
        if (request.path == redirect.path) {
            // The redirect closes its connection: Qt 6.4 reusing it for the redirected request
            // sometimes reports the reply's error twice ("Internal problem, this method must
            // only be called once") and the client retries, one request more than the exchange
            // needs (1 run in 12 of tst_chatresilience).
            socket->write(head(redirect.status, "text/plain"_ba,
                               "Location: "_ba + redirect.location +
                                   "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"_ba));
            socket->disconnectFromHost();
            return;
        }
    }
    if (request.path == "/v1/models" && request.method == "GET") {
        if (!m_apiKey.isEmpty() && request.authorization != "Bearer "_ba + m_apiKey.toUtf8()) {
            sendError(socket, 401, u"Incorrect API key provided."_s, u"invalid_api_key"_s);
            return;
        }
        listModels(socket);
        return;
    }
    if (request.path != "/v1/chat/completions" || request.method != "POST") {
        socket->write(head(404, "text/plain"_ba, "Content-Length: 18\r\n\r\n"_ba) +
                      "404 page not found"_ba);
        return;
    }
    if (!m_apiKey.isEmpty() && request.authorization != "Bearer "_ba + m_apiKey.toUtf8()) {
        // Real servers echo (part of) the key they were given; the client must not repeat it.
        const QString given = QString::fromUtf8(request.authorization.mid(7));
        sendError(socket, 401, u"Incorrect API key provided: %1."_s.arg(given),
                  u"invalid_api_key"_s);
        return;
    }
    if (request.body.isEmpty()) {
        sendError(socket, 400, u"the request body is not a JSON object"_s);
        return;
    }
    const QString model = request.body.value(u"model"_s).toString();
    if (!m_models.isEmpty() && !m_models.contains(model)) {
        if (m_dialect == ServerDialect::Ollama)
            sendError(socket, 404, u"model \"%1\" not found, try pulling it first"_s.arg(model));
        else
            sendError(
                socket, 404,
                u"The model `%1` does not exist or you do not have access to it."_s.arg(model),
                u"model_not_found"_s);
        return;
    }
    if (auto field = rejectedField(request.body)) {
        sendError(socket, 400, *field);
        return;
    }
    ScriptedReply reply;
    if (!m_script.isEmpty())
        reply = m_script.dequeue();
    else if (m_responder)
        reply = m_responder(request.body);
    else
        reply = ScriptedReply::text(u"Hello from the test server."_s);

    if (reply.firstByteDelayMs > 0) {
        QPointer<QTcpSocket> guard(socket);
        QTimer::singleShot(reply.firstByteDelayMs, this, [this, guard, request, reply] {
            if (guard && guard->state() == QAbstractSocket::ConnectedState)
                answer(guard, request, reply);
        });
        return;
    }
    answer(socket, request, reply);
}

QJsonObject FakeChatServer::usage(const QJsonObject& request, const QString& content) const {
    qint64 characters = 0;
    for (const auto& message : request.value(u"messages"_s).toArray())
        characters += message[u"content"_s].toString().size();
    const qint64 prompt = characters / 4 + 1;
    const qint64 completion = content.size() / 4 + 1;
    return {{u"prompt_tokens"_s, prompt},
            {u"completion_tokens"_s, completion},
            {u"total_tokens"_s, prompt + completion}};
}

void FakeChatServer::answer(QTcpSocket* socket, const ReceivedRequest& request,
                            const ScriptedReply& reply) {
    using Fault = ScriptedReply::Fault;
    switch (reply.fault) {
    case Fault::Status: {
        const QByteArray extra = reply.retryAfter.isEmpty()
                                     ? QByteArray()
                                     : "Retry-After: "_ba + reply.retryAfter + "\r\n"_ba;
        sendError(socket, reply.status, reply.errorMessage, reply.errorCode, extra);
        return;
    }
    case Fault::Reset:
        resetConnection(socket);
        return;
    case Fault::Silent:
        return;
    case Fault::InvalidJson:
        if (!request.body.value(u"stream"_s).toBool()) {
            const QByteArray body = "{\"choices\": [{\"message\": {\"content\": \"trunc"_ba;
            socket->write(
                head(200, "application/json"_ba,
                     "Content-Length: "_ba + QByteArray::number(body.size()) + "\r\n\r\n"_ba) +
                body);
            return;
        }
        break;
    case Fault::MissingChoices:
        if (!request.body.value(u"stream"_s).toBool()) {
            sendJson(socket, 200,
                     {{u"id"_s, u"chatcmpl-fake"_s},
                      {u"object"_s, u"chat.completion"_s},
                      {u"usage"_s, usage(request.body, {})}});
            return;
        }
        break;
    case Fault::None:
    case Fault::CutStream:
        break;
    }

    if (request.body.value(u"stream"_s).toBool()) {
        stream(socket, request, reply);
        return;
    }
    QJsonObject message{{u"role"_s, u"assistant"_s}, {u"content"_s, reply.content}};
    if (!reply.refusal.isEmpty())
        message[u"refusal"_s] = reply.refusal;
    const QJsonObject body{
        {u"id"_s, u"chatcmpl-fake-%1"_s.arg(m_requests.size())},
        {u"object"_s, u"chat.completion"_s},
        {u"created"_s, QDateTime::currentSecsSinceEpoch()},
        {u"model"_s, request.body.value(u"model"_s)},
        {u"choices"_s,
         QJsonArray{QJsonObject{
             {u"index"_s, 0}, {u"message"_s, message}, {u"finish_reason"_s, reply.finishReason}}}},
        {u"usage"_s, usage(request.body, reply.content)}};
    sendJson(socket, 200, body);
}

void FakeChatServer::listModels(QTcpSocket* socket) {
    QJsonArray data;
    const QStringList models = m_models.isEmpty() ? QStringList{u"test-model"_s} : m_models;
    for (const QString& model : models)
        data.append(QJsonObject{
            {u"id"_s, model}, {u"object"_s, u"model"_s}, {u"owned_by"_s, u"kevolve-tests"_s}});
    sendJson(socket, 200, {{u"object"_s, u"list"_s}, {u"data"_s, data}});
}

void FakeChatServer::sendJson(QTcpSocket* socket, int status, const QJsonObject& body,
                              const QByteArray& extraHeaders) {
    const QByteArray bytes = QJsonDocument(body).toJson(QJsonDocument::Compact);
    socket->write(head(status, "application/json"_ba,
                       extraHeaders + "Content-Length: "_ba + QByteArray::number(bytes.size()) +
                           "\r\n\r\n"_ba) +
                  bytes);
}

void FakeChatServer::sendError(QTcpSocket* socket, int status, const QString& message,
                               const QString& code, const QByteArray& extraHeaders) {
    QJsonObject error{{u"message"_s, message}, {u"type"_s, u"invalid_request_error"_s}};
    if (!code.isEmpty())
        error[u"code"_s] = code;
    sendJson(socket, status, {{u"error"_s, error}}, extraHeaders);
}

void FakeChatServer::stream(QTcpSocket* socket, const ReceivedRequest& request,
                            const ScriptedReply& reply) {
    const QJsonObject body = request.body;
    const QString id = u"chatcmpl-fake-%1"_s.arg(m_requests.size());
    const QJsonValue model = body.value(u"model"_s);
    const auto chunk = [&](const QJsonObject& delta, const QJsonValue& finish) {
        return QJsonObject{{u"id"_s, id},
                           {u"object"_s, u"chat.completion.chunk"_s},
                           {u"created"_s, QDateTime::currentSecsSinceEpoch()},
                           {u"model"_s, model},
                           {u"choices"_s, QJsonArray{QJsonObject{{u"index"_s, 0},
                                                                 {u"delta"_s, delta},
                                                                 {u"finish_reason"_s, finish}}}}};
    };

    QList<QByteArray> events;
    events.append(sse(chunk({{u"role"_s, u"assistant"_s}, {u"content"_s, u""_s}}, QJsonValue())));
    const QString& content = reply.content;
    const int step = std::max(1, reply.chunkChars);
    for (qsizetype at = 0; at < reply.reasoning.size(); at += step)
        events.append(
            sse(chunk({{u"reasoning_content"_s, reply.reasoning.mid(at, step)}}, QJsonValue())));
    for (qsizetype at = 0; at < content.size(); at += step)
        events.append(sse(chunk({{u"content"_s, content.mid(at, step)}}, QJsonValue())));
    if (!reply.refusal.isEmpty())
        events.append(sse(chunk({{u"refusal"_s, reply.refusal}}, QJsonValue())));
    QJsonObject last = chunk({}, reply.finishReason);
    const bool askedUsage = body.value(u"stream_options"_s)[u"include_usage"_s].toBool();
    if (m_dialect == ServerDialect::LlamaCpp) {
        last[u"usage"_s] = usage(body, content);
        last[u"timings"_s] = QJsonObject{{u"predicted_ms"_s, 12.5}};
    }
    events.append(sse(last));
    if (askedUsage && m_dialect != ServerDialect::LlamaCpp) {
        QJsonObject usageChunk = chunk({}, QJsonValue());
        usageChunk[u"choices"_s] = QJsonArray();
        usageChunk[u"usage"_s] = usage(body, content);
        events.append(sse(usageChunk));
    }
    events.append("data: [DONE]\n\n"_ba);

    if (reply.fault == ScriptedReply::Fault::CutStream) {
        const qsizetype keep = std::max<qsizetype>(2, events.size() / 2);
        events.erase(events.begin() + keep, events.end());
    } else if (reply.fault == ScriptedReply::Fault::InvalidJson) {
        events.insert(2, "data: {\"choices\": [{\"delta\": {\"content\": \"x\"\n\n"_ba);
    } else if (reply.fault == ScriptedReply::Fault::MissingChoices) {
        events.insert(2, "data: {\"id\": \"chatcmpl-fake\", \"object\": \"chunk\"}\n\n"_ba);
    }
    const bool cut = reply.fault == ScriptedReply::Fault::CutStream;

    socket->write(head(200, "text/event-stream"_ba,
                       "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n"_ba));
    // OpenRouter-style keep-alive comment: clients must skip it.
    socket->write(httpChunk(": keep-alive\n\n"_ba));

    new EventWriter(socket, std::move(events), reply.chunkDelayMs, cut, reply.holdOpenAfterDone,
                    reply.firstTokenDelayMs);
}

} // namespace kev::test
