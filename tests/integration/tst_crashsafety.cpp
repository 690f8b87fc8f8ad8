// Crash safety: kevolve-cli is killed with SIGKILL at 20 seeded random moments (a test hook
// widens the gaps between the files of one step, so kills land there too) and the session is
// resumed each time. After every kill, every step the CLI reported as saved is in the reopened
// session, every indexed step loads completely, and no step is half-present.
#include "sessionstore.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QRandomGenerator>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

using namespace kev;

class TestCrashSafety : public QObject {
    Q_OBJECT
private slots:
    void killedAtTwentyRandomPoints() {
        QTemporaryDir root;
        QVERIFY(root.isValid());
        const QString dir = root.filePath(QStringLiteral("session"));
        const QString script = root.filePath(QStringLiteral("agents.json"));
        {
            QFile f(script);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(
                QJsonDocument(
                    // Each step a distinct kernel: the engine never measures one twice.
                    QJsonObject{
                        {QStringLiteral("sources"),
                         QJsonArray{
                             QStringLiteral(
                                 "// fake: compile_error\n// {iteration}.{beam}.{attempt}\n"),
                             QStringLiteral(
                                 "// fake: ok speedup=0.5\n// {iteration}.{beam}.{attempt}\n"),
                             QStringLiteral(
                                 "// fake: incorrect\n// {iteration}.{beam}.{attempt}\n"),
                             QStringLiteral(
                                 "// fake: ok speedup=0.6\n// {iteration}.{beam}.{attempt}\n")}}})
                    .toJson());
        }
        const QString harness = QString::fromUtf8(KEV_FAKE_HARNESS) +
                                QStringLiteral(" serve --state ") +
                                root.filePath(QStringLiteral("state"));
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("KEVOLVE_TEST_STEP_WRITE_PAUSE_MS"), QStringLiteral("20"));

        QRandomGenerator random(20261129);
        QSet<int> known;
        int betweenFiles = 0;
        int cutIndexLines = 0;
        for (int kill = 0; kill < 20; ++kill) {
            QStringList args;
            if (SessionStore::isSession(dir))
                args = {QStringLiteral("resume"), dir};
            else
                args = {QStringLiteral("run"),
                        QStringLiteral("--task"),
                        QStringLiteral("gemm_fp16_fp32_4096"),
                        QStringLiteral("--session"),
                        dir,
                        QStringLiteral("--iterations"),
                        QStringLiteral("100000"),
                        QStringLiteral("--plateau"),
                        QStringLiteral("0"),
                        QStringLiteral("--target"),
                        QStringLiteral("0")};
            args << QStringLiteral("--backend") << QStringLiteral("scripted")
                 << QStringLiteral("--agent-options") << script << QStringLiteral("--harness")
                 << harness << QStringLiteral("--json");
            QProcess cli;
            cli.setProcessEnvironment(env);
            cli.start(QString::fromUtf8(KEV_CLI), args);
            QVERIFY(cli.waitForStarted());
            const int delayMs = 200 + static_cast<int>(random.bounded(800));
            QTest::qWait(delayMs);
            ::kill(static_cast<pid_t>(cli.processId()), SIGKILL);
            QVERIFY(cli.waitForFinished(5000));
            QCOMPARE(cli.exitStatus(), QProcess::CrashExit);

            // Steps the CLI said it saved before it died.
            QSet<int> reported;
            for (const QByteArray& line : cli.readAllStandardOutput().split('\n')) {
                const QJsonObject event = QJsonDocument::fromJson(line).object();
                if (event.value(QLatin1String("event")).toString() == QLatin1String("step"))
                    reported.insert(event.value(QLatin1String("step"))
                                        .toObject()
                                        .value(QLatin1String("version"))
                                        .toInt());
            }

            if (!SessionStore::isSession(dir)) {
                QVERIFY(reported.isEmpty());
                continue;
            }
            QFile indexFile(QDir(dir).filePath(QStringLiteral("index.jsonl")));
            if (indexFile.open(QIODevice::ReadOnly)) {
                const QByteArray data = indexFile.readAll();
                cutIndexLines += !data.isEmpty() && !data.endsWith('\n');
            }
            QString error;
            const auto store = SessionStore::open(dir, &error);
            QVERIFY2(store, qPrintable(error));
            QSet<int> present;
            for (const auto& step : store->steps()) {
                QVERIFY2(!present.contains(step.version), "a version is indexed twice");
                present.insert(step.version);
                const auto candidate = store->loadCandidate(step.version, &error);
                QVERIFY2(candidate, qPrintable(QStringLiteral("v") + QString::number(step.version) +
                                               QStringLiteral(" is half-present: ") + error));
                QVERIFY(candidate->report.has_value());
                QVERIFY(candidate->review.has_value());
                QCOMPARE(EvaluationReport::statusToString(candidate->report->status), step.status);
            }
            for (int v : std::as_const(reported))
                QVERIFY2(present.contains(v),
                         qPrintable(QStringLiteral("reported v") + QString::number(v) +
                                    QStringLiteral(" was lost")));
            for (int v : std::as_const(known))
                QVERIFY2(present.contains(v),
                         qPrintable(QStringLiteral("earlier v") + QString::number(v) +
                                    QStringLiteral(" was lost")));
            known = present;

            // Files of a step the index does not hold: the kill landed inside that step's writes.
            for (const auto& folder :
                 {QStringLiteral("plans"), QStringLiteral("generated"), QStringLiteral("logs")}) {
                bool orphan = false;
                for (const auto& name : QDir(QDir(dir).filePath(folder)).entryList(QDir::Files)) {
                    const int version = name.section(u'v', -1).section(u'.', 0, 0).toInt();
                    orphan = orphan || !present.contains(version);
                }
                if (orphan) {
                    ++betweenFiles;
                    break;
                }
            }
        }
        qInfo("20 kills: %d landed between the files of a step, %d cut an index line; %d steps "
              "survived",
              betweenFiles, cutIndexLines, static_cast<int>(known.size()));
        QVERIFY(known.size() >= 5);
        QVERIFY2(betweenFiles >= 1, "no kill landed between the files of a step");
    }
};

QTEST_GUILESS_MAIN(TestCrashSafety)
#include "tst_crashsafety.moc"
