// kevolve-cli end to end against kev-fake-harness: exit codes, messages, the session folder it
// leaves, step mode on stdin, Ctrl-C, show and export.
#include "sessionstore.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <csignal>

using namespace kev;

namespace {

struct Result {
    int code = -1;
    QString out;
    QString err;
};

} // namespace

class TestCli : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_root;
    int m_counter = 0;

    QString path(const QString& name) const { return m_root.filePath(name); }

    QString harness(const QString& extra = QString()) const {
        return QString::fromUtf8(KEV_FAKE_HARNESS) + QStringLiteral(" serve --state ") +
               path(QStringLiteral("state")) + u' ' + extra;
    }

    QString writeScript(const QStringList& sources) {
        const QString file =
            path(QStringLiteral("agents") + QString::number(++m_counter) + QStringLiteral(".json"));
        QFile f(file);
        if (!f.open(QIODevice::WriteOnly))
            qFatal("cannot write %s", qPrintable(file));
        f.write(QJsonDocument(
                    QJsonObject{{QStringLiteral("sources"), QJsonArray::fromStringList(sources)}})
                    .toJson());
        return file;
    }

    Result cli(const QStringList& args, const QByteArray& input = QByteArray(),
               int timeoutMs = 60000) {
        QProcess p;
        p.setWorkingDirectory(m_root.path());
        p.start(QString::fromUtf8(KEV_CLI), args);
        if (!p.waitForStarted())
            qFatal("kevolve-cli did not start");
        if (!input.isEmpty())
            p.write(input);
        p.closeWriteChannel();
        if (!p.waitForFinished(timeoutMs))
            p.kill();
        return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
                QString::fromUtf8(p.readAllStandardOutput()),
                QString::fromUtf8(p.readAllStandardError())};
    }

    static QString marker(const QString& directive) {
        // Distinct per step: the engine never measures one kernel twice in a session.
        return QStringLiteral("// fake: ") + directive +
               QStringLiteral("\n// {iteration}.{beam}\n");
    }

