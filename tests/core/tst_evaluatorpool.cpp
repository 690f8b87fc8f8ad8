// EvaluatorPool against kev-fake-harness: the real protocol, and each recovery path (garbage
// lines, a dying worker, a hung one, a missing harness, cancel).
#include "evaluatorpool.h"
#include "metatypes.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace kev;

namespace {

Task task() {
    QString error;
    auto t = TaskLibrary().resolve(QStringLiteral("gemm_fp16_fp32_4096"), &error);
    if (!t)
        qFatal("%s", qPrintable(error));
    return *t;
}

QString source(const char* marker) {
    return QStringLiteral("// fake: ") + QLatin1String(marker) +
           QStringLiteral("\nextern \"C\" int kevolve_launch();\n");
}

} // namespace

class TestEvaluatorPool : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_state;

    QString command(const QString& extra = QString()) const {
        return QString::fromUtf8(KEV_FAKE_HARNESS) + QStringLiteral(" serve --state ") +
               m_state.path() + u' ' + extra;
    }

private slots:
    void initTestCase() { registerMetaTypes(); }

    void evaluatesAndReportsProgress() {
        EvaluatorPool pool;
        pool.setCommands({command()});
        QSignalSpy devices(&pool, &EvaluatorPool::devicesAvailable);
        QSignalSpy progress(&pool, &EvaluatorPool::progressAvailable);
        QSignalSpy results(&pool, &EvaluatorPool::resultAvailable);
        const QString id =
            pool.evaluate(task(), source("ok speedup=0.62"), QStringLiteral("kernel_v1.cu"), {});
        QTRY_COMPARE_WITH_TIMEOUT(results.size(), 1, 10000);
        QCOMPARE(results.first().at(0).toString(), id);
        const auto report = results.first().at(1).value<EvaluationReport>();
        QCOMPARE(report.status, EvaluationReport::Status::Ok);
        QCOMPARE(report.speedup, 0.62);
        QVERIFY(report.raw.value(QLatin1String("kernel")).toObject().value(QLatin1String("name")) ==
                QStringLiteral("kernel_v1.cu"));
        QCOMPARE(devices.size(), 1);
        QCOMPARE(devices.first().at(0).value<QVector<DeviceInfo>>().first().name,
                 QStringLiteral("NVIDIA H200"));
        QVERIFY(progress.size() >= 2);
        QCOMPARE(pool.pendingCount(), 0);
    }

    void parallelRequestsAllAnswer() {
        EvaluatorPool pool;
        pool.setCommands({command(), command()});
        QSignalSpy results(&pool, &EvaluatorPool::resultAvailable);
        QStringList ids;
        for (int i = 0; i < 6; ++i)
            ids << pool.evaluate(task(),
                                 source("ok delay_ms=50 speedup=0.") + QString::number(i + 1),
                                 QStringLiteral("k.cu"), {});
        QTRY_COMPARE_WITH_TIMEOUT(results.size(), 6, 10000);
        QStringList answered;
        for (const auto& r : results)
            answered << r.at(0).toString();
        answered.sort();
        ids.sort();
        QCOMPARE(answered, ids);
    }

    void skipsGarbageLines() {
        EvaluatorPool pool;
        pool.setCommands({command()});
        QSignalSpy results(&pool, &EvaluatorPool::resultAvailable);
        pool.evaluate(task(), source("ok garbage speedup=0.7"), QStringLiteral("k.cu"), {});
        QTRY_COMPARE_WITH_TIMEOUT(results.size(), 1, 10000);
        QCOMPARE(results.first().at(1).value<EvaluationReport>().speedup, 0.7);
        QCOMPARE(pool.garbageLines(), 4);
    }

    void restartsADeadWorkerAndRetriesOnce() {
        EvaluatorPool pool;
        pool.setCommands({command()});
        QSignalSpy results(&pool, &EvaluatorPool::resultAvailable);
        QSignalSpy failures(&pool, &EvaluatorPool::evaluationFailed);
        QSignalSpy devices(&pool, &EvaluatorPool::devicesAvailable);
        pool.evaluate(task(), source("ok die_once speedup=0.8 tag=restart"), QStringLiteral("k.cu"),
                      {});
        QTRY_COMPARE_WITH_TIMEOUT(results.size(), 1, 10000);
        QCOMPARE(failures.size(), 0);
        QCOMPARE(results.first().at(1).value<EvaluationReport>().speedup, 0.8);
        QCOMPARE(devices.size(), 2);
    }

    void failsAfterTheSecondDeath() {
        EvaluatorPool pool;
        pool.setCommands({command()});
        QSignalSpy results(&pool, &EvaluatorPool::resultAvailable);
        QSignalSpy failures(&pool, &EvaluatorPool::evaluationFailed);
        const QString id = pool.evaluate(task(), source("ok die"), QStringLiteral("k.cu"), {});
        QTRY_COMPARE_WITH_TIMEOUT(failures.size(), 1, 10000);
        QCOMPARE(failures.first().at(0).toString(), id);
        QCOMPARE(failures.first().at(1).value<EvaluatorPool::Failure>(),
                 EvaluatorPool::Failure::WorkerDied);
        QVERIFY2(failures.first().at(2).toString().contains(QStringLiteral("died twice")),
                 qPrintable(failures.first().at(2).toString()));
        // The worker came back and serves the next request.
        pool.evaluate(task(), source("ok speedup=0.9"), QStringLiteral("k.cu"), {});
        QTRY_COMPARE_WITH_TIMEOUT(results.size(), 1, 10000);
    }

    void timesOutAHungRequestAndRecovers() {
        EvaluatorPool pool;
        pool.setCommands({command()});
        pool.setRequestTimeoutMs(500);
        QSignalSpy results(&pool, &EvaluatorPool::resultAvailable);
        QSignalSpy failures(&pool, &EvaluatorPool::evaluationFailed);
        const QString id = pool.evaluate(task(), source("ok hang"), QStringLiteral("k.cu"), {});
        QTRY_COMPARE_WITH_TIMEOUT(failures.size(), 1, 10000);
        QCOMPARE(failures.first().at(0).toString(), id);
        QCOMPARE(failures.first().at(1).value<EvaluatorPool::Failure>(),
                 EvaluatorPool::Failure::Timeout);
        pool.evaluate(task(), source("ok speedup=0.9"), QStringLiteral("k.cu"), {});
        QTRY_COMPARE_WITH_TIMEOUT(results.size(), 1, 10000);
    }

    void slowHelloIsWaitedFor() {
        QTemporaryDir dir;
        QFile script(dir.filePath(QStringLiteral("script.jsonl")));
        QVERIFY(script.open(QIODevice::WriteOnly));
        script.write("{\"config\": {\"hello_delay_ms\": 300}}\n{\"status\": \"incorrect\"}\n");
        script.close();
        EvaluatorPool pool;
        pool.setCommands({command(QStringLiteral("--script ") + script.fileName())});
        QSignalSpy results(&pool, &EvaluatorPool::resultAvailable);
        pool.evaluate(task(), QStringLiteral("no marker"), QStringLiteral("k.cu"), {});
        QTRY_COMPARE_WITH_TIMEOUT(results.size(), 1, 10000);
        const auto report = results.first().at(1).value<EvaluationReport>();
        QCOMPARE(report.status, EvaluationReport::Status::Incorrect);
        QVERIFY(!report.timed);
        QCOMPARE(report.correctness.passed, 0);
    }

    void missingHarnessFailsClearly() {
        EvaluatorPool pool;
        pool.setCommands({QStringLiteral("/nonexistent/kevolve-harness serve")});
        QSignalSpy failures(&pool, &EvaluatorPool::evaluationFailed);
        pool.evaluate(task(), source("ok"), QStringLiteral("k.cu"), {});
        QTRY_COMPARE_WITH_TIMEOUT(failures.size(), 1, 10000);
        QCOMPARE(failures.first().at(1).value<EvaluatorPool::Failure>(),
                 EvaluatorPool::Failure::HarnessMissing);
        QVERIFY2(failures.first().at(2).toString().contains(
                     QStringLiteral("/nonexistent/kevolve-harness")),
                 qPrintable(failures.first().at(2).toString()));
    }

    void cancelSilencesTheRequest() {
        EvaluatorPool pool;
        pool.setCommands({command()});
        QSignalSpy results(&pool, &EvaluatorPool::resultAvailable);
        QSignalSpy failures(&pool, &EvaluatorPool::evaluationFailed);
        const QString slow =
            pool.evaluate(task(), source("ok delay_ms=300"), QStringLiteral("k.cu"), {});
        pool.cancel(slow);
        pool.evaluate(task(), source("ok delay_ms=600 speedup=0.3"), QStringLiteral("k.cu"), {});
        QTRY_COMPARE_WITH_TIMEOUT(results.size(), 1, 10000);
        QCOMPARE(results.first().at(1).value<EvaluationReport>().speedup, 0.3);
        QCOMPARE(failures.size(), 0);
    }

    void invalidReportIsAProtocolFailure() {
        EvaluatorPool pool;
        pool.setCommands({command()});
        QSignalSpy failures(&pool, &EvaluatorPool::evaluationFailed);
        QSignalSpy results(&pool, &EvaluatorPool::resultAvailable);
        pool.evaluate(task(), source("ok fault=nothing status=bogus"), QStringLiteral("k.cu"), {});
        QTRY_VERIFY_WITH_TIMEOUT(failures.size() + results.size() == 1, 10000);
        QCOMPARE(failures.size(), 1);
        QCOMPARE(failures.first().at(1).value<EvaluatorPool::Failure>(),
                 EvaluatorPool::Failure::Protocol);
        QVERIFY2(failures.first().at(2).toString().contains(QStringLiteral("report.status")),
                 qPrintable(failures.first().at(2).toString()));
    }
};

QTEST_GUILESS_MAIN(TestEvaluatorPool)
#include "tst_evaluatorpool.moc"
