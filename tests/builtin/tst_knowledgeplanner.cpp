// Issue 18, memory across tasks and human decisions, at the built-in planner and the LLM prompt:
// the first plan starts from the nearest solved task's best configuration (re-fitted when it does
// not fit this task) and cites it; a rejected region is never proposed again, over a whole
// search; the LLM planner's prompt quotes the same knowledge.
#include "builtintest.h"
#include "llm/promptbuilder.h"
#include "search/seenset.h"

#include <QSet>

using namespace kev;
using namespace kevtest;

namespace {

KnowledgePrior prior(const Strategy& plan, double speedup, const QString& taskName) {
    KnowledgePrior p;
    p.task.taskName = taskName;
    p.task.op = u"gemm"_s;
    p.task.deviceName = u"NVIDIA H200"_s;
    p.task.smCount = 132;
    p.distance = 0.58;
    p.plan = plan;
    p.plan.rationale.clear();
    p.speedup = speedup;
    p.recordedAt = QDateTime(QDate(2026, 12, 1), QTime(9, 30), Qt::UTC);
    p.sessionId = u"first-session"_s;
    p.version = 4;
    return p;
}

KnowledgeDecision rejection(const Strategy& plan, const QString& reason) {
    KnowledgeDecision d;
    d.kind = KnowledgeDecision::Kind::Rejected;
    d.task.taskName = u"gemm_f16_m64_n4096_k11008"_s;
    d.task.deviceName = u"NVIDIA H200"_s;
    d.plan = plan;
    d.reason = reason;
    d.recordedAt = QDateTime(QDate(2026, 11, 30), QTime(18, 0), Qt::UTC);
    return d;
}

QString keyOf(const Strategy& s, const AgentContext& c) {
    return canonicalPlanKey(s, c.task, c.device);
}

// The rejected point and its single steps along ordered knobs of four or more values: all of it
// lies within the planner's rejected radius.
QSet<QString> regionAround(const Strategy& rejected, const AgentContext& c) {
    const KernelFamily& f = family(rejected.family);
    QSet<QString> region{keyOf(rejected, c)};
    for (const ParameterSpec& spec : f.parameters()) {
        if (spec.values.size() < 4 || !spec.values.first().isDouble())
            continue;
        for (int step : {-1, 1}) {
            if (auto moved = stepParameter(spec, rejected, step)) {
                f.normalize(*moved);
                region.insert(keyOf(*moved, c));
            }
        }
    }
    return region;
}

// Runs the search for `steps` iterations as the engine would (each plan measured, the best one
// the parent), returning every plan proposed.
QVector<Strategy> search(AgentContext c, int steps) {
    PlannerSearch planner;
    QVector<Strategy> plans;
    double best = -1;
    for (int i = 1; i <= steps; ++i) {
        c.iteration = i;
        QString error;
        const auto plan = planner.next(c, &error);
        if (!plan)
            break;
        plans << *plan;
        // A deterministic score that differs between points, so the parent moves.
        const double score = 0.5 + double(qHash(keyOf(*plan, c)) % 1000) / 2000.0;
        planner.record(*plan, score);
        if (score > best) {
            best = score;
            c.parentStrategy = *plan;
            c.parentReport.reset();
        }
    }
    return plans;
}

} // namespace

class TestKnowledgePlanner : public QObject {
    Q_OBJECT
private slots:
    void firstPlanStartsFromTheNearestSolvedTask() {
        AgentContext c;
        c.task = task(u"gemm_f16_m128_n12288_k4096"_s);
        c.device = DeviceInfo::h200();
        QString error;
        PlannerSearch fresh;
        const auto without = fresh.next(c, &error);
        QVERIFY2(without, qPrintable(error));

        // The store's best point differs from where the planner starts on its own.
        Strategy best;
        for (const KernelFamily* f : FamilyRegistry::instance().supporting(c.task, c.device)) {
            const Strategy s = f->defaultStrategy(c.task, c.device);
            if (f->constraints(s, c.task, c.device).isEmpty() &&
                keyOf(s, c) != keyOf(*without, c)) {
                best = s;
                break;
            }
        }
        QVERIFY(!best.family.isEmpty());
        c.knowledge.priors << prior(best, 1.12, u"gemm_f16_m64_n4096_k11008"_s);
        PlannerSearch planner;
        const auto plan = planner.next(c, &error);
        QVERIFY2(plan, qPrintable(error));
        QCOMPARE(keyOf(*plan, c), keyOf(best, c));
        QVERIFY2(plan->rationale.contains(
                     u"from gemm_f16_m64_n4096_k11008 on NVIDIA H200: 1.12x, 2026-12-01"_s),
                 qPrintable(plan->rationale));
        QVERIFY2(plan->rationale.contains(u"it fits this task as it is"_s),
                 qPrintable(plan->rationale));
        // The bandit believes the family at what the nearby task measured.
        planner.record(*plan, 0.0);
    }

