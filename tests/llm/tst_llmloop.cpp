// A full 3-iteration loop of the engine with all three roles played by the LLM backend, against
// the local test server (in each dialect) and kev-fake-harness; then every file the session
// wrote is scanned for the API key.
#include "fakechatserver.h"
#include "kevolveresponder.h"
#include "llmfixtures.h"

#include "engine.h"
#include "keystore.h"

#include <QDirIterator>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::Literals::StringLiterals;
using namespace kev;
using namespace kev::test;

namespace {

const QString testKey = u"sk-loop-test-KEY-a1b2c3d4e5f6g7h8"_s;

class FixedKeyStore : public KeyStore {
public:
    std::optional<QString> key(const QString&) override { return testKey; }
};

EngineSettings llmEngineSettings(const FakeChatServer& server, const QString& preset) {
    EngineSettings settings;
    settings.plannerBackend = u"llm"_s;
    settings.coderBackend = u"llm"_s;
    settings.reviewerBackend = u"llm"_s;
    const QJsonObject options{{u"preset"_s, preset},
                              {u"base_url"_s, server.baseUrl()},
                              {u"model"_s, u"loop-model"_s},
                              {u"max_retries"_s, 1}};
    settings.plannerOptions = options;
    settings.coderOptions = options;
    settings.reviewerOptions = options;
    settings.maxIterations = 3;
    settings.targetSpeedup = 0;
    settings.plateauIterations = 0;
    settings.harnessCommands = {QStringLiteral(KEV_FAKE_HARNESS) + u" serve"_s};
    settings.evalTimeoutS = 60;
    return settings;
}

// Every file below `dir` that contains the key, or any 8 characters of it.
QStringList filesHoldingTheKey(const QString& dir, int* scanned) {
    QStringList found;
    QDirIterator it(dir, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly))
            continue;
        ++*scanned;
        const QByteArray bytes = file.readAll();
        for (qsizetype i = 0; i + 8 <= testKey.size(); ++i) {
            if (bytes.contains(testKey.mid(i, 8).toUtf8())) {
                found << path;
                break;
            }
        }
    }
    return found;
}

QString readAll(const QString& dir, const QString& pattern) {
    QString text;
    QDirIterator it(dir, {pattern}, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext())
        text += readText(it.next());
    return text;
}

} // namespace

class TestLlmLoop : public QObject {
    Q_OBJECT

private slots:
    void threeIterations_data();
    void threeIterations();
    void unreachableServerFailsTheRun();
};

void TestLlmLoop::threeIterations_data() {
    QTest::addColumn<ServerDialect>("dialect");
    QTest::addColumn<QString>("preset");
    QTest::addColumn<QString>("schemaField");
    QTest::newRow("openai") << ServerDialect::OpenAi << u"openai"_s << u"response_format"_s;
    QTest::newRow("vllm") << ServerDialect::Vllm << u"vllm"_s << u"response_format"_s;
    QTest::newRow("llamacpp") << ServerDialect::LlamaCpp << u"llamacpp"_s << u"json_schema"_s;
    QTest::newRow("ollama") << ServerDialect::Ollama << u"ollama"_s << u"format"_s;
    QTest::newRow("rejects-schema") << ServerDialect::RejectsSchema << u"openai"_s << QString();
    QTest::newRow("rejects-stream-usage")
        << ServerDialect::RejectsStreamUsage << u"custom"_s << QString();
}

void TestLlmLoop::threeIterations() {
    QFETCH(ServerDialect, dialect);
    QFETCH(QString, preset);
    QFETCH(QString, schemaField);
    FakeChatServer server(dialect);
    server.setApiKey(testKey);
    server.setModels({u"loop-model"_s});
    server.setResponder(kevolveResponder());
    QVERIFY(server.listen());
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString sessionDir = dir.filePath(u"session"_s);

    Engine engine;
    engine.setKeyStore(std::make_shared<FixedKeyStore>());
    QSignalSpy finished(&engine, &Engine::finished);
    QSignalSpy failed(&engine, &Engine::failed);
    QSignalSpy steps(&engine, &Engine::stepAvailable);
    QSignalSpy text(&engine, &Engine::agentTextAvailable);
    engine.start(fixedTask(), llmEngineSettings(server, preset), sessionDir);
    QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty() || !failed.isEmpty(), 60'000);
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().at(1).toString()));
    QCOMPARE(finished.first().first().value<Engine::StopReason>(),
             Engine::StopReason::IterationLimit);
    QCOMPARE(steps.size(), 3);
    const auto last = steps.last().first().value<IterationSummary>();
    QCOMPARE(last.status, u"ok"_s);
    QVERIFY(last.speedup && *last.speedup > 0.5);
    QVERIFY(last.tokens > 0);
    QVERIFY(!text.isEmpty());

    QStringList roles;
    bool schemaSent = false;
    for (const ReceivedRequest& request : server.requests()) {
        // Each agent's first request is refused there once, then sent without the field.
        if ((dialect == ServerDialect::RejectsStreamUsage &&
             request.body.contains(u"stream_options"_s)) ||
            (dialect == ServerDialect::RejectsSchema &&
             request.body.contains(u"response_format"_s)))
            continue;
        roles << roleOf(request.body);
        if (!schemaField.isEmpty() && request.body.contains(schemaField))
            schemaSent = true;
        QCOMPARE(request.authorization, "Bearer "_ba + testKey.toUtf8());
    }
    QVERIFY(roles.contains(u"planner"_s));
    QCOMPARE(roles.count(u"coder"_s), 3);
    QCOMPARE(roles.count(u"reviewer"_s), 3);
    QCOMPARE(schemaSent, !schemaField.isEmpty());

    // The session holds every prompt and reply, and never the key.
    const QString logs = readAll(sessionDir, u"*.json"_s);
    QVERIFY(logs.contains(u"Planning agent"_s));
    QVERIFY(logs.contains(u"Coding agent"_s));
    QVERIFY(logs.contains(u"Review agent"_s));
    int scanned = 0;
    const QStringList leaks = filesHoldingTheKey(sessionDir, &scanned);
    QVERIFY2(leaks.isEmpty(), qPrintable(leaks.join(u", "_s)));
    QVERIFY(scanned >= 7);
}

void TestLlmLoop::unreachableServerFailsTheRun() {
    quint16 port = 0;
    {
        FakeChatServer probe;
        QVERIFY(probe.listen());
        port = probe.port();
    }
    FakeChatServer server;
    QVERIFY(server.listen());
    EngineSettings settings = llmEngineSettings(server, u"custom"_s);
    QJsonObject options = settings.plannerOptions;
    options[u"base_url"_s] = u"http://127.0.0.1:%1/v1"_s.arg(port);
    settings.plannerOptions = options;
    QTemporaryDir dir;
    Engine engine;
    engine.setKeyStore(std::make_shared<FixedKeyStore>());
    QSignalSpy finished(&engine, &Engine::finished);
    QSignalSpy failed(&engine, &Engine::failed);
    engine.start(fixedTask(), settings, dir.filePath(u"session"_s));
    QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty() || !failed.isEmpty(), 30'000);
    QVERIFY(!failed.isEmpty());
    QCOMPARE(failed.first().first().value<Engine::Failure>(), Engine::Failure::Agent);
    const QString message = failed.first().at(1).toString();
    QVERIFY2(message.contains(u"nothing listens at http://127.0.0.1:%1"_s.arg(port)),
             qPrintable(message));
}

QTEST_GUILESS_MAIN(TestLlmLoop)
#include "tst_llmloop.moc"
