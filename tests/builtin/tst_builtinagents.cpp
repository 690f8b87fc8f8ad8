// The built-in planner (its search, first plans, review moves, no re-measurement) and reviewer
// (rules on reports in the harness format, recorded H200 counters).
#include "builtintest.h"

using namespace Qt::StringLiterals;
using namespace kevtest;

class TestBuiltinAgents : public QObject {
    Q_OBJECT

private slots:
    void reviewerIncorrectRevertsToParent() {
        const kev::DeviceInfo h200 = kev::DeviceInfo::h200();
        kev::AgentContext ctx;
        ctx.task = task(u"gemm_fp16_fp32_4096"_s);
        ctx.device = h200;
        const kev::KernelFamily& mma = family(u"mma_sync"_s);
        const kev::Strategy s = mma.defaultStrategy(ctx.task, h200);
        ctx.parentStrategy = s;
        const kev::ReviewFeedback generated =
            kev::reviewReport(ctx, s, mma.generate(s, ctx.task), report(u"incorrect"_s));
        QCOMPARE(generated.bottleneckId, u"incorrect"_s);
        QVERIFY(generated.evidence.value(u"revert_to_parent"_s).toBool());
        QVERIFY(generated.suggestions.join(u' ').contains(u"revert to the parent"_s));
        QCOMPARE(generated.blame, u"strategy"_s);
        QVERIFY(generated.validate().isEmpty());

        const kev::ReviewFeedback edited =
            kev::reviewReport(ctx, s, u"// a person's kernel"_s, report(u"incorrect"_s));
        QCOMPARE(edited.blame, u"implementation"_s);
    }

    void reviewerRules_data() {
        QTest::addColumn<QString>("status");
        QTest::addColumn<double>("speedup");
        QTest::addColumn<qint64>("spill");
        QTest::addColumn<QJsonObject>("profile");
        QTest::addColumn<QString>("bottleneck");
        QTest::addColumn<QString>("move");

        QTest::newRow("compile error") << u"compile_error"_s << 0.0 << qint64(0) << QJsonObject()
                                       << u"compile_error"_s << QString();
        QTest::newRow("spills") << u"ok"_s << 0.4 << qint64(96) << QJsonObject()
                                << u"register_spills"_s << u"warpN"_s;
        QTest::newRow("near floor")
            << u"ok"_s << 0.98 << qint64(0) << QJsonObject() << u"near_floor"_s << u"raster"_s;
        QTest::newRow("bank conflicts")
            << u"ok"_s << 0.4 << qint64(0)
            << QJsonObject{{u"metrics"_s, QJsonObject{{u"smem_wavefronts_per_request"_s, 4.0}}}}
            << u"smem_bank_conflicts"_s << u"smemLayout"_s;
        QTest::newRow("low occupancy")
            << u"ok"_s << 0.4 << qint64(0)
            << QJsonObject{{u"metrics"_s, QJsonObject{{u"achieved_occupancy"_s, 0.1}}}}
            << u"low_occupancy"_s << u"warpN"_s;
        QTest::newRow("memory bound")
            << u"ok"_s << 0.4 << qint64(0)
            << QJsonObject{{u"metrics"_s, QJsonObject{{u"dram_throughput_pct"_s, 85.0},
                                                      {u"tensor_pipe_pct"_s, 20.0}}}}
            << u"memory_bound"_s << u"blockN"_s;
        QTest::newRow("long scoreboard stall")
            << u"ok"_s << 0.4 << qint64(0)
            << QJsonObject{{u"warp_stalls"_s,
                            QJsonObject{{u"long_scoreboard"_s, 0.5}, {u"barrier"_s, 0.1}}}}
            << u"stall_long_scoreboard"_s << u"stages"_s;
        QTest::newRow("timing only")
            << u"ok"_s << 0.4 << qint64(0) << QJsonObject() << u"timing_only"_s << QString();
    }

