// Exporter: the files and their contents for a small session, and the recorded H200 reports
// (tests/data/reports) parsed and exported as real harness output.
#include "exporter.h"
#include "jsonschema.h"
#include "sessionstore.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>

using namespace kev;

namespace {

QString readAll(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(f.readAll());
}

Candidate step(int version, const QJsonObject& report) {
    Candidate c;
    c.version = version;
    c.parentVersion = version - 1;
    c.iteration = version;
    c.strategy.family = QStringLiteral("mma_sync");
    c.strategy.mma = QStringLiteral("mma.sync");
    c.strategy.blockM = 128;
    c.strategy.blockN = 128;
    c.strategy.blockK = 32;
    c.strategy.warps = 8;
    c.strategy.rationale = QStringLiteral("tensor cores <fast> & \"tiled\"");
    c.source =
        QStringLiteral("// kernel v") + QString::number(version) + QStringLiteral("\nint a < b;\n");
    QString error;
    c.report = EvaluationReport::fromJson(report, &error);
    if (!c.report)
        qFatal("%s", qPrintable(error));
    ReviewFeedback r;
    r.status = EvaluationReport::statusToString(c.report->status);
    r.bottleneckId = QStringLiteral("none");
    c.review = r;
    c.finishedAt = QDateTime::currentDateTimeUtc();
    return c;
}

QJsonObject okReport(double speedup) {
    QString error;
    auto json = readJsonObjectFile(QStringLiteral(KEV_REPORT_FIXTURES "/report_ok_gemm_typed.json"),
                                   &error);
    QJsonObject timing = json->value(QLatin1String("timing")).toObject();
    timing.insert(QStringLiteral("speedup_vs_reference"), speedup);
    json->insert(QStringLiteral("timing"), timing);
    return *json;
}

QJsonObject statusReport(const char* status) {
    return {{QStringLiteral("schema_version"), 1},
            {QStringLiteral("status"), QLatin1String(status)},
            {QStringLiteral("message"), QStringLiteral("scripted")}};
}

} // namespace

class TestExporter : public QObject {
    Q_OBJECT
private slots:
    void exportsTheBestStep() {
        QTemporaryDir dir;
        QString error;
        auto task = TaskLibrary().resolve(QStringLiteral("gemm_fp16_fp32_4096"), &error);
        auto store = SessionStore::create(dir.filePath(QStringLiteral("s")), *task,
                                          EngineSettings(), &error);
        QVERIFY2(store, qPrintable(error));
        QVERIFY(store->appendStep(step(1, statusReport("compile_error")), &error));
        QVERIFY(store->appendStep(step(2, okReport(0.71)), &error));
        QVERIFY(store->appendStep(step(3, statusReport("incorrect")), &error));
        QVERIFY(store->appendStep(step(4, okReport(0.93)), &error));

        const QString out = dir.filePath(QStringLiteral("out"));
        QStringList written;
        QVERIFY2(Exporter::exportSession(*store, out, std::nullopt, &written, &error),
                 qPrintable(error));
        QStringList expected = {QStringLiteral("kernel.cu"),   QStringLiteral("task.json"),
                                QStringLiteral("report.json"), QStringLiteral("report.md"),
                                QStringLiteral("report.html"), QStringLiteral("chart.svg"),
                                QStringLiteral("samples.csv"), QStringLiteral("environment.json"),
                                QStringLiteral("reverify.sh")};
        QCOMPARE(written, expected);
        QStringList onDisk = QDir(out).entryList(QDir::Files);
        onDisk.sort();
        expected.sort();
        QCOMPARE(onDisk, expected);

        QCOMPARE(readAll(QDir(out).filePath(QStringLiteral("kernel.cu"))),
                 step(4, okReport(0.93)).source);
        const auto exportedTask =
            TaskLibrary::loadFile(QDir(out).filePath(QStringLiteral("task.json")), &error);
        QVERIFY2(exportedTask, qPrintable(error));
        QCOMPARE(exportedTask->toJson(), task->toJson());
        const auto report =
            readJsonObjectFile(QDir(out).filePath(QStringLiteral("report.json")), &error);
        QCOMPARE(report->value(QLatin1String("timing"))
                     .toObject()
                     .value(QLatin1String("speedup_vs_reference"))
                     .toDouble(),
                 0.93);

        const QString md = readAll(QDir(out).filePath(QStringLiteral("report.md")));
        QVERIFY(md.contains(QStringLiteral("kernel v4")));
        QVERIFY(md.contains(QStringLiteral("| speedup | 0.930x the reference |")));
        QVERIFY(
            md.contains(QStringLiteral("| 3 | 2 | 3 | mma_sync 128x128x32 w8 s1 | incorrect |")));
        QVERIFY(md.contains(Exporter::reverifyCommand()));

        const QString html = readAll(QDir(out).filePath(QStringLiteral("report.html")));
        QVERIFY(html.startsWith(QStringLiteral("<!DOCTYPE html>")));
        QVERIFY(html.contains(QStringLiteral("<svg xmlns=\"http://www.w3.org/2000/svg\"")));
        // Self-contained: nothing is fetched.
        QVERIFY(!html.contains(QStringLiteral("src=")));
        QVERIFY(!html.contains(QStringLiteral("href=")));
        // Source and rationale are escaped.
        QVERIFY(html.contains(QStringLiteral("int a &lt; b;")));
        QVERIFY(html.contains(QStringLiteral("tensor cores &lt;fast&gt; &amp; &quot;tiled&quot;")));
        QCOMPARE(html.count(QStringLiteral("<circle class=\"version\"")), 4);
        QVERIFY(html.contains(QStringLiteral("<polyline class=\"best\"")));

        const QStringList csv = readAll(QDir(out).filePath(QStringLiteral("samples.csv")))
                                    .split(u'\n', Qt::SkipEmptyParts);
        QCOMPARE(csv.size(), 3);
        QVERIFY(csv[0].startsWith(QStringLiteral("round,pair,ratio,candidate_ms_1")));
        QCOMPARE(csv[1],
                 QStringLiteral(
                     "0,0,0.93,0.214,0.215,0.199,0.2,0,1980,3201,sw_power_cap,false,3.1e-08"));

        const auto environment =
            readJsonObjectFile(QDir(out).filePath(QStringLiteral("environment.json")), &error);
        QCOMPARE(environment->value(QLatin1String("gpu"))
                     .toObject()
                     .value(QLatin1String("name"))
                     .toString(),
                 QStringLiteral("NVIDIA H200"));
        QCOMPARE(environment->value(QLatin1String("exported_version")).toInt(), 4);

        const QString script = readAll(QDir(out).filePath(QStringLiteral("reverify.sh")));
        QVERIFY(script.startsWith(QStringLiteral("#!/bin/sh\n")));
        QVERIFY(script.contains(
            QStringLiteral("kevolve-harness eval --task task.json --kernel kernel.cu")));
        QVERIFY(QFileInfo(QDir(out).filePath(QStringLiteral("reverify.sh"))).isExecutable());

        QVERIFY(Exporter::exportSession(*store, dir.filePath(QStringLiteral("out1")), 1, &written,
                                        &error));
        QCOMPARE(readAll(dir.filePath(QStringLiteral("out1/samples.csv"))).count(u'\n'), 1);
        QVERIFY(!Exporter::exportSession(*store, dir.filePath(QStringLiteral("out9")), 9, &written,
                                         &error));
        QVERIFY2(error.contains(QStringLiteral("no step v9")), qPrintable(error));
    }