private slots:
    void initTestCase() { QVERIFY(m_root.isValid()); }

    void helpDocumentsExitCodes() {
        const Result r = cli({QStringLiteral("--help")});
        QCOMPARE(r.code, 0);
        for (const char* expected :
             {"Exit codes:", "  2 ", "  3 ", "  4 ", "  5 ", "  130 ", "no CUDA device"})
            QVERIFY2(r.out.contains(QLatin1String(expected)), expected);
        QCOMPARE(cli({}).code, 2);
        const Result unknown = cli({QStringLiteral("fly")});
        QCOMPARE(unknown.code, 2);
        QVERIFY(unknown.err.contains(QStringLiteral("unknown command \"fly\"")));
    }

    void tasksLists() {
        const Result r = cli({QStringLiteral("tasks"), QStringLiteral("--json")});
        QCOMPARE(r.code, 0);
        const QJsonObject json = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QVERIFY(json.value(QLatin1String("tasks")).toArray().size() >= 5);
    }

    // What the builtin backend would search, read from its family registry: no harness, no GPU.
    void familiesListsTheRegistry() {
        const Result r = cli({QStringLiteral("families")});
        QCOMPARE(r.code, 0);
        const QStringList lines = r.out.split(u'\n');
        for (const char* id : {"wgmma_tma", "rowwise"})
            QVERIFY2(lines.contains(QLatin1String(id)), qPrintable(r.out));
        const Result json = cli({QStringLiteral("families"), QStringLiteral("--json")});
        QCOMPARE(json.code, 0);
        const QJsonArray families = QJsonDocument::fromJson(json.out.toUtf8())
                                        .object()
                                        .value(QLatin1String("families"))
                                        .toArray();
        QVERIFY(families.size() >= 9);
        for (const auto& f : families)
            QVERIFY(!f.toObject().value(QLatin1String("description")).toString().isEmpty());
    }

    void familiesForAGemmTask() {
        const Result r = cli({QStringLiteral("families"), QStringLiteral("--task"),
                              QStringLiteral("gemm_fp16_fp32_4096"), QStringLiteral("--json")});
        QCOMPARE(r.code, 0);
        const QJsonObject json = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(json.value(QLatin1String("task")).toString(),
                 QStringLiteral("gemm_fp16_fp32_4096"));
        QJsonObject wgmma;
        QStringList ids;
        for (const auto& f : json.value(QLatin1String("families")).toArray()) {
            ids << f.toObject().value(QLatin1String("id")).toString();
            if (ids.constLast() == QLatin1String("wgmma_tma"))
                wgmma = f.toObject();
        }
        QVERIFY2(!wgmma.isEmpty(), qPrintable(r.out));
        // Memory-bound families do not implement GEMM, so they are not offered for it.
        QVERIFY2(!ids.contains(QStringLiteral("rowwise")), qPrintable(ids.join(u' ')));
        QStringList names;
        for (const auto& spec : wgmma.value(QLatin1String("parameters")).toArray()) {
            names << spec.toObject().value(QLatin1String("name")).toString();
            QVERIFY(!spec.toObject().value(QLatin1String("values")).toArray().isEmpty());
        }
        for (const char* name : {"stages", "clusterM", "blockM"})
            QVERIFY2(names.contains(QLatin1String(name)), qPrintable(names.join(u' ')));
        const QJsonObject start = wgmma.value(QLatin1String("default")).toObject();
        QVERIFY2(start.value(QLatin1String("feasible")).toBool(), qPrintable(r.out));
        QVERIFY(start.value(QLatin1String("problems")).toArray().isEmpty());
        QVERIFY(start.value(QLatin1String("values")).toObject().contains(QLatin1String("stages")));
        QVERIFY(
            start.value(QLatin1String("key")).toString().startsWith(QLatin1String("wgmma_tma ")));
        const double prior = wgmma.value(QLatin1String("prior")).toDouble(-1);
        QVERIFY2(prior > 0 && prior <= 1, qPrintable(QString::number(prior)));
    }

    void familiesForALayernormTask() {
        const Result r = cli({QStringLiteral("families"), QStringLiteral("--task"),
                              QStringLiteral("layernorm_bf16_16384x4096")});
        QCOMPARE(r.code, 0);
        const QStringList lines = r.out.split(u'\n');
        const auto rowwise = std::find_if(lines.begin(), lines.end(), [](const QString& l) {
            return l.startsWith(QLatin1String("rowwise "));
        });
        QVERIFY2(rowwise != lines.end(), qPrintable(r.out));
        const auto pipeline = std::find_if(rowwise, lines.end(), [](const QString& l) {
            return l.startsWith(QLatin1String("    pipeline "));
        });
        QVERIFY2(pipeline != lines.end(), qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("(passes constraints)")), qPrintable(r.out));
        QVERIFY2(!r.out.contains(QStringLiteral("wgmma_tma")), qPrintable(r.out));
    }

    void familiesRejectsAnUnknownTaskOrDevice() {
        const Result task =
            cli({QStringLiteral("families"), QStringLiteral("--task"), QStringLiteral("nope")});
        QCOMPARE(task.code, 2);
        QVERIFY2(task.err.contains(QStringLiteral("unknown task \"nope\"")), qPrintable(task.err));
        const Result device = cli({QStringLiteral("families"), QStringLiteral("--task"),
                                   QStringLiteral("gemm_fp16_fp32_4096"),
                                   QStringLiteral("--device"), QStringLiteral("xyz")});
        QCOMPARE(device.code, 2);
        QVERIFY2(device.err.contains(QStringLiteral("unknown device \"xyz\"")) &&
                     device.err.contains(QStringLiteral("known: h200")),
                 qPrintable(device.err));
        QCOMPARE(
            cli({QStringLiteral("families"), QStringLiteral("--device"), QStringLiteral("H200")})
                .code,
            0);
    }

    void noDeviceEndsWithCode4AndAValidSession() {
        const QString dir = path(QStringLiteral("nodevice"));
        const Result r = cli(
            {QStringLiteral("run"), QStringLiteral("--task"), QStringLiteral("gemm_fp16_fp32_4096"),
             QStringLiteral("--backend"), QStringLiteral("scripted"), QStringLiteral("--harness"),
             harness(QStringLiteral("--no-device")), QStringLiteral("--session"), dir});
        QCOMPARE(r.code, 4);
        QVERIFY2(r.err.contains(QStringLiteral("no CUDA device")), qPrintable(r.err));
        QString error;
        const auto store = SessionStore::open(dir, &error);
        QVERIFY2(store, qPrintable(error));
        QCOMPARE(store->steps().size(), 1);
        QCOMPARE(store->steps().first().status, QStringLiteral("no_device"));
        QVERIFY(store->loadCandidate(1, &error));
    }

    void badTaskNamesTheField() {
        const QString file = path(QStringLiteral("bad_task.json"));
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(
            R"({"name":"bad","op":"gemm","dtypes":{"A":"f16","B":"f16","C":"f32","accumulate":"f32"},
                    "shape":{"M":64,"N":64,"K":4100}})");
        f.close();
        const Result r = cli({QStringLiteral("run"), QStringLiteral("--task"), file,
                              QStringLiteral("--backend"), QStringLiteral("scripted")});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(QStringLiteral("task.shape.K: 4100 is not a multiple")),
                 qPrintable(r.err));
        const Result unknown =
            cli({QStringLiteral("run"), QStringLiteral("--task"), QStringLiteral("gemm_nope")});
        QCOMPARE(unknown.code, 2);
        QVERIFY(unknown.err.contains(QStringLiteral("unknown task \"gemm_nope\"")));
        const Result iterations = cli({QStringLiteral("run"), QStringLiteral("--task"),
                                       QStringLiteral("gemm_fp16_fp32_4096"),
                                       QStringLiteral("--iterations"), QStringLiteral("many")});
        QCOMPARE(iterations.code, 2);
        QVERIFY(iterations.err.contains(QStringLiteral("--iterations")));
    }

    void badTargetFloorNamesTheOption() {
        for (const char* value : {"abc", "-1", "150", "nan"}) {
            const Result r = cli({QStringLiteral("run"), QStringLiteral("--task"),
                                  QStringLiteral("layernorm_bf16_16384x4096"),
                                  QStringLiteral("--backend"), QStringLiteral("scripted"),
                                  QStringLiteral("--target-floor"), QLatin1String(value)});
            QCOMPARE(r.code, 2);
            QVERIFY2(r.err.contains(QStringLiteral("--target-floor: expected a percentage")),
                     qPrintable(r.err));
            QVERIFY2(r.err.contains(QLatin1String(value)), qPrintable(r.err));
        }
        QVERIFY(cli({QStringLiteral("--help")}).out.contains(QStringLiteral("--target-floor P")));
    }

    // Every numeric option of run is read by one checker: a value out of its range (NaN included)
    // is a usage error naming the option and quoting the value, before any session is made.
    void everyNumericOptionNamesItselfWhenBad() {
        const QList<std::pair<const char*, const char*>> cases = {
            {"--iterations", "0"},    {"--iterations", "2.5"}, {"--target", "-1"},
            {"--target", "nan"},      {"--beam", "17"},        {"--beam", "x"},
            {"--time-budget", "nan"}, {"--time-budget", "-3"}, {"--plateau", "-1"}};
        for (const auto& [option, value] : cases) {
            const QString session = m_root.filePath(QStringLiteral("numeric-never-made"));
            const Result r =
                cli({QStringLiteral("run"), QStringLiteral("--task"),
                     QStringLiteral("gemm_fp16_fp32_4096"), QStringLiteral("--backend"),
                     QStringLiteral("scripted"), QStringLiteral("--session"), session,
                     QLatin1String(option), QLatin1String(value)});
            QCOMPARE(r.code, 2);
            const QString expected = QLatin1String(option) + QStringLiteral(": expected ");
            QVERIFY2(r.err.contains(expected), qPrintable(r.err));
            QVERIFY2(r.err.contains(u'"' + QLatin1String(value) + u'"'), qPrintable(r.err));
            QVERIFY(!QFileInfo::exists(session));
        }
        const Result version = cli({QStringLiteral("export"), m_root.path(),
                                    QStringLiteral("--out"), m_root.filePath(QStringLiteral("x")),
                                    QStringLiteral("--version"), QStringLiteral("0")});
        QCOMPARE(version.code, 2);
        QVERIFY2(
            version.err.contains(QStringLiteral("--version: expected a version number, got \"0\"")),
            qPrintable(version.err));
    }

    // A memory-bound kernel at 1.2x the reference but 91% of the floor stops a run whose floor
    // target is 90 (the default), not one that asks for 95; the setting lands in session.json.
    void targetFloorOnTheCommandLine() {
        const QString script =
            writeScript({marker(QStringLiteral("ok speedup=1.2 bound=memory floor=91"))});
        const auto run = [&](const QString& dir, const QStringList& extra) {
            return cli(QStringList{
                           QStringLiteral("run"), QStringLiteral("--task"),
                           QStringLiteral("layernorm_bf16_16384x4096"), QStringLiteral("--backend"),
                           QStringLiteral("scripted"), QStringLiteral("--agent-options"), script,
                           QStringLiteral("--harness"), harness(), QStringLiteral("--session"), dir,
                           QStringLiteral("--iterations"), QStringLiteral("3"),
                           QStringLiteral("--plateau"), QStringLiteral("0")} +
                       extra);
        };
        QString error;
        const QString reached = path(QStringLiteral("floor90"));
        const Result r90 = run(reached, {});
        QCOMPARE(r90.code, 0);
        QVERIFY2(r90.out.contains(QStringLiteral("91.0% of the DRAM floor (targets 1.000x, 90%)")),
                 qPrintable(r90.out));
        QCOMPARE(SessionStore::open(reached, &error)->steps().size(), 1);

        const QString higher = path(QStringLiteral("floor95"));
        const Result r95 = run(higher, {QStringLiteral("--target-floor"), QStringLiteral("95")});
        QCOMPARE(r95.code, 0);
        const auto store = SessionStore::open(higher, &error);
        QVERIFY2(store, qPrintable(error));
        QCOMPARE(store->steps().size(), 3);
        QCOMPARE(store->settings().targetFloorPercent, 95.0);
    }

    void unavailableBackendIsAnAgentFailure() {
        const Result r = cli({QStringLiteral("run"), QStringLiteral("--task"),
                              QStringLiteral("gemm_fp16_fp32_4096"), QStringLiteral("--planner"),
                              QStringLiteral("oracle")});
        QCOMPARE(r.code, 5);
        QVERIFY2(r.err.contains(QStringLiteral("agent backend \"oracle\" is not available")),
                 qPrintable(r.err));
    }

    void missingHarnessIsCode3() {
        const Result r = cli({QStringLiteral("run"), QStringLiteral("--task"),
                              QStringLiteral("gemm_fp16_fp32_4096"), QStringLiteral("--backend"),
                              QStringLiteral("scripted"), QStringLiteral("--harness"),
                              QStringLiteral("/nonexistent/kevolve-harness serve"),
                              QStringLiteral("--session"), path(QStringLiteral("missing"))});
        QCOMPARE(r.code, 3);
        QVERIFY2(r.err.contains(QStringLiteral("/nonexistent/kevolve-harness")), qPrintable(r.err));
    }

    // A session recorded on an H200 (softmax 8192x8192 f32, built-in backend): `show` gives the
    // memory-bound headline, the share of the DRAM floor, next to the speed-up.
    void showRecordedMemoryBoundSession() {
        const QString dir = path(QStringLiteral("h200_softmax"));
        const QString source = QStringLiteral(KEV_SOURCE_DIR) +
                               QStringLiteral("/resources/examples/h200_softmax_f32_8192");
        QVERIFY(QDir().mkpath(dir));
        for (const QString& sub : {QString(), QStringLiteral("generated"), QStringLiteral("logs"),
                                   QStringLiteral("plans")}) {
            QDir from(source + u'/' + sub);
            QVERIFY(QDir().mkpath(dir + u'/' + sub));
            for (const QString& f : from.entryList(QDir::Files))
                QVERIFY(QFile::copy(from.filePath(f), dir + u'/' + sub + u'/' + f));
        }
        const Result show = cli({QStringLiteral("show"), dir});
        QCOMPARE(show.code, 0);
        QVERIFY2(show.out.contains(QStringLiteral("% floor")), qPrintable(show.out));
        const QStringList lines = show.out.split(u'\n');
        const auto v1 = std::find_if(lines.begin(), lines.end(), [](const QString& l) {
            return l.startsWith(QStringLiteral(" * v1"));
        });
        QVERIFY2(v1 != lines.end(), qPrintable(show.out));
        QVERIFY2(v1->contains(QStringLiteral("1.764")) && v1->contains(QStringLiteral("90.5")),
                 qPrintable(*v1));
        // A plan longer than the column prints whole (two plans that differ only at the end,
        // W and B in registers or not, printed the same when the column cut them at 44).
        const QString longPlan =
            QStringLiteral("rowwise w4 12x4 3/SM block prefetch shifted_one_pass W/B-in-registers");
        QFile index(dir + QStringLiteral("/index.jsonl"));
        QVERIFY(index.open(QIODevice::ReadOnly));
        QByteArray lines0 = index.readAll();
        index.close();
        QVERIFY(lines0.contains("\"plan\":\"rowwise 1x512x16 w16 s1\""));
        const QByteArray longEntry =
            QByteArray("\"plan\":\"").append(longPlan.toUtf8()).append('"');
        lines0.replace(QByteArray("\"plan\":\"rowwise 1x512x16 w16 s1\""), longEntry);
        QVERIFY(index.open(QIODevice::WriteOnly | QIODevice::Truncate));
        index.write(lines0);
        index.close();
        const Result longShow = cli({QStringLiteral("show"), dir});
        QCOMPARE(longShow.code, 0);
        QVERIFY2(longShow.out.contains(longPlan + QStringLiteral(" ok ")),
                 qPrintable(longShow.out));
    }

    void runShowExport() {
        const QString dir = path(QStringLiteral("run"));
        const QString script = writeScript({marker(QStringLiteral("ok speedup=0.5")),
                                            marker(QStringLiteral("ok speedup=0.8")),
                                            marker(QStringLiteral("ok speedup=1.3 suspicious"))});
        const Result r =
            cli({QStringLiteral("run"), QStringLiteral("--task"),
                 QStringLiteral("gemm_fp16_fp32_4096"), QStringLiteral("--backend"),
                 QStringLiteral("scripted"), QStringLiteral("--agent-options"), script,
                 QStringLiteral("--harness"), harness(), QStringLiteral("--session"), dir,
                 QStringLiteral("--iterations"), QStringLiteral("3"), QStringLiteral("--json")});
        QCOMPARE(r.code, 0);
        const QStringList lines = r.out.split(u'\n', Qt::SkipEmptyParts);
        const QJsonObject last = QJsonDocument::fromJson(lines.last().toUtf8()).object();
        QCOMPARE(last.value(QLatin1String("event")).toString(), QStringLiteral("finished"));
        QCOMPARE(last.value(QLatin1String("best")).toInt(), 2);
        int stepEvents = 0;
        for (const auto& line : lines)
            stepEvents +=
                QJsonDocument::fromJson(line.toUtf8()).object().value(QLatin1String("event")) ==
                QStringLiteral("step");
        QCOMPARE(stepEvents, 3);
        // The JSON-lines face: every line of stdout is one object naming its event (no text line
        // of the other face leaks in; progress goes nowhere, diagnostics to stderr).
        for (const auto& line : lines) {
            QJsonParseError error;
            const QJsonDocument document = QJsonDocument::fromJson(line.toUtf8(), &error);
            QVERIFY2(error.error == QJsonParseError::NoError && document.isObject(),
                     qPrintable(line));
            QVERIFY2(document.object().contains(QLatin1String("event")), qPrintable(line));
        }

        const Result show = cli({QStringLiteral("show"), dir});
        QCOMPARE(show.code, 0);
        QVERIFY2(show.out.contains(QStringLiteral("* v2")), qPrintable(show.out));
        QVERIFY(show.out.contains(QStringLiteral("ok!")));
        const Result showJson = cli({QStringLiteral("show"), dir, QStringLiteral("--json")});
        QCOMPARE(QJsonDocument::fromJson(showJson.out.toUtf8())
                     .object()
                     .value(QLatin1String("steps"))
                     .toArray()
                     .size(),
                 3);
        // The stage timeline: 3 steps x 4 stages, and the rate they were evaluated at.
        const Result timeline = cli({QStringLiteral("show"), dir, QStringLiteral("--timeline")});
        QCOMPARE(timeline.code, 0);
        QVERIFY2(timeline.out.contains(QStringLiteral("3 candidates evaluated in")),
                 qPrintable(timeline.out));
        QVERIFY2(timeline.out.contains(QStringLiteral(" evaluate ")), qPrintable(timeline.out));
        const QJsonObject timelineJson =
            QJsonDocument::fromJson(cli({QStringLiteral("show"), dir, QStringLiteral("--timeline"),
                                         QStringLiteral("--json")})
                                        .out.toUtf8())
                .object();
        QCOMPARE(timelineJson.value(QLatin1String("timeline")).toArray().size(), 12);
        QCOMPARE(timelineJson.value(QLatin1String("evaluated")).toInt(), 3);
        QVERIFY(timelineJson.value(QLatin1String("per_minute")).toDouble() > 0);

        const QString outDir = path(QStringLiteral("export"));
        const Result ex = cli({QStringLiteral("export"), dir, QStringLiteral("--out"), outDir});
        QCOMPARE(ex.code, 0);
        QFile kernel(QDir(outDir).filePath(QStringLiteral("kernel.cu")));
        QVERIFY(kernel.open(QIODevice::ReadOnly));
        QVERIFY(kernel.readAll().contains("speedup=0.8"));
        const Result exV3 = cli({QStringLiteral("export"), dir, QStringLiteral("--out"),
                                 path(QStringLiteral("export3")), QStringLiteral("--version"),
                                 QStringLiteral("3")});
        QCOMPARE(exV3.code, 0);
        const Result exBad =
            cli({QStringLiteral("export"), dir, QStringLiteral("--out"), path(QStringLiteral("x")),
                 QStringLiteral("--version"), QStringLiteral("9")});
        QCOMPARE(exBad.code, 2);
        QVERIFY(exBad.err.contains(QStringLiteral("no v9")));
        QCOMPARE(cli({QStringLiteral("export"), dir}).code, 2);
        QCOMPARE(cli({QStringLiteral("show"), path(QStringLiteral("nowhere"))}).code, 1);

        // An existing session is never overwritten.
        const Result again =
            cli({QStringLiteral("run"), QStringLiteral("--task"),
                 QStringLiteral("gemm_fp16_fp32_4096"), QStringLiteral("--backend"),
                 QStringLiteral("scripted"), QStringLiteral("--session"), dir});
        QCOMPARE(again.code, 2);
        QVERIFY(again.err.contains(QStringLiteral("use kevolve-cli resume")));

        const Result resumed = cli({QStringLiteral("resume"), dir, QStringLiteral("--iterations"),
                                    QStringLiteral("1"), QStringLiteral("--harness"), harness()});
        QCOMPARE(resumed.code, 0);
        QString error;
        QCOMPARE(SessionStore::open(dir, &error)->steps().size(), 4);
    }

    void stepModeOnTheTerminal() {
        const QString dir = path(QStringLiteral("step"));
        const QString script = writeScript({marker(QStringLiteral("ok speedup=0.5")),
                                            marker(QStringLiteral("ok speedup=0.6")),
                                            marker(QStringLiteral("ok speedup=0.7"))});
        const Result r =
            cli({QStringLiteral("run"), QStringLiteral("--task"),
                 QStringLiteral("gemm_fp16_fp32_4096"), QStringLiteral("--backend"),
                 QStringLiteral("scripted"), QStringLiteral("--agent-options"), script,
                 QStringLiteral("--harness"), harness(), QStringLiteral("--session"), dir,
                 QStringLiteral("--iterations"), QStringLiteral("5"), QStringLiteral("--step")},
                "a\nr 2 ignored\nr too slow\ns\n");
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains(QStringLiteral("--- gate: result of iteration 1 ---")),
                 qPrintable(r.out));
        QString error;
        const auto store = SessionStore::open(dir, &error);
        QVERIFY2(store, qPrintable(error));
        QCOMPARE(store->steps().size(), 4);
        QCOMPARE(store->steps()[0].decision, QStringLiteral("approved"));
        QCOMPARE(store->steps()[1].decision, QStringLiteral("rejected"));
        QCOMPARE(store->steps()[1].decisionReason, QStringLiteral("ignored"));
        QCOMPARE(store->steps()[2].decision, QStringLiteral("rejected"));
        QCOMPARE(store->steps()[2].decisionReason, QStringLiteral("too slow"));
        QCOMPARE(store->steps()[3].decision, QStringLiteral("pending"));
    }

    void ctrlCSavesAndExits130() {
        const QString dir = path(QStringLiteral("interrupt"));
        const QString script = writeScript(
            {marker(QStringLiteral("ok speedup=0.5")), marker(QStringLiteral("ok hang"))});
        QProcess p;
        p.setWorkingDirectory(m_root.path());
        p.start(QString::fromUtf8(KEV_CLI),
                {QStringLiteral("run"), QStringLiteral("--task"),
                 QStringLiteral("gemm_fp16_fp32_4096"), QStringLiteral("--backend"),
                 QStringLiteral("scripted"), QStringLiteral("--agent-options"), script,
                 QStringLiteral("--harness"), harness(), QStringLiteral("--session"), dir,
                 QStringLiteral("--json")});
        QVERIFY(p.waitForStarted());
        QString seen;
        QTRY_VERIFY_WITH_TIMEOUT(
            (seen += QString::fromUtf8(p.readAllStandardOutput()))
                    .contains(QStringLiteral("\"state\":\"Evaluating\",\"detail\":\"v2\"")) ||
                seen.contains(QStringLiteral(
                    "\"detail\":\"v2\",\"event\":\"state\",\"state\":\"Evaluating\"")),
            20000);
        ::kill(static_cast<pid_t>(p.processId()), SIGINT);
        QVERIFY(p.waitForFinished(10000));
        QCOMPARE(p.exitCode(), 130);
        QString error;
        const auto store = SessionStore::open(dir, &error);
        QVERIFY2(store, qPrintable(error));
        QCOMPARE(store->steps().size(), 1);
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