    void reviewerRules() {
        QFETCH(QString, status);
        QFETCH(double, speedup);
        QFETCH(qint64, spill);
        QFETCH(QJsonObject, profile);
        QFETCH(QString, bottleneck);
        QFETCH(QString, move);
        kev::AgentContext ctx;
        ctx.task = task(u"gemm_fp16_fp32_4096"_s);
        ctx.device = kev::DeviceInfo::h200();
        const kev::KernelFamily& mma = family(u"mma_sync"_s);
        const kev::Strategy s = mma.defaultStrategy(ctx.task, ctx.device);
        const kev::ReviewFeedback fb = kev::reviewReport(ctx, s, mma.generate(s, ctx.task),
                                                         report(status, speedup, spill, profile));
        QCOMPARE(fb.bottleneckId, bottleneck);
        QVERIFY(fb.validate().isEmpty());
        if (!move.isEmpty())
            QVERIFY2(moveParams(fb).contains(move), qPrintable(moveParams(fb).join(u","_s)));
    }

    void plannerStartsFromTheRooflineFamily() {
        kev::AgentContext ctx;
        ctx.device = kev::DeviceInfo::h200();
        ctx.task = task(u"gemm_fp16_fp32_4096"_s);
        QString error;
        kev::PlannerSearch fp16;
        const auto first = fp16.next(ctx, &error);
        QVERIFY2(first, qPrintable(error));
        QCOMPARE(first->family, u"mma_sync"_s);
        QVERIFY(first->rationale.contains(u"compute-bound"_s));

        ctx.task = task(u"gemm_fp32_fp32_4096"_s);
        kev::PlannerSearch fp32;
        const auto sgemm = fp32.next(ctx, &error);
        QVERIFY2(sgemm, qPrintable(error));
        // The warp-tiled SGEMM measured above fma_regblock on the H200 (0.894x against 0.794x).
        QCOMPARE(sgemm->family, u"fma_warptile"_s);
    }

    void plannerPicksMemoryFamilies() {
        for (const QString& name : kMemoryTasks) {
            kev::AgentContext ctx;
            ctx.device = kev::DeviceInfo::h200();
            ctx.task = memoryTask(name);
            QVERIFY(!kev::knowledge::roofline(ctx.task, ctx.device).computeBound);
            kev::PlannerSearch search;
            QString error;
            const auto first = search.next(ctx, &error);
            QVERIFY2(first, qPrintable(error));
            QVERIFY(kev::knowledge::isMemoryBoundFamily(first->family));
            QVERIFY2(first->rationale.contains(u"memory-bound"_s), qPrintable(first->rationale));
            // The search moves the family's knobs like GEMM's: new, feasible points.
            kev::IterationSummary h;
            h.iteration = 1;
            h.family = first->family;
            h.status = u"ok"_s;
            h.speedup = 0.8;
            ctx.history.append(h);
            ctx.parentStrategy = *first;
            ctx.iteration = 2;
            const auto second = search.next(ctx, &error);
            QVERIFY2(second, qPrintable(error));
            const kev::KernelFamily& f = family(second->family);
            QVERIFY(kev::configurationKey(f, *second) != kev::configurationKey(f, *first));
            QVERIFY(f.constraints(*second, ctx.task, ctx.device).isEmpty());
        }
    }

    void reviewerMemoryRules_data() {
        QTest::addColumn<double>("percentOfFloor");
        QTest::addColumn<qint64>("spill");
        QTest::addColumn<QJsonObject>("profile");
        QTest::addColumn<QString>("bottleneck");
        QTest::addColumn<QString>("move");
        const auto metrics = [](double dram, double occupancy, double longScoreboard) {
            return QJsonObject{
                {u"metrics"_s, QJsonObject{{u"dram_throughput_pct"_s, dram},
                                           {u"achieved_occupancy"_s, occupancy}}},
                {u"warp_stalls"_s,
                 QJsonObject{{u"long_scoreboard"_s, longScoreboard}, {u"barrier"_s, 0.1}}}};
        };
        QTest::newRow("near floor")
            << 91.0 << qint64(0) << QJsonObject() << u"near_floor"_s << u"ctas_per_sm"_s;
        // 86% would be near the floor for GEMM; a memory-bound kernel is pushed on to 90%.
        QTest::newRow("86% is not done")
            << 86.0 << qint64(0) << QJsonObject() << u"timing_only"_s << u"vectors_per_thread"_s;
        QTest::newRow("spills") << 60.0 << qint64(64) << QJsonObject() << u"register_spills"_s
                                << u"vectors_per_thread"_s;
        QTest::newRow("low occupancy")
            << 50.0 << qint64(0) << metrics(45, 0.3, 0.2) << u"few_bytes_in_flight"_s << u"warps"_s;
        QTest::newRow("long scoreboard") << 70.0 << qint64(0) << metrics(60, 0.8, 0.6)
                                         << u"stall_long_scoreboard"_s << u"vectorWidth"_s;
        QTest::newRow("extra traffic")
            << 60.0 << qint64(0) << metrics(85, 0.8, 0.1) << u"extra_traffic"_s << u"stats"_s;
    }

