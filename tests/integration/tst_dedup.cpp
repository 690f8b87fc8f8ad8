// Issue 18 at the engine: the built-in backend with --beam 4 against kev-fake-harness never
// sends the harness two identical kernels, within an iteration, across iterations and across a
// resume (the seen-set is rebuilt from the session's files); a planner that can only repeat
// itself has its slot skipped, with nothing sent and no step recorded.
#include "engine.h"
#include "metatypes.h"
#include "search/seenset.h"
#include "sessionstore.h"

#include <QSet>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace kev;

namespace {

Task task(const QString& name) {
    QString error;
    auto t = TaskLibrary().resolve(name, &error);
    if (!t)
        qFatal("%s", qPrintable(error));
    return *t;
}

// A planner and coder that always answer the same: the engine must not measure it twice.
class RepeatingPlanner : public Planner {
public:
    void plan(const AgentContext& context) override {
        Strategy s;
        s.family = QStringLiteral("fma_tiled");
        s.rationale = QStringLiteral("always the same, beam ") + QString::number(context.beamIndex);
        emit planAvailable(s, AgentTurn{});
    }
    void cancel() override {}
};

class RepeatingCoder : public Coder {
public:
    void code(const AgentContext&, const Strategy&) override {
        emit codeAvailable(QStringLiteral("// fake: ok speedup=0.5\n#include <kevolve/abi.h>\n"),
                           AgentTurn{});
    }
    void fixCompile(const AgentContext&, const Strategy&, const QString&, const QString&) override {
    }
    void cancel() override {}
};

const AgentBackendRegistration repeating(
    QStringLiteral("repeating"),
    [](const AgentSettings&) -> Planner* { return new RepeatingPlanner; },
    [](const AgentSettings&) -> Coder* { return new RepeatingCoder; }, nullptr);

} // namespace

class TestDedup : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_root;
    int m_counter = 0;

    EngineSettings settings(const QString& planner, const QString& coder) {
        EngineSettings s;
        s.plannerBackend = planner;
        s.coderBackend = coder;
        s.reviewerBackend = QStringLiteral("builtin");
        s.maxIterations = 3;
        s.targetSpeedup = 0; // never reached: fake reports say 0.5
        s.plateauIterations = 0;
        ++m_counter;
        s.harnessCommands = {
            QString::fromUtf8(KEV_FAKE_HARNESS) + QStringLiteral(" serve --state ") +
                m_root.filePath(QStringLiteral("state") + QString::number(m_counter)),
            QString::fromUtf8(KEV_FAKE_HARNESS) + QStringLiteral(" serve --state ") +
                m_root.filePath(QStringLiteral("stateb") + QString::number(m_counter))};
        s.evalTimeoutS = 5;
        s.beamWidth = 4;
        return s;
    }

    // Runs to the end; the number of kernels the harness was asked to evaluate.
    static int runToEnd(Engine& engine, QString* failure) {
        QSignalSpy finished(&engine, &Engine::finished);
        QSignalSpy failed(&engine, &Engine::failed);
        QSignalSpy codes(&engine, &Engine::codeAvailable);
        QElapsedTimer t;
        t.start();
        while (finished.isEmpty() && failed.isEmpty() && t.elapsed() < 120000)
            QTest::qWait(20);
        if (!failed.isEmpty())
            *failure = failed.first().at(1).toString();
        else if (finished.isEmpty())
            *failure = QStringLiteral("no end within 120 s");
        return int(codes.size());
    }

    static void verifyDistinct(const QString& dir, int expectedSteps) {
        QString error;
        const auto store = SessionStore::open(dir, &error);
        QVERIFY2(store, qPrintable(error));
        QCOMPARE(store->steps().size(), expectedSteps);
        QSet<QByteArray> hashes;
        for (const auto& step : store->steps()) {
            const auto source = store->loadSource(step.version, &error);
            QVERIFY2(source, qPrintable(error));
            const QByteArray hash = sourceHash(*source);
            QVERIFY2(
                !hashes.contains(hash),
                qPrintable(
                    QStringLiteral("v%1 repeats a kernel: %2").arg(step.version).arg(step.plan)));
            hashes.insert(hash);
        }
    }

private slots:
    void builtinBeamNeverRepeatsAKernel_data() {
        QTest::addColumn<QString>("taskName");
        QTest::newRow("gemm") << QStringLiteral("gemm_fp16_fp32_4096");
        QTest::newRow("layernorm") << QStringLiteral("layernorm_bf16_16384x4096");
    }

    void builtinBeamNeverRepeatsAKernel() {
        QFETCH(QString, taskName);
        const QString dir = m_root.filePath(QStringLiteral("beam_") + taskName);
        {
            Engine engine;
            engine.start(task(taskName),
                         settings(QStringLiteral("builtin"), QStringLiteral("builtin")), dir);
            QString failure;
            runToEnd(engine, &failure);
            QVERIFY2(failure.isEmpty(), qPrintable(failure));
        }
        verifyDistinct(dir, 12);
        // Resumed: fresh planners, the seen-set rebuilt from the files.
        {
            Engine engine;
            engine.resume(dir, settings(QStringLiteral("builtin"), QStringLiteral("builtin")));
            QString failure;
            runToEnd(engine, &failure);
            QVERIFY2(failure.isEmpty(), qPrintable(failure));
        }
        verifyDistinct(dir, 24);
    }

    void repeatingAgentsAreMeasuredOnce() {
        const QString dir = m_root.filePath(QStringLiteral("repeating"));
        Engine engine;
        QSignalSpy progress(&engine, &Engine::progressAvailable);
        QSignalSpy reports(&engine, &Engine::reportAvailable);
        engine.start(task(QStringLiteral("gemm_fp16_fp32_4096")),
                     settings(QStringLiteral("repeating"), QStringLiteral("repeating")), dir);
        QString failure;
        runToEnd(engine, &failure);
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
        // One evaluation in three iterations of four slots; every other slot skipped, and said so.
        QCOMPARE(reports.size(), 1);
        verifyDistinct(dir, 1);
        bool skipped = false;
        for (const auto& p : progress)
            skipped = skipped || p.at(2).toString().contains(QStringLiteral("skipped"));
        QVERIFY(skipped);
    }
};

QTEST_GUILESS_MAIN(TestDedup)
#include "tst_dedup.moc"
