// Value types: the harness report parser against a protocol-shaped fixture, round trips of the
// persisted types, the key store, and the agent registry's errors.
#include "agents.h"
#include "candidate.h"
#include "deviceinfo.h"
#include "enginesettings.h"
#include "evaluationreport.h"
#include "iterationsummary.h"
#include "jsonschema.h"
#include "keystore.h"

#include <QJsonArray>
#include <QTest>

using namespace kev;

namespace {

QJsonObject fixture(const char* name) {
    QString error;
    auto json =
        readJsonObjectFile(QStringLiteral(KEV_REPORT_FIXTURES "/") + QLatin1String(name), &error);
    if (!json)
        qFatal("%s", qPrintable(error));
    return *json;
}

} // namespace

class TestValueTypes : public QObject {
    Q_OBJECT
private slots:
    void parsesReport() {
        QString error;
        const auto r = EvaluationReport::fromJson(fixture("report_ok_gemm_typed.json"), &error);
        QVERIFY2(r, qPrintable(error));
        QCOMPARE(r->status, EvaluationReport::Status::Ok);
        QVERIFY(r->timed);
        QCOMPARE(r->speedup, 0.930);
        QCOMPARE(r->ciLow, 0.927);
        QCOMPARE(r->ciHigh, 0.934);
        QCOMPARE(r->medianMs, 0.2145);
        QCOMPARE(r->referenceMs, 0.1995);
        QCOMPARE(r->kernels.size(), 2);
        QCOMPARE(r->maxRegisters(), 168);
        QCOMPARE(r->totalSpillBytes(), qint64(12));
        QCOMPARE(r->correctness.trials, 2);
        QCOMPARE(r->correctness.passed, 2);
        QCOMPARE(r->correctness.worstMargin, 0.02);
        QCOMPARE(r->samples.size(), 2);
        QCOMPARE(r->samples[1].candidateMs, (QVector<double>{0.2145, 0.2146}));
        QCOMPARE(r->samples[0].throttle, QStringList{QStringLiteral("sw_power_cap")});
        QCOMPARE(r->gpuName, QStringLiteral("NVIDIA H200"));
        QVERIFY(r->isTrustworthyResult());
        QCOMPARE(r->toJson(), fixture("report_ok_gemm_typed.json"));
    }

    // Every part a panel, the engine or a prompt reads is typed when the report is parsed.
    void parsesTheReportsTypedParts() {
        QString error;
        const auto r = EvaluationReport::fromJson(fixture("report_ok_gemm_typed.json"), &error);
        QVERIFY2(r, qPrintable(error));
        QCOMPARE(r->ruleChecks.size(), 1);
        QCOMPARE(r->ruleChecks[0].name, QStringLiteral("undefined_symbols"));
        QVERIFY(r->ruleChecks[0].ok);
        QCOMPARE(r->ruleChecks[0].evidence, QStringLiteral("ok"));
        QVERIFY(r->lintEnabled);

        QCOMPARE(r->correctness.rule, QStringLiteral("x"));
        QCOMPARE(r->correctness.trialResults.size(), 2);
        const Trial& post = r->correctness.trialResults[1];
        QCOMPARE(post.phase, QStringLiteral("post"));
        QCOMPARE(post.dim(QStringLiteral("M")), qint64(1000));
        QCOMPARE(post.dim(QStringLiteral("N")), qint64(1064));
        QCOMPARE(post.dim(QStringLiteral("K")), qint64(904));
        QCOMPARE(post.dim(QStringLiteral("rows")), qint64(0));
        QCOMPARE(post.distribution, QStringLiteral("large"));
        QVERIFY(post.pass);
        QCOMPARE(post.margin, 0.02);
        QCOMPARE(post.relFro, 2.1e-07);
        QCOMPARE(post.boundRelFro, 1.5e-05);
        QCOMPARE(post.nanCount, qint64(0));

        QVERIFY(r->timingPresent);
        QCOMPARE(r->timing.roundMedians, QVector<double>{0.931});
        QCOMPARE(r->timing.roundSpread, 0.004);
        QCOMPARE(r->timing.reruns, 0);
        QCOMPARE(r->timing.pairing, QStringLiteral("ABBA"));
        QCOMPARE(r->timing.l2FlushBytes, 125829120.0);
        QVERIFY(r->timing.blockingKernel);
        QCOMPARE(r->timing.inputSets, 2);

        QCOMPARE(r->environment.name, QStringLiteral("NVIDIA H200"));
        QVERIFY(r->environment.device);
        QCOMPARE(r->environment.device->smCount, 132);
        QVERIFY(!r->harnessTask.isEmpty());
        QVERIFY(!r->profile.metricsSection);
        QVERIFY(!r->profile.profileSection);
        QVERIFY(r->errorSignal.isEmpty());
    }

