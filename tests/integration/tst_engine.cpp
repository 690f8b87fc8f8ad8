// The whole loop: Engine + scripted agents + kev-fake-harness over the real protocol, including
// worker death, time-outs and malformed lines; every gate path; beam; cancel; resume; no device.
#include "engine.h"
#include "keystore.h"
#include "metatypes.h"
#include "sessionstore.h"

#include <QDirIterator>
#include <QJsonArray>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace kev;

namespace {

const QString kTestKey = QStringLiteral("sk-test-0123456789abcdef-SECRET");

class FixedKeyStore : public KeyStore {
public:
    std::optional<QString> key(const QString&) override { return kTestKey; }
};

Task headline() {
    QString error;
    auto t = TaskLibrary().resolve(QStringLiteral("gemm_fp16_fp32_4096"), &error);
    if (!t)
        qFatal("%s", qPrintable(error));
    return *t;
}

QString marker(const QString& directive) {
    // The iteration and beam make each step's kernel distinct: the engine never sends the harness
    // a kernel it has already measured in the session.
    return QStringLiteral("// fake: ") + directive +
           QStringLiteral("\n// {iteration}.{beam}\n#include <kevolve/abi.h>\n");
}

// Runs an engine to its end and keeps every signal it sent.
struct Run {
    Engine engine;
    QSignalSpy finished{&engine, &Engine::finished};
    QSignalSpy failed{&engine, &Engine::failed};
    QSignalSpy steps{&engine, &Engine::stepAvailable};
    QSignalSpy gates{&engine, &Engine::gateRequested};
    QSignalSpy reports{&engine, &Engine::reportAvailable};
    QSignalSpy plans{&engine, &Engine::planAvailable};
    QSignalSpy codes{&engine, &Engine::codeAvailable};
    QSignalSpy reviews{&engine, &Engine::reviewAvailable};
    QSignalSpy iterations{&engine, &Engine::iterationFinished};
    QSignalSpy texts{&engine, &Engine::agentTextAvailable};
    QSignalSpy states{&engine, &Engine::stateChanged};

    bool waitForEnd(int ms = 30000) {
        QElapsedTimer t;
        t.start();
        while (finished.isEmpty() && failed.isEmpty() && t.elapsed() < ms)
            QTest::qWait(20);
        return !finished.isEmpty() || !failed.isEmpty();
    }
    bool waitForGate(int count, int ms = 30000) {
        QElapsedTimer t;
        t.start();
        while (gates.size() < count && finished.isEmpty() && failed.isEmpty() && t.elapsed() < ms)
            QTest::qWait(20);
        return gates.size() >= count;
    }
    Engine::StopReason reason() const { return finished.first().at(0).value<Engine::StopReason>(); }
    GateRequest gate(int i) const { return gates.at(i).at(0).value<GateRequest>(); }
    QString failure() const {
        return failed.isEmpty() ? QString() : failed.first().at(1).toString();
    }
};

// Agents that answer inside the call, as an in-process backend may.
class SyncPlanner : public Planner {
public:
    void plan(const AgentContext& context) override {
        Strategy s;
        s.family = QStringLiteral("fma_tiled");
        s.rationale = QStringLiteral("synchronous ") + QString::number(context.beamIndex);
        emit planAvailable(s, AgentTurn{});
    }
    void cancel() override {}
};

class SyncCoder : public Coder {
public:
    void code(const AgentContext& context, const Strategy&) override {
        emit codeAvailable(QStringLiteral("// fake: ok speedup=0.5\n// %1.%2\n")
                               .arg(context.iteration)
                               .arg(context.beamIndex),
                           AgentTurn{});
    }
    void fixCompile(const AgentContext&, const Strategy&, const QString&, const QString&) override {
    }
    void cancel() override {}
};

class SyncReviewer : public Reviewer {
public:
    void review(const AgentContext&, const Strategy&, const QString&,
                const EvaluationReport& report) override {
        ReviewFeedback f;
        f.status = EvaluationReport::statusToString(report.status);
        f.correct = report.isCorrect();
        emit reviewAvailable(f, AgentTurn{});
    }
    void cancel() override {}
};

const AgentBackendRegistration syncBackend(
    QStringLiteral("sync"), [](const AgentSettings&) -> Planner* { return new SyncPlanner; },
    [](const AgentSettings&) -> Coder* { return new SyncCoder; },
    [](const AgentSettings&) -> Reviewer* { return new SyncReviewer; });

} // namespace

