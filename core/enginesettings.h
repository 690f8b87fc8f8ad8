// How a session runs: which backend plays each role, the budgets and stop rules, the gate mode and
// the harness launcher. Persisted in session.json, so it never holds a secret.
#pragma once

#include "agents.h"

#include <QJsonObject>
#include <QMetaType>
#include <QString>

#include <optional>

namespace kev {

struct EngineSettings {
    QString plannerBackend = QStringLiteral("builtin");
    QString coderBackend = QStringLiteral("builtin");
    QString reviewerBackend = QStringLiteral("builtin");
    // Backend-specific options per role (e.g. llm: base_url, model, preset).
    QJsonObject plannerOptions;
    QJsonObject coderOptions;
    QJsonObject reviewerOptions;

    // Stop after this many iterations in this run.
    int maxIterations = 10;
    // Stop when a correct, non-suspicious kernel reaches this speedup over the reference
    // (reference_ms / candidate_ms); 0 = never.
    double targetSpeedup = 1.0;
    // For a memory-bound task (the report's roofline bound is "memory") the target also needs this
    // share of the DRAM floor, in percent: beating a plain reference kernel says little there.
    // 0 = the speedup alone decides, as for compute-bound tasks.
    double targetFloorPercent = 90;
    // Wall-clock, token and cost budgets; 0 = none.
    double timeBudgetS = 0;
    qint64 tokenBudget = 0;
    double costBudgetUsd = 0;
    // Stop when the best speedup has not improved by plateauMinGain (relative) in this many
    // iterations; 0 = never.
    int plateauIterations = 4;
    double plateauMinGain = 0.01;

    // Step mode: the engine waits at the gate for approve / edit / reject.
    bool stepMode = false;
    // Step mode only: also wait after planning, so a person can edit the plan before the coder
    // runs.
    bool gatePlans = false;
    // Candidates per iteration, evaluated in parallel.
    int beamWidth = 1;
    // Coder calls per candidate: the first plus compile-error fixes.
    int maxCodeAttempts = 3;

    // The command that starts one `kevolve-harness serve` worker, e.g. "kevolve-harness serve",
    // "ssh gpu1 kevolve-harness serve", "srun --gres=gpu:1 kevolve-harness serve". Empty = the
    // kevolve-harness next to the executable, else on PATH. Several entries = one worker each.
    QStringList harnessCommands;
    // Sent as the eval request's "options" (compile_timeout_s, time_budget_s, ...).
    QJsonObject evalOptions;
    // Seconds of interleaved timing per candidate (the eval request's time_budget_s, unless
    // evalOptions sets it); 0 = the task's own (3 s) for one candidate an iteration,
    // kBeamTimingBudgetS for a beam.
    double timingBudgetS = 0;
    // A beam's timing budget per candidate when timingBudgetS is 0: three rounds of half a
    // second. The GPU times one candidate at a time, so the timing decides a beam's candidates
    // per minute (H200, session 15: 3 s a candidate, 16 in 54 s); the report's rounds and CI
    // say how precise each figure is.
    static constexpr double kBeamTimingBudgetS = 1.5;
    // A beam profiles (hardware counters, 0.7 s of exclusive GPU time a GEMM) only the candidates
    // within this share of the session's best speed-up: the next plans start from the best, and
    // the counters of a candidate well behind it would not move them.
    static constexpr double kBeamProfileShare = 0.97;
    // evalOptions with the timing budget that applies and, for a beam with a best speed-up so
    // far (`bestSpeedup` > 0), the harness's "improved" profiling policy at kBeamProfileShare of
    // it; options the eval options set themselves are kept.
    QJsonObject effectiveEvalOptions(double bestSpeedup = 0.0) const;
    // Client-side limit for one eval request, after which the worker is restarted.
    int evalTimeoutS = 900;

    AgentSettings agentSettings(const QString& role) const;

    QJsonObject toJson() const;
    static std::optional<EngineSettings> fromJson(const QJsonObject& json, QString* error);
    // Problems, each naming its field; empty = valid.
    QStringList validate() const;
};

} // namespace kev

Q_DECLARE_METATYPE(kev::EngineSettings)