    void parsesRooflineErrorAndProfileParts() {
        QJsonObject json = fixture("report_ok_gemm_typed.json");
        json.insert(QStringLiteral("roofline"),
                    QJsonObject{{QStringLiteral("floor_ms"), 0.1},
                                {QStringLiteral("percent_of_floor"), 50.0},
                                {QStringLiteral("bound"), QStringLiteral("memory")},
                                {QStringLiteral("peak_flops"), 9.9e14},
                                {QStringLiteral("peak_bytes_per_s"), 4.8e12},
                                {QStringLiteral("intensity"), 12.5}});
        json.insert(QStringLiteral("error"),
                    QJsonObject{{QStringLiteral("stage"), QStringLiteral("correctness")},
                                {QStringLiteral("message"), QStringLiteral("child died")},
                                {QStringLiteral("signal_name"), QStringLiteral("SIGSEGV")}});
        const QJsonObject counters{
            {QStringLiteral("dram__throughput.avg.pct_of_peak_sustained_elapsed"), 80.0},
            {QStringLiteral("smsp__warp_issue_stalled_barrier_per_warp_active.pct"), 25.0}};
        json.insert(QStringLiteral("metrics"),
                    QJsonObject{{QStringLiteral("candidate"), counters},
                                {QStringLiteral("reference"), QJsonObject()}});
        QJsonObject task = json.value(QStringLiteral("task")).toObject();
        task.insert(QStringLiteral("timing"),
                    QJsonObject{{QStringLiteral("max_round_spread"), 0.05}});
        json.insert(QStringLiteral("task"), task);
        QJsonObject rules = json.value(QStringLiteral("rules")).toObject();
        rules.insert(QStringLiteral("lint"), false);
        json.insert(QStringLiteral("rules"), rules);

        QString error;
        const auto r = EvaluationReport::fromJson(json, &error);
        QVERIFY2(r, qPrintable(error));
        QCOMPARE(r->floorMs, std::optional<double>(0.1));
        QCOMPARE(r->peakFlops, std::optional<double>(9.9e14));
        QCOMPARE(r->peakBytesPerSecond, std::optional<double>(4.8e12));
        QCOMPARE(r->intensity, std::optional<double>(12.5));
        QVERIFY(!r->roofFlops);
        QCOMPARE(r->bound, QStringLiteral("memory"));
        QCOMPARE(r->errorSignal, QStringLiteral("SIGSEGV"));
        QCOMPARE(r->maxRoundSpread, std::optional<double>(0.05));
        QVERIFY(!r->lintEnabled);
        QVERIFY(r->profile.metricsSection);
        const DerivedMetrics m = DerivedMetrics::fromReport(*r);
        QCOMPARE(m.candidate.value(QStringLiteral("dram_throughput_pct")).toDouble(), 80.0);
        QCOMPARE(m.candidateStalls.value(QStringLiteral("barrier")).toDouble(), 0.25);
        // Saved verbatim: the typed parts add nothing to and drop nothing from the report.
        QCOMPARE(r->toJson(), json);
    }

    void reportStatuses() {
        for (const char* name : {"ok", "compile_error", "rule_violation", "runtime_error",
                                 "timeout", "incorrect", "unstable", "no_device"}) {
            const auto status = EvaluationReport::statusFromString(QLatin1String(name));
            QVERIFY(status);
            QCOMPARE(EvaluationReport::statusToString(*status), QLatin1String(name));
        }
        QVERIFY(!EvaluationReport::statusFromString(QStringLiteral("fine")));
    }

    void rejectsBadReports() {
        QString error;
        QJsonObject json = fixture("report_ok_gemm_typed.json");
        json.insert(QStringLiteral("status"), QStringLiteral("great"));
        QVERIFY(!EvaluationReport::fromJson(json, &error));
        QCOMPARE(error, QStringLiteral("report.status: \"great\" is not a known status"));
        json.insert(QStringLiteral("schema_version"), 2);
        QVERIFY(!EvaluationReport::fromJson(json, &error));
        QCOMPARE(error, QStringLiteral("report.schema_version: expected 1"));
        QVERIFY(!EvaluationReport::fromJson(QJsonObject{{QStringLiteral("schema_version"), 1}},
                                            &error));
        QCOMPARE(error, QStringLiteral("report.status: required field is missing"));
    }