    void emptySessionIsRefused() {
        QTemporaryDir dir;
        QString error;
        auto task = TaskLibrary().resolve(QStringLiteral("gemm_fp16_fp32_4096"), &error);
        auto store = SessionStore::create(dir.path(), *task, EngineSettings(), &error);
        QStringList written;
        QVERIFY(!Exporter::exportSession(*store, dir.filePath(QStringLiteral("out")), std::nullopt,
                                         &written, &error));
        QVERIFY2(error.contains(QStringLiteral("no steps")), qPrintable(error));
    }

    void recordedH200ReportsParseAndExport() {
        const QDir reports(QStringLiteral(KEV_SOURCE_DIR "/tests/data/reports"));
        const QStringList files = reports.entryList({QStringLiteral("*.json")}, QDir::Files);
        if (files.isEmpty())
            QSKIP("no recorded reports in tests/data/reports");
        QTemporaryDir dir;
        QString error;
        auto task = TaskLibrary().resolve(QStringLiteral("gemm_fp16_fp32_4096"), &error);
        auto store = SessionStore::create(dir.filePath(QStringLiteral("s")), *task,
                                          EngineSettings(), &error);
        int version = 0;
        int timed = 0;
        for (const auto& name : files) {
            const auto json = readJsonObjectFile(reports.filePath(name), &error);
            QVERIFY2(json, qPrintable(error));
            const auto report = EvaluationReport::fromJson(*json, &error);
            QVERIFY2(report, qPrintable(name + QStringLiteral(": ") + error));
            QCOMPARE(EvaluationReport::statusToString(report->status),
                     json->value(QLatin1String("status")).toString());
            if (report->timed) {
                ++timed;
                QVERIFY2(report->speedup > 0 && report->ciLow <= report->speedup &&
                             report->speedup <= report->ciHigh,
                         qPrintable(name));
                QVERIFY2(!report->samples.isEmpty(), qPrintable(name));
            }
            QVERIFY2(store->appendStep(step(++version, *json), &error), qPrintable(error));
        }
        QVERIFY(timed > 0);
        QStringList written;
        QVERIFY2(Exporter::exportSession(*store, dir.filePath(QStringLiteral("out")), std::nullopt,
                                         &written, &error),
                 qPrintable(error));
        QVERIFY(readAll(dir.filePath(QStringLiteral("out/samples.csv"))).count(u'\n') > 1);
    }
};

QTEST_GUILESS_MAIN(TestExporter)
#include "tst_exporter.moc"