    void secondStepMeasuresTheTasksOwnStart() {
        // The nearest task can sit in another regime (M = 128's best tile ran at 0.65x cuBLAS at
        // M = 256 on the H200): after the store's point, the task's own first plan is measured.
        AgentContext c;
        c.task = task(u"gemm_f16_m128_n12288_k4096"_s);
        c.device = DeviceInfo::h200();
        QString error;
        PlannerSearch fresh;
        const auto own = fresh.next(c, &error);
        QVERIFY2(own, qPrintable(error));
        Strategy stored;
        for (const KernelFamily* f : FamilyRegistry::instance().supporting(c.task, c.device)) {
            const Strategy s = f->defaultStrategy(c.task, c.device);
            if (f->constraints(s, c.task, c.device).isEmpty() && keyOf(s, c) != keyOf(*own, c)) {
                stored = s;
                break;
            }
        }
        QVERIFY(!stored.family.isEmpty());
        c.knowledge.priors << prior(stored, 1.12, u"gemm_f16_m64_n4096_k11008"_s);
        PlannerSearch planner;
        c.iteration = 1;
        const auto first = planner.next(c, &error);
        QVERIFY2(first, qPrintable(error));
        QCOMPARE(keyOf(*first, c), keyOf(stored, c));
        planner.record(*first, 0.6);
        c.parentStrategy = *first;
        c.iteration = 2;
        const auto second = planner.next(c, &error);
        QVERIFY2(second, qPrintable(error));
        QCOMPARE(keyOf(*second, c), keyOf(*own, c));
        QVERIFY2(second->rationale.contains(u"measures the task's own starting point"_s),
                 qPrintable(second->rationale));
        // Only once: the third step is the ordinary search, never the first two points again.
        planner.record(*second, 0.7);
        c.parentStrategy = *second;
        c.iteration = 3;
        const auto third = planner.next(c, &error);
        QVERIFY2(third, qPrintable(error));
        QVERIFY(keyOf(*third, c) != keyOf(*own, c) && keyOf(*third, c) != keyOf(stored, c));
    }

    void beamSlotsTakeTheNextPriors() {
        AgentContext c;
        c.task = task(u"gemm_f16_m128_n12288_k4096"_s);
        c.device = DeviceInfo::h200();
        c.beamWidth = 2;
        const Strategy first = family(u"wgmma_tma"_s).defaultStrategy(c.task, c.device);
        const Strategy second = family(u"mma_sync"_s).defaultStrategy(c.task, c.device);
        c.knowledge.priors << prior(first, 1.12, u"gemm_f16_m64_n12288_k4096"_s)
                           << prior(second, 1.01, u"gemm_f16_m64_n12288_k4096"_s);
        PlannerSearch slot0;
        PlannerSearch slot1;
        QString error;
        const auto a = slot0.next(c, &error);
        QVERIFY2(a, qPrintable(error));
        c.beamIndex = 1;
        c.otherSlotPlans << *a;
        const auto b = slot1.next(c, &error);
        QVERIFY2(b, qPrintable(error));
        QCOMPARE(keyOf(*a, c), keyOf(first, c));
        QCOMPARE(keyOf(*b, c), keyOf(second, c));
        QVERIFY2(b->rationale.startsWith(u"Beam slot 2: Start from the knowledge store"_s),
                 qPrintable(b->rationale));
        // A third slot finds both taken: the nearest free neighbour of the best one.
        c.beamIndex = 2;
        c.otherSlotPlans << *b;
        PlannerSearch slot2;
        const auto third = slot2.next(c, &error);
        QVERIFY2(third, qPrintable(error));
        QVERIFY(keyOf(*third, c) != keyOf(first, c) && keyOf(*third, c) != keyOf(second, c));
        QVERIFY2(third->rationale.contains(u"its nearest free neighbour, 1 move(s) away"_s),
                 qPrintable(third->rationale));
    }

    void aPriorThatDoesNotFitIsRefitted() {
        AgentContext c;
        c.task = task(u"gemm_f16_m128_n12288_k4096"_s);
        c.device = DeviceInfo::h200();
        const KernelFamily& mma = family(u"mma_sync"_s);
        Strategy big = mma.defaultStrategy(c.task, c.device);
        // More pipeline stages than shared memory holds on this device.
        big.blockM = 256;
        big.blockN = 256;
        big.blockK = 64;
        big.stages = 6;
        mma.normalize(big);
        QVERIFY(!mma.constraints(big, c.task, c.device).isEmpty());
        c.knowledge.priors << prior(big, 1.05, u"gemm_f16_m256_n14336_k4096"_s);
        PlannerSearch planner;
        QString error;
        const auto plan = planner.next(c, &error);
        QVERIFY2(plan, qPrintable(error));
        QCOMPARE(plan->family, u"mma_sync"_s);
        QVERIFY2(mma.constraints(*plan, c.task, c.device).isEmpty(),
                 qPrintable(mma.constraints(*plan, c.task, c.device).join(u"; "_s)));
        QVERIFY2(plan->rationale.contains(u"re-fitted to this task's shape"_s),
                 qPrintable(plan->rationale));
    }

