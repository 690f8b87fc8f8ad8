// Issue 24: damaged sessions. The store never deletes or rewrites a file it did not write in this
// run; a damaged index opens with each problem named by line and byte, writing is refused (or the
// damage a crash leaves is repaired only by appending); files are read with size limits and never
// through FIFOs or devices; values are range-checked; settings of the wrong type are errors.
#include "exporter.h"
#include "sessionstore.h"

#include <QCryptographicHash>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QMap>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

using namespace kev;

namespace {

Task task() {
    QString error;
    auto t = TaskLibrary().resolve(QStringLiteral("gemm_fp16_fp32_4096"), &error);
    if (!t)
        qFatal("%s", qPrintable(error));
    return *t;
}

Candidate candidate(int version, double speedup) {
    Candidate c;
    c.version = version;
    c.parentVersion = version - 1;
    c.iteration = version;
    c.strategy.family = QStringLiteral("fma_tiled");
    c.strategy.warps = 4;
    c.strategy.rationale = QStringLiteral("plan ") + QString::number(version);
    c.source = QStringLiteral("// kernel ") + QString::number(version) + u'\n';
    const QJsonObject report{
        {QStringLiteral("schema_version"), 1},
        {QStringLiteral("status"), QStringLiteral("ok")},
        {QStringLiteral("suspicious"), false},
        {QStringLiteral("message"), QStringLiteral("fine")},
        {QStringLiteral("compile"), QJsonObject{{QStringLiteral("ok"), true}}},
        {QStringLiteral("timing"), QJsonObject{{QStringLiteral("speedup_vs_reference"), speedup},
                                               {QStringLiteral("median_ms"), 0.2 / speedup},
                                               {QStringLiteral("reference_median_ms"), 0.2}}}};
    QString error;
    c.report = EvaluationReport::fromJson(report, &error);
    c.finishedAt = QDateTime::currentDateTimeUtc();
    return c;
}

// A session of five steps whose best is v4.
QString fiveSteps(const QTemporaryDir& dir) {
    QString error;
    auto store = SessionStore::create(dir.path(), task(), EngineSettings(), &error);
    if (!store)
        qFatal("%s", qPrintable(error));
    const double speedups[] = {0.5, 0.7, 0.8, 1.4, 0.9};
    for (int v = 1; v <= 5; ++v) {
        if (!store->appendStep(candidate(v, speedups[v - 1]), &error))
            qFatal("%s", qPrintable(error));
    }
    return dir.path();
}

QString indexPath(const QString& dir) {
    return QDir(dir).filePath(QStringLiteral("index.jsonl"));
}

QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

void writeAll(const QString& path, const QByteArray& data) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(data) != data.size())
        qFatal("cannot write %s", qPrintable(path));
}

// Every step file's name and a hash of its bytes.
QMap<QString, QByteArray> stepFiles(const QString& dir) {
    QMap<QString, QByteArray> out;
    for (const auto& folder :
         {QStringLiteral("plans"), QStringLiteral("generated"), QStringLiteral("logs")}) {
        QDirIterator it(QDir(dir).filePath(folder), QDir::Files);
        while (it.hasNext()) {
            const QString path = it.next();
            out.insert(folder + u'/' + it.fileName(),
                       QCryptographicHash::hash(readAll(path), QCryptographicHash::Sha256));
        }
    }
    return out;
}

// The index with line `line` (1-based) replaced.
QByteArray withLine(const QByteArray& index, int line, const QByteArray& text) {
    QList<QByteArray> lines = index.split('\n');
    lines[line - 1] = text;
    return lines.join('\n');
}

} // namespace