    void reviewerMemoryRules() {
        QFETCH(double, percentOfFloor);
        QFETCH(qint64, spill);
        QFETCH(QJsonObject, profile);
        QFETCH(QString, bottleneck);
        QFETCH(QString, move);
        // The rules are the family's, the same for each of its ops (rmsnorm, the op added last,
        // included).
        for (const QString& taskName : {u"softmax_f16_test"_s, u"rmsnorm_bf16_test"_s}) {
            kev::AgentContext ctx;
            ctx.task = memoryTask(taskName);
            ctx.device = kev::DeviceInfo::h200();
            const kev::KernelFamily& rowwise = family(u"rowwise"_s);
            const kev::Strategy s = rowwise.defaultStrategy(ctx.task, ctx.device);
            kev::EvaluationReport r = report(u"ok"_s, 1.05, spill, profile);
            r.percentOfFloor = percentOfFloor;
            const kev::ReviewFeedback fb =
                kev::reviewReport(ctx, s, rowwise.generate(s, ctx.task), r);
            QCOMPARE(fb.bottleneckId, bottleneck);
            QVERIFY(fb.bottleneckText.contains(u"DRAM floor"_s));
            QVERIFY(fb.validate().isEmpty());
            QVERIFY2(moveParams(fb).contains(move), qPrintable(moveParams(fb).join(u","_s)));
            // Every suggested move names a knob of the family, so the planner can apply it.
            QStringList knobs;
            const auto specs = rowwise.parameters();
            for (const kev::ParameterSpec& spec : specs)
                knobs << spec.name;
            for (const QString& p : moveParams(fb))
                QVERIFY2(knobs.contains(p), qPrintable(p));
        }
    }