    void aPriorOfAnotherFamilyTheTaskCannotUseIsSkipped() {
        AgentContext c;
        c.task = task(u"gemm_fp16_fp32_4096"_s);
        c.device = DeviceInfo::h200();
        Strategy unknown = family(u"mma_sync"_s).defaultStrategy(c.task, c.device);
        unknown.family = u"no_such_family"_s;
        c.knowledge.priors << prior(unknown, 2.0, u"elsewhere"_s);
        PlannerSearch planner;
        PlannerSearch fresh;
        QString error;
        const auto plan = planner.next(c, &error);
        AgentContext plain = c;
        plain.knowledge = KnowledgeHints();
        const auto expected = fresh.next(plain, &error);
        QVERIFY(plan && expected);
        QCOMPARE(keyOf(*plan, c), keyOf(*expected, c));
    }

    void aRejectedRegionIsNotProposedAgain_data() {
        QTest::addColumn<QString>("taskName");
        QTest::newRow("gemm f16") << u"gemm_f16_m128_n12288_k4096"_s;
        QTest::newRow("layernorm") << u"layernorm_bf16_16384x4096"_s;
        QTest::newRow("softmax") << u"softmax_f16_8192"_s;
    }

    void aRejectedRegionIsNotProposedAgain() {
        QFETCH(QString, taskName);
        AgentContext c;
        c.task = task(taskName);
        c.device = DeviceInfo::h200();
        // Without the decision, the search starts at this point and comes back near it.
        const QVector<Strategy> free = search(c, 12);
        QVERIFY(!free.isEmpty());
        const Strategy rejected = free.first();
        const QSet<QString> region = regionAround(rejected, c);

        c.knowledge.decisions << rejection(rejected, u"bank conflicts in the epilogue"_s);
        const QVector<Strategy> plans = search(c, 12);
        QVERIFY(plans.size() >= 3);
        for (const Strategy& s : plans)
            QVERIFY2(!region.contains(keyOf(s, c)), qPrintable(s.summary()));
        QVERIFY2(plans.first().rationale.contains(u"a person rejected "_s + rejected.summary()),
                 qPrintable(plans.first().rationale));
        QVERIFY2(plans.first().rationale.contains(u"bank conflicts in the epilogue"_s),
                 qPrintable(plans.first().rationale));
    }

    void llmPlannerPromptQuotesTheStore() {
        AgentContext c;
        c.task = task(u"gemm_f16_m128_n12288_k4096"_s);
        c.device = DeviceInfo::h200();
        const Strategy best = family(u"wgmma_tma"_s).defaultStrategy(c.task, c.device);
        c.knowledge.priors << prior(best, 1.12, u"gemm_f16_m64_n4096_k11008"_s);
        c.knowledge.decisions << rejection(family(u"mma_sync"_s).defaultStrategy(c.task, c.device),
                                           u"spills at 255 registers"_s);
        KnowledgeDecision edit;
        edit.kind = KnowledgeDecision::Kind::EditedApproved;
        edit.task.taskName = u"gemm_f16_m64_n4096_k11008"_s;
        edit.plan = best;
        edit.editDiff =
            u"@@ -10,1 +10,1 @@\n-constexpr int kStages = 4;\n+constexpr int kStages = 5;"_s;
        edit.speedup = 1.15;
        c.knowledge.decisions << edit;
        const PromptBuilder builder(PromptLibrary(QStringList{}), 100'000);
        QString error;
        const auto prompt = builder.planner(c, &error);
        QVERIFY2(prompt, qPrintable(error));
        QString text;
        for (const ChatMessage& m : prompt->messages)
            text += m.content;
        QVERIFY(
            text.contains(u"from gemm_f16_m64_n4096_k11008 on NVIDIA H200: 1.12x, 2026-12-01"_s));
        QVERIFY(text.contains(u"spills at 255 registers"_s));
        QVERIFY(text.contains(u"+constexpr int kStages = 5;"_s));
        // Without a store the section says so instead of staying empty.
        c.knowledge = KnowledgeHints();
        const auto bare = builder.planner(c, &error);
        QVERIFY2(bare, qPrintable(error));
        QVERIFY(bare->messages.last().content.contains(u"no earlier session"_s));
    }
};

QTEST_GUILESS_MAIN(TestKnowledgePlanner)
#include "tst_knowledgeplanner.moc"
