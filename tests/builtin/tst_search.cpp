// Issue 18, "never measure the same kernel twice": the source identity (layout normalised), the
// canonical plan key (defaults filled, knobs the family does not read dropped), the plan
// summaries that name every non-default knob, and a beam of built-in planners that spreads over
// the space across slots and iterations, resume included.
#include "builtintest.h"
#include "builtin/counterjumps.h"
#include "llm/promptbuilder.h"
#include "llm/promptlibrary.h"
#include "search/seenset.h"

#include <QSet>

#include <algorithm>

using namespace kev;
using namespace kevtest;

namespace {

IterationSummary step(int version, int iteration, int beam, const Strategy& plan, double speedup) {
    IterationSummary h;
    h.version = version;
    h.iteration = iteration;
    h.beamIndex = beam;
    h.family = plan.family;
    h.plan = plan.summary();
    h.status = u"ok"_s;
    h.speedup = speedup;
    return h;
}

// A planner's context after `history` (plans by version), the parent given.
AgentContext searchContext(const Task& t, const DeviceInfo& d,
                           const QVector<IterationSummary>& history,
                           const QHash<int, Strategy>& plans, const std::optional<Strategy>& parent,
                           int iteration) {
    AgentContext c;
    c.task = t;
    c.device = d;
    c.history = history;
    c.historyPlans = plans;
    c.parentStrategy = parent;
    c.iteration = iteration;
    return c;
}

} // namespace

class TestSearch : public QObject {
    Q_OBJECT
private slots:
    void sourceIdentityIgnoresLayoutOnly() {
        const QString a = u"__global__ void k(float* x) {\n    x[0] = 1.0f; // one\n}\n"_s;
        const QString b = u"__global__   void k(float* x)\r\n{\r\n\tx[0] = 1.0f;   //  one\r\n}"_s;
        QCOMPARE(sourceHash(a), sourceHash(b));
        // A changed token, comment text or string literal is another kernel.
        QVERIFY(sourceHash(a) != sourceHash(QString(a).replace(u"1.0f"_s, u"2.0f"_s)));
        QVERIFY(sourceHash(a) != sourceHash(QString(a).replace(u"one"_s, u"two"_s)));
        const QString s1 = u"printf(\"a  b\");"_s;
        const QString s2 = u"printf(\"a b\");"_s;
        QVERIFY(sourceHash(s1) != sourceHash(s2));
        // The end of a // comment stays a line end: code after it is not comment.
        QVERIFY(canonicalSource(u"a; // c\nb;"_s) != canonicalSource(u"a; // c b;"_s));
        // An escaped quote does not end the string; a comment marker inside it is text.
        QCOMPARE(canonicalSource(u"s = \"x\\\"  // y\";  z"_s), u"s = \"x\\\"  // y\"; z"_s);
        QCOMPARE(canonicalSource(u"  \n\t "_s), QString());
    }

    void canonicalPlanKeyFillsDefaultsAndDropsUnreadKnobs() {
        const Task t = task(u"softmax_f32_8192"_s);
        const DeviceInfo d = DeviceInfo::h200();
        const KernelFamily& rowwise = family(u"rowwise"_s);
        const Strategy def = rowwise.defaultStrategy(t, d);
        Strategy sparse = def;
        sparse.params = QJsonObject{}; // every knob left to the family default
        sparse.rationale = u"other words"_s;
        QCOMPARE(canonicalPlanKey(sparse, t, d), canonicalPlanKey(def, t, d));
        // A GEMM-only field the row-wise family never reads is not part of its identity.
        Strategy unread = def;
        unread.clusterM = 2;
        unread.raster = u"grouped"_s;
        QCOMPARE(canonicalPlanKey(unread, t, d), canonicalPlanKey(def, t, d));
        // A knob it reads is.
        const auto moves = rowwise.neighbours(def);
        QVERIFY(!moves.isEmpty());
        for (const Strategy& m : moves)
            QVERIFY2(canonicalPlanKey(m, t, d) != canonicalPlanKey(def, t, d),
                     qPrintable(m.rationale));
        // A family nobody knows: every field but the rationale.
        Strategy custom;
        custom.family = u"my_llm_family"_s;
        Strategy other = custom;
        other.rationale = u"why"_s;
        QCOMPARE(canonicalPlanKey(other, t, d), canonicalPlanKey(custom, t, d));
        other.blockM = 128;
        QVERIFY(canonicalPlanKey(other, t, d) != canonicalPlanKey(custom, t, d));
    }