    // Reports recorded on the H200 carry the harness's counters under their Nsight Compute names
    // (metrics.candidate, harness/PROTOCOL.md): the reviewer reads them under Kevolve's names.
    void reviewerReadsTheCountersOfRecordedH200Reports() {
        const auto load = [](const QString& name) {
            QFile file(QStringLiteral(KEV_REPORTS "/") + name);
            if (!file.open(QIODevice::ReadOnly))
                qFatal("cannot read %s", qPrintable(file.fileName()));
            QString error;
            const auto report = kev::EvaluationReport::fromJson(
                QJsonDocument::fromJson(file.readAll()).object(), &error);
            if (!report)
                qFatal("%s: %s", qPrintable(name), qPrintable(error));
            return *report;
        };
        const kev::DeviceInfo h200 = kev::DeviceInfo::h200();

        // The prefetching softmax kernel: warps at barriers in 33% of their active cycles.
        const kev::EvaluationReport softmax =
            load(u"h200_profiled_softmax_f16_8192__rowwise__prefetch.json"_s);
        const kev::DerivedMetrics m = kev::DerivedMetrics::fromReport(softmax);
        QVERIFY(qAbs(m.candidateStalls.value(u"barrier"_s).toDouble() - 0.326) < 0.001);
        QVERIFY(qAbs(m.candidate.value(u"dram_throughput_pct"_s).toDouble() - 80.43) < 0.01);
        QCOMPARE(m.candidate.value(u"dram_bytes"_s).toDouble(), 134225664.0 + 133578368.0);
        const double occupancy = m.candidate.value(u"achieved_occupancy"_s).toDouble(-1);
        QVERIFY2(occupancy > 0 && occupancy <= 1, qPrintable(QString::number(occupancy)));
        QVERIFY(m.reference.contains(u"dram_throughput_pct"_s));
        QVERIFY(m.candidateCounters.contains(u"gpu__time_duration.sum"_s));
        kev::AgentContext ctx;
        ctx.device = h200;
        ctx.task = task(u"softmax_f16_8192"_s);
        const kev::KernelFamily& rowwise = family(u"rowwise"_s);
        kev::Strategy s = rowwise.defaultStrategy(ctx.task, h200);
        s.vectorWidth = 8; // the strategy of the recorded step
        s.params.insert(u"vectors_per_thread"_s, 4);
        const kev::ReviewFeedback fb =
            kev::reviewReport(ctx, s, rowwise.generate(s, ctx.task), softmax);
        QCOMPARE(fb.bottleneckId, u"stall_barrier"_s);
        QVERIFY(fb.bottleneckText.contains(u"84.2% of the DRAM floor"_s));
        QVERIFY2(moveParams(fb).contains(u"stats"_s), qPrintable(moveParams(fb).join(u","_s)));

        // A GEMM with 4-way shared-memory bank conflicts: 2.27 wavefronts per instruction.
        const kev::EvaluationReport conflicts =
            load(u"h200_profiled_metrics_smem_conflict4.json"_s);
        const kev::DerivedMetrics c = kev::DerivedMetrics::fromReport(conflicts);
        QVERIFY(qAbs(c.candidate.value(u"smem_wavefronts_per_request"_s).toDouble() - 2.268) <
                0.01);
        QVERIFY(qAbs(c.candidate.value(u"achieved_occupancy"_s).toDouble() - 0.746) < 0.001);
        ctx.task = task(u"gemm_fp16_fp32_nonsquare"_s);
        const kev::KernelFamily& tiled = family(u"fma_tiled"_s);
        const kev::Strategy g = tiled.defaultStrategy(ctx.task, h200);
        const kev::ReviewFeedback gemm =
            kev::reviewReport(ctx, g, tiled.generate(g, ctx.task), conflicts);
        QCOMPARE(gemm.bottleneckId, u"smem_bank_conflicts"_s);
        QVERIFY2(gemm.bottleneckText.contains(u"75% of the shared-memory wavefronts"_s),
                 qPrintable(gemm.bottleneckText));

        // ldmatrix and cp.async: 21 wavefronts per shared ld instruction, yet no conflicts.
        const kev::EvaluationReport mma =
            load(u"h200_profiled_gemm_fp16_fp32_4096__mma_sync.json"_s);
        const kev::DerivedMetrics mm = kev::DerivedMetrics::fromReport(mma);
        QVERIFY(mm.candidate.value(u"smem_wavefronts_per_request"_s).toDouble() > 20);
        QCOMPARE(mm.candidate.value(u"smem_conflict_share"_s).toDouble(-1), 0.0);
        ctx.task = task(u"gemm_fp16_fp32_4096"_s);
        const kev::KernelFamily& mmaSync = family(u"mma_sync"_s);
        const kev::Strategy ms = mmaSync.defaultStrategy(ctx.task, h200);
        const kev::ReviewFeedback mmaReview =
            kev::reviewReport(ctx, ms, mmaSync.generate(ms, ctx.task), mma);
        QVERIFY2(mmaReview.bottleneckId != u"smem_bank_conflicts"_s,
                 qPrintable(mmaReview.bottleneckText));

        // The 16-bit softmax default moves the minimum bytes while DRAM is 78% busy: not extra
        // traffic; its warps wait at barriers most.
        const kev::EvaluationReport atFloor =
            load(u"h200_profiled_softmax_f16_8192__rowwise__default.json"_s);
        ctx.task = task(u"softmax_f16_8192"_s);
        const kev::Strategy d = rowwise.defaultStrategy(ctx.task, h200);
        const kev::ReviewFeedback floorReview =
            kev::reviewReport(ctx, d, rowwise.generate(d, ctx.task), atFloor);
        QCOMPARE(floorReview.bottleneckId, u"stall_barrier"_s);
    }