    void suspiciousIsNotTrustworthy() {
        QJsonObject json = fixture("report_ok_gemm_typed.json");
        json.insert(QStringLiteral("suspicious"), true);
        QString error;
        const auto r = EvaluationReport::fromJson(json, &error);
        QVERIFY(r);
        QVERIFY(!r->isTrustworthyResult());
        Candidate c;
        c.report = *r;
        QVERIFY(!c.isTrustworthy());
        const auto summary = IterationSummary::fromCandidate(c);
        QVERIFY(!summary.isTrustworthy());
    }

    void summaryRoundTrip() {
        QString error;
        Candidate c;
        c.version = 7;
        c.parentVersion = 3;
        c.iteration = 4;
        c.beamIndex = 1;
        c.strategy.family = QStringLiteral("mma_sync");
        c.report = EvaluationReport::fromJson(fixture("report_ok_gemm_typed.json"), &error);
        c.decision = Decision{Decision::Kind::Rejected, QStringLiteral("too clever")};
        AgentTurn turn;
        turn.tokensIn = 10;
        turn.tokensOut = 5;
        turn.costUsd = 0.25;
        c.turns = {turn, turn};
        c.finishedAt = QDateTime(QDate(2026, 1, 2), QTime(3, 4, 5, 6), Qt::UTC);
        const auto s = IterationSummary::fromCandidate(c);
        QCOMPARE(s.tokens, 30);
        QCOMPARE(s.costUsd, 0.5);
        QCOMPARE(*s.speedup, 0.93);
        const auto back = IterationSummary::fromJson(s.toJson(), &error);
        QVERIFY2(back, qPrintable(error));
        QCOMPARE(back->toJson(), s.toJson());
        QCOMPARE(back->decision, QStringLiteral("rejected"));
        QCOMPARE(back->decisionReason, QStringLiteral("too clever"));
        QCOMPARE(back->finishedAt, c.finishedAt);
        QVERIFY(!IterationSummary::fromJson(
            QJsonObject{{QStringLiteral("status"), QStringLiteral("ok")}}, &error));
        QVERIFY2(error.contains(QStringLiteral("version")), qPrintable(error));
    }

    void settingsRoundTripAndValidation() {
        EngineSettings s;
        s.plannerBackend = QStringLiteral("llm");
        s.plannerOptions = QJsonObject{{QStringLiteral("model"), QStringLiteral("m")}};
        s.stepMode = true;
        s.gatePlans = true;
        s.beamWidth = 3;
        s.harnessCommands = {QStringLiteral("ssh gpu1 kevolve-harness serve")};
        QString error;
        const auto back = EngineSettings::fromJson(s.toJson(), &error);
        QVERIFY2(back, qPrintable(error));
        QCOMPARE(back->toJson(), s.toJson());
        QCOMPARE(back->agentSettings(QStringLiteral("planner")).backend, QStringLiteral("llm"));
        QCOMPARE(back->agentSettings(QStringLiteral("coder")).backend, QStringLiteral("builtin"));
        s.beamWidth = 0;
        s.maxIterations = 0;
        const QStringList problems = s.validate();
        QCOMPARE(problems.size(), 2);
        QVERIFY(problems.join(u'\n').contains(QStringLiteral("settings.beam_width")));
        QVERIFY(!EngineSettings::fromJson(s.toJson(), &error));
        QVERIFY2(error.contains(QStringLiteral("settings.max_iterations")), qPrintable(error));
    }