    void seenSetRemembersFirstVersion() {
        const Task t = task(u"gemm_fp16_fp32_4096"_s);
        SeenSet seen(t, DeviceInfo::h200());
        const Strategy s = family(u"mma_sync"_s).defaultStrategy(t, DeviceInfo::h200());
        seen.add(s, u"kernel  A"_s, 3);
        seen.add(s, u"kernel A"_s, 7);
        QCOMPARE(seen.planSeen(s), std::optional<int>(3));
        QCOMPARE(seen.sourceSeen(u"kernel\tA\n"_s), std::optional<int>(3));
        QCOMPARE(seen.sourceSeen(u"kernel B"_s), std::nullopt);
        QCOMPARE(seen.sourceCount(), 1);
    }

    void summaryNamesEveryNonDefaultKnob() {
        Strategy a;
        a.family = u"wgmma_tma"_s;
        a.blockM = 128;
        a.blockN = 256;
        a.blockK = 64;
        a.warps = 12;
        a.stages = 4;
        Strategy b = a;
        b.clusterM = 2;
        Strategy c = a;
        c.raster = u"grouped"_s;
        c.groupSize = 8;
        Strategy e = a;
        e.params.insert(u"persistent"_s, 1);
        QSet<QString> texts{a.summary(), b.summary(), c.summary(), e.summary()};
        QCOMPARE(texts.size(), 4);
        QVERIFY(b.summary().contains(u"cluster=2x1"_s));
        QVERIFY(c.summary().contains(u"grouped/8"_s));
        QVERIFY(e.summary().contains(u"persistent=1"_s));
        QCOMPARE(a.summary(), u"wgmma_tma 128x256x64 w12 s4"_s);
    }

