// Issue 18 at the engine, against kev-fake-harness: every step is written to the knowledge store;
// a second session on a task near one already in the store starts from that task's best
// configuration, cites it, and reaches its best in at most three steps; a person's rejection (with
// its reason) keeps that plan out of later sessions, and an edited-and-approved kernel is recorded
// with its edit. The "landscape" coder gives every configuration a fixed speed-up (a hash of its
// plan), so the same plan measures the same on either task.
#include "engine.h"
#include "knowledgestore.h"
#include "metatypes.h"
#include "search/seenset.h"
#include "sessionstore.h"

#include <QCryptographicHash>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace kev;
using namespace Qt::StringLiterals;

namespace {

Task task(const QString& name) {
    QString error;
    auto t = TaskLibrary().resolve(name, &error);
    if (!t)
        qFatal("%s", qPrintable(error));
    return *t;
}

double landscape(const Strategy& plan) {
    const QByteArray text =
        QJsonDocument(KnowledgeRecord::planToJson(plan)).toJson(QJsonDocument::Compact);
    const QByteArray hash = QCryptographicHash::hash(text, QCryptographicHash::Sha1);
    const int bucket = (quint8(hash.at(0)) << 8 | quint8(hash.at(1))) % 600;
    return 0.4 + bucket / 1000.0;
}

class LandscapeCoder : public Coder {
public:
    void code(const AgentContext&, const Strategy& strategy) override {
        emit codeAvailable(
            u"// fake: ok speedup=%1\n// %2\n#include <kevolve/abi.h>\n"_s
                .arg(landscape(strategy), 0, 'f', 3)
                .arg(QString::fromUtf8(QJsonDocument(KnowledgeRecord::planToJson(strategy))
                                           .toJson(QJsonDocument::Compact))),
            AgentTurn{});
    }
    void fixCompile(const AgentContext&, const Strategy&, const QString&, const QString&) override {
    }
    void cancel() override {}
};

const AgentBackendRegistration landscapeBackend(
    u"landscape"_s, nullptr, [](const AgentSettings&) -> Coder* { return new LandscapeCoder; },
    nullptr);

} // namespace

class TestKnowledge : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_root;
    int m_counter = 0;

    EngineSettings settings(int iterations, bool step = false) {
        EngineSettings s;
        s.plannerBackend = u"builtin"_s;
        s.coderBackend = u"landscape"_s;
        s.reviewerBackend = u"builtin"_s;
        s.maxIterations = iterations;
        s.targetSpeedup = 0; // the search runs its iterations
        s.plateauIterations = 0;
        s.stepMode = step;
        ++m_counter;
        s.harnessCommands = {QString::fromUtf8(KEV_FAKE_HARNESS) + u" serve --state "_s +
                             m_root.filePath(u"state"_s + QString::number(m_counter))};
        s.evalTimeoutS = 5;
        return s;
    }

    static void runToEnd(Engine& engine, QString* failure) {
        QSignalSpy finished(&engine, &Engine::finished);
        QSignalSpy failed(&engine, &Engine::failed);
        QElapsedTimer t;
        t.start();
        while (finished.isEmpty() && failed.isEmpty() && t.elapsed() < 120000)
            QTest::qWait(20);
        if (!failed.isEmpty())
            *failure = failed.first().at(1).toString();
        else if (finished.isEmpty())
            *failure = u"no end within 120 s"_s;
    }

    static SessionStore session(const QString& dir) {
        QString error;
        auto store = SessionStore::open(dir, &error);
        if (!store)
            qFatal("%s", qPrintable(error));
        return *store;
    }

    static double bestSpeedup(const SessionStore& store, int firstSteps = 1 << 30) {
        double best = 0;
        for (const auto& s : store.steps()) {
            if (s.version <= firstSteps && s.speedup)
                best = std::max(best, *s.speedup);
        }
        return best;
    }