    void settingsFloorTarget() {
        EngineSettings s;
        QCOMPARE(s.targetFloorPercent, 90.0);
        s.targetFloorPercent = 75.5;
        QString error;
        auto back = EngineSettings::fromJson(s.toJson(), &error);
        QVERIFY2(back, qPrintable(error));
        QCOMPARE(back->targetFloorPercent, 75.5);
        QCOMPARE(s.toJson().value(QLatin1String("target_floor_percent")).toDouble(), 75.5);

        // A session written before the floor target loads with the default.
        QJsonObject old = s.toJson();
        old.remove(QStringLiteral("target_floor_percent"));
        back = EngineSettings::fromJson(old, &error);
        QVERIFY2(back, qPrintable(error));
        QCOMPARE(back->targetFloorPercent, 90.0);

        QJsonObject bad = s.toJson();
        bad.insert(QStringLiteral("target_floor_percent"), QStringLiteral("ninety"));
        QVERIFY(!EngineSettings::fromJson(bad, &error));
        QVERIFY2(error.contains(QStringLiteral("settings.target_floor_percent")),
                 qPrintable(error));
        bad.insert(QStringLiteral("target_floor_percent"), -5);
        error.clear();
        QVERIFY(!EngineSettings::fromJson(bad, &error));
        QVERIFY2(error.contains(QStringLiteral("settings.target_floor_percent")),
                 qPrintable(error));
        bad.insert(QStringLiteral("target_floor_percent"), 150);
        error.clear();
        QVERIFY(!EngineSettings::fromJson(bad, &error));
        QVERIFY2(error.contains(QStringLiteral("settings.target_floor_percent")),
                 qPrintable(error));
    }

    // A beam times each candidate for kBeamTimingBudgetS unless the settings or the eval options
    // say otherwise; one candidate an iteration keeps the task's budget; the value round-trips
    // and is range-checked.
    void settingsTimingBudget() {
        EngineSettings s;
        QVERIFY(!s.effectiveEvalOptions().contains(QStringLiteral("time_budget_s")));
        s.beamWidth = 4;
        QCOMPARE(s.effectiveEvalOptions().value(QStringLiteral("time_budget_s")).toDouble(),
                 EngineSettings::kBeamTimingBudgetS);
        s.timingBudgetS = 3.0;
        QCOMPARE(s.effectiveEvalOptions().value(QStringLiteral("time_budget_s")).toDouble(), 3.0);
        s.evalOptions.insert(QStringLiteral("time_budget_s"), 5.0);
        QCOMPARE(s.effectiveEvalOptions().value(QStringLiteral("time_budget_s")).toDouble(), 5.0);
        s.evalOptions = {};
        // A beam with a best so far profiles only the candidates near it; one candidate an
        // iteration, or no best yet, profiles every candidate.
        QVERIFY(!s.effectiveEvalOptions().contains(QStringLiteral("profile")));
        const QJsonObject near = s.effectiveEvalOptions(1.2);
        QCOMPARE(near.value(QStringLiteral("profile")).toString(), QStringLiteral("improved"));
        QCOMPARE(near.value(QStringLiteral("profile_best_speedup")).toDouble(),
                 EngineSettings::kBeamProfileShare * 1.2);
        EngineSettings one;
        QVERIFY(!one.effectiveEvalOptions(1.2).contains(QStringLiteral("profile")));
        QString error;
        const auto back = EngineSettings::fromJson(s.toJson(), &error);
        QVERIFY2(back, qPrintable(error));
        QCOMPARE(back->timingBudgetS, 3.0);
        QJsonObject bad = s.toJson();
        bad.insert(QStringLiteral("timing_budget_s"), 601);
        QVERIFY(!EngineSettings::fromJson(bad, &error));
        QVERIFY2(error.contains(QStringLiteral("settings.timing_budget_s")), qPrintable(error));
        bad.insert(QStringLiteral("timing_budget_s"), QStringLiteral("fast"));
        error.clear();
        QVERIFY(!EngineSettings::fromJson(bad, &error));
        QVERIFY2(error.contains(QStringLiteral("settings.timing_budget_s")), qPrintable(error));
    }

    // The roofline bound travels with the step, and an index line without it still loads.
    void summaryCarriesTheBound() {
        QString error;
        QJsonObject json = fixture("report_ok_gemm_typed.json");
        json.insert(QStringLiteral("roofline"),
                    QJsonObject{{QStringLiteral("floor_ms"), 0.13},
                                {QStringLiteral("percent_of_floor"), 61.0},
                                {QStringLiteral("bound"), QStringLiteral("memory")}});
        Candidate c;
        c.version = 2;
        c.report = EvaluationReport::fromJson(json, &error);
        QVERIFY2(c.report, qPrintable(error));
        const auto s = IterationSummary::fromCandidate(c);
        QCOMPARE(s.bound, QStringLiteral("memory"));
        QCOMPARE(s.percentOfFloor, std::optional<double>(61.0));
        const QJsonObject line = s.toJson();
        QCOMPARE(line.value(QLatin1String("bound")).toString(), QStringLiteral("memory"));
        auto back = IterationSummary::fromJson(line, &error);
        QVERIFY2(back, qPrintable(error));
        QCOMPARE(back->bound, QStringLiteral("memory"));

        QJsonObject old = line;
        old.remove(QStringLiteral("bound"));
        back = IterationSummary::fromJson(old, &error);
        QVERIFY2(back, qPrintable(error));
        QVERIFY(back->bound.isEmpty());
    }

