// ChatClient against the local test server: the wire format of each dialect, and every fault.
#include "fakechatserver.h"

#include "llm/chatclient.h"
#include "llm/chaterror.h"
#include "llm/ssedecoder.h"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QJsonArray>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTest>
#include <QTimer>

using namespace Qt::Literals::StringLiterals;
using kev::ChatClient;
using kev::ChatClientSettings;
using kev::ChatError;
using kev::ChatReply;
using kev::ChatRequest;
using kev::SchemaDialect;
using kev::test::FakeChatServer;
using kev::test::ScriptedReply;
using kev::test::ServerDialect;

namespace {

const QString testKey = u"sk-test-KEVOLVE-0123456789abcdef"_s;

struct Outcome {
    std::optional<ChatReply> reply;
    std::optional<ChatError> error;
    QString streamed;
    QStringList statuses;
    qint64 ms = 0;
};

Outcome exchange(ChatClient& client, const ChatRequest& request, int timeoutMs = 20'000) {
    Outcome outcome;
    QEventLoop loop;
    QElapsedTimer clock;
    clock.start();
    const auto a =
        QObject::connect(&client, &ChatClient::replyAvailable, &loop, [&](const ChatReply& reply) {
            outcome.reply = reply;
            loop.quit();
        });
    const auto b =
        QObject::connect(&client, &ChatClient::requestFailed, &loop, [&](const ChatError& error) {
            outcome.error = error;
            loop.quit();
        });
    const auto c = QObject::connect(&client, &ChatClient::textAvailable, &loop,
                                    [&](const QString& chunk) { outcome.streamed += chunk; });
    const auto d = QObject::connect(&client, &ChatClient::statusChanged, &loop,
                                    [&](const QString& status) { outcome.statuses << status; });
    QTimer::singleShot(timeoutMs, &loop, &QEventLoop::quit);
    client.send(request);
    if (!outcome.reply && !outcome.error)
        loop.exec();
    for (const auto& connection : {a, b, c, d})
        QObject::disconnect(connection);
    outcome.ms = clock.elapsed();
    return outcome;
}

ChatRequest hello(bool stream = true) {
    ChatRequest request;
    request.model = u"test-model"_s;
    request.messages = {{u"system"_s, u"You are terse."_s}, {u"user"_s, u"Say hello."_s}};
    request.stream = stream;
    return request;
}

ChatClientSettings settingsFor(const FakeChatServer& server) {
    ChatClientSettings settings;
    settings.baseUrl = server.baseUrl();
    settings.apiKey = testKey;
    settings.keyEnvVar = u"KEVOLVE_TEST_KEY"_s;
    settings.initialBackoffMs = 20;
    settings.maxBackoffMs = 100;
    settings.connectTimeoutMs = 5'000;
    settings.firstTokenTimeoutMs = 5'000;
    settings.stallTimeoutMs = 5'000;
    settings.totalTimeoutMs = 15'000;
    return settings;
}

QJsonObject schema() {
    return QJsonObject{
        {u"type"_s, u"object"_s},
        {u"required"_s, QJsonArray{u"answer"_s}},
        {u"properties"_s, QJsonObject{{u"answer"_s, QJsonObject{{u"type"_s, u"string"_s}}}}}};
}

// No part of the key (8 characters or more) may appear in a message.
bool leaksKey(const QString& text) {
    for (qsizetype start = 0; start + 8 <= testKey.size(); ++start) {
        if (text.contains(QStringView(testKey).mid(start, 8)))
            return true;
    }
    return false;
}

} // namespace

class TestChatClient : public QObject {
    Q_OBJECT

private slots:
    void sseDecoderHandlesSplitsCommentsAndCrlf();
    void scrubRemovesKeyAndPartialEchoes();
    void retryAfterParsesSecondsAndDates();

    void streamsDeltasAndUsage();
    void usageOnlyWhenAskedForIt();
    void llamaCppSendsUsageWithoutBeingAsked();
    void nonStreamingReply();
    void schemaFieldFollowsDialect_data();
    void schemaFieldFollowsDialect();
    void serverThatRejectsSchemaIsAskedWithout();
    void serverThatRejectsStreamOptionsIsAskedWithout();
    void keyIsSentOnlyAsBearerHeader();
    void reasoningModelParametersAreAdapted();

