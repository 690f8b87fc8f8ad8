// kevolve-cli with the LLM backend: `run --backend llm --base-url ... --model M` completes three
// iterations against the test server in each dialect (and kev-fake-harness), fails fast when
// nothing listens, and neither the session nor an export holds the key.
#include "fakechatserver.h"
#include "kevolveresponder.h"

#include <QDirIterator>
#include <QProcess>
#include <QRegularExpression>
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

QTEST_GUILESS_MAIN(TestLlmCli)
#include "tst_llmcli.moc"
