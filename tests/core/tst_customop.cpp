// The custom op example (resources/examples/custom_op) through kevolve-cli: the builtin backend
// is refused with the ways to run it, a missing reference names the field, a full loop runs
// against kev-fake-harness, and the real kevolve-harness (when built) parses what core sends and
// ends with the "no CUDA device" exit on a host without a GPU. The harness's normalised task in
// the report shows that the args->dims order and the absolute reference path survived core.
#include "sessionstore.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace kev;

namespace {

struct Result {
    int code = -1;
    QString out;
    QString err;
};

QString exampleDir() {
    return QDir::cleanPath(QStringLiteral(KEV_SOURCE_DIR "/resources/examples/custom_op"));
}

QByteArray readFile(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(path));
    return file.readAll();
}

void writeFile(const QString& path, const QByteArray& data) {
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        qFatal("cannot write %s", qPrintable(path));
    file.write(data);
}

// The report's task as the harness (real or fake) received or normalised it.
// The task as the harness echoed it in v1's report (a log refers to the copy in session.json).
QJsonObject reportedTask(const QString& sessionDir) {
    QString error;
    const auto store = SessionStore::open(sessionDir, &error);
    const auto v1 = store ? store->loadCandidate(1, &error) : std::nullopt;
    if (!v1 || !v1->report)
        qFatal("%s", qPrintable(error));
    return v1->report->harnessTask;
}

} // namespace

class TestCustomOp : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_root;
    QString m_agents;

    Result cli(const QStringList& args, int timeoutMs = 120000) {
        QProcess p;
        // Elsewhere than the task's folder: its reference is found next to it, not here.
        p.setWorkingDirectory(m_root.path());
        p.start(QStringLiteral(KEV_CLI), args);
        if (!p.waitForStarted())
            qFatal("kevolve-cli did not start");
        p.closeWriteChannel();
        if (!p.waitForFinished(timeoutMs))
            p.kill();
        return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
                QString::fromUtf8(p.readAllStandardOutput()),
                QString::fromUtf8(p.readAllStandardError())};
    }