    void wrongKeyIs401WithoutTheKey();
    void wrongModelIs404NamingTheModel();
    void wrongUrlIs404NamingTheUrl();
    void contextTooLongIsRecognised();
    void refusalIsAnError();
    void rateLimitHonoursRetryAfter();
    void retryAfterBeyondLimitFailsAtOnce();
    void serverErrorThenSuccess();
    void serverErrorsExhaustRetries();
    void connectionResetIsRetried();
    void connectionRefusedFailsFast();
    void slowFirstByteTimesOut();
    void stallInStreamTimesOut();
    void streamCutBeforeDoneIsNotUsed();
    void doneEndsTheReplyEvenIfTheConnectionStaysOpen();
    void streamCutThenRetryKeepsOnlyTheGoodReply();
    void invalidJsonIsMalformed_data();
    void invalidJsonIsMalformed();
    void missingChoicesIsMalformed_data();
    void missingChoicesIsMalformed();
    void multiMegabyteReplyArrivesWhole();
    void replyBeyondSizeLimitFails();
    void cancelAbortsSilently();
    void secondSendWhileBusyFails();
    void missingConfigurationIsNamed();
};

void TestChatClient::sseDecoderHandlesSplitsCommentsAndCrlf() {
    kev::SseDecoder decoder;
    QList<QByteArray> events = decoder.feed(": keep-alive\r\n\r\ndata: {\"a\"");
    QVERIFY(events.isEmpty());
    events = decoder.feed(":1}\r\n\r\nevent: x\ndata: line1\ndata: line2\n\ndata:[DONE]\n");
    QCOMPARE(events, (QList<QByteArray>{"{\"a\":1}", "line1\nline2"}));
    events = decoder.finish();
    QCOMPARE(events, QList<QByteArray>{"[DONE]"});
}

void TestChatClient::scrubRemovesKeyAndPartialEchoes() {
    QCOMPARE(kev::scrubSecret(u"key sk-test-KEVOLVE-0123456789abcdef here"_s, testKey),
             u"key [redacted] here"_s);
    const QString partial = kev::scrubSecret(u"Incorrect key: sk-test-KEVO****cdef"_s, testKey);
    QVERIFY2(!leaksKey(partial), qPrintable(partial));
    QCOMPARE(kev::scrubSecret(u"nothing secret"_s, testKey), u"nothing secret"_s);
}

