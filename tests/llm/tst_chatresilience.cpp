// ChatClient where real servers and networks misbehave: redirects (followed within the origin,
// refused across origins so the key stays home), a first token that comes late after early
// headers, a dead server, a key reflected into the answer, and the record and progress of every
// attempt.
#include "fakechatserver.h"

#include "llm/chatclient.h"
#include "llm/chaterror.h"

#include <QEventLoop>
#include <QTest>
#include <QTimer>

using namespace Qt::Literals::StringLiterals;
using kev::AgentProgress;
using kev::ChatAttempt;
using kev::ChatClient;
using kev::ChatClientSettings;
using kev::ChatError;
using kev::ChatReply;
using kev::ChatRequest;
using kev::test::FakeChatServer;
using kev::test::ScriptedReply;

namespace {

const QString testKey = u"sk-test-KEVOLVE-0123456789abcdef"_s;

struct Outcome {
    std::optional<ChatReply> reply;
    std::optional<ChatError> error;
    QString streamed;
    QList<ChatAttempt> attempts;
    QList<AgentProgress> progress;
};

Outcome exchange(ChatClient& client, const ChatRequest& request) {
    Outcome outcome;
    QEventLoop loop;
    QObject::connect(&client, &ChatClient::replyAvailable, &loop, [&](const ChatReply& reply) {
        outcome.reply = reply;
        loop.quit();
    });
    QObject::connect(&client, &ChatClient::requestFailed, &loop, [&](const ChatError& error) {
        outcome.error = error;
        loop.quit();
    });
    QObject::connect(&client, &ChatClient::textAvailable, &loop,
                     [&](const QString& chunk) { outcome.streamed += chunk; });
    QObject::connect(&client, &ChatClient::attemptFinished, &loop,
                     [&](const ChatAttempt& attempt) { outcome.attempts << attempt; });
    QObject::connect(&client, &ChatClient::progressChanged, &loop,
                     [&](const AgentProgress& progress) { outcome.progress << progress; });
    // A generous bound: only a hung client reaches it.
    QTimer::singleShot(60'000, &loop, &QEventLoop::quit);
    client.send(request);
    loop.exec();
    return outcome;
}

ChatRequest hello() {
    ChatRequest request;
    request.model = u"test-model"_s;
    request.messages = {{u"system"_s, u"You are terse."_s}, {u"user"_s, u"Say hello."_s}};
    return request;
}

ChatClientSettings settingsFor(const QString& baseUrl) {
    ChatClientSettings settings;
    settings.baseUrl = baseUrl;
    settings.apiKey = testKey;
    settings.keyEnvVar = u"KEVOLVE_TEST_KEY"_s;
    settings.initialBackoffMs = 20;
    settings.maxBackoffMs = 100;
    settings.connectTimeoutMs = 5'000;
    settings.firstTokenTimeoutMs = 10'000;
    settings.stallTimeoutMs = 10'000;
    settings.totalTimeoutMs = 30'000;
    return settings;
}

bool leaksKey(const QString& text) {
    for (qsizetype start = 0; start + 8 <= testKey.size(); ++start) {
        if (text.contains(QStringView(testKey).mid(start, 8)))
            return true;
    }
    return false;
}

} // namespace

class TestChatResilience : public QObject {
    Q_OBJECT

private slots:
    void sameOriginRedirectIsFollowed_data();
    void sameOriginRedirectIsFollowed();
    void crossOriginRedirectIsRefusedWithoutSendingTheKey();
    void lateFirstTokenAfterEarlyHeadersIsJudgedByTheFirstTokenDeadline();
    void firstTokenWithinItsDeadlineIsNotAStall();
    void deadServerIsRetriedOnlyOnce();
    void reflectedKeyIsScrubbedFromTheReplyAndTheStream_data();
    void reflectedKeyIsScrubbedFromTheReplyAndTheStream();
    void streamingScrubberHoldsBackSplitKeys();
    void everyAttemptIsRecordedFailedOnesToo();
    void progressShowsAttemptsAndRetryAfterWaits();
    void systemProxyIsUsedExceptForThisMachine();
};

void TestChatResilience::sameOriginRedirectIsFollowed_data() {
    QTest::addColumn<int>("status");
    QTest::addColumn<bool>("absolute");
    QTest::newRow("307 relative (FastAPI's trailing slash)") << 307 << false;
    QTest::newRow("308 absolute") << 308 << true;
}

void TestChatResilience::sameOriginRedirectIsFollowed() {
    QFETCH(int, status);
    QFETCH(bool, absolute);
    FakeChatServer server;
    QVERIFY(server.listen());
    const QByteArray target =
        absolute ? (server.baseUrl() + u"/chat/completions"_s).toUtf8() : "/v1/chat/completions"_ba;
    server.addRedirect("/old/v1/chat/completions"_ba, target, status);
    ChatClient client(
        settingsFor(u"http://127.0.0.1:%1/old/v1"_s.arg(QString::number(server.port()))));
    const Outcome outcome = exchange(client, hello());
    QVERIFY2(outcome.reply, outcome.error ? qPrintable(outcome.error->message) : "no answer");
    QCOMPARE(outcome.reply->content, u"Hello from the test server."_s);
    QCOMPARE(server.requests().size(), 2);
    QCOMPARE(server.requests().at(1).path, "/v1/chat/completions"_ba);
    QCOMPARE(server.requests().at(1).body.value(u"model"_s).toString(), u"test-model"_s);
}

void TestChatResilience::crossOriginRedirectIsRefusedWithoutSendingTheKey() {
    FakeChatServer elsewhere;
    QVERIFY(elsewhere.listen());
    FakeChatServer server;
    QVERIFY(server.listen());
    server.addRedirect("/v1/chat/completions"_ba,
                       (elsewhere.baseUrl() + u"/chat/completions"_s).toUtf8(), 307);
    ChatClient client(settingsFor(server.baseUrl()));
    const Outcome outcome = exchange(client, hello());
    QVERIFY(outcome.error);
    QCOMPARE(outcome.error->kind, ChatError::Kind::Configuration);
    QVERIFY2(outcome.error->message.contains(u"another origin"_s) &&
                 outcome.error->message.contains(QString::number(elsewhere.port())),
             qPrintable(outcome.error->message));
    QVERIFY(elsewhere.requests().isEmpty());
    QCOMPARE(server.requests().size(), 1);
    QVERIFY(!leaksKey(outcome.error->message));
}

void TestChatResilience::lateFirstTokenAfterEarlyHeadersIsJudgedByTheFirstTokenDeadline() {
    FakeChatServer server;
    QVERIFY(server.listen());
    auto late = ScriptedReply::text(u"late"_s);
    late.firstTokenDelayMs = 5'000;
    server.enqueue(late);
    auto settings = settingsFor(server.baseUrl());
    settings.firstTokenTimeoutMs = 300;
    settings.stallTimeoutMs = 20'000;
    settings.maxRetries = 0;
    ChatClient client(settings);
    const Outcome outcome = exchange(client, hello());
    QVERIFY(outcome.error);
    QCOMPARE(outcome.error->kind, ChatError::Kind::Timeout);
    QVERIFY2(outcome.error->message.contains(u"its headers but no token"_s) &&
                 outcome.error->message.contains(u"first-token time-out"_s),
             qPrintable(outcome.error->message));
}

void TestChatResilience::firstTokenWithinItsDeadlineIsNotAStall() {
    FakeChatServer server;
    QVERIFY(server.listen());
    auto prefill = ScriptedReply::text(u"after a long prefill"_s);
    prefill.firstTokenDelayMs = 3'000;
    server.enqueue(prefill);
    auto settings = settingsFor(server.baseUrl());
    settings.firstTokenTimeoutMs = 20'000;
    // Shorter than the prefill, so it must not apply before the token; long enough that a busy
    // machine's scheduling between the events of one write never reaches it.
    settings.stallTimeoutMs = 1'500;
    settings.maxRetries = 0;
    ChatClient client(settings);
    const Outcome outcome = exchange(client, hello());
    QVERIFY2(outcome.reply, outcome.error ? qPrintable(outcome.error->message) : "no answer");
    QCOMPARE(outcome.reply->content, u"after a long prefill"_s);
}

void TestChatResilience::deadServerIsRetriedOnlyOnce() {
    FakeChatServer server;
    QVERIFY(server.listen());
    for (int i = 0; i < 4; ++i)
        server.enqueue(ScriptedReply::withFault(ScriptedReply::Fault::Silent));
    auto settings = settingsFor(server.baseUrl());
    settings.firstTokenTimeoutMs = 200;
    settings.maxRetries = 3;
    ChatClient client(settings);
    const Outcome outcome = exchange(client, hello());
    QVERIFY(outcome.error);
    QCOMPARE(outcome.error->kind, ChatError::Kind::Timeout);
    QCOMPARE(server.requests().size(), 2);
    QCOMPARE(outcome.attempts.size(), 2);
    QVERIFY2(outcome.error->message.contains(u"looks stuck"_s), qPrintable(outcome.error->message));
}

void TestChatResilience::reflectedKeyIsScrubbedFromTheReplyAndTheStream_data() {
    QTest::addColumn<bool>("stream");
    QTest::addColumn<int>("chunkChars");
    QTest::newRow("streamed in 3-character pieces") << true << 3;
    QTest::newRow("streamed in 7-character pieces") << true << 7;
    QTest::newRow("one JSON body") << false << 16;
}

void TestChatResilience::reflectedKeyIsScrubbedFromTheReplyAndTheStream() {
    QFETCH(bool, stream);
    QFETCH(int, chunkChars);
    FakeChatServer server;
    QVERIFY(server.listen());
    auto echo = ScriptedReply::text(u"Your key is %1, and again: %1.\nDone."_s.arg(testKey));
    echo.chunkChars = chunkChars;
    server.enqueue(echo);
    ChatClient client(settingsFor(server.baseUrl()));
    ChatRequest request = hello();
    request.stream = stream;
    const Outcome outcome = exchange(client, request);
    QVERIFY2(outcome.reply, outcome.error ? qPrintable(outcome.error->message) : "no answer");
    QVERIFY2(!leaksKey(outcome.reply->content), qPrintable(outcome.reply->content));
    QVERIFY2(!leaksKey(outcome.streamed), qPrintable(outcome.streamed));
    QVERIFY(outcome.reply->content.contains(u"[redacted]"_s));
    QVERIFY(outcome.streamed.endsWith(u"Done."_s));
    QCOMPARE(outcome.attempts.size(), 1);
    QVERIFY(!leaksKey(outcome.attempts.first().reply));
}

void TestChatResilience::streamingScrubberHoldsBackSplitKeys() {
    const QString text = u"prefix %1 middle %1 end"_s.arg(testKey);
    for (int size = 1; size <= 12; ++size) {
        kev::SecretScrubber scrubber(testKey);
        QString out;
        for (qsizetype at = 0; at < text.size(); at += size) {
            const QString piece = scrubber.feed(text.mid(at, size));
            QVERIFY2(!leaksKey(piece), qPrintable(piece));
            out += piece;
        }
        out += scrubber.finish();
        QCOMPARE(out, u"prefix [redacted] middle [redacted] end"_s);
    }
}

void TestChatResilience::everyAttemptIsRecordedFailedOnesToo() {
    FakeChatServer server;
    QVERIFY(server.listen());
    server.enqueue(ScriptedReply::error(500, u"upstream model crashed"_s));
    server.enqueue(ScriptedReply::withFault(ScriptedReply::Fault::CutStream));
    server.enqueue(ScriptedReply::text(u"finally"_s));
    ChatClient client(settingsFor(server.baseUrl()));
    const Outcome outcome = exchange(client, hello());
    QVERIFY2(outcome.reply, outcome.error ? qPrintable(outcome.error->message) : "no answer");
    QCOMPARE(outcome.attempts.size(), 3);
    QCOMPARE(outcome.attempts.at(0).httpStatus, 500);
    QVERIFY(outcome.attempts.at(0).error.contains(u"500"_s));
    QVERIFY(outcome.attempts.at(0).reply.contains(u"upstream model crashed"_s));
    QCOMPARE(outcome.attempts.at(0).promptTokens, 0); // a server error is not a processed prompt
    QVERIFY(outcome.attempts.at(1).error.contains(u"[DONE]"_s));
    QVERIFY(outcome.attempts.at(1).promptTokens > 0); // accepted, streamed, cut: estimated
    QVERIFY(outcome.attempts.at(1).usageEstimated);
    QVERIFY(outcome.attempts.at(1).completionTokens > 0);
    QVERIFY(outcome.attempts.at(2).error.isEmpty());
    QCOMPARE(outcome.attempts.at(2).reply, u"finally"_s);
    QVERIFY(!outcome.attempts.at(2).usageEstimated);
    QCOMPARE(outcome.attempts.at(2).attempt, 3);
    // Jittered back-off: half the exponential delay plus a random share of the other half.
    for (const AgentProgress& p : outcome.progress) {
        if (p.state != AgentProgress::State::Retrying)
            continue;
        const qint64 full = p.attempt == 1 ? 20 : 40;
        QVERIFY2(p.waitMs >= full / 2 && p.waitMs <= full, qPrintable(p.line()));
    }
}

void TestChatResilience::progressShowsAttemptsAndRetryAfterWaits() {
    FakeChatServer server;
    QVERIFY(server.listen());
    auto limited = ScriptedReply::error(429, u"Rate limit reached"_s);
    limited.retryAfter = "1";
    server.enqueue(limited);
    server.enqueue(ScriptedReply::text(u"a reply long enough to stream in several pieces"_s));
    ChatClient client(settingsFor(server.baseUrl()));
    const Outcome outcome = exchange(client, hello());
    QVERIFY2(outcome.reply, outcome.error ? qPrintable(outcome.error->message) : "no answer");
    const auto find = [&](AgentProgress::State state) -> std::optional<AgentProgress> {
        for (const AgentProgress& p : outcome.progress) {
            if (p.state == state)
                return p;
        }
        return std::nullopt;
    };
    const auto retrying = find(AgentProgress::State::Retrying);
    QVERIFY(retrying);
    QCOMPARE(retrying->waitMs, qint64(1000));
    QVERIFY(retrying->retryAfter);
    QCOMPARE(retrying->attempt, 1);
    QCOMPARE(retrying->maxAttempts, 4);
    QVERIFY2(retrying->line().contains(u"Retry-After"_s), qPrintable(retrying->line()));
    QVERIFY(find(AgentProgress::State::Waiting));
    const auto streaming = find(AgentProgress::State::Streaming);
    QVERIFY(streaming);
    QCOMPARE(streaming->attempt, 2);
    QVERIFY(streaming->tokensEstimated);
    const AgentProgress done = outcome.progress.last();
    QCOMPARE(done.state, AgentProgress::State::Done);
    QVERIFY(!done.tokensEstimated); // the server's usage replaced the estimate
    QVERIFY2(done.line().contains(u"attempt 2 of 4"_s), qPrintable(done.line()));
}

void TestChatResilience::systemProxyIsUsedExceptForThisMachine() {
    FakeChatServer proxy;
    QVERIFY(proxy.listen());
    FakeChatServer server;
    QVERIFY(server.listen());
    const QByteArray saved = qgetenv("http_proxy");
    qputenv("http_proxy", u"http://127.0.0.1:%1"_s.arg(proxy.port()).toUtf8());
    {
        // A server on this machine is reached directly, whatever the proxy settings.
        ChatClient client(settingsFor(server.baseUrl()));
        const Outcome outcome = exchange(client, hello());
        QVERIFY2(outcome.reply, outcome.error ? qPrintable(outcome.error->message) : "no answer");
        QVERIFY(proxy.requests().isEmpty());
    }
    {
        // Any other host goes through the proxy ($http_proxy here): the proxy sees the full URL.
        auto settings = settingsFor(u"http://kevolve-test.invalid/v1"_s);
        settings.maxRetries = 0;
        ChatClient client(settings);
        const Outcome outcome = exchange(client, hello());
        QVERIFY(outcome.error);
        QCOMPARE(proxy.requests().size(), 1);
        QCOMPARE(proxy.requests().first().path,
                 "http://kevolve-test.invalid/v1/chat/completions"_ba);
    }
    if (saved.isEmpty())
        qunsetenv("http_proxy");
    else
        qputenv("http_proxy", saved);
}

QTEST_GUILESS_MAIN(TestChatResilience)
#include "tst_chatresilience.moc"