    // The layernorm of issue 18 climbed one block per SM per step with "occupancy 0.12: too few
    // bytes in flight". On the recorded H200 softmax report with its DRAM counter set to such a
    // session's figure (35% busy, 38.7% of the floor), the review computes the configuration with
    // enough bytes in flight and the planner goes there in one step, saying why.
    void countersJumpToTheConfigurationThatRemovesTheBottleneck() {
        QFile file(
            QStringLiteral(KEV_REPORTS "/h200_profiled_softmax_f16_8192__rowwise__default.json"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        QJsonObject json = QJsonDocument::fromJson(file.readAll()).object();
        QJsonObject metrics = json.value(u"metrics"_s).toObject();
        QJsonObject candidate = metrics.value(u"candidate"_s).toObject();
        candidate.insert(u"dram__throughput.avg.pct_of_peak_sustained_elapsed"_s, 35.0);
        metrics.insert(u"candidate"_s, candidate);
        json.insert(u"metrics"_s, metrics);
        QString error;
        auto report = EvaluationReport::fromJson(json, &error);
        QVERIFY2(report, qPrintable(error));
        report->percentOfFloor = 38.7;

        AgentContext c;
        c.device = DeviceInfo::h200();
        c.task = task(u"softmax_f16_8192"_s);
        const KernelFamily& rowwise = family(u"rowwise"_s);
        Strategy parent = rowwise.defaultStrategy(c.task, c.device);
        parent.params.insert(u"ctas_per_sm"_s, 1);
        parent.warps = 4; // small blocks: three of them fit on an SM
        parent.params.insert(u"vectors_per_thread"_s, 16);
        rowwise.normalize(parent);
        QVERIFY2(rowwise.constraints(parent, c.task, c.device).isEmpty(),
                 qPrintable(rowwise.constraints(parent, c.task, c.device).join(u"; "_s)));
        const ReviewFeedback fb =
            reviewReport(c, parent, rowwise.generate(parent, c.task), *report);
        QCOMPARE(fb.bottleneckId, u"few_bytes_in_flight"_s);
        const QJsonObject jump = fb.evidence.value(u"jump"_s).toObject();
        QVERIFY2(!jump.isEmpty(), qPrintable(fb.suggestions.join(u"\n"_s)));
        // 90 / 38.7 = 2.33x the bytes in flight: from 1 block per SM to the largest feasible
        // value at or below 3.
        QCOMPARE(jump.value(u"param"_s).toString(), u"ctas_per_sm"_s);
        QCOMPARE(jump.value(u"from"_s).toDouble(), 1.0);
        QCOMPARE(jump.value(u"target"_s).toDouble(), 3.0);
        QCOMPARE(jump.value(u"to"_s).toDouble(), 3.0);
        const QJsonObject first = fb.evidence.value(u"moves"_s).toArray().first().toObject();
        QCOMPARE(first.value(u"param"_s).toString(), u"ctas_per_sm"_s);
        QCOMPARE(first.value(u"step"_s).toInt(), 2);

        // The planner takes the jump from the parent in one step.
        PlannerSearch search;
        c.parentStrategy = parent;
        c.parentReport = *report;
        c.lastFeedback = fb;
        c.history << step(1, 1, 0, parent, 0.4);
        c.historyPlans.insert(1, parent);
        c.iteration = 2;
        const auto next = search.next(c, &error);
        QVERIFY2(next, qPrintable(error));
        QCOMPARE(next->params.value(u"ctas_per_sm"_s).toInt(), 3);
        QVERIFY2(next->rationale.contains(u"Little's law"_s), qPrintable(next->rationale));

        // A kernel near the floor gets no jump.
        QVERIFY(!bytesInFlightJump(rowwise, parent, c.task, c.device, 85.0));
    }

    // A GEMM judged by the DRAM floor whose tensor pipe is busy (M = 192, N = 6144: 192x96 in three
    // consumer warpgroups, split-K 2; H200, session 9: 47% of the floor, DRAM 58% busy, occupancy
    // 0.19, tensor pipe 57%) is not short of bytes in flight: the review names the tensor pipe
    // and does not prescribe more splits (split-K 3 measured 0.70x against 0.90x).
    void busyTensorPipeIsNotTooFewBytesInFlight() {
        QFile file(QStringLiteral(
            KEV_REPORTS "/h200_profiled_gemm_f16_m192_n6144_k4096__wgmma_tma__split2.json"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonObject json = QJsonDocument::fromJson(file.readAll()).object();
        QString error;
        auto report = EvaluationReport::fromJson(json, &error);
        QVERIFY2(report, qPrintable(error));
        AgentContext c;
        c.device = DeviceInfo::h200();
        c.task = task(QStringLiteral(KEV_REPORTS
                                     "/../../sweeps/nearby/tasks/gemm_f16_m192_n6144_k4096.json"));
        const KernelFamily& wgmma = family(u"wgmma_tma"_s);
        Strategy parent = wgmma.defaultStrategy(c.task, c.device);
        parent.blockM = 192;
        parent.blockN = 96;
        parent.consumerWarpgroups = 3;
        parent.splitK = 2;
        parent.clusterM = 1; // the default at M = 192 is a clustered pair of swapped tiles
        parent.stages = 5;
        parent.epilogue = u"direct"_s;
        parent.params.insert(u"swap_rows"_s, 0);
        wgmma.normalize(parent);
        QVERIFY2(wgmma.constraints(parent, c.task, c.device).isEmpty(),
                 qPrintable(wgmma.constraints(parent, c.task, c.device).join(u"; "_s)));
        const ReviewFeedback fb = reviewReport(c, parent, wgmma.generate(parent, c.task), *report);
        QCOMPARE(fb.bottleneckId, u"tensor_busy"_s);
        QVERIFY2(fb.bottleneckText.contains(u"tensor pipe 57% busy"_s),
                 qPrintable(fb.bottleneckText));
        QVERIFY(!fb.evidence.contains(u"jump"_s));
        for (const QJsonValue& move : fb.evidence.value(u"moves"_s).toArray()) {
            const QJsonObject m = move.toObject();
            QVERIFY2(m.value(u"param"_s).toString() != u"splitK"_s ||
                         m.value(u"step"_s).toInt() < 0,
                     "no move to more splits");
        }

        // The same report with an idle tensor pipe is short of bytes in flight, as before.
        QJsonObject idle = json;
        QJsonObject metrics = idle.value(u"metrics"_s).toObject();
        QJsonObject candidate = metrics.value(u"candidate"_s).toObject();
        candidate.insert(
            u"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"_s, 20.0);
        metrics.insert(u"candidate"_s, candidate);
        idle.insert(u"metrics"_s, metrics);
        auto idleReport = EvaluationReport::fromJson(idle, &error);
        QVERIFY2(idleReport, qPrintable(error));
        const ReviewFeedback memory =
            reviewReport(c, parent, wgmma.generate(parent, c.task), *idleReport);
        QCOMPARE(memory.bottleneckId, u"few_bytes_in_flight"_s);
    }

    // The DRAM bytes against the task's minimum: a softmax whose rows are not cached reads them
    // twice; the review computes the vectors per thread that cache the row and jumps there.
    void extraTrafficJumpsToTheCachedRow() {
        QFile file(
            QStringLiteral(KEV_REPORTS "/h200_profiled_softmax_f16_8192__rowwise__default.json"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        QJsonObject json = QJsonDocument::fromJson(file.readAll()).object();
        QJsonObject metrics = json.value(u"metrics"_s).toObject();
        QJsonObject candidate = metrics.value(u"candidate"_s).toObject();
        candidate.insert(u"dram__bytes_read.sum"_s, 2 * 134225152.0); // every row read twice
        candidate.insert(u"dram__throughput.avg.pct_of_peak_sustained_elapsed"_s, 80.0);
        candidate.insert(u"smsp__warp_issue_stalled_barrier_per_warp_active.pct"_s, 2.0);
        candidate.insert(u"smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct"_s, 1.0);
        metrics.insert(u"candidate"_s, candidate);
        json.insert(u"metrics"_s, metrics);
        QString error;
        auto report = EvaluationReport::fromJson(json, &error);
        QVERIFY2(report, qPrintable(error));
        report->percentOfFloor = 55.0;

        AgentContext c;
        c.device = DeviceInfo::h200();
        c.task = task(u"softmax_f16_8192"_s);
        const KernelFamily& rowwise = family(u"rowwise"_s);
        Strategy parent = rowwise.defaultStrategy(c.task, c.device);
        parent.params.insert(u"mapping"_s, u"block"_s);
        parent.params.insert(u"pipeline"_s, u"none"_s);
        parent.params.insert(u"stats"_s, u"two_pass"_s);
        parent.params.insert(u"ctas_per_sm"_s, 0);
        parent.params.insert(u"vectors_per_thread"_s, 1);
        parent.warps = 4;
        rowwise.normalize(parent);
        QVERIFY2(rowwise.constraints(parent, c.task, c.device).isEmpty(),
                 qPrintable(rowwise.constraints(parent, c.task, c.device).join(u"; "_s)));
        const ReviewFeedback fb =
            reviewReport(c, parent, rowwise.generate(parent, c.task), *report);
        QCOMPARE(fb.bottleneckId, u"extra_traffic"_s);
        const QJsonObject jump = fb.evidence.value(u"jump"_s).toObject();
        QVERIFY2(!jump.isEmpty(), qPrintable(fb.suggestions.join(u"\n"_s)));
        QCOMPARE(jump.value(u"param"_s).toString(), u"vectors_per_thread"_s);
        const int to = jump.value(u"to"_s).toInt();
        // The smallest listed value whose registers hold the row of 8192.
        QCOMPARE(qint64(128) * parent.vectorWidth * to >= 8192, true);
        QCOMPARE(qint64(128) * parent.vectorWidth * (to / 2) < 8192, true);
        const QJsonObject first = fb.evidence.value(u"moves"_s).toArray().first().toObject();
        QCOMPARE(first.value(u"param"_s).toString(), u"vectors_per_thread"_s);
        QVERIFY(first.value(u"step"_s).toInt() >= 2);
    }

    // The LLM planner hears why it is asked again and what the other slots hold.
    void llmPlannerPromptNamesRepeatAndOtherSlots() {
        AgentContext c;
        c.task = task(u"gemm_fp16_fp32_4096"_s);
        c.device = DeviceInfo::h200();
        Strategy other = family(u"mma_sync"_s).defaultStrategy(c.task, c.device);
        c.otherSlotPlans << other;
        c.duplicateNote = u"the kernel source is identical to v3"_s;
        const PromptBuilder builder(PromptLibrary(QStringList{}), 100'000);
        QString error;
        const auto prompt = builder.planner(c, &error);
        QVERIFY2(prompt, qPrintable(error));
        QString text;
        for (const ChatMessage& m : prompt->messages)
            text += m.content;
        QVERIFY(text.contains(u"not evaluated: the kernel source is identical to v3"_s));
        QVERIFY(text.contains(u"Other slots of this iteration already hold: "_s + other.summary()));
    }

    // Four slots, each its own planner as in the engine, planned one after another with the
    // plans of the earlier slots in the context: four distinct configurations per iteration and
    // none repeated in later iterations, including after a "resume" (fresh planners that only
    // see the session's steps and plans).
    void beamSlotsAreDistinctAcrossIterationsAndResume() {
        for (const QString& name : {u"gemm_fp16_fp32_4096"_s, u"softmax_f32_8192"_s}) {
            const Task t = task(name);
            const DeviceInfo d = DeviceInfo::h200();
            QSet<QString> keys;
            QVector<IterationSummary> history;
            QHash<int, Strategy> plans;
            int version = 0;
            QSet<QString> families;
            std::optional<Strategy> parent;
            double best = 0;
            for (int round = 0; round < 2; ++round) {
                std::vector<std::unique_ptr<PlannerSearch>> planners;
                for (int i = 0; i < 4; ++i)
                    planners.push_back(std::make_unique<PlannerSearch>());
                for (int iteration = 1 + 3 * round; iteration <= 3 + 3 * round; ++iteration) {
                    QVector<Strategy> taken;
                    for (int beam = 0; beam < 4; ++beam) {
                        AgentContext c = searchContext(t, d, history, plans, parent, iteration);
                        c.beamIndex = beam;
                        c.beamWidth = 4;
                        c.otherSlotPlans = taken;
                        QString error;
                        const auto s = planners[size_t(beam)]->next(c, &error);
                        QVERIFY2(s, qPrintable(error));
                        const QString key = canonicalPlanKey(*s, t, d);
                        QVERIFY2(!keys.contains(key), qPrintable(name + u": repeated "_s + key +
                                                                 u"\n"_s + s->rationale));
                        keys.insert(key);
                        taken << *s;
                        families.insert(s->family);
                    }
                    for (const Strategy& s : std::as_const(taken)) {
                        ++version;
                        // Scores rise with the version, so the parent moves each iteration.
                        const double speedup = 0.5 + 0.01 * version;
                        history << step(version, iteration, int(history.size()) % 4, s, speedup);
                        plans.insert(version, s);
                        if (speedup > best) {
                            best = speedup;
                            parent = s;
                        }
                    }
                }
            }
            QCOMPARE(keys.size(), 24);
            // The first iteration of a GEMM beam starts more than one family.
            if (t.isGemm())
                QVERIFY2(families.size() > 1,
                         qPrintable(QStringList(families.values()).join(u' ')));
        }
    }

    // A move that lost over a quarter from one point is not repeated from another: from a sibling
    // it comes only after every other move of that sibling (M = 96 measured a row split at 0.54x
    // from two parents in one session).
    void losingMoveIsNotRepeatedFromASibling() {
        const Task t = task(u"gemm_f16_m128_n12288_k4096"_s);
        const DeviceInfo d = DeviceInfo::h200();
        const KernelFamily* family = FamilyRegistry::instance().find(u"wgmma_tma"_s);
        QVERIFY(family);
        const Strategy start = family->defaultStrategy(t, d);
        const QVector<Strategy> around = family->neighbours(start);
        const auto usable = [&](const Strategy& s) {
            return family->constraints(s, t, d).isEmpty();
        };
        // The losing move, and a sibling (another knob's move) from which the same move exists.
        std::optional<Strategy> losing;
        std::optional<Strategy> sibling;
        for (const Strategy& a : around) {
            if (!usable(a))
                continue;
            const QString knob = a.rationale.section(u' ', 0, 0);
            for (const Strategy& b : around) {
                if (!usable(b) || b.rationale.section(u' ', 0, 0) == knob)
                    continue;
                for (const Strategy& c : family->neighbours(b)) {
                    if (c.rationale == a.rationale && usable(c) &&
                        canonicalPlanKey(c, t, d) != canonicalPlanKey(a, t, d)) {
                        losing = a;
                        sibling = b;
                    }
                }
            }
        }
        QVERIFY(losing && sibling);
        const QString move = losing->rationale;
        int siblingMoves = 0;
        for (const Strategy& c : family->neighbours(*sibling))
            siblingMoves += usable(c) && canonicalPlanKey(c, t, d) != canonicalPlanKey(start, t, d);

        PlannerSearch search;
        QVector<IterationSummary> history;
        QHash<int, Strategy> plans;
        const auto ask = [&](const Strategy& parent) {
            QString error;
            return search.next(searchContext(t, d, history, plans, parent, int(history.size()) + 1),
                               &error);
        };
        const auto measure = [&](const Strategy& s, double speedup) {
            const int v = int(history.size()) + 1;
            history << step(v, v, 0, s, speedup);
            plans.insert(v, s);
        };
        measure(start, 1.0);
        // The planner's own proposal from the start is remembered as a move; the test makes the
        // losing move that proposal by asking until it comes (the choice is random).
        bool proposed = false;
        for (int i = 0; i < 64 && !proposed; ++i) {
            const auto s = ask(start);
            QVERIFY(s);
            proposed = canonicalPlanKey(*s, t, d) == canonicalPlanKey(*losing, t, d);
            measure(*s, proposed ? 0.5 : 0.9);
        }
        QVERIFY2(proposed, qPrintable(move));
        if (canonicalPlanKey(*sibling, t, d) != canonicalPlanKey(start, t, d) &&
            !std::any_of(plans.cbegin(), plans.cend(), [&](const Strategy& p) {
                return canonicalPlanKey(p, t, d) == canonicalPlanKey(*sibling, t, d);
            }))
            measure(*sibling, 1.2);
        // From the sibling: every other move first.
        int before = 0;
        for (int i = 0; i < siblingMoves + 8; ++i) {
            const auto s = ask(*sibling);
            if (!s)
                break;
            if (s->rationale.contains(sibling->summary() + u": "_s + move)) {
                QVERIFY2(before >= siblingMoves - 1, qPrintable(s->rationale));
                break;
            }
            if (s->rationale.contains(u"Local search around "_s + sibling->summary()))
                ++before;
            measure(*s, 0.9);
        }
        QVERIFY(before > 0);
    }

    // The local search tries the knobs that moved the family's kernels most first: for wgmma_tma
    // the ring's depth, and the tile's rows and orientation (which lost 10-45% on the H200) only
    // when every other move around the point is measured.
    void localSearchTriesTheRingFirst() {
        const Task t = task(u"gemm_f16_m128_n12288_k4096"_s);
        const DeviceInfo d = DeviceInfo::h200();
        const KernelFamily* family = FamilyRegistry::instance().find(u"wgmma_tma"_s);
        QVERIFY(family);
        const Strategy start = family->defaultStrategy(t, d);
        PlannerSearch search;
        QVector<IterationSummary> history;
        QHash<int, Strategy> plans;
        const auto measure = [&](const Strategy& s, double speedup) {
            const int v = int(history.size()) + 1;
            history << step(v, v, 0, s, speedup);
            plans.insert(v, s);
        };
        measure(start, 1.0);
        QStringList moves; // the knob each local move around the start changed
        for (int i = 0; i < 48; ++i) {
            QString error;
            const auto s = search.next(
                searchContext(t, d, history, plans, start, int(history.size()) + 1), &error);
            if (!s)
                break;
            const QString around = u"Local search around "_s + start.summary() + u": "_s;
            const qsizetype at = s->rationale.indexOf(around);
            if (at >= 0)
                moves << s->rationale.mid(at + around.size()).section(u' ', 0, 0);
            measure(*s, 0.9);
        }
        QVERIFY2(moves.size() >= 6, qPrintable(moves.join(u", "_s)));
        QCOMPARE(moves.first(), u"stages"_s);
        const auto at = [&](const QString& knob) {
            const qsizetype i = moves.indexOf(knob);
            return i < 0 ? moves.size() : i;
        };
        const qsizetype firstRows = std::min(at(u"swap_rows"_s), at(u"block_m"_s));
        for (qsizetype i = firstRows; i < moves.size(); ++i)
            QVERIFY2(moves.at(i) == u"swap_rows"_s || moves.at(i) == u"block_m"_s ||
                         moves.at(i) == u"consumer_warpgroups"_s,
                     qPrintable(moves.join(u", "_s)));
        QVERIFY2(moves.indexOf(u"stages"_s, 1) < 0 ||
                     moves.indexOf(u"stages"_s, 1) < moves.indexOf(u"cluster_n"_s),
                 qPrintable(moves.join(u", "_s)));
    }
};

QTEST_GUILESS_MAIN(TestSearch)
#include "tst_search.moc"