void TestChatClient::retryAfterParsesSecondsAndDates() {
    const QDateTime now(QDate(2026, 1, 2), QTime(3, 4, 5), Qt::UTC);
    QCOMPARE(kev::parseRetryAfter("2", now), std::optional<qint64>(2000));
    QCOMPARE(kev::parseRetryAfter("Fri, 02 Jan 2026 03:04:15 GMT", now),
             std::optional<qint64>(10'000));
    QCOMPARE(kev::parseRetryAfter("soon", now), std::nullopt);
    QCOMPARE(kev::parseRetryAfter("", now), std::nullopt);
}

void TestChatClient::streamsDeltasAndUsage() {
    FakeChatServer server;
    QVERIFY(server.listen());
    const QString text = u"Hello! This reply arrives in several delta chunks."_s;
    auto scripted = ScriptedReply::text(text);
    scripted.chunkChars = 5;
    server.enqueue(scripted);
    ChatClient client(settingsFor(server));
    const Outcome outcome = exchange(client, hello());
    QVERIFY2(outcome.reply, outcome.error ? qPrintable(outcome.error->message) : "no reply");
    QCOMPARE(outcome.reply->content, text);
    QCOMPARE(outcome.streamed, text);
    QCOMPARE(outcome.reply->finishReason, u"stop"_s);
    QVERIFY(!outcome.reply->usageEstimated);
    QCOMPARE(outcome.reply->completionTokens, text.size() / 4 + 1);
    QCOMPARE(outcome.reply->attempts, 1);
    const QJsonObject body = server.requests().first().body;
    QCOMPARE(body[u"stream"_s].toBool(), true);
    QCOMPARE(body[u"stream_options"_s][u"include_usage"_s].toBool(), true);
    QCOMPARE(body[u"model"_s].toString(), u"test-model"_s);
    QCOMPARE(body[u"messages"_s].toArray().size(), 2);
}

void TestChatClient::usageOnlyWhenAskedForIt() {
    FakeChatServer server(ServerDialect::Vllm);
    QVERIFY(server.listen());
    auto settings = settingsFor(server);
    settings.requestStreamUsage = false;
    ChatClient client(settings);
    const Outcome outcome = exchange(client, hello());
    QVERIFY(outcome.reply);
    QVERIFY(!server.requests().first().body.contains(u"stream_options"_s));
    QVERIFY(outcome.reply->usageEstimated);
    QVERIFY(outcome.reply->promptTokens > 0);
    QVERIFY(outcome.reply->completionTokens > 0);
}

void TestChatClient::llamaCppSendsUsageWithoutBeingAsked() {
    FakeChatServer server(ServerDialect::LlamaCpp);
    QVERIFY(server.listen());
    auto settings = settingsFor(server);
    settings.requestStreamUsage = false;
    ChatClient client(settings);
    const Outcome outcome = exchange(client, hello());
    QVERIFY(outcome.reply);
    QVERIFY(!outcome.reply->usageEstimated);
}

void TestChatClient::nonStreamingReply() {
    FakeChatServer server(ServerDialect::Ollama);
    QVERIFY(server.listen());
    server.enqueue(ScriptedReply::text(u"Whole reply at once."_s));
    ChatClient client(settingsFor(server));
    const Outcome outcome = exchange(client, hello(false));
    QVERIFY(outcome.reply);
    QCOMPARE(outcome.reply->content, u"Whole reply at once."_s);
    QVERIFY(!outcome.reply->usageEstimated);
    QCOMPARE(outcome.reply->model, u"test-model"_s);
    QVERIFY(!server.requests().first().body.contains(u"stream_options"_s));
}

void TestChatClient::schemaFieldFollowsDialect_data() {
    QTest::addColumn<ServerDialect>("server");
    QTest::addColumn<SchemaDialect>("client");
    QTest::addColumn<QStringList>("present");
    QTest::addColumn<QStringList>("absent");
    const QStringList all = {u"response_format"_s, u"guided_json"_s, u"json_schema"_s, u"format"_s};
    const auto without = [&](const QStringList& keep) {
        QStringList rest = all;
        for (const auto& field : keep)
            rest.removeAll(field);
        return rest;
    };
    QTest::newRow("openai") << ServerDialect::OpenAi << SchemaDialect::OpenAi
                            << QStringList{u"response_format"_s} << without({u"response_format"_s});
    QTest::newRow("vllm") << ServerDialect::Vllm << SchemaDialect::Vllm
                          << QStringList{u"guided_json"_s} << without({u"guided_json"_s});
    QTest::newRow("llamacpp") << ServerDialect::LlamaCpp << SchemaDialect::LlamaCpp
                              << QStringList{u"json_schema"_s} << without({u"json_schema"_s});
    QTest::newRow("ollama") << ServerDialect::Ollama << SchemaDialect::Ollama
                            << QStringList{u"format"_s, u"response_format"_s}
                            << without({u"format"_s, u"response_format"_s});
    QTest::newRow("none") << ServerDialect::OpenAi << SchemaDialect::None << QStringList{} << all;
}

void TestChatClient::schemaFieldFollowsDialect() {
    QFETCH(ServerDialect, server);
    QFETCH(SchemaDialect, client);
    QFETCH(QStringList, present);
    QFETCH(QStringList, absent);
    FakeChatServer fake(server);
    QVERIFY(fake.listen());
    fake.enqueue(ScriptedReply::text(u"{\"answer\": \"yes\"}"_s));
    auto settings = settingsFor(fake);
    settings.dialect = client;
    ChatClient chat(settings);
    ChatRequest request = hello();
    request.jsonSchema = schema();
    request.schemaName = u"answer"_s;
    const Outcome outcome = exchange(chat, request);
    QVERIFY(outcome.reply);
    QCOMPARE(outcome.reply->schemaEnforced, client != SchemaDialect::None);
    const QJsonObject body = fake.requests().first().body;
    for (const auto& field : present)
        QVERIFY2(body.contains(field), qPrintable(field));
    for (const auto& field : absent)
        QVERIFY2(!body.contains(field), qPrintable(field));
    if (body.contains(u"response_format"_s)) {
        const QJsonObject format = body[u"response_format"_s].toObject();
        QCOMPARE(format[u"type"_s].toString(), u"json_schema"_s);
        QCOMPARE(format[u"json_schema"_s][u"name"_s].toString(), u"answer"_s);
        QCOMPARE(format[u"json_schema"_s][u"schema"_s].toObject(), schema());
    }
}

void TestChatClient::serverThatRejectsSchemaIsAskedWithout() {
    FakeChatServer server(ServerDialect::RejectsSchema);
    QVERIFY(server.listen());
    auto settings = settingsFor(server);
    settings.dialect = SchemaDialect::OpenAi;
    settings.maxRetries = 0;
    ChatClient client(settings);
    ChatRequest request = hello();
    request.jsonSchema = schema();
    Outcome outcome = exchange(client, request);
    QVERIFY2(outcome.reply, outcome.error ? qPrintable(outcome.error->message) : "");
    QVERIFY(!outcome.reply->schemaEnforced);
    QVERIFY(client.schemaFieldRefused());
    QCOMPARE(server.requests().size(), 2);
    QVERIFY(server.requests()[0].body.contains(u"response_format"_s));
    QVERIFY(!server.requests()[1].body.contains(u"response_format"_s));
    QVERIFY(!outcome.statuses.isEmpty());
    // The client remembers: the next request does not pay for the refusal again.
    outcome = exchange(client, request);
    QVERIFY(outcome.reply);
    QCOMPARE(server.requests().size(), 3);
}

void TestChatClient::serverThatRejectsStreamOptionsIsAskedWithout() {
    FakeChatServer server(ServerDialect::RejectsStreamUsage);
    QVERIFY(server.listen());
    ChatClient client(settingsFor(server));
    const Outcome outcome = exchange(client, hello());
    QVERIFY(outcome.reply);
    QCOMPARE(server.requests().size(), 2);
    QVERIFY(!server.requests()[1].body.contains(u"stream_options"_s));
    QVERIFY(outcome.reply->usageEstimated);
}

void TestChatClient::keyIsSentOnlyAsBearerHeader() {
    FakeChatServer server;
    QVERIFY(server.listen());
    server.setApiKey(testKey);
    ChatClient client(settingsFor(server));
    QVERIFY(exchange(client, hello()).reply);
    QCOMPARE(server.requests().first().authorization, "Bearer "_ba + testKey.toUtf8());
    QVERIFY(!server.requests().first().rawBody.contains(testKey.toUtf8()));

    auto noKey = settingsFor(server);
    noKey.apiKey.clear();
    server.setApiKey({});
    ChatClient anonymous(noKey);
    QVERIFY(exchange(anonymous, hello()).reply);
    QVERIFY(server.requests().last().authorization.isEmpty());
}

void TestChatClient::reasoningModelParametersAreAdapted() {
    FakeChatServer server(ServerDialect::OpenAiReasoning);
    QVERIFY(server.listen());
    ChatClient client(settingsFor(server));
    ChatRequest request = hello();
    request.maxTokens = 1000;
    request.temperature = 0.2;
    Outcome outcome = exchange(client, request);
    QVERIFY2(outcome.reply, outcome.error ? qPrintable(outcome.error->message) : "");
    QCOMPARE(server.requests().size(), 3);
    const QJsonObject last = server.requests().last().body;
    QCOMPARE(last[u"max_completion_tokens"_s].toInt(), 1000);
    QVERIFY(!last.contains(u"max_tokens"_s));
    QVERIFY(!last.contains(u"temperature"_s));
    QCOMPARE(outcome.statuses.size(), 2);
    // Remembered for the next request.
    outcome = exchange(client, request);
    QVERIFY(outcome.reply);
    QCOMPARE(server.requests().size(), 4);
}

void TestChatClient::wrongKeyIs401WithoutTheKey() {
    FakeChatServer server;
    QVERIFY(server.listen());
    server.setApiKey(u"sk-the-right-one"_s);
    ChatClient client(settingsFor(server));
    const Outcome outcome = exchange(client, hello());
    QVERIFY(outcome.error);
    QCOMPARE(outcome.error->kind, ChatError::Kind::Auth);
    QCOMPARE(outcome.error->httpStatus, 401);
    QVERIFY(outcome.error->message.contains(u"401"_s));
    QVERIFY(outcome.error->message.contains(u"KEVOLVE_TEST_KEY"_s));
    QVERIFY2(!leaksKey(outcome.error->message), qPrintable(outcome.error->message));
    QCOMPARE(server.requests().size(), 1);
}

void TestChatClient::wrongModelIs404NamingTheModel() {
    FakeChatServer server(ServerDialect::Ollama);
    QVERIFY(server.listen());
    server.setModels({u"qwen2.5-coder:32b"_s});
    ChatClient client(settingsFor(server));
    const Outcome outcome = exchange(client, hello());
    QVERIFY(outcome.error);
    QCOMPARE(outcome.error->kind, ChatError::Kind::NotFound);
    QVERIFY2(outcome.error->message.contains(u"model 'test-model' was not found"_s),
             qPrintable(outcome.error->message));
    QCOMPARE(server.requests().size(), 1);
}

void TestChatClient::wrongUrlIs404NamingTheUrl() {
    FakeChatServer server;
    QVERIFY(server.listen());
    auto settings = settingsFor(server);
    settings.baseUrl = u"http://127.0.0.1:%1"_s.arg(server.port());
    ChatClient client(settings);
    const Outcome outcome = exchange(client, hello());
    QVERIFY(outcome.error);
    QCOMPARE(outcome.error->kind, ChatError::Kind::NotFound);
    QVERIFY2(outcome.error->message.contains(u"base URL"_s), qPrintable(outcome.error->message));
    QVERIFY(outcome.error->message.contains(u"/chat/completions"_s));
}

void TestChatClient::contextTooLongIsRecognised() {
    FakeChatServer server(ServerDialect::Vllm);
    QVERIFY(server.listen());
    server.enqueue(ScriptedReply::error(
        400, u"This model's maximum context length is 8192 tokens. However, you requested "
             u"9000 tokens."_s));
    ChatClient client(settingsFor(server));
    const Outcome outcome = exchange(client, hello());
    QVERIFY(outcome.error);
    QCOMPARE(outcome.error->kind, ChatError::Kind::ContextTooLong);
    QVERIFY(outcome.error->message.contains(u"context size"_s));
    QCOMPARE(server.requests().size(), 1);
}

void TestChatClient::refusalIsAnError() {
    FakeChatServer server;
    QVERIFY(server.listen());
    ScriptedReply refusal;
    refusal.refusal = u"I can't help with that."_s;
    server.enqueue(refusal);
    ChatClient client(settingsFor(server));
    const Outcome outcome = exchange(client, hello());
    QVERIFY(outcome.error);
    QCOMPARE(outcome.error->kind, ChatError::Kind::Refused);
    QVERIFY(outcome.error->message.contains(u"I can't help with that."_s));
}

void TestChatClient::rateLimitHonoursRetryAfter() {
    FakeChatServer server;
    QVERIFY(server.listen());
    auto limited = ScriptedReply::error(429, u"Rate limit reached"_s, u"rate_limit_exceeded"_s);
    limited.retryAfter = "1";
    server.enqueue(limited);
    server.enqueue(ScriptedReply::text(u"after the wait"_s));
    ChatClient client(settingsFor(server));
    const Outcome outcome = exchange(client, hello());
    QVERIFY(outcome.reply);
    QCOMPARE(outcome.reply->content, u"after the wait"_s);
    QCOMPARE(outcome.reply->attempts, 2);
    // The back-off alone would be 20 ms: the wait is the server's.
    QVERIFY2(outcome.ms >= 950, qPrintable(QString::number(outcome.ms)));
    QCOMPARE(outcome.statuses.size(), 1);
    QVERIFY(outcome.statuses.first().contains(u"retrying in 1 s"_s));
}

void TestChatClient::retryAfterBeyondLimitFailsAtOnce() {
    FakeChatServer server;
    QVERIFY(server.listen());
    auto limited = ScriptedReply::error(429, u"Quota exceeded"_s);
    limited.retryAfter = "3600";
    server.enqueue(limited);
    auto settings = settingsFor(server);
    settings.maxRetryAfterMs = 10'000;
    ChatClient client(settings);
    const Outcome outcome = exchange(client, hello());
    QVERIFY(outcome.error);
    QCOMPARE(outcome.error->kind, ChatError::Kind::RateLimited);
    QVERIFY2(outcome.error->message.contains(u"3600 s"_s), qPrintable(outcome.error->message));
    QVERIFY(outcome.ms < 5'000);
}

void TestChatClient::serverErrorThenSuccess() {
    FakeChatServer server;
    QVERIFY(server.listen());
    server.enqueue(ScriptedReply::error(500, u"internal error"_s));
    server.enqueue(ScriptedReply::text(u"recovered"_s));
    ChatClient client(settingsFor(server));
    const Outcome outcome = exchange(client, hello());
    QVERIFY(outcome.reply);
    QCOMPARE(outcome.reply->content, u"recovered"_s);
    QCOMPARE(outcome.reply->attempts, 2);
    QCOMPARE(outcome.streamed, u"recovered"_s);
}

void TestChatClient::serverErrorsExhaustRetries() {
    FakeChatServer server;
    QVERIFY(server.listen());
    for (int i = 0; i < 3; ++i)
        server.enqueue(ScriptedReply::error(503, u"overloaded"_s));
    auto settings = settingsFor(server);
    settings.maxRetries = 2;
    ChatClient client(settings);
    const Outcome outcome = exchange(client, hello());
    QVERIFY(outcome.error);
    QCOMPARE(outcome.error->kind, ChatError::Kind::Server);
    QCOMPARE(outcome.error->attempts, 3);
    QVERIFY(outcome.error->message.contains(u"after 3 attempts"_s));
    QVERIFY(outcome.error->message.contains(u"overloaded"_s));
    QCOMPARE(server.requests().size(), 3);
}

void TestChatClient::connectionResetIsRetried() {
    FakeChatServer server;
    QVERIFY(server.listen());
    server.enqueue(ScriptedReply::withFault(ScriptedReply::Fault::Reset));
    server.enqueue(ScriptedReply::text(u"second time lucky"_s));
    ChatClient client(settingsFor(server));
    const Outcome outcome = exchange(client, hello());
    QVERIFY2(outcome.reply, outcome.error ? qPrintable(outcome.error->message) : "");
    QCOMPARE(outcome.reply->content, u"second time lucky"_s);
    QVERIFY(server.requests().size() >= 2);
}

void TestChatClient::connectionRefusedFailsFast() {
    quint16 port = 0;
    {
        QTcpServer probe;
        QVERIFY(probe.listen(QHostAddress::LocalHost));
        port = probe.serverPort();
    }
    ChatClientSettings settings;
    settings.baseUrl = u"http://127.0.0.1:%1/v1"_s.arg(port);
    ChatClient client(settings);
    const Outcome outcome = exchange(client, hello());
    QVERIFY(outcome.error);
    QCOMPARE(outcome.error->kind, ChatError::Kind::Connection);
    QCOMPARE(outcome.error->message,
             u"nothing listens at http://127.0.0.1:%1 (connection refused); is the server "
             u"running?"_s.arg(port));
    QCOMPARE(outcome.error->attempts, 1);
    QVERIFY(outcome.ms < 2'000);
}

void TestChatClient::slowFirstByteTimesOut() {
    FakeChatServer server;
    QVERIFY(server.listen());
    auto slow = ScriptedReply::text(u"too late"_s);
    slow.firstByteDelayMs = 3'000;
    server.enqueue(slow);
    auto settings = settingsFor(server);
    settings.firstTokenTimeoutMs = 300;
    settings.maxRetries = 0;
    ChatClient client(settings);
    const Outcome outcome = exchange(client, hello());
    QVERIFY(outcome.error);
    QCOMPARE(outcome.error->kind, ChatError::Kind::Timeout);
    QVERIFY2(outcome.error->message.contains(u"first-token time-out"_s),
             qPrintable(outcome.error->message));
    QVERIFY(outcome.ms < 2'000);
}

void TestChatClient::stallInStreamTimesOut() {
    FakeChatServer server;
    QVERIFY(server.listen());
    auto slow = ScriptedReply::text(u"a slow trickle of text"_s);
    slow.chunkDelayMs = 1'000;
    server.enqueue(slow);
    auto settings = settingsFor(server);
    settings.stallTimeoutMs = 300;
    settings.maxRetries = 0;
    ChatClient client(settings);
    const Outcome outcome = exchange(client, hello());
    QVERIFY(outcome.error);
    QCOMPARE(outcome.error->kind, ChatError::Kind::Timeout);
    QVERIFY2(outcome.error->message.contains(u"stall time-out"_s),
             qPrintable(outcome.error->message));
}

void TestChatClient::streamCutBeforeDoneIsNotUsed() {
    FakeChatServer server;
    QVERIFY(server.listen());
    auto cut = ScriptedReply::withFault(ScriptedReply::Fault::CutStream);
    cut.chunkChars = 4;
    server.enqueue(cut);
    auto settings = settingsFor(server);
    settings.maxRetries = 0;
    ChatClient client(settings);
    const Outcome outcome = exchange(client, hello());
    QVERIFY(outcome.error);
    QCOMPARE(outcome.error->kind, ChatError::Kind::MalformedReply);
    QVERIFY2(outcome.error->message.contains(u"ended before [DONE]"_s),
             qPrintable(outcome.error->message));
    QVERIFY(!outcome.streamed.isEmpty());
}

void TestChatClient::doneEndsTheReplyEvenIfTheConnectionStaysOpen() {
    FakeChatServer server;
    QVERIFY(server.listen());
    auto held = ScriptedReply::text(u"complete, but the server keeps the stream open"_s);
    held.holdOpenAfterDone = true;
    server.enqueue(held);
    auto settings = settingsFor(server);
    settings.stallTimeoutMs = 6'000;
    settings.maxRetries = 0;
    ChatClient client(settings);
    const Outcome outcome = exchange(client, hello());
    QVERIFY2(outcome.reply, outcome.error ? qPrintable(outcome.error->message) : "");
    QCOMPARE(outcome.reply->content, u"complete, but the server keeps the stream open"_s);
    QVERIFY(!outcome.reply->usageEstimated);
    QVERIFY2(outcome.ms < 5'000, qPrintable(QString::number(outcome.ms)));
}

void TestChatClient::streamCutThenRetryKeepsOnlyTheGoodReply() {
    FakeChatServer server;
    QVERIFY(server.listen());
    auto cut = ScriptedReply::withFault(ScriptedReply::Fault::CutStream);
    cut.chunkChars = 4;
    server.enqueue(cut);
    server.enqueue(ScriptedReply::text(u"complete"_s));
    ChatClient client(settingsFor(server));
    const Outcome outcome = exchange(client, hello());
    QVERIFY(outcome.reply);
    QCOMPARE(outcome.reply->content, u"complete"_s);
    QCOMPARE(outcome.reply->attempts, 2);
}

void TestChatClient::invalidJsonIsMalformed_data() {
    QTest::addColumn<bool>("stream");
    QTest::newRow("stream") << true;
    QTest::newRow("json") << false;
}

void TestChatClient::invalidJsonIsMalformed() {
    QFETCH(bool, stream);
    FakeChatServer server;
    QVERIFY(server.listen());
    server.enqueue(ScriptedReply::withFault(ScriptedReply::Fault::InvalidJson));
    auto settings = settingsFor(server);
    settings.maxRetries = 0;
    ChatClient client(settings);
    const Outcome outcome = exchange(client, hello(stream));
    QVERIFY(outcome.error);
    QCOMPARE(outcome.error->kind, ChatError::Kind::MalformedReply);
    QVERIFY2(outcome.error->message.contains(u"JSON"_s), qPrintable(outcome.error->message));
}

void TestChatClient::missingChoicesIsMalformed_data() {
    invalidJsonIsMalformed_data();
}

void TestChatClient::missingChoicesIsMalformed() {
    QFETCH(bool, stream);
    FakeChatServer server;
    QVERIFY(server.listen());
    server.enqueue(ScriptedReply::withFault(ScriptedReply::Fault::MissingChoices));
    auto settings = settingsFor(server);
    settings.maxRetries = 0;
    ChatClient client(settings);
    const Outcome outcome = exchange(client, hello(stream));
    QVERIFY(outcome.error);
    QCOMPARE(outcome.error->kind, ChatError::Kind::MalformedReply);
    QVERIFY2(outcome.error->message.contains(u"choices"_s), qPrintable(outcome.error->message));
}

void TestChatClient::multiMegabyteReplyArrivesWhole() {
    FakeChatServer server;
    QVERIFY(server.listen());
    QString big;
    for (int line = 0; big.size() < 5 * 1024 * 1024; ++line)
        big += u"    acc[%1] = fmaf(a[%1], b[%1], acc[%1]); // \u00e9\u2713\n"_s.arg(line);
    auto reply = ScriptedReply::text(big);
    reply.chunkChars = 32 * 1024;
    server.enqueue(reply);
    ChatClient client(settingsFor(server));
    const Outcome outcome = exchange(client, hello(), 60'000);
    QVERIFY(outcome.reply);
    QCOMPARE(outcome.reply->content.size(), big.size());
    QVERIFY(outcome.reply->content == big);
}

void TestChatClient::replyBeyondSizeLimitFails() {
    FakeChatServer server;
    QVERIFY(server.listen());
    auto reply = ScriptedReply::text(QString(3 * 1024 * 1024, u'x'));
    reply.chunkChars = 64 * 1024;
    server.enqueue(reply);
    auto settings = settingsFor(server);
    settings.maxReplyBytes = 1 << 20;
    ChatClient client(settings);
    const Outcome outcome = exchange(client, hello(false));
    QVERIFY(outcome.error);
    QCOMPARE(outcome.error->kind, ChatError::Kind::TooLarge);
    QVERIFY(outcome.error->message.contains(u"1 MiB"_s));
    QCOMPARE(server.requests().size(), 1);
}

void TestChatClient::cancelAbortsSilently() {
    FakeChatServer server;
    QVERIFY(server.listen());
    server.enqueue(ScriptedReply::withFault(ScriptedReply::Fault::Silent));
    ChatClient client(settingsFor(server));
    QSignalSpy replies(&client, &ChatClient::replyAvailable);
    QSignalSpy failures(&client, &ChatClient::requestFailed);
    QSignalSpy received(&server, &FakeChatServer::requestReceived);
    client.send(hello());
    QVERIFY(client.isBusy());
    QVERIFY(received.wait(5'000));
    client.cancel();
    QVERIFY(!client.isBusy());
    QTest::qWait(300);
    QCOMPARE(replies.size(), 0);
    QCOMPARE(failures.size(), 0);
    server.enqueue(ScriptedReply::text(u"fresh"_s));
    const Outcome outcome = exchange(client, hello());
    QVERIFY(outcome.reply);
    QCOMPARE(outcome.reply->content, u"fresh"_s);
}

void TestChatClient::secondSendWhileBusyFails() {
    FakeChatServer server;
    QVERIFY(server.listen());
    server.enqueue(ScriptedReply::withFault(ScriptedReply::Fault::Silent));
    ChatClient client(settingsFor(server));
    QSignalSpy failures(&client, &ChatClient::requestFailed);
    client.send(hello());
    client.send(hello());
    QCOMPARE(failures.size(), 1);
    QCOMPARE(failures.first().first().value<ChatError>().kind, ChatError::Kind::Busy);
    client.cancel();
}

void TestChatClient::missingConfigurationIsNamed() {
    ChatClient noUrl(ChatClientSettings{});
    Outcome outcome = exchange(noUrl, hello());
    QVERIFY(outcome.error);
    QCOMPARE(outcome.error->kind, ChatError::Kind::Configuration);
    QVERIFY(outcome.error->message.contains(u"base URL"_s));

    ChatClientSettings settings;
    settings.baseUrl = u"http://127.0.0.1:9/v1"_s;
    ChatClient noModel(settings);
    ChatRequest request = hello();
    request.model.clear();
    outcome = exchange(noModel, request);
    QVERIFY(outcome.error);
    QVERIFY(outcome.error->message.contains(u"no model"_s));

    settings.baseUrl = u"ftp://example/v1"_s;
    ChatClient badScheme(settings);
    outcome = exchange(badScheme, hello());
    QVERIFY(outcome.error);
    QVERIFY(outcome.error->message.contains(u"not an http"_s));
}

QTEST_GUILESS_MAIN(TestChatClient)
#include "tst_chatclient.moc"