class TestSessionDamage : public QObject {
    Q_OBJECT
private slots:
    // The issue's reproduction: the index cut inside its third line. show reported two steps
    // without a warning and resume deleted kernel_v4.cu (the best) and v5, and rewrote v3.
    void indexCutInsideALineLosesNoStep() {
        QTemporaryDir dir;
        fiveSteps(dir);
        const QByteArray index = readAll(indexPath(dir.path()));
        const qsizetype thirdLine = index.indexOf('\n', index.indexOf('\n') + 1) + 1;
        writeAll(indexPath(dir.path()), index.left(thirdLine + 20));
        const auto files = stepFiles(dir.path());
        QCOMPARE(files.size(), 15);

        QString error;
        auto store = SessionStore::open(dir.path(), &error);
        QVERIFY2(store, qPrintable(error));
        QCOMPARE(store->steps().size(), 2);
        QCOMPARE(store->problems().size(), 1);
        QCOMPARE(store->problems().first().line, 3);
        QCOMPARE(store->problems().first().byte, thirdLine);
        QVERIFY(store->problems().first().cut);
        const QStringList report = store->damageReport();
        QCOMPARE(report.size(), 4); // the cut line, then v3, v4 and v5
        QVERIFY2(report.first().startsWith(QStringLiteral("index.jsonl line 3 (byte ") +
                                           QString::number(thirdLine) + u')'),
                 qPrintable(report.first()));
        QVERIFY2(report.at(2).startsWith(QStringLiteral("v4: complete step files")),
                 qPrintable(report.at(2)));
        QCOMPARE(store->nextVersion(), 6);

        QVERIFY2(store->prepareForWriting(&error), qPrintable(error));
        QCOMPARE(store->steps().size(), 5);
        QCOMPARE(store->bestVersion(), std::optional<int>(4));
        QVERIFY2(store->appendStep(candidate(6, 0.6), &error), qPrintable(error));
        // Every file is as it was; the index only grew.
        auto after = stepFiles(dir.path());
        for (auto it = files.begin(); it != files.end(); ++it)
            QCOMPARE(after.value(it.key()), it.value());
        QVERIFY(readAll(indexPath(dir.path())).startsWith(index.left(thirdLine + 20)));

        const auto reopened = SessionStore::open(dir.path(), &error);
        QVERIFY2(reopened, qPrintable(error));
        QCOMPARE(reopened->steps().size(), 6);
        QCOMPARE(reopened->bestVersion(), std::optional<int>(4));
        QVERIFY(reopened->canWrite(&error));
        QCOMPARE(reopened->loadSource(4, &error), std::optional<QString>(candidate(4, 1).source));
    }

    void damagedLinesAreNamedAndRefused_data() {
        QTest::addColumn<QByteArray>("line");
        QTest::addColumn<QString>("message");
        QTest::newRow("not JSON") << QByteArray("{\"version\": 3,")
                                  << QStringLiteral("invalid JSON");
        QTest::newRow("version INT_MAX")
            << QByteArray(R"({"version":2147483647,"status":"ok"})")
            << QStringLiteral("version: 2147483647 is out of range (1 to 1000000)");
        QTest::newRow("version 1e300") << QByteArray(R"({"version":1e300,"status":"ok"})")
                                       << QStringLiteral("version: 1e+300 is out of range");
        QTest::newRow("speedup 1e308")
            << QByteArray(R"({"version":3,"parent":2,"status":"ok","speedup":1e308})")
            << QStringLiteral("speedup: 1e+308 is out of range (0 to 1000000)");
        QTest::newRow("speedup a string")
            << QByteArray(R"({"version":3,"parent":2,"status":"ok","speedup":"fast"})")
            << QStringLiteral("speedup: expected a number");
        QTest::newRow("negative median")
            << QByteArray(R"({"version":3,"parent":2,"status":"ok","median_ms":-1})")
            << QStringLiteral("median_ms: -1 is out of range");
        QTest::newRow("iteration a string")
            << QByteArray(R"({"version":3,"parent":2,"status":"ok","iteration":"3"})")
            << QStringLiteral("iteration: expected an integer");
        QTest::newRow("parent after the step")
            << QByteArray(R"({"version":3,"parent":9,"status":"ok"})")
            << QStringLiteral("parent: v9 is not earlier");
        QTest::newRow("duplicate version")
            << QByteArray(R"({"version":1,"status":"ok"})")
            << QStringLiteral("v1 again (line 1 holds it; that one counts)");
        QTest::newRow("an array") << QByteArray("[1,2]")
                                  << QStringLiteral("expected a JSON object");
    }

    void damagedLinesAreNamedAndRefused() {
        QFETCH(QByteArray, line);
        QFETCH(QString, message);
        QTemporaryDir dir;
        fiveSteps(dir);
        const QByteArray index = readAll(indexPath(dir.path()));
        const qsizetype thirdLine = index.indexOf('\n', index.indexOf('\n') + 1) + 1;
        writeAll(indexPath(dir.path()), withLine(index, 3, line));
        const auto files = stepFiles(dir.path());

        QString error;
        auto store = SessionStore::open(dir.path(), &error);
        QVERIFY2(store, qPrintable(error));
        QCOMPARE(store->steps().size(), 4);
        QCOMPARE(store->problems().size(), 1);
        const IndexProblem& p = store->problems().first();
        QCOMPARE(p.line, 3);
        QCOMPARE(p.byte, thirdLine);
        QVERIFY2(p.message.contains(message), qPrintable(p.message));
        QVERIFY(!store->canWrite(&error));
        QVERIFY2(error.contains(QStringLiteral("index.jsonl line 3 (byte ") +
                                QString::number(thirdLine) + u')'),
                 qPrintable(error));
        QVERIFY(!store->appendStep(candidate(6, 0.6), &error));
        QCOMPARE(stepFiles(dir.path()), files);
        QCOMPARE(readAll(indexPath(dir.path())), withLine(index, 3, line));
    }

