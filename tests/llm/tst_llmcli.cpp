// kevolve-cli with the LLM backend: `run --backend llm --base-url ... --model M` completes three
// iterations against the test server in each dialect (and kev-fake-harness), fails fast when
// nothing listens, and neither the session nor an export holds the key, even one the model
// reflects into its answers; a 10-iteration run shows live progress and stops at --token-budget
// within one request, and a resume with the budget used sends nothing; --check; Ollama gets no
// general key; bad flags are named before a session folder exists.
#include "fakechatserver.h"
#include "kevolveresponder.h"

#include <QDirIterator>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::Literals::StringLiterals;
using namespace kev::test;

namespace {

const QString testKey = u"sk-cli-test-KEY-0f1e2d3c4b5a6978"_s;

struct Run {
    int exitCode = -1;
    QString output;
    qint64 ms = 0;
};

// Runs kevolve-cli while this thread's event loop keeps serving the test server.
Run cli(const QStringList& arguments, const QString& keyVariable) {
    QProcess process;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.remove(u"KEVOLVE_API_KEY"_s);
    environment.insert(keyVariable, testKey);
    process.setProcessEnvironment(environment);
    process.setProcessChannelMode(QProcess::MergedChannels);
    QSignalSpy finished(&process, &QProcess::finished);
    QElapsedTimer clock;
    clock.start();
    process.start(QStringLiteral(KEVOLVE_CLI), arguments);
    Run run;
    if (!finished.wait(120'000)) {
        process.kill();
        process.waitForFinished();
    }
    run.ms = clock.elapsed();
    run.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    run.output = QString::fromUtf8(process.readAll());
    return run;
}

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

QList<QJsonObject> attemptLog(const QString& session) {
    QList<QJsonObject> entries;
    QFile file(session + u"/llm_attempts.jsonl"_s);
    if (!file.open(QIODevice::ReadOnly))
        return entries;
    for (const QByteArray& line : file.readAll().split('\n')) {
        if (!line.trimmed().isEmpty())
            entries << QJsonDocument::fromJson(line).object();
    }
    return entries;
}

qint64 tokensOf(const QJsonObject& entry) {
    return entry.value(u"tokens_in"_s).toInteger() + entry.value(u"tokens_out"_s).toInteger();
}

QString harness() {
    return QStringLiteral(KEV_FAKE_HARNESS) + u" serve"_s;
}

} // namespace

class TestLlmCli : public QObject {
    Q_OBJECT

private slots:
    void runsThreeIterations_data();
    void runsThreeIterations();
    void nothingListeningFailsFast();
    void tenIterationsStopAtTheTokenBudget();
    void reflectedKeyIsInNoFile();
    void checkAsksForTheModels();
    void ollamaGetsNoGeneralKeyAndItsContext();
    void badLlmFlagsAreNamedBeforeTheSessionExists();
    void redirectedServerAndLooseRepliesStillRun();
    void deadServerFailsClearlyAndEveryAttemptIsRecorded();
    void unusableRepliesAreRecordedWithTheirText();
    void estimatedCountsAreMarked();
    void jsonTellsEachCallAsEvents();
};

void TestLlmCli::runsThreeIterations_data() {
    QTest::addColumn<ServerDialect>("dialect");
    QTest::addColumn<QString>("provider");
    QTest::addColumn<QString>("keyVariable");
    QTest::newRow("openai") << ServerDialect::OpenAi << u"openai"_s << u"OPENAI_API_KEY"_s;
    QTest::newRow("vllm") << ServerDialect::Vllm << u"vllm"_s << u"VLLM_API_KEY"_s;
    QTest::newRow("llamacpp") << ServerDialect::LlamaCpp << u"llamacpp"_s << u"LLAMACPP_API_KEY"_s;
    QTest::newRow("ollama") << ServerDialect::Ollama << u"ollama"_s << u"OLLAMA_API_KEY"_s;
    QTest::newRow("rejects-schema")
        << ServerDialect::RejectsSchema << u"openai"_s << u"OPENAI_API_KEY"_s;
    QTest::newRow("no-provider") << ServerDialect::OpenAi << QString() << u"KEVOLVE_API_KEY"_s;
}

void TestLlmCli::runsThreeIterations() {
    QFETCH(ServerDialect, dialect);
    QFETCH(QString, provider);
    QFETCH(QString, keyVariable);
    FakeChatServer server(dialect);
    server.setApiKey(testKey);
    server.setModels({u"M"_s});
    server.setResponder(kevolveResponder());
    QVERIFY(server.listen());
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString session = dir.filePath(u"session"_s);
    QStringList arguments = {u"run"_s,
                             u"--task"_s,
                             u"gemm_fp16_fp32_4096"_s,
                             u"--backend"_s,
                             u"llm"_s,
                             u"--base-url"_s,
                             server.baseUrl(),
                             u"--model"_s,
                             u"M"_s,
                             u"--iterations"_s,
                             u"3"_s,
                             u"--target"_s,
                             u"0"_s,
                             u"--harness"_s,
                             harness(),
                             u"--session"_s,
                             session};
    if (!provider.isEmpty())
        arguments << u"--provider"_s << provider;
    const Run run = cli(arguments, keyVariable);
    QVERIFY2(run.exitCode == 0, qPrintable(run.output));
    QVERIFY2(run.output.contains(u"finished: 3 iterations done"_s), qPrintable(run.output));
    QVERIFY(run.output.contains(u"iteration 3 done"_s));
    // Accounting: each step's tokens and cost, and the session's running total.
    static const QRegularExpression accounting(
        u"v3: [1-9][0-9]* tokens, \\$0\\.0000 \\(session: [1-9][0-9]* tokens"_s);
    QVERIFY2(accounting.match(run.output).hasMatch(), qPrintable(run.output));

    const QString exported = dir.filePath(u"export"_s);
    const Run exportRun = cli({u"export"_s, session, u"--out"_s, exported}, keyVariable);
    QVERIFY2(exportRun.exitCode == 0, qPrintable(exportRun.output));

    int scanned = 0;
    const QStringList leaks = filesHoldingTheKey(dir.path(), &scanned);
    QVERIFY2(leaks.isEmpty(), qPrintable(leaks.join(u", "_s)));
    QVERIFY2(scanned >= 10, qPrintable(QString::number(scanned)));
    QVERIFY(!run.output.contains(testKey.left(12)));
}

void TestLlmCli::nothingListeningFailsFast() {
    quint16 port = 0;
    {
        FakeChatServer probe;
        QVERIFY(probe.listen());
        port = probe.port();
    }
    QTemporaryDir dir;
    const Run run =
        cli({u"run"_s, u"--task"_s, u"gemm_fp16_fp32_4096"_s, u"--backend"_s, u"llm"_s,
             u"--base-url"_s, u"http://127.0.0.1:%1/v1"_s.arg(port), u"--model"_s, u"M"_s,
             u"--harness"_s, harness(), u"--session"_s, dir.filePath(u"session"_s)},
            u"KEVOLVE_API_KEY"_s);
    QCOMPARE(run.exitCode, 5);
    QVERIFY2(run.output.contains(u"nothing listens at http://127.0.0.1:%1"_s.arg(port)),
             qPrintable(run.output));
    QVERIFY2(run.ms < 20'000, qPrintable(QString::number(run.ms)));

    const Run unused = cli({u"run"_s, u"--task"_s, u"gemm_fp16_fp32_4096"_s, u"--model"_s, u"M"_s,
                            u"--harness"_s, harness()},
                           u"KEVOLVE_API_KEY"_s);
    QCOMPARE(unused.exitCode, 2);
    QVERIFY2(unused.output.contains(u"--model: no role is played by the llm backend"_s),
             qPrintable(unused.output));
}

void TestLlmCli::tenIterationsStopAtTheTokenBudget() {
    FakeChatServer server;
    server.setApiKey(testKey);
    server.setModels({u"M"_s});
    const auto responder = kevolveResponder();
    // Realistic streaming: small deltas, paced, a short wait for the first token.
    server.setResponder([responder](const QJsonObject& request) {
        ScriptedReply reply = responder(request);
        reply.chunkChars = 12;
        reply.chunkDelayMs = 1;
        reply.firstTokenDelayMs = 30;
        return reply;
    });
    QVERIFY(server.listen());
    QTemporaryDir dir;
    const QString session = dir.filePath(u"session"_s);
    const qint64 budget = 20'000;
    const QStringList common = {u"--token-budget"_s, QString::number(budget),
                                u"--target"_s,       u"0"_s,
                                u"--plateau"_s,      u"0"_s,
                                u"--harness"_s,      harness()};
    const Run run = cli(QStringList{u"run"_s, u"--task"_s, u"gemm_fp16_fp32_4096"_s, u"--backend"_s,
                                    u"llm"_s, u"--base-url"_s, server.baseUrl(), u"--model"_s,
                                    u"M"_s, u"--iterations"_s, u"10"_s, u"--session"_s, session} +
                            common,
                        u"KEVOLVE_API_KEY"_s);
    QVERIFY2(run.exitCode == 0, qPrintable(run.output));
    QVERIFY2(run.output.contains(u"token budget of 20000 used"_s), qPrintable(run.output));
    QVERIFY2(!run.output.contains(u"iteration 10 done"_s), qPrintable(run.output));
    // The live line of each call: state, tokens streamed, elapsed time, attempt n of m.
    static const QRegularExpression streaming(
        u"v[0-9]+ coder M: streaming, ~[0-9]+ tokens, [0-9.]+ s, attempt 1 of 4"_s);
    QVERIFY2(streaming.match(run.output).hasMatch(), qPrintable(run.output));
    static const QRegularExpression done(
        u"v[0-9]+ planner M: done, [0-9]+ tokens, [0-9.]+ s, attempt 1 of 4"_s);
    QVERIFY2(done.match(run.output).hasMatch(), qPrintable(run.output));
    QVERIFY2(run.output.contains(u"in this session"_s), qPrintable(run.output));

    // Within one request: before the last request, the session was under the budget.
    const QList<QJsonObject> log = attemptLog(session);
    QVERIFY(log.size() >= 3);
    qint64 total = 0;
    for (const QJsonObject& entry : log)
        total += tokensOf(entry);
    QVERIFY2(total >= budget, qPrintable(QString::number(total)));
    QVERIFY2(total - tokensOf(log.last()) < budget, qPrintable(QString::number(total)));
    QCOMPARE(log.size(), server.requests().size());

    // Per session: a resume with the budget used stops before sending anything.
    const qsizetype requests = server.requests().size();
    const Run resumed = cli(QStringList{u"resume"_s, session} + common, u"KEVOLVE_API_KEY"_s);
    QVERIFY2(resumed.exitCode == 0, qPrintable(resumed.output));
    QVERIFY2(resumed.output.contains(u"token budget of 20000 used"_s), qPrintable(resumed.output));
    QCOMPARE(server.requests().size(), requests);

    const Run quiet =
        cli(QStringList{u"resume"_s, session, u"--quiet"_s} + common, u"KEVOLVE_API_KEY"_s);
    QVERIFY(!quiet.output.contains(u"attempt 1 of"_s));
}

void TestLlmCli::reflectedKeyIsInNoFile() {
    FakeChatServer server;
    server.setApiKey(testKey);
    const auto responder = kevolveResponder();
    // A server that reflects the key into every answer (a debugging proxy, a prompt injection).
    server.setResponder([responder](const QJsonObject& request) {
        ScriptedReply reply = responder(request);
        if (roleOf(request) == u"coder"_s)
            reply.content.replace(u"// Version"_s, u"// key %1, version"_s.arg(testKey));
        else if (roleOf(request) == u"planner"_s)
            reply.content.replace(u"\"rationale\": \""_s,
                                  u"\"rationale\": \"(key %1) "_s.arg(testKey));
        return reply;
    });
    QVERIFY(server.listen());
    QTemporaryDir dir;
    const QString session = dir.filePath(u"session"_s);
    const Run run =
        cli({u"run"_s, u"--task"_s, u"gemm_fp16_fp32_4096"_s, u"--backend"_s, u"llm"_s,
             u"--base-url"_s, server.baseUrl(), u"--model"_s, u"M"_s, u"--iterations"_s, u"2"_s,
             u"--target"_s, u"0"_s, u"--harness"_s, harness(), u"--session"_s, session},
            u"KEVOLVE_API_KEY"_s);
    QVERIFY2(run.exitCode == 0, qPrintable(run.output));
    const Run exportRun =
        cli({u"export"_s, session, u"--out"_s, dir.filePath(u"export"_s)}, u"KEVOLVE_API_KEY"_s);
    QVERIFY2(exportRun.exitCode == 0, qPrintable(exportRun.output));
    int scanned = 0;
    const QStringList leaks = filesHoldingTheKey(dir.path(), &scanned);
    QVERIFY2(leaks.isEmpty(), qPrintable(leaks.join(u", "_s)));
    QVERIFY(scanned >= 10);
    QVERIFY(!run.output.contains(testKey.mid(4, 8)));
    QFile plan(session + u"/plans/plan_v1.json"_s);
    QVERIFY(plan.open(QIODevice::ReadOnly));
    QVERIFY(plan.readAll().contains("[redacted]"));
}

void TestLlmCli::checkAsksForTheModels() {
    FakeChatServer server;
    server.setApiKey(testKey);
    server.setModels({u"M"_s, u"other"_s});
    QVERIFY(server.listen());
    QTemporaryDir dir;
    const auto check = [&](const QString& model, const QString& key) {
        return cli({u"run"_s, u"--task"_s, u"gemm_fp16_fp32_4096"_s, u"--backend"_s, u"llm"_s,
                    u"--base-url"_s, server.baseUrl(), u"--model"_s, model, u"--check"_s,
                    u"--session"_s, dir.filePath(u"session"_s)},
                   key);
    };
    const Run ok = check(u"M"_s, u"KEVOLVE_API_KEY"_s);
    QVERIFY2(ok.exitCode == 0, qPrintable(ok.output));
    QVERIFY2(ok.output.contains(u"check planner: ok"_s) && ok.output.contains(u"the key works"_s),
             qPrintable(ok.output));
    const Run missing = check(u"absent"_s, u"KEVOLVE_API_KEY"_s);
    QCOMPARE(missing.exitCode, 5);
    QVERIFY2(missing.output.contains(u"does not serve the model \"absent\"; it serves: M, other"_s),
             qPrintable(missing.output));
    const Run noKey = check(u"M"_s, u"SOME_OTHER_VARIABLE"_s);
    QCOMPARE(noKey.exitCode, 5);
    QVERIFY2(noKey.output.contains(u"KEVOLVE_API_KEY"_s), qPrintable(noKey.output));
    // With --json each endpoint's answer is one event line, as every line of run --json is.
    const Run json = cli({u"run"_s, u"--task"_s, u"gemm_fp16_fp32_4096"_s, u"--backend"_s, u"llm"_s,
                          u"--base-url"_s, server.baseUrl(), u"--model"_s, u"absent"_s,
                          u"--check"_s, u"--json"_s, u"--session"_s, dir.filePath(u"session"_s)},
                         u"KEVOLVE_API_KEY"_s);
    QCOMPARE(json.exitCode, 5);
    const QJsonObject event = QJsonDocument::fromJson(json.output.trimmed().toUtf8()).object();
    QVERIFY2(event.value(u"event"_s).toString() == u"check"_s, qPrintable(json.output));
    QCOMPARE(event.value(u"role"_s).toString(), u"planner"_s);
    QCOMPARE(event.value(u"ok"_s).toBool(true), false);
    QVERIFY(event.value(u"message"_s).toString().contains(u"does not serve the model"_s));
    QVERIFY(!QFile::exists(dir.filePath(u"session"_s)));
    for (const ReceivedRequest& request : server.requests())
        QCOMPARE(request.path, "/v1/models"_ba);
}

void TestLlmCli::ollamaGetsNoGeneralKeyAndItsContext() {
    FakeChatServer server(ServerDialect::Ollama);
    server.setResponder(kevolveResponder());
    QVERIFY(server.listen());
    QTemporaryDir dir;
    const Run run = cli({u"run"_s,
                         u"--task"_s,
                         u"gemm_fp16_fp32_4096"_s,
                         u"--backend"_s,
                         u"llm"_s,
                         u"--provider"_s,
                         u"ollama"_s,
                         u"--base-url"_s,
                         server.baseUrl(),
                         u"--model"_s,
                         u"M"_s,
                         u"--iterations"_s,
                         u"1"_s,
                         u"--target"_s,
                         u"0"_s,
                         u"--keep-alive"_s,
                         u"30m"_s,
                         u"--harness"_s,
                         harness(),
                         u"--session"_s,
                         dir.filePath(u"session"_s)},
                        u"KEVOLVE_API_KEY"_s);
    QVERIFY2(run.exitCode == 0, qPrintable(run.output));
    QVERIFY(!server.requests().isEmpty());
    for (const ReceivedRequest& request : server.requests()) {
        QVERIFY2(request.authorization.isEmpty(), request.authorization.constData());
        QCOMPARE(request.body.value(u"options"_s)[u"num_ctx"_s].toInt(), 32768);
        QCOMPARE(request.body.value(u"keep_alive"_s).toString(), u"30m"_s);
    }
}

void TestLlmCli::badLlmFlagsAreNamedBeforeTheSessionExists() {
    QTemporaryDir dir;
    const QString session = dir.filePath(u"session"_s);
    const QList<std::pair<QStringList, QString>> cases = {
        {{u"--first-token-timeout"_s, u"soon"_s}, u"--first-token-timeout"_s},
        {{u"--keep-alive"_s, u"forever"_s}, u"keep_alive"_s},
        {{u"--token-budget"_s, u"-5"_s}, u"--token-budget"_s},
        {{u"--max-tokens"_s, u"100000"_s}, u"max_tokens"_s},
    };
    for (const auto& [flags, named] : cases) {
        const Run run =
            cli(QStringList{u"run"_s, u"--task"_s, u"gemm_fp16_fp32_4096"_s, u"--backend"_s,
                            u"llm"_s, u"--base-url"_s, u"http://127.0.0.1:9/v1"_s, u"--model"_s,
                            u"M"_s, u"--session"_s, session} +
                    flags,
                u"KEVOLVE_API_KEY"_s);
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.output.contains(named), qPrintable(run.output));
        QVERIFY(!QFile::exists(session));
    }
}

void TestLlmCli::redirectedServerAndLooseRepliesStillRun() {
    FakeChatServer server;
    server.setApiKey(testKey);
    // FastAPI adds the trailing slash with a 307; the model wraps its answers loosely.
    server.addRedirect("/api/v1/chat/completions"_ba, "/v1/chat/completions"_ba, 307);
    const auto responder = kevolveResponder();
    server.setResponder([responder](const QJsonObject& request) {
        ScriptedReply reply = responder(request);
        if (roleOf(request) == u"coder"_s)
            reply.content.replace(u"```cuda"_s, u"```cpp"_s);
        else
            reply.content = u"Sure, here it is:\n"_s + reply.content + u"\nHope this helps!"_s;
        return reply;
    });
    QVERIFY(server.listen());
    QTemporaryDir dir;
    const Run run = cli({u"run"_s, u"--task"_s, u"gemm_fp16_fp32_4096"_s, u"--backend"_s, u"llm"_s,
                         u"--base-url"_s, u"http://127.0.0.1:%1/api/v1"_s.arg(server.port()),
                         u"--model"_s, u"M"_s, u"--iterations"_s, u"2"_s, u"--target"_s, u"0"_s,
                         u"--harness"_s, harness(), u"--session"_s, dir.filePath(u"session"_s)},
                        u"KEVOLVE_API_KEY"_s);
    QVERIFY2(run.exitCode == 0, qPrintable(run.output));
    QVERIFY2(run.output.contains(u"iteration 2 done"_s), qPrintable(run.output));
    QVERIFY(!run.output.contains(u"asking again"_s)); // no re-ask was needed
}

void TestLlmCli::deadServerFailsClearlyAndEveryAttemptIsRecorded() {
    FakeChatServer server;
    server.setResponder(
        [](const QJsonObject&) { return ScriptedReply::withFault(ScriptedReply::Fault::Silent); });
    QVERIFY(server.listen());
    QTemporaryDir dir;
    const QString session = dir.filePath(u"session"_s);
    const Run run =
        cli({u"run"_s, u"--task"_s, u"gemm_fp16_fp32_4096"_s, u"--backend"_s, u"llm"_s,
             u"--base-url"_s, server.baseUrl(), u"--model"_s, u"M"_s, u"--first-token-timeout"_s,
             u"0.3"_s, u"--harness"_s, harness(), u"--session"_s, session},
            u"KEVOLVE_API_KEY"_s);
    QCOMPARE(run.exitCode, 5);
    QVERIFY2(run.output.contains(u"first-token time-out"_s) &&
                 run.output.contains(u"looks stuck"_s),
             qPrintable(run.output));
    QVERIFY2(run.output.contains(u"planner M: retrying in"_s), qPrintable(run.output));
    QCOMPARE(server.requests().size(), 2); // a server that sends no token is retried once
    const QList<QJsonObject> log = attemptLog(session);
    QCOMPARE(log.size(), 2);
    QVERIFY(log.first().value(u"error"_s).toString().contains(u"first-token time-out"_s));
    QVERIFY(log.first().value(u"tokens_estimated"_s).toBool());
    const Run show = cli({u"show"_s, session}, u"KEVOLVE_API_KEY"_s);
    QVERIFY2(show.exitCode == 0, qPrintable(show.output)); // the session stays valid
}

void TestLlmCli::unusableRepliesAreRecordedWithTheirText() {
    FakeChatServer server;
    server.setResponder([](const QJsonObject&) {
        return ScriptedReply::text(u"I would use a 128x128 tile with three stages."_s);
    });
    QVERIFY(server.listen());
    QTemporaryDir dir;
    const QString session = dir.filePath(u"session"_s);
    const Run run = cli({u"run"_s, u"--task"_s, u"gemm_fp16_fp32_4096"_s, u"--backend"_s, u"llm"_s,
                         u"--base-url"_s, server.baseUrl(), u"--model"_s, u"M"_s, u"--harness"_s,
                         harness(), u"--session"_s, session},
                        u"KEVOLVE_API_KEY"_s);
    QCOMPARE(run.exitCode, 5);
    QVERIFY2(run.output.contains(u"still not usable after 2 re-asks"_s), qPrintable(run.output));
    const QList<QJsonObject> log = attemptLog(session);
    QCOMPARE(log.size(), 3);
    for (const QJsonObject& entry : log) {
        QVERIFY(tokensOf(entry) > 0);
        QCOMPARE(entry.value(u"reply"_s).toString(),
                 u"I would use a 128x128 tile with three stages."_s);
    }
    QVERIFY2(run.output.contains(u"llm calls: 3 attempts"_s), qPrintable(run.output));
}

void TestLlmCli::estimatedCountsAreMarked() {
    // This server takes no stream_options, so its streams carry no usage figures.
    FakeChatServer server(ServerDialect::RejectsStreamUsage);
    server.setResponder(kevolveResponder());
    QVERIFY(server.listen());
    QTemporaryDir dir;
    const QString session = dir.filePath(u"session"_s);
    const Run run =
        cli({u"run"_s, u"--task"_s, u"gemm_fp16_fp32_4096"_s, u"--backend"_s, u"llm"_s,
             u"--base-url"_s, server.baseUrl(), u"--model"_s, u"M"_s, u"--iterations"_s, u"1"_s,
             u"--target"_s, u"0"_s, u"--harness"_s, harness(), u"--session"_s, session},
            u"KEVOLVE_API_KEY"_s);
    QVERIFY2(run.exitCode == 0, qPrintable(run.output));
    static const QRegularExpression step(u"v1: ~[0-9]+ tokens \\(estimated\\)"_s);
    QVERIFY2(step.match(run.output).hasMatch(), qPrintable(run.output));
    QVERIFY2(run.output.contains(u"partly estimated: characters / 4"_s), qPrintable(run.output));
    QFile index(session + u"/index.jsonl"_s);
    QVERIFY(index.open(QIODevice::ReadOnly));
    QVERIFY(index.readAll().contains("\"tokens_estimated\":true"));
}

// run --json: each agent call's progress is agent_progress events on stdout (one per change of
// state, never the moment of sending), among the run's other events, every line one JSON object.
void TestLlmCli::jsonTellsEachCallAsEvents() {
    FakeChatServer server;
    server.setApiKey(testKey);
    server.setModels({u"M"_s});
    server.setResponder(kevolveResponder());
    QVERIFY(server.listen());
    QTemporaryDir dir;
    const Run run =
        cli({u"run"_s, u"--task"_s, u"gemm_fp16_fp32_4096"_s, u"--backend"_s, u"llm"_s,
             u"--base-url"_s, server.baseUrl(), u"--model"_s, u"M"_s, u"--iterations"_s, u"1"_s,
             u"--harness"_s, harness(), u"--json"_s, u"--session"_s, dir.filePath(u"session"_s)},
            u"KEVOLVE_API_KEY"_s);
    QVERIFY2(run.exitCode == 0, qPrintable(run.output));
    QSet<QString> doneRoles;
    QString previous;
    for (const QString& line : run.output.split(u'\n', Qt::SkipEmptyParts)) {
        if (!line.startsWith(u'{'))
            continue; // stderr shares the pipe here
        const QJsonObject event = QJsonDocument::fromJson(line.toUtf8()).object();
        QVERIFY2(!event.value(u"event"_s).toString().isEmpty(), qPrintable(line));
        if (event.value(u"event"_s).toString() != u"agent_progress"_s)
            continue;
        QVERIFY2(event.value(u"state"_s).toString() != u"sending"_s, qPrintable(line));
        QCOMPARE(event.value(u"model"_s).toString(), u"M"_s);
        QCOMPARE(event.value(u"max_attempts"_s).toInt(), 4);
        QVERIFY2(line != previous, qPrintable(line));
        previous = line;
        if (event.value(u"state"_s).toString() == u"done"_s)
            doneRoles.insert(event.value(u"role"_s).toString());
    }
    QVERIFY2(doneRoles.contains(u"planner"_s) && doneRoles.contains(u"coder"_s),
             qPrintable(run.output));
}

QTEST_GUILESS_MAIN(TestLlmCli)
#include "tst_llmcli.moc"
