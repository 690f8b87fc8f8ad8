#include "enginesettings.h"

#include <QJsonArray>

namespace kev {

AgentSettings EngineSettings::agentSettings(const QString& role) const {
    AgentSettings s;
    s.role = role;
    if (role == QLatin1String("planner")) {
        s.backend = plannerBackend;
        s.options = plannerOptions;
    } else if (role == QLatin1String("coder")) {
        s.backend = coderBackend;
        s.options = coderOptions;
    } else {
        s.backend = reviewerBackend;
        s.options = reviewerOptions;
    }
    return s;
}

QJsonObject EngineSettings::toJson() const {
    return {
        {QStringLiteral("agents"),
         QJsonObject{
             {QStringLiteral("planner"), QJsonObject{{QStringLiteral("backend"), plannerBackend},
                                                     {QStringLiteral("options"), plannerOptions}}},
             {QStringLiteral("coder"), QJsonObject{{QStringLiteral("backend"), coderBackend},
                                                   {QStringLiteral("options"), coderOptions}}},
             {QStringLiteral("reviewer"),
              QJsonObject{{QStringLiteral("backend"), reviewerBackend},
                          {QStringLiteral("options"), reviewerOptions}}},
         }},
        {QStringLiteral("max_iterations"), maxIterations},
        {QStringLiteral("target_speedup"), targetSpeedup},
        {QStringLiteral("target_floor_percent"), targetFloorPercent},
        {QStringLiteral("time_budget_s"), timeBudgetS},
        {QStringLiteral("token_budget"), tokenBudget},
        {QStringLiteral("cost_budget_usd"), costBudgetUsd},
        {QStringLiteral("plateau_iterations"), plateauIterations},
        {QStringLiteral("plateau_min_gain"), plateauMinGain},
        {QStringLiteral("step_mode"), stepMode},
        {QStringLiteral("gate_plans"), gatePlans},
        {QStringLiteral("beam_width"), beamWidth},
        {QStringLiteral("max_code_attempts"), maxCodeAttempts},
        {QStringLiteral("harness_commands"), QJsonArray::fromStringList(harnessCommands)},
        {QStringLiteral("eval_options"), evalOptions},
        {QStringLiteral("eval_timeout_s"), evalTimeoutS},
    };
}

std::optional<EngineSettings> EngineSettings::fromJson(const QJsonObject& json, QString* error) {
    EngineSettings s;
    const QJsonObject agents = json.value(QLatin1String("agents")).toObject();
    const auto role = [&agents](const char* name, QString* backend, QJsonObject* options) {
        const QJsonObject o = agents.value(QLatin1String(name)).toObject();
        *backend = o.value(QLatin1String("backend")).toString(*backend);
        *options = o.value(QLatin1String("options")).toObject();
    };
    role("planner", &s.plannerBackend, &s.plannerOptions);
    role("coder", &s.coderBackend, &s.coderOptions);
    role("reviewer", &s.reviewerBackend, &s.reviewerOptions);
    s.maxIterations = json.value(QLatin1String("max_iterations")).toInt(s.maxIterations);
    s.targetSpeedup = json.value(QLatin1String("target_speedup")).toDouble(s.targetSpeedup);
    // Absent in sessions written before the floor target: the default applies. Present but not a
    // number would otherwise fall back to the default silently.
    const QJsonValue floorTarget = json.value(QLatin1String("target_floor_percent"));
    if (!floorTarget.isUndefined() && !floorTarget.isDouble()) {
        if (error)
            *error =
                QStringLiteral("settings.target_floor_percent: must be a number (percent of the "
                               "DRAM floor; 0 = off)");
        return std::nullopt;
    }
    s.targetFloorPercent = floorTarget.toDouble(s.targetFloorPercent);
    s.timeBudgetS = json.value(QLatin1String("time_budget_s")).toDouble(s.timeBudgetS);
    s.tokenBudget = json.value(QLatin1String("token_budget")).toInteger(s.tokenBudget);
    s.costBudgetUsd = json.value(QLatin1String("cost_budget_usd")).toDouble(s.costBudgetUsd);
    s.plateauIterations =
        json.value(QLatin1String("plateau_iterations")).toInt(s.plateauIterations);
    s.plateauMinGain = json.value(QLatin1String("plateau_min_gain")).toDouble(s.plateauMinGain);
    s.stepMode = json.value(QLatin1String("step_mode")).toBool(s.stepMode);
    s.gatePlans = json.value(QLatin1String("gate_plans")).toBool(s.gatePlans);
    s.beamWidth = json.value(QLatin1String("beam_width")).toInt(s.beamWidth);
    s.maxCodeAttempts = json.value(QLatin1String("max_code_attempts")).toInt(s.maxCodeAttempts);
    s.harnessCommands.clear();
    for (const auto& c : json.value(QLatin1String("harness_commands")).toArray())
        s.harnessCommands << c.toString();
    s.evalOptions = json.value(QLatin1String("eval_options")).toObject();
    s.evalTimeoutS = json.value(QLatin1String("eval_timeout_s")).toInt(s.evalTimeoutS);
    const QStringList problems = s.validate();
    if (!problems.isEmpty()) {
        if (error)
            *error = problems.join(u'\n');
        return std::nullopt;
    }
    return s;
}

QStringList EngineSettings::validate() const {
    QStringList problems;
    const auto rule = [&problems](bool ok, const char* message) {
        if (!ok)
            problems << QString::fromUtf8(message);
    };
    rule(!plannerBackend.isEmpty(), "settings.agents.planner.backend: must not be empty");
    rule(!coderBackend.isEmpty(), "settings.agents.coder.backend: must not be empty");
    rule(!reviewerBackend.isEmpty(), "settings.agents.reviewer.backend: must not be empty");
    rule(maxIterations >= 1, "settings.max_iterations: must be at least 1");
    rule(targetSpeedup >= 0, "settings.target_speedup: must not be negative");
    // Faster than 110% of the floor is impossible without skipping work (the harness calls it
    // suspicious), so a higher target could never be met.
    rule(targetFloorPercent >= 0 && targetFloorPercent <= 110,
         "settings.target_floor_percent: must be between 0 (off) and 110");
    rule(timeBudgetS >= 0, "settings.time_budget_s: must not be negative");
    rule(tokenBudget >= 0, "settings.token_budget: must not be negative");
    rule(costBudgetUsd >= 0, "settings.cost_budget_usd: must not be negative");
    rule(plateauIterations >= 0, "settings.plateau_iterations: must not be negative");
    rule(beamWidth >= 1 && beamWidth <= 16, "settings.beam_width: must be between 1 and 16");
    rule(maxCodeAttempts >= 1 && maxCodeAttempts <= 10,
         "settings.max_code_attempts: must be between 1 and 10");
    rule(evalTimeoutS >= 1, "settings.eval_timeout_s: must be at least 1");
    return problems;
}

} // namespace kev
