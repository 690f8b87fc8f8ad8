// EvaluatorPool against kev-fake-harness: the real protocol, and each recovery path (garbage
// lines, a dying worker, a hung one, a missing harness, cancel).
#include "evaluatorpool.h"
#include "metatypes.h"

#include <QJsonObject>
#include <QSet>
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
        QVERIFY(report.toJson()
                    .value(QLatin1String("kernel"))
                    .toObject()
                    .value(QLatin1String("name")) == QStringLiteral("kernel_v1.cu"));
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
        QCOMPARE(failures.first().at(1).value<EvaluationFailure>().kind,
                 EvaluatorPool::Failure::WorkerDied);
        QVERIFY2(failures.first().at(1).value<EvaluationFailure>().message.contains(
                     QStringLiteral("died twice")),
                 qPrintable(failures.first().at(1).value<EvaluationFailure>().message));
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
        QCOMPARE(failures.first().at(1).value<EvaluationFailure>().kind,
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
        QCOMPARE(failures.first().at(1).value<EvaluationFailure>().kind,
                 EvaluatorPool::Failure::HarnessMissing);
        QVERIFY2(failures.first().at(1).value<EvaluationFailure>().message.contains(
                     QStringLiteral("/nonexistent/kevolve-harness")),
                 qPrintable(failures.first().at(1).value<EvaluationFailure>().message));
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
        QCOMPARE(failures.first().at(1).value<EvaluationFailure>().kind,
                 EvaluatorPool::Failure::Protocol);
        QVERIFY2(failures.first().at(1).value<EvaluationFailure>().message.contains(
                     QStringLiteral("report.status")),
                 qPrintable(failures.first().at(1).value<EvaluationFailure>().message));
    }

    void aRefusalCarriesTheHarnessCodeAsAField() {
        EvaluatorPool pool;
        pool.setCommands({command()});
        QSignalSpy failures(&pool, &EvaluatorPool::evaluationFailed);
        QSignalSpy results(&pool, &EvaluatorPool::resultAvailable);
        // The message deliberately does not start with the code: the code travels as a field.
        const QString id =
            pool.evaluate(task(), source("ok refuse=bad_task"), QStringLiteral("k.cu"), {});
        QTRY_COMPARE_WITH_TIMEOUT(failures.size(), 1, 10000);
        QCOMPARE(results.size(), 0);
        QCOMPARE(failures.first().at(0).toString(), id);
        const auto failure = failures.first().at(1).value<EvaluationFailure>();
        QCOMPARE(failure.kind, EvaluatorPool::Failure::Refused);
        QVERIFY(failure.code == HarnessErrorCode::BadTask);
        QCOMPARE(failure.codeText, QStringLiteral("bad_task"));
        QVERIFY2(!failure.message.contains(QStringLiteral("bad_task")),
                 qPrintable(failure.message));
        QCOMPARE(failure.describe(), QStringLiteral("bad_task: ") + failure.message);

        // A code this client does not know stays readable and is not mistaken for a known one.
        pool.evaluate(task(), source("ok refuse=quota_exceeded"), QStringLiteral("k.cu"), {});
        QTRY_COMPARE_WITH_TIMEOUT(failures.size(), 2, 10000);
        const auto unknown = failures.at(1).at(1).value<EvaluationFailure>();
        QVERIFY(unknown.code == HarnessErrorCode::Unknown);
        QCOMPARE(unknown.codeText, QStringLiteral("quota_exceeded"));
    }

    void harnessErrorCodesParse() {
        QVERIFY(EvaluationFailure::codeFromString(QStringLiteral("bad_request")) ==
                HarnessErrorCode::BadRequest);
        QVERIFY(EvaluationFailure::codeFromString(QStringLiteral("bad_task")) ==
                HarnessErrorCode::BadTask);
        QVERIFY(EvaluationFailure::codeFromString(QStringLiteral("unsupported_version")) ==
                HarnessErrorCode::UnsupportedVersion);
        QVERIFY(EvaluationFailure::codeFromString(QStringLiteral("unknown_id")) ==
                HarnessErrorCode::UnknownId);
        QVERIFY(EvaluationFailure::codeFromString(QStringLiteral("internal")) ==
                HarnessErrorCode::Internal);
        // Prefixes and case variants are not codes.
        QVERIFY(EvaluationFailure::codeFromString(QStringLiteral("bad_task_extra")) ==
                HarnessErrorCode::Unknown);
        QVERIFY(EvaluationFailure::codeFromString(QStringLiteral("BAD_TASK")) ==
                HarnessErrorCode::Unknown);
        QVERIFY(EvaluationFailure::codeFromString(QString()) == HarnessErrorCode::None);
        // An error event without a code is still a refusal.
        const auto noCode = EvaluationFailure::refused(QString(), QStringLiteral("why"));
        QVERIFY(noCode.code == HarnessErrorCode::Unknown);
        QCOMPARE(noCode.describe(), QStringLiteral("why"));
    }

    void launcherListsParseAsPeopleWriteThem() {
        QString error;
        const auto list = EvaluatorPool::parseLaunchers(
            QStringLiteral(" kevolve-harness serve --device 0 ;kevolve-harness serve --device 1;\n"
                           "srun --gres=gpu:1 bash -lc \"module load cuda; exec kevolve-harness "
                           "serve\"\n\n"),
            &error);
        QVERIFY2(list, qPrintable(error));
        QCOMPARE(*list,
                 (QStringList{QStringLiteral("kevolve-harness serve --device 0"),
                              QStringLiteral("kevolve-harness serve --device 1"),
                              QStringLiteral("srun --gres=gpu:1 bash -lc \"module load cuda; exec "
                                             "kevolve-harness serve\"")}));
        QCOMPARE(EvaluatorPool::parseLaunchers(EvaluatorPool::formatLaunchers(*list), &error),
                 list);

        QVERIFY(
            !EvaluatorPool::parseLaunchers(QStringLiteral("a serve; ssh \"gpu1 serve"), &error));
        QVERIFY2(error.contains(QStringLiteral("launcher 2")) &&
                     error.contains(QStringLiteral("quote")),
                 qPrintable(error));
        QVERIFY(!EvaluatorPool::parseLaunchers(QStringLiteral(" ; ;\n"), &error));
        QVERIFY2(error.contains(QStringLiteral("no launcher")), qPrintable(error));
        QVERIFY(!EvaluatorPool::parseLaunchers(QStringLiteral("a serve; \"\""), &error));
        QVERIFY2(error.contains(QStringLiteral("has no program")), qPrintable(error));
    }

    void workersOnTwoGpusBothMeasureAndSaySo() {
        EvaluatorPool pool;
        pool.setCommands(
            {command(QStringLiteral("--device 0")), command(QStringLiteral("--device 1"))});
        QSignalSpy results(&pool, &EvaluatorPool::resultAvailable);
        QSignalSpy failures(&pool, &EvaluatorPool::evaluationFailed);
        pool.evaluate(task(), source("ok delay_ms=200 speedup=0.5"), QStringLiteral("a.cu"), {});
        pool.evaluate(task(), source("ok delay_ms=200 speedup=0.6"), QStringLiteral("b.cu"), {});
        QTRY_COMPARE_WITH_TIMEOUT(results.size(), 2, 10000);
        QCOMPARE(failures.size(), 0);
        QSet<int> workers;
        QSet<QString> gpus;
        for (const auto& result : results) {
            const QJsonObject by = result.at(1).value<EvaluationReport>().measuredBy;
            workers.insert(by.value(QLatin1String("worker")).toInt(-1));
            gpus.insert(by.value(QLatin1String("gpu_uuid")).toString());
            QVERIFY(by.value(QLatin1String("launcher"))
                        .toString()
                        .contains(QStringLiteral("--device")));
        }
        QCOMPARE(workers, (QSet<int>{0, 1}));
        QCOMPARE(gpus, (QSet<QString>{QStringLiteral("GPU-00000000-fake"),
                                      QStringLiteral("GPU-00000001-fake")}));
    }

    void refusesASecondWorkerOnTheSameGpu() {
        EvaluatorPool pool;
        pool.setCommands(
            {command(QStringLiteral("--device 0")), command(QStringLiteral("--device 0"))});
        QSignalSpy results(&pool, &EvaluatorPool::resultAvailable);
        QSignalSpy failures(&pool, &EvaluatorPool::evaluationFailed);
        QSignalSpy messages(&pool, &EvaluatorPool::workerMessageAvailable);
        pool.evaluate(task(), source("ok delay_ms=100 speedup=0.5"), QStringLiteral("a.cu"), {});
        pool.evaluate(task(), source("ok delay_ms=100 speedup=0.6"), QStringLiteral("b.cu"), {});
        QTRY_COMPARE_WITH_TIMEOUT(results.size(), 2, 10000);
        QCOMPARE(failures.size(), 0);
        int refusals = 0;
        for (const auto& message : messages) {
            if (message.at(1).toString().contains(
                    QStringLiteral("refused: it measures on GPU GPU-00000000-fake")))
                ++refusals;
        }
        QCOMPARE(refusals, 1);
        // Both requests were measured by the one worker left, on its GPU.
        QCOMPARE(
            results.at(0).at(1).value<EvaluationReport>().measuredBy.value(QLatin1String("worker")),
            results.at(1).at(1).value<EvaluationReport>().measuredBy.value(
                QLatin1String("worker")));
        QCOMPARE(pool.devices().size(), 1);
    }

    void aQueuedAllocationIsWaitedFor() {
        // A launcher that waits in a queue far longer than the hello time-out before it starts.
        EvaluatorPool pool;
        pool.setHelloTimeoutMs(2000);
        pool.setCommands(
            {QStringLiteral("sh -c \"echo 'srun: job 7 queued and waiting for resources' >&2; "
                            "sleep 4; echo 'srun: job 7 has been allocated resources' >&2; "
                            "exec ") +
             command() + u'"'});
        QSignalSpy results(&pool, &EvaluatorPool::resultAvailable);
        QSignalSpy allocation(&pool, &EvaluatorPool::allocationChanged);
        QSignalSpy messages(&pool, &EvaluatorPool::workerMessageAvailable);
        pool.evaluate(task(), source("ok speedup=0.7"), QStringLiteral("k.cu"), {});
        QTRY_COMPARE_WITH_TIMEOUT(results.size(), 1, 30000);
        QVERIFY(allocation.size() >= 2);
        QCOMPARE(allocation.at(0).at(1).toBool(), true);
        QVERIFY(allocation.at(0).at(2).toString().contains(QStringLiteral("queued")));
        QCOMPARE(allocation.at(1).at(1).toBool(), false);
        for (const auto& message : messages)
            QVERIFY2(!message.at(1).toString().contains(QStringLiteral("restarting")),
                     qPrintable(message.at(1).toString()));
    }

    void aWaitingWorkersRequestGoesToAWorkerThatIsUp() {
        EvaluatorPool pool;
        pool.setCommands(
            {QStringLiteral("sh -c \"echo 'srun: job 8 queued and waiting for resources' >&2; "
                            "exec sleep 600\""),
             command()});
        QSignalSpy results(&pool, &EvaluatorPool::resultAvailable);
        pool.evaluate(task(), source("ok speedup=0.4"), QStringLiteral("a.cu"), {});
        pool.evaluate(task(), source("ok speedup=0.45"), QStringLiteral("b.cu"), {});
        QTRY_COMPARE_WITH_TIMEOUT(results.size(), 2, 15000);
        for (const auto& result : results)
            QCOMPARE(result.at(1)
                         .value<EvaluationReport>()
                         .measuredBy.value(QLatin1String("worker"))
                         .toInt(),
                     1);
    }

    void aWorkerThatNeverAnswersIsGivenUpWithItsReason() {
        EvaluatorPool pool;
        pool.setMaxRestarts(2);
        pool.setCommands({QStringLiteral("sh -c \"echo 'ssh: connect to host 127.0.0.1 port 9: "
                                         "Connection refused' >&2; exit 255\"")});
        QSignalSpy failures(&pool, &EvaluatorPool::evaluationFailed);
        pool.evaluate(task(), source("ok"), QStringLiteral("k.cu"), {});
        QTRY_COMPARE_WITH_TIMEOUT(failures.size(), 1, 15000);
        QCOMPARE(failures.first().at(1).value<EvaluationFailure>().kind,
                 EvaluatorPool::Failure::HarnessMissing);
        const QString message = failures.first().at(1).value<EvaluationFailure>().message;
        QVERIFY2(message.contains(QStringLiteral("Connection refused")), qPrintable(message));
        QVERIFY2(message.contains(QStringLiteral("never answered")), qPrintable(message));
        QVERIFY2(message.contains(QStringLiteral("3 times in a row")), qPrintable(message));
    }
};

QTEST_GUILESS_MAIN(TestEvaluatorPool)
#include "tst_evaluatorpool.moc"