    void filesAreReadOnlyWhenRegularAndSmall() {
        QTemporaryDir dir;
        fiveSteps(dir);
        QString error;
        const QString info = QDir(dir.path()).filePath(QStringLiteral("session.json"));
        const QString index = indexPath(dir.path());
        const QByteArray indexBytes = readAll(index);
        const QByteArray infoBytes = readAll(info);

        QFile::remove(index);
        QVERIFY(QFile::link(QStringLiteral("/dev/zero"), index));
        QVERIFY(!SessionStore::open(dir.path(), &error));
        QVERIFY2(error.endsWith(QStringLiteral("index.jsonl: a character device, not a regular "
                                               "file")),
                 qPrintable(error));
        QFile::remove(index);
        QCOMPARE(::mkfifo(QFile::encodeName(index).constData(), 0600), 0);
        QVERIFY(!SessionStore::open(dir.path(), &error)); // returns: no wait for a writer
        QVERIFY2(error.endsWith(QStringLiteral("a FIFO, not a regular file")), qPrintable(error));
        QFile::remove(index);
        writeAll(index, indexBytes);

        QFile::remove(info);
        QVERIFY(QFile::link(QStringLiteral("/dev/zero"), info));
        QVERIFY(!SessionStore::open(dir.path(), &error));
        QVERIFY2(error.contains(QStringLiteral("a character device, not a regular file")),
                 qPrintable(error));
        QFile::remove(info);
        QCOMPARE(::mkfifo(QFile::encodeName(info).constData(), 0600), 0);
        QVERIFY(!SessionStore::open(dir.path(), &error));
        QVERIFY2(error.contains(QStringLiteral("a FIFO, not a regular file")), qPrintable(error));
        QFile::remove(info);
        writeAll(info, infoBytes);

        // A step's kernel replaced by a device: loading it fails with the reason.
        auto store = SessionStore::open(dir.path(), &error);
        QVERIFY2(store, qPrintable(error));
        const QString kernel = store->kernelPath(2);
        QFile::remove(kernel);
        QVERIFY(QFile::link(QStringLiteral("/dev/zero"), kernel));
        QVERIFY(!store->loadSource(2, &error));
        QVERIFY2(error.contains(QStringLiteral("a character device")), qPrintable(error));
    }

    void settingsOfTheWrongTypeNameTheKey_data() {
        QTest::addColumn<QString>("key");
        QTest::addColumn<QJsonValue>("value");
        QTest::addColumn<QString>("message");
        QTest::newRow("max_iterations")
            << QStringLiteral("max_iterations") << QJsonValue(QStringLiteral("ten"))
            << QStringLiteral("settings.max_iterations: expected an "
                              "integer");
        QTest::newRow("target_speedup") << QStringLiteral("target_speedup") << QJsonValue(true)
                                        << QStringLiteral("settings.target_speedup: expected a "
                                                          "number");
        QTest::newRow("step_mode") << QStringLiteral("step_mode") << QJsonValue(1)
                                   << QStringLiteral("settings.step_mode: expected true or false");
        QTest::newRow("agents") << QStringLiteral("agents") << QJsonValue(QJsonArray())
                                << QStringLiteral("settings.agents: expected an object");
        QTest::newRow("harness_commands")
            << QStringLiteral("harness_commands") << QJsonValue(QStringLiteral("kevolve-harness"))
            << QStringLiteral("settings.harness_commands: expected an array of strings");
        QTest::newRow("beam_width 2^40")
            << QStringLiteral("beam_width") << QJsonValue(1099511627776.0)
            << QStringLiteral("settings.beam_width: expected an integer");
    }