private slots:
    void initTestCase() { registerMetaTypes(); }

    void secondSessionStartsFromTheNearestSolvedTask() {
        const QString storePath = m_root.filePath(u"near.sqlite"_s);
        const Task first = task(u"gemm_f16_m64_n4096_k11008"_s);
        const QString firstDir = m_root.filePath(u"first"_s);
        {
            Engine engine;
            engine.setKnowledgePath(storePath);
            engine.start(first, settings(6), firstDir);
            QString failure;
            runToEnd(engine, &failure);
            QVERIFY2(failure.isEmpty(), qPrintable(failure));
        }
        const SessionStore firstSession = session(firstDir);
        QCOMPARE(firstSession.steps().size(), 6);
        const double firstBest = bestSpeedup(firstSession);
        QString error;
        {
            auto store = KnowledgeStore::open(storePath, &error);
            QVERIFY2(store, qPrintable(error));
            const auto records = store->records(&error);
            QCOMPARE(records.size(), 6); // every evaluated step
            for (const auto& r : records) {
                QCOMPARE(r.sessionId, firstSession.info().id);
                QCOMPARE(r.task.taskName, first.name);
                QCOMPARE(r.task.deviceName, u"NVIDIA H200"_s);
                QCOMPARE(r.decision, u"automatic"_s);
                QCOMPARE(r.status, u"ok"_s);
                QVERIFY(r.speedup);
            }
        }

        // Another M: the nearest task in the store is the first one.
        Task second = first;
        second.name = u"gemm_f16_m128_n4096_k11008"_s;
        second.m = 128;
        const QString secondDir = m_root.filePath(u"second"_s);
        {
            Engine engine;
            engine.setKnowledgePath(storePath);
            engine.start(second, settings(3), secondDir);
            QString failure;
            runToEnd(engine, &failure);
            QVERIFY2(failure.isEmpty(), qPrintable(failure));
        }
        const SessionStore secondSession = session(secondDir);
        QVERIFY(secondSession.steps().size() >= 1);
        QVERIFY2(
            bestSpeedup(secondSession, 3) >= firstBest,
            qPrintable(u"second session best %1 < first %2"_s.arg(bestSpeedup(secondSession, 3))
                           .arg(firstBest)));
        const auto v1 = secondSession.loadCandidate(1, &error);
        QVERIFY2(v1, qPrintable(error));
        QVERIFY2(
            v1->strategy.rationale.contains(u"from gemm_f16_m64_n4096_k11008 on NVIDIA H200: "_s),
            qPrintable(v1->strategy.rationale));
        // Without the store the first plan is the planner's own.
        const QString bareDir = m_root.filePath(u"bare"_s);
        {
            Engine engine;
            engine.start(second, settings(1), bareDir);
            QString failure;
            runToEnd(engine, &failure);
            QVERIFY2(failure.isEmpty(), qPrintable(failure));
        }
        const auto bare = session(bareDir).loadCandidate(1, &error);
        QVERIFY2(bare, qPrintable(error));
        QVERIFY2(!bare->strategy.rationale.contains(u"knowledge store"_s),
                 qPrintable(bare->strategy.rationale));
    }

    void aRejectionIsRememberedAcrossSessions() {
        const QString storePath = m_root.filePath(u"decisions.sqlite"_s);
        const Task t = task(u"gemm_fp16_fp32_4096"_s);
        const QString stepDir = m_root.filePath(u"rejecting"_s);
        {
            Engine engine;
            engine.setKnowledgePath(storePath);
            connect(&engine, &Engine::gateRequested, &engine, [&engine](const GateRequest& r) {
                engine.reject(r.candidates.first().version, u"too many registers per thread"_s);
            });
            engine.start(t, settings(1, true), stepDir);
            QString failure;
            runToEnd(engine, &failure);
            QVERIFY2(failure.isEmpty(), qPrintable(failure));
        }
        QString error;
        const auto rejected = session(stepDir).loadCandidate(1, &error);
        QVERIFY2(rejected, qPrintable(error));
        {
            auto store = KnowledgeStore::open(storePath, &error);
            QVERIFY2(store, qPrintable(error));
            const auto records = store->records(&error);
            QCOMPARE(records.size(), 1);
            QCOMPARE(records.first().decision, u"rejected"_s);
            QCOMPARE(records.first().reason, u"too many registers per thread"_s);
        }
        const QString rejectedKey = canonicalPlanKey(rejected->strategy, t, DeviceInfo::h200());

        const QString laterDir = m_root.filePath(u"later"_s);
        {
            Engine engine;
            engine.setKnowledgePath(storePath);
            engine.start(t, settings(5), laterDir);
            QString failure;
            runToEnd(engine, &failure);
            QVERIFY2(failure.isEmpty(), qPrintable(failure));
        }
        const SessionStore later = session(laterDir);
        QCOMPARE(later.steps().size(), 5);
        for (const auto& s : later.steps()) {
            const auto c = later.loadCandidate(s.version, &error);
            QVERIFY2(c, qPrintable(error));
            QVERIFY2(canonicalPlanKey(c->strategy, t, DeviceInfo::h200()) != rejectedKey,
                     qPrintable(u"v%1 repeats the rejected plan %2"_s.arg(s.version).arg(s.plan)));
        }
        const auto first = later.loadCandidate(1, &error);
        QVERIFY2(first->strategy.rationale.contains(u"too many registers per thread"_s),
                 qPrintable(first->strategy.rationale));
    }

    void anEditedAndApprovedKernelIsRecordedWithItsEdit() {
        const QString storePath = m_root.filePath(u"edits.sqlite"_s);
        const Task t = task(u"gemm_fp16_fp32_4096"_s);
        const QString dir = m_root.filePath(u"editing"_s);
        {
            Engine engine;
            engine.setKnowledgePath(storePath);
            int gates = 0;
            connect(&engine, &Engine::gateRequested, &engine,
                    [&engine, &gates](const GateRequest& r) {
                        const Candidate& c = r.candidates.first();
                        if (++gates == 1)
                            engine.submitCode(c.version, c.source + u"// unrolled by hand\n"_s);
                        else
                            engine.approve(c.version);
                    });
            engine.start(t, settings(2, true), dir);
            QString failure;
            runToEnd(engine, &failure);
            QVERIFY2(failure.isEmpty(), qPrintable(failure));
        }
        QString error;
        auto store = KnowledgeStore::open(storePath, &error);
        QVERIFY2(store, qPrintable(error));
        const auto records = store->records(&error);
        QCOMPARE(records.size(), 2);
        QCOMPARE(records.at(0).decision, u"edited"_s);
        QCOMPARE(records.at(1).decision, u"edited_approved"_s);
        QCOMPARE(records.at(1).origin, u"human_code"_s);
        QVERIFY2(records.at(1).editDiff.contains(u"+// unrolled by hand"_s),
                 qPrintable(records.at(1).editDiff));
        // A later session on the task is told about it.
        const KnowledgeHints hints = store->hints(TaskFeatures::of(t, DeviceInfo::h200()));
        bool quoted = false;
        for (const QString& line : hints.lines())
            quoted = quoted || (line.contains(u"edited and approved"_s) &&
                                line.contains(u"+// unrolled by hand"_s));
        QVERIFY2(quoted, qPrintable(hints.lines().join(u'\n')));
    }

    void anUnusableStoreLeavesTheSessionRunning() {
        const QString storePath = m_root.filePath(u"notadb.sqlite"_s);
        {
            QFile f(storePath);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("precious notes, not a database\n");
        }
        Engine engine;
        QSignalSpy progress(&engine, &Engine::progressAvailable);
        engine.setKnowledgePath(storePath);
        engine.start(task(u"gemm_fp16_fp32_4096"_s), settings(1), m_root.filePath(u"nodb"_s));
        QString failure;
        runToEnd(engine, &failure);
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
        QCOMPARE(session(m_root.filePath(u"nodb"_s)).steps().size(), 1);
        bool said = false;
        for (const auto& p : progress)
            said = said || (p.at(1).toString() == u"knowledge" &&
                            p.at(2).toString().contains(u"not an SQLite database"_s));
        QVERIFY(said);
        QFile f(storePath);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), QByteArray("precious notes, not a database\n"));
    }
};

QTEST_GUILESS_MAIN(TestKnowledge)
#include "tst_knowledge.moc"