private slots:
    void initTestCase() {
        QVERIFY(m_root.isValid());
        // The scripted coder answers with the example's candidate, as docs/custom-ops.md shows.
        m_agents = m_root.filePath(QStringLiteral("agents.json"));
        const QString candidate =
            QString::fromUtf8(readFile(exampleDir() + QStringLiteral("/candidate.cu")));
        writeFile(
            m_agents,
            // A step marker: the engine never measures one kernel twice in a session.
            QJsonDocument(
                QJsonObject{{QStringLiteral("sources"),
                             QJsonArray{QString(candidate +
                                                QStringLiteral("// step {iteration}.{beam}\n"))}}})
                .toJson());
    }

    void builtinBackendIsRefusedWithTheWaysToRunIt() {
        const QString dir = m_root.filePath(QStringLiteral("builtin"));
        const Result r =
            cli({QStringLiteral("run"), QStringLiteral("--task"),
                 exampleDir() + QStringLiteral("/task.json"), QStringLiteral("--session"), dir});
        QCOMPARE(r.code, 5);
        for (const char* expected : {"is a custom op", "--backend llm", "kevolve-harness eval"})
            QVERIFY2(r.err.contains(QLatin1String(expected)), qPrintable(r.err));
        QVERIFY2(!QDir(dir).exists(), "nothing starts");
    }

    void missingReferenceNamesTheField() {
        QTemporaryDir dir;
        QJsonObject task =
            QJsonDocument::fromJson(readFile(exampleDir() + QStringLiteral("/task.json"))).object();
        task.insert(QStringLiteral("reference"),
                    QJsonObject{{QStringLiteral("file"), QStringLiteral("gone.cu")}});
        const QString path = dir.filePath(QStringLiteral("task.json"));
        writeFile(path, QJsonDocument(task).toJson());
        const Result r = cli({QStringLiteral("run"), QStringLiteral("--task"), path,
                              QStringLiteral("--backend"), QStringLiteral("scripted")});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(QStringLiteral("task.reference.file: no such file ") +
                                dir.filePath(QStringLiteral("gone.cu"))),
                 qPrintable(r.err));
    }

    void fullLoopAgainstTheFakeHarness() {
        const QString dir = m_root.filePath(QStringLiteral("fake"));
        const Result r =
            cli({QStringLiteral("run"), QStringLiteral("--task"),
                 exampleDir() + QStringLiteral("/task.json"), QStringLiteral("--iterations"),
                 QStringLiteral("2"), QStringLiteral("--plateau"), QStringLiteral("0"),
                 QStringLiteral("--backend"), QStringLiteral("scripted"),
                 QStringLiteral("--agent-options"), m_agents, QStringLiteral("--harness"),
                 QStringLiteral(KEV_FAKE_HARNESS) + QStringLiteral(" serve --state ") +
                     m_root.filePath(QStringLiteral("state")),
                 QStringLiteral("--session"), dir});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        QString error;
        const auto store = SessionStore::open(dir, &error);
        QVERIFY2(store, qPrintable(error));
        QCOMPARE(store->steps().size(), 2);
        QCOMPARE(store->steps().first().status, QStringLiteral("ok"));
        QVERIFY(store->bestVersion());
        QCOMPARE(store->task().op, QStringLiteral("custom"));
        const QJsonObject sent = reportedTask(dir);
        QCOMPARE(sent.value(QLatin1String("reference")).toObject().value(QLatin1String("file")),
                 QJsonValue(exampleDir() + QStringLiteral("/ref.cu")));
        QCOMPARE(sent.value(QLatin1String("dims")).toArray(),
                 (QJsonArray{QStringLiteral("M"), QStringLiteral("N")}));
    }

    // The dims reversed against the sorted key order: if core sent the order of "shape"'s keys
    // (which QJsonObject sorts), the harness would normalise to M, N.
    void realHarnessParsesWhatCoreSends() {
#ifndef KEV_HARNESS
        QSKIP("kevolve-harness is not part of this build");
#else
        QProcess probe;
        probe.start(QStringLiteral(KEV_HARNESS),
                    {QStringLiteral("probe"), QStringLiteral("--json")});
        QVERIFY(probe.waitForFinished(120000));
        const QJsonObject devices = QJsonDocument::fromJson(probe.readAllStandardOutput()).object();
        if (!devices.value(QLatin1String("devices")).toArray().isEmpty())
            QSKIP("this host has a GPU: the no-device path does not apply");
        QTemporaryDir taskDir;
        QJsonObject task =
            QJsonDocument::fromJson(readFile(exampleDir() + QStringLiteral("/task.json"))).object();
        task.insert(QStringLiteral("dims"), QJsonArray{QStringLiteral("N"), QStringLiteral("M")});
        const QString path = taskDir.filePath(QStringLiteral("task.json"));
        writeFile(path, QJsonDocument(task).toJson());
        QVERIFY(QFile::copy(exampleDir() + QStringLiteral("/ref.cu"),
                            taskDir.filePath(QStringLiteral("ref.cu"))));
        const QString dir = m_root.filePath(QStringLiteral("real"));
        const Result r = cli(
            {QStringLiteral("run"), QStringLiteral("--task"), path, QStringLiteral("--iterations"),
             QStringLiteral("2"), QStringLiteral("--backend"), QStringLiteral("scripted"),
             QStringLiteral("--agent-options"), m_agents, QStringLiteral("--harness"),
             QStringLiteral(KEV_HARNESS) + QStringLiteral(" serve"), QStringLiteral("--session"),
             dir},
            300000);
        QVERIFY2(r.code == 4, qPrintable(r.out + r.err));
        QVERIFY2(r.err.contains(QStringLiteral("no CUDA device")), qPrintable(r.err));
        QVERIFY2(r.out.contains(QStringLiteral("compiled and passed the static rules")),
                 qPrintable(r.out));
        QString error;
        const auto store = SessionStore::open(dir, &error);
        QVERIFY2(store, qPrintable(error));
        QCOMPARE(store->steps().size(), 1);
        QCOMPARE(store->steps().first().status, QStringLiteral("no_device"));
        const QJsonObject normalised = reportedTask(dir);
        QCOMPARE(normalised.value(QLatin1String("dims")).toArray(),
                 (QJsonArray{QStringLiteral("N"), QStringLiteral("M")}));
        QCOMPARE(
            normalised.value(QLatin1String("reference")).toObject().value(QLatin1String("file")),
            QJsonValue(taskDir.filePath(QStringLiteral("ref.cu"))));
#endif
    }
};

QTEST_GUILESS_MAIN(TestCustomOp)
#include "tst_customop.moc"