    void settingsOfTheWrongTypeNameTheKey() {
        QFETCH(QString, key);
        QFETCH(QJsonValue, value);
        QFETCH(QString, message);
        QJsonObject settings = EngineSettings().toJson();
        settings.insert(key, value);
        QString error;
        QVERIFY(!EngineSettings::fromJson(settings, &error));
        QCOMPARE(error, message);
        // And through a session: open names the file and the key.
        QTemporaryDir dir;
        fiveSteps(dir);
        const QString info = QDir(dir.path()).filePath(QStringLiteral("session.json"));
        QJsonObject json = QJsonDocument::fromJson(readAll(info)).object();
        json.insert(QStringLiteral("settings"), settings);
        writeAll(info, QJsonDocument(json).toJson());
        QVERIFY(!SessionStore::open(dir.path(), &error));
        QCOMPARE(error, QStringLiteral("session.json: ") + message);
    }

    void ownTemporaryFilesAreCleanedOthersKept() {
        QTemporaryDir dir;
        fiveSteps(dir);
        const QDir root(dir.path());
        const QStringList leftovers = {QStringLiteral("session.json.Ab3xYz"),
                                       QStringLiteral("session.json.Q9fK2m"),
                                       QStringLiteral("generated/kernel_v2.cu.X1b2C3")};
        const QStringList kept = {QStringLiteral("session.json.backup"),
                                  QStringLiteral("notes.txt.AB12CD"),
                                  QStringLiteral("generated/kernel_v2.cu.orig")};
        for (const auto& name : leftovers + kept)
            writeAll(root.filePath(name), "x");
        QString error;
        auto store = SessionStore::open(dir.path(), &error);
        QVERIFY2(store, qPrintable(error));
        QVERIFY2(store->prepareForWriting(&error), qPrintable(error));
        for (const auto& name : leftovers)
            QVERIFY2(!QFile::exists(root.filePath(name)), qPrintable(name));
        for (const auto& name : kept)
            QVERIFY2(QFile::exists(root.filePath(name)), qPrintable(name));
        QCOMPARE(store->repairs().size(), 3);
    }

    // A task of 10^6 validation shapes made a 210 MB session after one step: every log embedded
    // the task. The session stores it once; logs refer to it, and old logs that embed it still
    // load.
    void theTaskIsStoredOnce() {
        QTemporaryDir dir;
        QString error;
        auto store = SessionStore::create(dir.path(), task(), EngineSettings(), &error);
        QVERIFY(store);
        Candidate c = candidate(1, 0.9);
        QJsonObject raw = c.report->toJson();
        raw.insert(QStringLiteral("task"), task().toJson());
        c.report = EvaluationReport::fromJson(raw, &error);
        QVERIFY2(c.report, qPrintable(error));
        QVERIFY(store->appendStep(c, &error));
        const QByteArray log = readAll(store->logPath(1));
        QVERIFY2(!log.contains("validation_shapes"), log.constData());
        QVERIFY(log.contains("session.json#/harness_task"));
        QCOMPARE(store->info().harnessTask, task().toJson());
        const auto loaded = store->loadCandidate(1, &error);
        QVERIFY2(loaded, qPrintable(error));
        QCOMPARE(loaded->report->harnessTask, task().toJson());

        // A log written before: the task embedded, read as it is.
        QJsonObject old = QJsonDocument::fromJson(log).object();
        QJsonObject oldReport = old.value(QLatin1String("report")).toObject();
        QJsonObject embedded = task().toJson();
        embedded.insert(QStringLiteral("description"), QStringLiteral("as the harness echoed it"));
        oldReport.insert(QStringLiteral("task"), embedded);
        old.insert(QStringLiteral("report"), oldReport);
        writeAll(store->logPath(1), QJsonDocument(old).toJson());
        const auto oldLoaded = store->loadCandidate(1, &error);
        QVERIFY2(oldLoaded, qPrintable(error));
        QCOMPARE(oldLoaded->report->harnessTask, embedded);
    }

    // A best speed-up of 1e6 drew one grid line per 1x: a 141 MB SVG (1e308 aborted export).
    void chartIsBoundedWhateverTheSpeedup() {
        for (const double best : {1.0, 2.9, 7.5, 42.0, 1e3, 1e6, 1e308}) {
            IterationSummary s;
            s.version = 1;
            s.status = QStringLiteral("ok");
            s.speedup = best;
            const QString svg = Exporter::chartSvg({s}, 1);
            QVERIFY2(svg.size() < 20000, qPrintable(QString::number(svg.size())));
            QVERIFY(svg.count(QStringLiteral("stroke=\"#e5e5e5\"")) <= 13);
            QVERIFY(svg.count(QStringLiteral("stroke=\"#e5e5e5\"")) >= 4);
        }
    }
};

QTEST_GUILESS_MAIN(TestSessionDamage)
#include "tst_sessiondamage.moc"