    // A memory-bound wgmma plan whose two splits a second kernel sums: the review's first move
    // sums them in 2-CTA clusters instead (where every cluster fits in one round), a move the
    // family can apply; not offered once they are summed there, nor where the clusters do not fit.
    void reviewerOffersTheClusterSum() {
        kev::AgentContext ctx;
        ctx.device = kev::DeviceInfo::h200();
        ctx.task = task(u"gemm_bf16_m64_n4096_k4096"_s);
        const kev::KernelFamily& f = family(u"wgmma_tma"_s);
        kev::Strategy s = f.defaultStrategy(ctx.task, ctx.device);
        QCOMPARE(s.splitK, 2);
        s.params.insert(u"split_reduce"_s, u"kernel"_s);
        kev::EvaluationReport r = report(u"ok"_s, 0.91);
        r.percentOfFloor = 48.0;
        kev::ReviewFeedback fb = kev::reviewReport(ctx, s, f.generate(s, ctx.task), r);
        QVERIFY(fb.validate().isEmpty());
        QCOMPARE(moveParams(fb).value(0), u"split_reduce"_s);
        QVERIFY2(fb.suggestions.value(0).startsWith(u"Sum the two splits"_s),
                 qPrintable(fb.suggestions.value(0)));
        bool applied = false;
        for (const kev::Strategy& n : f.neighbours(s))
            applied |= n.params.value(u"split_reduce"_s).toString() == u"cluster"_s &&
                       f.constraints(n, ctx.task, ctx.device).isEmpty();
        QVERIFY(applied);

        s.params.insert(u"split_reduce"_s, u"cluster"_s);
        fb = kev::reviewReport(ctx, s, f.generate(s, ctx.task), r);
        QVERIFY(!moveParams(fb).contains(u"split_reduce"_s));
        // N = 16384 in 64-wide tiles, two splits each: 512 CTAs, not one round of clusters.
        s.params.insert(u"split_reduce"_s, u"kernel"_s);
        ctx.task.n = 16384;
        fb = kev::reviewReport(ctx, s, f.generate(s, ctx.task), r);
        QVERIFY(!moveParams(fb).contains(u"split_reduce"_s));
    }

    void plannerFollowsReviewMovesAndNeverRepeats() {
        kev::AgentContext ctx;
        ctx.device = kev::DeviceInfo::h200();
        ctx.task = task(u"gemm_fp16_fp32_4096"_s);
        kev::PlannerSearch search;
        QString error;
        auto current = search.next(ctx, &error);
        QVERIFY(current);
        QSet<QString> seen;
        double best = 0;
        for (int iteration = 1; iteration <= 25; ++iteration) {
            const kev::KernelFamily& f = family(current->family);
            const QString key = kev::configurationKey(f, *current);
            QVERIFY2(!seen.contains(key), qPrintable(u"re-proposed "_s + key));
            seen.insert(key);
            QVERIFY(!current->rationale.isEmpty());
            QVERIFY(f.constraints(*current, ctx.task, ctx.device).isEmpty());
            // A fake GPU: deeper pipelines are faster, everything else is neutral.
            const double speedup = 0.3 + 0.05 * current->stages;
            kev::IterationSummary h;
            h.iteration = iteration;
            h.family = current->family;
            h.status = u"ok"_s;
            h.speedup = speedup;
            ctx.history.append(h);
            ctx.iteration = iteration + 1;
            if (speedup > best) {
                best = speedup;
                ctx.parentStrategy = *current;
            }
            ctx.lastFeedback.reset();
            if (iteration == 1) {
                kev::ReviewFeedback fb;
                fb.bottleneckId = u"stall_long_scoreboard"_s;
                fb.evidence.insert(u"moves"_s, QJsonArray{QJsonObject{{u"param"_s, u"stages"_s},
                                                                      {u"step"_s, 1},
                                                                      {u"why"_s, u"deeper"_s}}});
                ctx.lastFeedback = fb;
            }
            current = search.next(ctx, &error);
            if (!current)
                break;
            if (iteration == 1) {
                QCOMPARE(current->stages, ctx.parentStrategy->stages + 1);
                QVERIFY(current->rationale.contains(u"stall_long_scoreboard"_s));
            }
        }
        QVERIFY(seen.size() >= 10);
    }
};

QTEST_GUILESS_MAIN(TestBuiltinAgents)
#include "tst_builtinagents.moc"