class TestEngine : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_root;
    int m_counter = 0;

    QString sessionDir() {
        return m_root.filePath(QStringLiteral("session") + QString::number(++m_counter));
    }

    QString harness(const QString& extra = QString()) {
        return QString::fromUtf8(KEV_FAKE_HARNESS) + QStringLiteral(" serve --state ") +
               m_root.filePath(QStringLiteral("state") + QString::number(m_counter)) + u' ' + extra;
    }

    EngineSettings settings(const QJsonObject& script, const QString& harnessExtra = QString()) {
        EngineSettings s;
        s.plannerBackend = s.coderBackend = s.reviewerBackend = QStringLiteral("scripted");
        s.plannerOptions = s.coderOptions = s.reviewerOptions = script;
        s.maxIterations = 5;
        s.targetSpeedup = 0.95;
        s.plateauIterations = 0;
        s.harnessCommands = {harness(harnessExtra)};
        s.evalTimeoutS = 2;
        return s;
    }

    static QJsonObject sources(const QStringList& list) {
        return {{QStringLiteral("sources"), QJsonArray::fromStringList(list)}};
    }

private slots:
    void initTestCase() {
        registerMetaTypes();
        QVERIFY(m_root.isValid());
    }

    void fiveIterationsThroughFaults() {
        const QJsonObject script = sources({marker(QStringLiteral("compile_error")),
                                            marker(QStringLiteral("ok speedup=0.40 garbage")),
                                            marker(QStringLiteral("ok speedup=0.55 die_once")),
                                            marker(QStringLiteral("ok hang_once")),
                                            marker(QStringLiteral("ok speedup=0.70")),
                                            marker(QStringLiteral("incorrect"))});
        const QString dir = sessionDir();
        Run run;
        run.engine.setKeyStore(std::make_shared<FixedKeyStore>());
        run.engine.start(headline(), settings(script), dir);
        QVERIFY(run.waitForEnd());
        QVERIFY2(run.failed.isEmpty(), qPrintable(run.failure()));
        QCOMPARE(run.reason(), Engine::StopReason::IterationLimit);
        QCOMPARE(run.steps.size(), 5);
        QCOMPARE(run.iterations.size(), 5);
        // One compile error went back to the coder: six code answers for five versions.
        QCOMPARE(run.codes.size(), 6);
        QVERIFY(!run.texts.isEmpty());

        QString error;
        const auto store = SessionStore::open(dir, &error);
        QVERIFY2(store, qPrintable(error));
        const auto& steps = store->steps();
        QCOMPARE(steps.size(), 5);
        QStringList statuses;
        for (const auto& s : steps)
            statuses << s.status;
        QCOMPARE(statuses,
                 (QStringList{QStringLiteral("ok"), QStringLiteral("ok"), QStringLiteral("timeout"),
                              QStringLiteral("ok"), QStringLiteral("incorrect")}));
        QCOMPARE(steps[0].codeAttempts, 2);
        QCOMPARE(*steps[0].speedup, 0.40);
        QCOMPARE(*steps[1].speedup, 0.55);
        QCOMPARE(store->bestVersion(), std::optional<int>(4));
        // Lineage: each builds on the best trustworthy step so far.
        QCOMPARE(steps[0].parentVersion, 0);
        QCOMPARE(steps[1].parentVersion, 1);
        QCOMPARE(steps[2].parentVersion, 2);
        QCOMPARE(steps[3].parentVersion, 2);
        QCOMPARE(steps[4].parentVersion, 4);

        const auto first = store->loadCandidate(1, &error);
        QVERIFY2(first, qPrintable(error));
        QCOMPARE(first->failedSources.size(), 1);
        QVERIFY(first->failedSources.first().contains(QStringLiteral("compile_error")));
        QStringList roles;
        for (const auto& t : first->turns)
            roles << t.role;
        QCOMPARE(roles, (QStringList{QStringLiteral("planner"), QStringLiteral("coder"),
                                     QStringLiteral("coder"), QStringLiteral("reviewer")}));
        QVERIFY(first->turns[2].prompt.contains(QStringLiteral("wgmma_fence")));
        const auto third = store->loadCandidate(3, &error);
        QCOMPARE(third->report->status, EvaluationReport::Status::Timeout);

        // No secret anywhere in the session.
        QDirIterator it(dir, QDir::Files, QDirIterator::Subdirectories);
        int files = 0;
        while (it.hasNext()) {
            QFile file(it.next());
            QVERIFY(file.open(QIODevice::ReadOnly));
            QVERIFY2(!file.readAll().contains(kTestKey.toUtf8()), qPrintable(file.fileName()));
            ++files;
        }
        QCOMPARE(files, 1 + 1 + 5 * 3);
    }

    void stopsWhenTheTargetIsReached() {
        Run run;
        const QString dir = sessionDir();
        run.engine.start(headline(),
                         settings(sources({marker(QStringLiteral("ok speedup=0.5")),
                                           marker(QStringLiteral("ok speedup=0.97")),
                                           marker(QStringLiteral("ok speedup=0.99"))})),
                         dir);
        QVERIFY(run.waitForEnd());
        QVERIFY2(run.failed.isEmpty(), qPrintable(run.failure()));
        QCOMPARE(run.reason(), Engine::StopReason::TargetReached);
        QCOMPARE(run.steps.size(), 2);
    }

    // The H200 case: layernorm at 1.2x its plain harness reference but 61% of the DRAM floor must
    // keep searching; at 91% of the floor it stops, and the message names both targets.
    void memoryBoundNeedsTheFloorTarget() {
        Run run;
        EngineSettings s =
            settings(sources({marker(QStringLiteral("ok speedup=1.2 bound=memory floor=61")),
                              marker(QStringLiteral("ok speedup=1.2 bound=memory floor=91")),
                              marker(QStringLiteral("ok speedup=1.3 bound=memory floor=95"))}));
        s.targetSpeedup = 1.0;
        s.targetFloorPercent = 90;
        run.engine.start(headline(), s, sessionDir());
        QVERIFY(run.waitForEnd());
        QVERIFY2(run.failed.isEmpty(), qPrintable(run.failure()));
        QCOMPARE(run.reason(), Engine::StopReason::TargetReached);
        QCOMPARE(run.steps.size(), 2);
        const auto first = run.steps.first().at(0).value<IterationSummary>();
        QCOMPARE(first.bound, QStringLiteral("memory"));
        QCOMPARE(first.percentOfFloor, std::optional<double>(61));
        QVERIFY(first.isTrustworthy());
        QCOMPARE(run.finished.first().at(1).toString(),
                 QStringLiteral("target reached: 1.200x the reference and 91.0% of the DRAM floor "
                                "(targets 1.000x, 90%), correct and not suspicious"));
    }

    void memoryBoundBelowTheFloorTargetRunsOn() {
        Run run;
        EngineSettings s =
            settings(sources({marker(QStringLiteral("ok speedup=1.2 bound=memory floor=61"))}));
        s.targetSpeedup = 1.0;
        s.maxIterations = 3;
        run.engine.start(headline(), s, sessionDir());
        QVERIFY(run.waitForEnd());
        QVERIFY2(run.failed.isEmpty(), qPrintable(run.failure()));
        QCOMPARE(run.reason(), Engine::StopReason::IterationLimit);
        QCOMPARE(run.steps.size(), 3);
    }

    // 0 turns the floor target off: the speedup alone decides, as before it existed.
    void floorTargetOffStopsOnTheSpeedup() {
        Run run;
        EngineSettings s =
            settings(sources({marker(QStringLiteral("ok speedup=1.2 bound=memory floor=61"))}));
        s.targetSpeedup = 1.0;
        s.targetFloorPercent = 0;
        run.engine.start(headline(), s, sessionDir());
        QVERIFY(run.waitForEnd());
        QCOMPARE(run.reason(), Engine::StopReason::TargetReached);
        QCOMPARE(run.steps.size(), 1);
    }

    // A compute-bound step is judged on the speedup alone, whatever its share of the floor.
    void computeBoundIgnoresTheFloorTarget() {
        Run run;
        EngineSettings s =
            settings(sources({marker(QStringLiteral("ok speedup=1.01 bound=compute floor=40"))}));
        s.targetSpeedup = 1.0;
        s.targetFloorPercent = 90;
        run.engine.start(headline(), s, sessionDir());
        QVERIFY(run.waitForEnd());
        QCOMPARE(run.reason(), Engine::StopReason::TargetReached);
        QCOMPARE(run.steps.size(), 1);
        QCOMPARE(run.finished.first().at(1).toString(),
                 QStringLiteral("target reached: 1.010x the reference (target 1.000x), correct and "
                                "not suspicious"));
    }

    void suspiciousNeverBecomesBestOrStops() {
        Run run;
        const QString dir = sessionDir();
        EngineSettings s = settings(sources({marker(QStringLiteral("ok speedup=0.6")),
                                             marker(QStringLiteral("ok speedup=1.5 suspicious")),
                                             marker(QStringLiteral("ok speedup=0.5"))}));
        s.maxIterations = 3;
        run.engine.start(headline(), s, dir);
        QVERIFY(run.waitForEnd());
        QCOMPARE(run.reason(), Engine::StopReason::IterationLimit);
        QString error;
        const auto store = SessionStore::open(dir, &error);
        QCOMPARE(store->bestVersion(), std::optional<int>(1));
        QVERIFY(store->steps()[1].suspicious);
        QCOMPARE(store->steps()[2].parentVersion, 1);
        QCOMPARE(run.iterations.last().at(2).toInt(), 1);
    }

    void plateauStops() {
        Run run;
        EngineSettings s = settings(sources({marker(QStringLiteral("ok speedup=0.6"))}));
        s.maxIterations = 10;
        s.plateauIterations = 2;
        run.engine.start(headline(), s, sessionDir());
        QVERIFY(run.waitForEnd());
        QCOMPARE(run.reason(), Engine::StopReason::Plateau);
        QCOMPARE(run.steps.size(), 3);
    }

    void tokenBudgetStops() {
        Run run;
        QJsonObject script = sources({marker(QStringLiteral("ok speedup=0.6"))});
        script.insert(QStringLiteral("tokens"), 100);
        EngineSettings s = settings(script);
        s.tokenBudget = 900;
        run.engine.start(headline(), s, sessionDir());
        QVERIFY(run.waitForEnd());
        QCOMPARE(run.reason(), Engine::StopReason::TokenBudget);
        // 3 turns x 200 tokens in the first step, 2 x 200 afterwards (the plan is reused).
        QCOMPARE(run.steps.size(), 2);
    }

    void beamEvaluatesCandidatesInParallel() {
        Run run;
        const QString dir = sessionDir();
        QJsonObject script{
            {QStringLiteral("beam_sources"),
             QJsonArray{QJsonArray{marker(QStringLiteral("ok speedup=0.5 delay_ms=200"))},
                        QJsonArray{marker(QStringLiteral("ok speedup=0.8 delay_ms=200"))},
                        QJsonArray{marker(QStringLiteral("incorrect delay_ms=200"))}}}};
        EngineSettings s = settings(script, QString());
        s.harnessCommands = {harness(), harness()};
        s.beamWidth = 3;
        s.maxIterations = 2;
        run.engine.start(headline(), s, dir);
        QVERIFY(run.waitForEnd());
        QVERIFY2(run.failed.isEmpty(), qPrintable(run.failure()));
        QCOMPARE(run.steps.size(), 6);
        QString error;
        const auto store = SessionStore::open(dir, &error);
        const auto& steps = store->steps();
        QCOMPARE(steps[0].iteration, 1);
        QCOMPARE(steps[2].iteration, 1);
        QCOMPARE(steps[3].iteration, 2);
        QCOMPARE(store->bestVersion(), std::optional<int>(2));
        for (int i = 3; i < 6; ++i)
            QCOMPARE(steps[i].parentVersion, 2);
        QCOMPARE(run.iterations.first().at(1).toInt(), 2);
        // Every step's stage timeline: the four stages in order, none open, the harness's delay
        // inside the evaluation (a lower bound: a busy machine only lengthens it).
        for (int v = 1; v <= 6; ++v) {
            const auto c = store->loadCandidate(v, &error);
            QVERIFY2(c, qPrintable(error));
            QStringList stages;
            for (const StageSpan& span : c->timeline) {
                stages << span.stage;
                QVERIFY(span.start.isValid());
                QVERIFY(span.seconds >= 0);
                if (span.stage == QLatin1String("evaluate"))
                    QVERIFY2(span.seconds >= 0.19, qPrintable(QString::number(span.seconds)));
            }
            QCOMPARE(stages, (QStringList{QStringLiteral("plan"), QStringLiteral("code"),
                                          QStringLiteral("evaluate"), QStringLiteral("review")}));
            for (int i = 1; i < c->timeline.size(); ++i)
                QVERIFY(c->timeline[i - 1].start <= c->timeline[i].start);
        }
    }

    void stepModeApproveAndReject() {
        Run run;
        const QString dir = sessionDir();
        EngineSettings s = settings(sources({marker(QStringLiteral("ok speedup=0.5")),
                                             marker(QStringLiteral("ok speedup=0.6")),
                                             marker(QStringLiteral("ok speedup=0.4"))}));
        s.stepMode = true;
        s.maxIterations = 3;
        run.engine.start(headline(), s, dir);
        QVERIFY(run.waitForGate(1));
        QCOMPARE(run.gate(0).kind, GateRequest::Kind::Result);
        QCOMPARE(run.gate(0).suggestedVersion, 1);
        // Nothing is saved before the person decides.
        QCOMPARE(run.steps.size(), 0);
        run.engine.approve(1);
        QVERIFY(run.waitForGate(2));
        run.engine.reject(2, QStringLiteral("uses too many registers"));
        QVERIFY(run.waitForGate(3));
        // The reason was fed back to the coder of v3, which builds on the approved v1.
        const Candidate third = run.gate(2).candidates.first();
        QCOMPARE(third.parentVersion, 1);
        bool noted = false;
        for (const auto& turn : third.turns)
            noted = noted || turn.prompt.contains(QStringLiteral("uses too many registers"));
        QVERIFY(noted);
        run.engine.approve(3);
        QVERIFY(run.waitForEnd());
        QCOMPARE(run.reason(), Engine::StopReason::IterationLimit);
        QString error;
        const auto store = SessionStore::open(dir, &error);
        QCOMPARE(store->steps()[0].decision, QStringLiteral("approved"));
        QCOMPARE(store->steps()[1].decision, QStringLiteral("rejected"));
        QCOMPARE(store->steps()[1].decisionReason, QStringLiteral("uses too many registers"));
        QCOMPARE(store->steps()[2].decision, QStringLiteral("approved"));
    }

    void stepModeEditedCodeIsTheNextVersion() {
        Run run;
        const QString dir = sessionDir();
        EngineSettings s = settings(sources({marker(QStringLiteral("ok speedup=0.5"))}));
        s.stepMode = true;
        s.maxIterations = 3;
        run.engine.start(headline(), s, dir);
        QVERIFY(run.waitForGate(1));
        run.engine.submitCode(1, marker(QStringLiteral("ok speedup=0.77")) +
                                     QStringLiteral("// by hand\n"));
        QVERIFY(run.waitForGate(2));
        const Candidate edited = run.gate(1).candidates.first();
        QCOMPARE(edited.version, 2);
        QCOMPARE(edited.parentVersion, 1);
        QCOMPARE(edited.origin, QStringLiteral("human_code"));
        QCOMPARE(edited.report->speedup, 0.77);
        QVERIFY(edited.source.contains(QStringLiteral("// by hand")));
        run.engine.stop();
        QVERIFY(run.waitForEnd());
        QCOMPARE(run.reason(), Engine::StopReason::UserStop);
        QString error;
        const auto store = SessionStore::open(dir, &error);
        QCOMPARE(store->steps().size(), 2);
        QCOMPARE(store->steps()[0].decision, QStringLiteral("edited"));
        QCOMPARE(store->steps()[1].decision, QStringLiteral("pending"));
        QCOMPARE(store->steps()[1].origin, QStringLiteral("human_code"));
    }

    void stepModeEditedPlanIsCodedAndEvaluated() {
        Run run;
        const QString dir = sessionDir();
        EngineSettings s = settings(sources({marker(QStringLiteral("ok speedup=0.5"))}));
        s.stepMode = true;
        s.maxIterations = 2;
        run.engine.start(headline(), s, dir);
        QVERIFY(run.waitForGate(1));
        Strategy plan = run.gate(0).candidates.first().strategy;
        plan.stages = 4;
        plan.rationale = QStringLiteral("a person's plan");
        run.engine.submitPlan(1, plan);
        QVERIFY(run.waitForGate(2));
        const Candidate edited = run.gate(1).candidates.first();
        QCOMPARE(edited.origin, QStringLiteral("human_plan"));
        QCOMPARE(edited.strategy.stages, 4);
        QVERIFY(edited.report);
        run.engine.approve(2);
        QVERIFY(run.waitForEnd());
        QCOMPARE(run.reason(), Engine::StopReason::IterationLimit);
    }

    void planGateAllowsEditingBeforeTheCoder() {
        Run run;
        const QString dir = sessionDir();
        EngineSettings s = settings(sources({marker(QStringLiteral("ok speedup=0.5"))}));
        s.stepMode = true;
        s.gatePlans = true;
        s.maxIterations = 1;
        run.engine.start(headline(), s, dir);
        QVERIFY(run.waitForGate(1));
        QCOMPARE(run.gate(0).kind, GateRequest::Kind::Plan);
        QCOMPARE(run.codes.size(), 0);
        // An invalid edit is refused and the gate stays open.
        Strategy bad = run.gate(0).candidates.first().strategy;
        bad.blockM = 0;
        run.engine.submitPlan(1, bad);
        QTest::qWait(200);
        QCOMPARE(run.codes.size(), 0);
        run.engine.reject(1, QStringLiteral("try two stages"));
        QVERIFY(run.waitForGate(2));
        QCOMPARE(run.gate(1).kind, GateRequest::Kind::Plan);
        Strategy plan = run.gate(1).candidates.first().strategy;
        plan.stages = 2;
        plan.rationale = QStringLiteral("two stages, by hand");
        run.engine.submitPlan(1, plan);
        QVERIFY(run.waitForGate(3));
        QCOMPARE(run.gate(2).kind, GateRequest::Kind::Result);
        QCOMPARE(run.gate(2).candidates.first().strategy.stages, 2);
        QCOMPARE(run.gate(2).candidates.first().origin, QStringLiteral("human_plan"));
        run.engine.approve(1);
        QVERIFY(run.waitForEnd());
        QString error;
        const auto store = SessionStore::open(dir, &error);
        const auto plan1 = store->loadPlan(1, &error);
        QVERIFY2(plan1, qPrintable(error));
        QCOMPARE(plan1->rationale, QStringLiteral("two stages, by hand"));
    }

    void stopDuringAStepModeIterationKeepsItPending() {
        Run run;
        const QString dir = sessionDir();
        EngineSettings s =
            settings(sources({marker(QStringLiteral("ok speedup=0.5 delay_ms=400"))}));
        s.stepMode = true;
        run.engine.start(headline(), s, dir);
        QTRY_COMPARE_WITH_TIMEOUT(run.codes.size(), 1, 10000);
        run.engine.stop();
        QVERIFY(run.waitForEnd());
        QCOMPARE(run.reason(), Engine::StopReason::UserStop);
        QCOMPARE(run.gates.size(), 0);
        QString error;
        const auto store = SessionStore::open(dir, &error);
        QCOMPARE(store->steps().size(), 1);
        QCOMPARE(store->steps()[0].decision, QStringLiteral("pending"));
    }

    void synchronousAgentsStillStopAtThePlanGate() {
        Run run;
        EngineSettings s = settings({});
        s.plannerBackend = s.coderBackend = s.reviewerBackend = QStringLiteral("sync");
        s.stepMode = true;
        s.gatePlans = true;
        s.beamWidth = 2;
        s.maxIterations = 1;
        run.engine.start(headline(), s, sessionDir());
        QVERIFY(run.waitForGate(1));
        QCOMPARE(run.gate(0).kind, GateRequest::Kind::Plan);
        QCOMPARE(run.gate(0).candidates.size(), 2);
        QTest::qWait(200);
        QCOMPARE(run.codes.size(), 0);
        QCOMPARE(run.gates.size(), 1);
        run.engine.approve(1);
        QVERIFY(run.waitForGate(2));
        QCOMPARE(run.gate(1).kind, GateRequest::Kind::Result);
        QCOMPARE(run.codes.size(), 2);
        run.engine.approve(run.gate(1).suggestedVersion);
        QVERIFY(run.waitForEnd());
        QCOMPARE(run.reason(), Engine::StopReason::IterationLimit);
        QCOMPARE(run.steps.size(), 2);
    }

    void cancelKillsInFlightWorkAndKeepsCompletedSteps() {
        Run run;
        const QString dir = sessionDir();
        EngineSettings s = settings(
            sources({marker(QStringLiteral("ok speedup=0.5")), marker(QStringLiteral("ok hang"))}));
        s.evalTimeoutS = 600;
        run.engine.start(headline(), s, dir);
        QTRY_COMPARE_WITH_TIMEOUT(run.steps.size(), 1, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(run.codes.size(), 2, 10000);
        QTest::qWait(200);
        run.engine.cancel();
        QVERIFY(run.waitForEnd(5000));
        QCOMPARE(run.reason(), Engine::StopReason::Cancelled);
        QString error;
        const auto store = SessionStore::open(dir, &error);
        QCOMPARE(store->steps().size(), 1);
    }

    void resumeContinuesTheSession() {
        const QString dir = sessionDir();
        {
            Run run;
            EngineSettings s = settings(sources({marker(QStringLiteral("ok speedup=0.5"))}));
            s.maxIterations = 2;
            run.engine.start(headline(), s, dir);
            QVERIFY(run.waitForEnd());
            QCOMPARE(run.steps.size(), 2);
        }
        Run run;
        QSignalSpy opened(&run.engine, &Engine::sessionOpened);
        EngineSettings s = settings(sources({marker(QStringLiteral("ok speedup=0.6"))}));
        s.maxIterations = 2;
        run.engine.resume(dir, s);
        QVERIFY(run.waitForEnd());
        QVERIFY2(run.failed.isEmpty(), qPrintable(run.failure()));
        QCOMPARE(opened.size(), 1);
        QCOMPARE(opened.first().at(2).value<QVector<IterationSummary>>().size(), 2);
        QString error;
        const auto store = SessionStore::open(dir, &error);
        QCOMPARE(store->steps().size(), 4);
        QCOMPARE(store->steps()[2].version, 3);
        QCOMPARE(store->steps()[2].iteration, 3);
        QCOMPARE(store->steps()[2].parentVersion, 1);
        QCOMPARE(*store->steps()[3].speedup, 0.6);
    }

    void noDeviceEndsClearly() {
        Run run;
        const QString dir = sessionDir();
        QSignalSpy devices(&run.engine, &Engine::devicesAvailable);
        run.engine.start(
            headline(),
            settings(sources({marker(QStringLiteral("ok"))}), QStringLiteral("--no-device")), dir);
        QVERIFY(run.waitForEnd());
        QCOMPARE(run.reason(), Engine::StopReason::NoDevice);
        QVERIFY(run.finished.first().at(1).toString().startsWith(QStringLiteral("no CUDA device")));
        QCOMPARE(devices.size(), 1);
        QVERIFY(devices.first().at(0).value<QVector<DeviceInfo>>().isEmpty());
        QString error;
        const auto store = SessionStore::open(dir, &error);
        QVERIFY2(store, qPrintable(error));
        QCOMPARE(store->steps().size(), 1);
        QCOMPARE(store->steps()[0].status, QStringLiteral("no_device"));
    }

    void agentFailureFails() {
        Run run;
        QJsonObject script = sources({marker(QStringLiteral("ok"))});
        script.insert(QStringLiteral("fail_coder_at"), 1);
        run.engine.start(headline(), settings(script), sessionDir());
        QVERIFY(run.waitForEnd());
        QCOMPARE(run.failed.size(), 1);
        QCOMPARE(run.failed.first().at(0).value<Engine::Failure>(), Engine::Failure::Agent);
        QVERIFY2(run.failure().contains(QStringLiteral("the coder failed")),
                 qPrintable(run.failure()));
    }

    void compileErrorTheCoderCannotRepairIsARecordedStep() {
        // The second coder call (the repair of v1's compile error) fails: v1 is recorded as a
        // compile_error step with its log and the coder's refusal, and the session goes on.
        Run run;
        QJsonObject script = sources({marker(QStringLiteral("compile_error")),
                                      marker(QStringLiteral("ok speedup=0.5")),
                                      marker(QStringLiteral("ok speedup=0.6"))});
        script.insert(QStringLiteral("fail_coder_at"), 2);
        EngineSettings s = settings(script);
        s.maxIterations = 3;
        s.targetSpeedup = 0;
        const QString dir = sessionDir();
        run.engine.start(headline(), s, dir);
        QVERIFY(run.waitForEnd());
        QVERIFY2(run.failed.isEmpty(), qPrintable(run.failure()));
        QCOMPARE(run.reason(), Engine::StopReason::IterationLimit);
        QString error;
        const auto store = SessionStore::open(dir, &error);
        QVERIFY2(store, qPrintable(error));
        QCOMPARE(store->steps().size(), 3);
        QCOMPARE(store->steps()[0].status, QStringLiteral("compile_error"));
        QCOMPARE(store->steps()[1].status, QStringLiteral("ok"));
        const auto first = store->loadCandidate(1, &error);
        QVERIFY2(first, qPrintable(error));
        QVERIFY(first->report);
        QVERIFY(!first->report->compileLog.isEmpty());
        QVERIFY(first->source.contains(QStringLiteral("compile_error")));
        QCOMPARE(first->codeAttempts, 2);
        QStringList stages;
        for (const StageSpan& span : first->timeline)
            stages << span.stage + (span.stage == QLatin1String("code") && !span.detail.isEmpty()
                                        ? u' ' + span.detail
                                        : QString());
        QCOMPARE(stages, (QStringList{QStringLiteral("plan"), QStringLiteral("code"),
                                      QStringLiteral("evaluate"), QStringLiteral("code attempt 2"),
                                      QStringLiteral("review")}));
        QVERIFY(first->review);
        const AgentTurn& refusal = first->turns[2];
        QCOMPARE(refusal.role, QStringLiteral("coder"));
        QCOMPARE(refusal.backend, QStringLiteral("scripted"));
        QVERIFY2(refusal.reply.contains(QStringLiteral("scripted coder failure")),
                 qPrintable(refusal.reply));
        // The next iteration asked the planner again instead of re-coding the failed plan.
        const auto second = store->loadCandidate(2, &error);
        QVERIFY2(second, qPrintable(error));
        QCOMPARE(second->turns.first().role, QStringLiteral("planner"));
    }

    void sessionsInOneEngineUseTheirOwnAgents() {
        // One engine, two sessions: the first plans with the built-in planner, the second with the
        // scripted one (and other scripted sources); each session's turns name its own backends.
        Engine engine;
        QSignalSpy finished(&engine, &Engine::finished);
        QSignalSpy failed(&engine, &Engine::failed);
        const auto runTo = [&](int ends) {
            QElapsedTimer t;
            t.start();
            while (finished.size() + failed.size() < ends && t.elapsed() < 30000)
                QTest::qWait(20);
            return failed.isEmpty() && finished.size() == ends;
        };
        EngineSettings first = settings(sources({marker(QStringLiteral("ok speedup=0.5 first"))}));
        first.plannerBackend = QStringLiteral("builtin");
        first.plannerOptions = {};
        first.maxIterations = 1;
        first.targetSpeedup = 0;
        const QString firstDir = sessionDir();
        engine.start(headline(), first, firstDir);
        QVERIFY2(runTo(1),
                 failed.isEmpty() ? "no end" : qPrintable(failed.first().at(1).toString()));

        EngineSettings second =
            settings(sources({marker(QStringLiteral("ok speedup=0.6 second"))}));
        second.maxIterations = 1;
        second.targetSpeedup = 0;
        const QString secondDir = sessionDir();
        engine.start(headline(), second, secondDir);
        QVERIFY2(runTo(2),
                 failed.isEmpty() ? "no end" : qPrintable(failed.first().at(1).toString()));

        const auto backendsOf = [](const QString& dir) {
            QString error;
            const auto store = SessionStore::open(dir, &error);
            const auto c = store ? store->loadCandidate(1, &error) : std::nullopt;
            QStringList backends;
            if (c) {
                for (const auto& t : c->turns)
                    backends << t.role + u'=' + t.backend;
                backends << c->source;
            }
            return backends;
        };
        const QStringList a = backendsOf(firstDir);
        const QStringList b = backendsOf(secondDir);
        QVERIFY2(a.contains(QStringLiteral("planner=builtin")), qPrintable(a.join(u',')));
        QVERIFY2(b.contains(QStringLiteral("planner=scripted")), qPrintable(b.join(u',')));
        QVERIFY(!b.contains(QStringLiteral("planner=builtin")));
        QVERIFY(a.last().contains(QStringLiteral("first")));
        QVERIFY(b.last().contains(QStringLiteral("second")));

        // Resuming the first session with its settings brings its planner back.
        engine.resume(firstDir);
        QVERIFY2(runTo(3),
                 failed.isEmpty() ? "no end" : qPrintable(failed.first().at(1).toString()));
        QString error;
        const auto resumed = SessionStore::open(firstDir, &error);
        QVERIFY2(resumed, qPrintable(error));
        const auto v2 = resumed->loadCandidate(2, &error);
        QVERIFY2(v2, qPrintable(error));
        QStringList roles;
        for (const auto& t : v2->turns)
            roles << t.role + u'=' + t.backend;
        QVERIFY2(!roles.contains(QStringLiteral("planner=scripted")), qPrintable(roles.join(u',')));
    }

    void unknownBackendFails() {
        Run run;
        EngineSettings s = settings({});
        s.plannerBackend = QStringLiteral("nonexistent");
        run.engine.start(headline(), s, sessionDir());
        QVERIFY(run.waitForEnd());
        QCOMPARE(run.failed.first().at(0).value<Engine::Failure>(), Engine::Failure::Agent);
        QVERIFY2(run.failure().contains(QStringLiteral("\"nonexistent\"")),
                 qPrintable(run.failure()));
    }

    void missingHarnessFails() {
        Run run;
        EngineSettings s = settings(sources({marker(QStringLiteral("ok"))}));
        s.harnessCommands = {QStringLiteral("/nonexistent/kevolve-harness serve")};
        run.engine.start(headline(), s, sessionDir());
        QVERIFY(run.waitForEnd());
        QCOMPARE(run.failed.first().at(0).value<Engine::Failure>(),
                 Engine::Failure::HarnessMissing);
    }

    // The harness's error code decides the failure, not the message's wording: bad_task is the
    // task's fault (BadTask), any other refusal the harness's (Harness).
    void aRefusedTaskFailsByTheHarnessCode() {
        {
            Run run;
            run.engine.start(headline(),
                             settings(sources({marker(QStringLiteral("ok refuse=bad_task"))})),
                             sessionDir());
            QVERIFY(run.waitForEnd());
            QCOMPARE(run.failed.size(), 1);
            QCOMPARE(run.failed.first().at(0).value<Engine::Failure>(), Engine::Failure::BadTask);
            QVERIFY2(run.failure().contains(QStringLiteral("bad_task: the fake harness refuses")),
                     qPrintable(run.failure()));
        }
        Run run;
        run.engine.start(headline(),
                         settings(sources({marker(QStringLiteral("ok refuse=internal"))})),
                         sessionDir());
        QVERIFY(run.waitForEnd());
        QCOMPARE(run.failed.size(), 1);
        QCOMPARE(run.failed.first().at(0).value<Engine::Failure>(), Engine::Failure::Harness);
    }

    void existingSessionIsNotOverwritten() {
        const QString dir = sessionDir();
        {
            Run run;
            EngineSettings s = settings(sources({marker(QStringLiteral("ok"))}));
            s.maxIterations = 1;
            run.engine.start(headline(), s, dir);
            QVERIFY(run.waitForEnd());
        }
        Run run;
        run.engine.start(headline(), settings({}), dir);
        QVERIFY(run.waitForEnd());
        QCOMPARE(run.failed.first().at(0).value<Engine::Failure>(), Engine::Failure::Session);
        QVERIFY2(run.failure().contains(QStringLiteral("already holds a session")),
                 qPrintable(run.failure()));
    }
};

QTEST_GUILESS_MAIN(TestEngine)
#include "tst_engine.moc"
