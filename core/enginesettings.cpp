#include "enginesettings.h"

#include <QJsonArray>

#include <cmath>
#include <type_traits>

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
        {QStringLiteral("timing_budget_s"), timingBudgetS},
        {QStringLiteral("eval_timeout_s"), evalTimeoutS},
    };
}

std::optional<EngineSettings> EngineSettings::fromJson(const QJsonObject& json, QString* error) {
    // A field present with the wrong type is an error naming it, never a silent default; absent
    // fields (sessions written before they existed) take the default.
    QString problem;
    const auto wrong = [&problem](const QString& key, const char* expected) {
        if (problem.isEmpty())
            problem = QStringLiteral("settings.") + key + QStringLiteral(": expected ") +
                      QLatin1String(expected);
    };
    const auto number = [&](const QJsonObject& o, const QString& path, const char* key,
                            double* out) {
        const QJsonValue v = o.value(QLatin1String(key));
        if (v.isUndefined())
            return;
        if (!v.isDouble() || !std::isfinite(v.toDouble()))
            return wrong(path + QLatin1String(key), "a number");
        *out = v.toDouble();
    };
    const auto integer = [&](const char* key, auto* out, double max) {
        const QJsonValue v = json.value(QLatin1String(key));
        if (v.isUndefined())
            return;
        const double d = v.toDouble();
        if (!v.isDouble() || d != std::floor(d) || std::fabs(d) > max)
            return wrong(QLatin1String(key), "an integer");
        *out = static_cast<std::remove_pointer_t<decltype(out)>>(d);
    };
    const auto boolean = [&](const char* key, bool* out) {
        const QJsonValue v = json.value(QLatin1String(key));
        if (v.isUndefined())
            return;
        if (!v.isBool())
            return wrong(QLatin1String(key), "true or false");
        *out = v.toBool();
    };
    const auto object = [&](const QJsonObject& o, const QString& path, const char* key,
                            QJsonObject* out) {
        const QJsonValue v = o.value(QLatin1String(key));
        if (v.isUndefined())
            return;
        if (!v.isObject())
            return wrong(path + QLatin1String(key), "an object");
        *out = v.toObject();
    };
    EngineSettings s;
    QJsonObject agents;
    object(json, QString(), "agents", &agents);
    const auto role = [&](const char* name, QString* backend, QJsonObject* options) {
        const QString path = QStringLiteral("agents.") + QLatin1String(name) + u'.';
        QJsonObject o;
        object(agents, QStringLiteral("agents."), name, &o);
        const QJsonValue b = o.value(QLatin1String("backend"));
        if (!b.isUndefined() && !b.isString())
            wrong(path + QStringLiteral("backend"), "a string");
        *backend = b.toString(*backend);
        object(o, path, "options", options);
    };
    role("planner", &s.plannerBackend, &s.plannerOptions);
    role("coder", &s.coderBackend, &s.coderOptions);
    role("reviewer", &s.reviewerBackend, &s.reviewerOptions);
    const double kMaxCount = 1e15;
    integer("max_iterations", &s.maxIterations, 1e9);
    number(json, QString(), "target_speedup", &s.targetSpeedup);
    number(json, QString(), "target_floor_percent", &s.targetFloorPercent);
    number(json, QString(), "time_budget_s", &s.timeBudgetS);
    integer("token_budget", &s.tokenBudget, kMaxCount);
    number(json, QString(), "cost_budget_usd", &s.costBudgetUsd);
    integer("plateau_iterations", &s.plateauIterations, 1e9);
    number(json, QString(), "plateau_min_gain", &s.plateauMinGain);
    boolean("step_mode", &s.stepMode);
    boolean("gate_plans", &s.gatePlans);
    integer("beam_width", &s.beamWidth, 1e9);
    integer("max_code_attempts", &s.maxCodeAttempts, 1e9);
    const QJsonValue commands = json.value(QLatin1String("harness_commands"));
    if (!commands.isUndefined()) {
        s.harnessCommands.clear();
        if (!commands.isArray())
            wrong(QStringLiteral("harness_commands"), "an array of strings");
        for (const auto& c : commands.toArray()) {
            if (!c.isString())
                wrong(QStringLiteral("harness_commands"), "an array of strings");
            s.harnessCommands << c.toString();
        }
    }
    object(json, QString(), "eval_options", &s.evalOptions);
    number(json, QString(), "timing_budget_s", &s.timingBudgetS);
    integer("eval_timeout_s", &s.evalTimeoutS, 1e9);
    if (!problem.isEmpty()) {
        if (error)
            *error = problem;
        return std::nullopt;
    }
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
    // The harness takes 0 < time_budget_s <= 600.
    rule(timingBudgetS >= 0 && timingBudgetS <= 600,
         "settings.timing_budget_s: must be between 0 (the default) and 600");
    return problems;
}

QJsonObject EngineSettings::effectiveEvalOptions(double bestSpeedup) const {
    QJsonObject options = evalOptions;
    const double budget = timingBudgetS > 0 ? timingBudgetS
                          : beamWidth > 1   ? kBeamTimingBudgetS
                                            : 0.0;
    if (budget > 0 && !options.contains(QLatin1String("time_budget_s")))
        options.insert(QStringLiteral("time_budget_s"), budget);
    if (beamWidth > 1 && bestSpeedup > 0 && !options.contains(QLatin1String("profile")) &&
        !options.contains(QLatin1String("profile_best_speedup"))) {
        options.insert(QStringLiteral("profile"), QStringLiteral("improved"));
        options.insert(QStringLiteral("profile_best_speedup"), kBeamProfileShare * bestSpeedup);
    }
    return options;
}

} // namespace kev