    void deviceInfo() {
        const DeviceInfo d = DeviceInfo::fromJson(fixture("report_ok_gemm_typed.json")
                                                      .value(QLatin1String("environment"))
                                                      .toObject()
                                                      .value(QLatin1String("gpu"))
                                                      .toObject());
        QCOMPARE(d.name, QStringLiteral("NVIDIA H200"));
        QCOMPARE(d.ccMajor, 9);
        QCOMPARE(d.ccMinor, 0);
        QCOMPARE(d.smCount, 132);
        QCOMPARE(d.arch(), QStringLiteral("sm_90a"));
        QCOMPARE(d.smemPerBlockOptin, 232448);
        const DeviceInfo again = DeviceInfo::fromJson(d.toJson());
        QCOMPARE(again.toJson(), d.toJson());
        QVERIFY(DeviceInfo::h200().isValid());
        // What the supervisor's hello gives (NVML only): the sizes come from the H200 defaults.
        const DeviceInfo nvmlOnly = DeviceInfo::fromJson(
            QJsonObject{{QStringLiteral("name"), QStringLiteral("NVIDIA H100")},
                        {QStringLiteral("cc"), QStringLiteral("9.0")}});
        QCOMPARE(nvmlOnly.smCount, 132);
        QCOMPARE(nvmlOnly.l2Bytes, qint64(62914560));
        const DeviceInfo ampere =
            DeviceInfo::fromJson(QJsonObject{{QStringLiteral("name"), QStringLiteral("A100")},
                                             {QStringLiteral("cc"), QStringLiteral("8.0")}});
        QCOMPARE(ampere.smCount, 0);
        QCOMPARE(ampere.arch(), QStringLiteral("sm_80"));
        QVERIFY(!DeviceInfo().isValid());
    }

    void environmentKeyStore() {
        QProcessEnvironment env;
        env.insert(QStringLiteral("OPENAI_API_KEY"), QStringLiteral("sk-openai"));
        env.insert(QStringLiteral("KEVOLVE_API_KEY"), QStringLiteral("sk-general"));
        env.insert(QStringLiteral("EMPTY_API_KEY"), QString());
        EnvironmentKeyStore keys(env);
        QCOMPARE(keys.key(QStringLiteral("openai")),
                 std::optional<QString>(QStringLiteral("sk-openai")));
        QCOMPARE(keys.key(QStringLiteral("vllm")),
                 std::optional<QString>(QStringLiteral("sk-general")));
        QCOMPARE(keys.key(QStringLiteral("empty")),
                 std::optional<QString>(QStringLiteral("sk-general")));
        QCOMPARE(EnvironmentKeyStore::variableFor(QStringLiteral("llama.cpp")),
                 QStringLiteral("LLAMA_CPP_API_KEY"));
        EnvironmentKeyStore none{QProcessEnvironment()};
        QVERIFY(!none.key(QStringLiteral("openai")));
    }

    void agentRegistry() {
        QVERIFY(AgentFactory::hasBackend(QStringLiteral("scripted")));
        AgentSettings settings;
        settings.role = QStringLiteral("planner");
        settings.backend = QStringLiteral("nonexistent");
        QString error;
        QVERIFY(!AgentFactory::createPlanner(settings, &error));
        QVERIFY2(error.contains(QStringLiteral(
                     "agent backend \"nonexistent\" for the planner is not available")),
                 qPrintable(error));
        QVERIFY(error.contains(QStringLiteral("scripted")));
        AgentFactory::registerBackend(QStringLiteral("reviewer_only"), {}, {}, {});
        settings.backend = QStringLiteral("reviewer_only");
        QVERIFY(!AgentFactory::createPlanner(settings, &error));
        QCOMPARE(error, QStringLiteral("agent backend \"reviewer_only\" cannot play the planner"));
        settings.backend = QStringLiteral("scripted");
        std::unique_ptr<Planner> planner(AgentFactory::createPlanner(settings, &error));
        QVERIFY(planner);
    }
};

QTEST_GUILESS_MAIN(TestValueTypes)
#include "tst_valuetypes.moc"
