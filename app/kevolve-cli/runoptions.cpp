#include "runoptions.h"

#include "cliio.h"
#include "agents.h"
#include "evaluatorpool.h"
#include "jsonschema.h"
#include "llm/llmsettings.h"

using namespace Qt::Literals::StringLiterals;

namespace kev::cli {

namespace {

// --agent-options FILE: one object for every role, or one per role.
bool applyAgentOptions(const QString& path, EngineSettings* s, QString* error) {
    const auto json = readJsonObjectFile(path, error);
    if (!json)
        return false;
    const bool perRole = json->contains(QLatin1String("planner")) ||
                         json->contains(QLatin1String("coder")) ||
                         json->contains(QLatin1String("reviewer"));
    s->plannerOptions = perRole ? json->value(QLatin1String("planner")).toObject() : *json;
    s->coderOptions = perRole ? json->value(QLatin1String("coder")).toObject() : *json;
    s->reviewerOptions = perRole ? json->value(QLatin1String("reviewer")).toObject() : *json;
    return true;
}

// --provider, --base-url and --model fill in the options of every role played by "llm".
bool applyLlmShortcuts(const QCommandLineParser& p, const CliOptions& o, EngineSettings* s,
                       QString* error) {
    const QList<std::pair<const QCommandLineOption*, QString>> llmOptions = {
        {&o.provider, QStringLiteral("preset")},
        {&o.baseUrl, QStringLiteral("base_url")},
        {&o.model, QStringLiteral("model")}};
    for (const auto& [option, key] : llmOptions) {
        if (!p.isSet(*option))
            continue;
        bool used = false;
        for (auto [backend, options] : {std::pair{s->plannerBackend, &s->plannerOptions},
                                        std::pair{s->coderBackend, &s->coderOptions},
                                        std::pair{s->reviewerBackend, &s->reviewerOptions}}) {
            if (backend != QLatin1String("llm"))
                continue;
            options->insert(key, p.value(*option));
            used = true;
        }
        if (!used) {
            *error = optionName(*option) +
                     QStringLiteral(": no role is played by the llm backend (add --backend llm)");
            return false;
        }
    }
    return true;
}

// The limits of the run, each checked against its own range.
bool applyLimits(const QCommandLineParser& p, const CliOptions& o, EngineSettings* s,
                 QString* error) {
    return readInt(p, o.iterations, 1, std::numeric_limits<int>::max(),
                   QStringLiteral("a positive integer"), &s->maxIterations, error) &&
           readDouble(p, o.target, 0, kUnbounded, QStringLiteral("a non-negative number"),
                      &s->targetSpeedup, error) &&
           readDouble(p, o.targetFloor, 0, 110,
                      QStringLiteral("a percentage of the DRAM floor from 0 (off) to 110"),
                      &s->targetFloorPercent, error) &&
           readInt(p, o.beam, 1, 16, QStringLiteral("1 to 16"), &s->beamWidth, error) &&
           readDouble(p, o.timeBudget, 0, kUnbounded, QStringLiteral("seconds"), &s->timeBudgetS,
                      error) &&
           readDouble(p, o.timingBudget, 0, 600,
                      QStringLiteral("seconds from 0 (the default) to 600"), &s->timingBudgetS,
                      error) &&
           readInt(p, o.plateau, 0, std::numeric_limits<int>::max(),
                   QStringLiteral("a non-negative integer"), &s->plateauIterations, error);
}

struct Flag {
    const QCommandLineOption* option;
    QString key;
    enum class Kind { Seconds, Count, Number, Text } kind;
};

// The llm backend's flags (budgets, time-outs, retries, model options) fill in the options of
// every role it plays; then each llm role's options are read as the agents will read them, so that
// a bad value is reported now, naming the option, before a session folder exists. Returns an
// error message, or empty.
QString applyLlmOptions(const QCommandLineParser& p, const CliOptions& o, EngineSettings* s) {
    bool ok = true;
    if (p.isSet(o.tokenBudget)) {
        s->tokenBudget = p.value(o.tokenBudget).toLongLong(&ok);
        if (!ok || s->tokenBudget < 0)
            return u"--token-budget: expected a number of tokens (0 = none), got \"%1\""_s.arg(
                p.value(o.tokenBudget));
    }
    if (p.isSet(o.costBudget)) {
        QString text = p.value(o.costBudget);
        if (text.startsWith(u'$'))
            text.remove(0, 1);
        s->costBudgetUsd = text.toDouble(&ok);
        if (!ok || s->costBudgetUsd < 0)
            return u"--cost-budget: expected US dollars (0 = none), got \"%1\""_s.arg(
                p.value(o.costBudget));
    }
    const QList<Flag> flags = {
        {&o.connectTimeout, u"connect_timeout_s"_s, Flag::Kind::Seconds},
        {&o.firstTokenTimeout, u"first_token_timeout_s"_s, Flag::Kind::Seconds},
        {&o.stallTimeout, u"stall_timeout_s"_s, Flag::Kind::Seconds},
        {&o.totalTimeout, u"total_timeout_s"_s, Flag::Kind::Seconds},
        {&o.maxRetries, u"max_retries"_s, Flag::Kind::Count},
        {&o.maxTokens, u"max_tokens"_s, Flag::Kind::Count},
        {&o.contextTokens, u"context_tokens"_s, Flag::Kind::Count},
        {&o.temperature, u"temperature"_s, Flag::Kind::Number},
        {&o.fallbackModel, u"fallback_model"_s, Flag::Kind::Text},
        {&o.numCtx, u"num_ctx"_s, Flag::Kind::Count},
        {&o.keepAlive, u"keep_alive"_s, Flag::Kind::Text},
    };
    const QList<std::pair<QString, QJsonObject*>> roles = {
        {s->plannerBackend, &s->plannerOptions},
        {s->coderBackend, &s->coderOptions},
        {s->reviewerBackend, &s->reviewerOptions}};
    for (const Flag& flag : flags) {
        if (!p.isSet(*flag.option))
            continue;
        const QString text = p.value(*flag.option);
        QJsonValue value;
        switch (flag.kind) {
        case Flag::Kind::Seconds:
        case Flag::Kind::Number: {
            const double number = text.toDouble(&ok);
            if (!ok || number < 0)
                return u"%1: expected a number%2, got \"%3\""_s.arg(
                    optionName(*flag.option),
                    flag.kind == Flag::Kind::Seconds ? u" of seconds"_s : QString(), text);
            value = number;
            break;
        }
        case Flag::Kind::Count: {
            const int number = text.toInt(&ok);
            if (!ok || number < 0)
                return u"%1: expected a whole number, got \"%2\""_s.arg(optionName(*flag.option),
                                                                        text);
            value = number;
            break;
        }
        case Flag::Kind::Text:
            value = text;
            break;
        }
        bool used = false;
        for (const auto& [backend, options] : roles) {
            if (backend != u"llm"_s)
                continue;
            options->insert(flag.key, value);
            used = true;
        }
        if (!used)
            return u"%1: no role is played by the llm backend (add --backend llm)"_s.arg(
                optionName(*flag.option));
    }
    static const QStringList roleNames = {u"planner"_s, u"coder"_s, u"reviewer"_s};
    for (qsizetype i = 0; i < roles.size(); ++i) {
        if (roles[i].first != u"llm"_s)
            continue;
        QString error;
        if (!LlmSettings::fromOptions(*roles[i].second, roleNames[i], &error))
            return u"the llm %1's options: %2"_s.arg(roleNames[i], error);
    }
    return {};
}

} // namespace

int applyRunOptions(const QCommandLineParser& p, const CliOptions& o, EngineSettings* s,
                    QString* error) {
    if (p.isSet(o.backend))
        s->plannerBackend = s->coderBackend = s->reviewerBackend = p.value(o.backend);
    if (p.isSet(o.planner))
        s->plannerBackend = p.value(o.planner);
    if (p.isSet(o.coder))
        s->coderBackend = p.value(o.coder);
    if (p.isSet(o.reviewer))
        s->reviewerBackend = p.value(o.reviewer);
    if (p.isSet(o.agentOptions) && !applyAgentOptions(p.value(o.agentOptions), s, error)) {
        *error = optionName(o.agentOptions) + QStringLiteral(": ") + *error;
        return ExitUsage;
    }
    if (!applyLlmShortcuts(p, o, s, error) || !applyLimits(p, o, s, error))
        return ExitUsage;
    if (p.isSet(o.step))
        s->stepMode = true;
    if (p.isSet(o.harness)) {
        // Each --harness may itself be a list, as the workbench's setting is.
        s->harnessCommands.clear();
        for (const QString& value : p.values(o.harness)) {
            const auto launchers = EvaluatorPool::parseLaunchers(value, error);
            if (!launchers) {
                *error = optionName(o.harness) + QStringLiteral(": ") + *error;
                return ExitUsage;
            }
            s->harnessCommands += *launchers;
        }
    }
    for (const auto& backend : {s->plannerBackend, s->coderBackend, s->reviewerBackend}) {
        if (!AgentFactory::hasBackend(backend)) {
            QStringList known = AgentFactory::backends();
            *error = QStringLiteral("agent backend \"") + backend +
                     QStringLiteral("\" is not available in this build (available: ") +
                     (known.isEmpty() ? QStringLiteral("none") : known.join(QStringLiteral(", "))) +
                     u')';
            return ExitAgent;
        }
    }
    if (*error = applyLlmOptions(p, o, s); !error->isEmpty())
        return ExitUsage;
    return ExitOk;
}

// The builtin backend has kernel families for the registry's ops only; a custom op would get as
// far as the first plan and fail there, after the workers started. Say so before anything runs.
QString builtinCannotServe(const Task& task, const EngineSettings& s) {
    if (task.op != QLatin1String("custom"))
        return {};
    QStringList roles;
    for (const auto& [role, backend] : {std::pair{QStringLiteral("planner"), s.plannerBackend},
                                        std::pair{QStringLiteral("coder"), s.coderBackend}}) {
        if (backend == QLatin1String("builtin"))
            roles << role;
    }
    if (roles.isEmpty())
        return {};
    return QStringLiteral("task ") + task.name +
           QStringLiteral(" is a custom op, and the builtin backend (") +
           roles.join(QStringLiteral(", ")) +
           QStringLiteral(") has no kernel family for custom ops. Let a model write the kernels "
                          "(--backend llm, with --provider/--base-url/--model), or evaluate your "
                          "own kernel with: kevolve-harness eval --task TASK.json --kernel "
                          "KERNEL.cu (docs/custom-ops.md)");
}

} // namespace kev::cli
