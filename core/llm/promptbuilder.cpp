#include "llm/promptbuilder.h"

#include "jsonschema.h"
#include "llm/llmhooks.h"
#include "llm/promptknowledge.h"
#include "llm/privatepaths.h"
#include "llm/prompttext.h"

#include <QJsonDocument>

#include <algorithm>

using namespace Qt::Literals::StringLiterals;

namespace kev {

using prompttext::json;
using prompttext::number;
using prompttext::planChecksText;

namespace {

QString optionalNumber(const std::optional<double>& value, const QString& suffix = {},
                       int precision = 4) {
    return value ? number(*value, precision) + suffix : u"-"_s;
}

QString summaryRow(const IterationSummary& s) {
    QString row = u"v%1"_s.arg(s.version);
    if (s.parentVersion > 0)
        row += u" (from v%1)"_s.arg(s.parentVersion);
    row += u" | "_s + (s.plan.isEmpty() ? s.family : s.plan);
    row += u" | "_s + s.status + (s.suspicious ? u" (suspicious)"_s : QString());
    if (s.speedup) {
        row += u" | %1x"_s.arg(number(*s.speedup, 3));
        if (s.ciLow && s.ciHigh)
            row += u" [%1, %2]"_s.arg(number(*s.ciLow, 3), number(*s.ciHigh, 3));
    }
    if (s.medianMs)
        row += u" | %1 ms"_s.arg(number(*s.medianMs));
    if (s.percentOfFloor)
        row += u" | %1% of floor"_s.arg(number(*s.percentOfFloor, 3));
    if (!s.bottleneckId.isEmpty())
        row += u" | bottleneck "_s + s.bottleneckId;
    if (!s.blame.isEmpty())
        row += u" | blame "_s + s.blame;
    if (!s.decision.isEmpty()) {
        row += u" | "_s + s.decision;
        if (!s.decisionReason.isEmpty())
            row += u": "_s + s.decisionReason.simplified();
    }
    return row;
}

} // namespace

PromptBuilder::PromptBuilder(PromptLibrary library, qint64 promptBudgetTokens)
    : m_library(std::move(library))
    , m_budget(promptBudgetTokens) {}

qint64 PromptBuilder::estimateTokens(const QString& text) {
    return (text.size() + 2) / 3;
}

QHash<QString, QString> PromptBuilder::deviceValues(const DeviceInfo& device) {
    const QString arch = device.arch();
    return {
        {u"device.name"_s, device.name.isEmpty() ? u"(unknown GPU)"_s : device.name},
        {u"device.arch"_s, arch},
        {u"device.arch_digits"_s, arch.startsWith(u"sm_"_s) ? arch.mid(3) : arch},
        {u"device.cc"_s, u"%1.%2"_s.arg(device.ccMajor).arg(device.ccMinor)},
        {u"device.sm_count"_s, QString::number(device.smCount)},
        {u"device.l2_mib"_s, number(static_cast<double>(device.l2Bytes) / (1 << 20), 3)},
        {u"device.smem_optin"_s, QString::number(device.smemPerBlockOptin)},
        {u"device.smem_per_sm"_s, QString::number(device.smemPerSm)},
        {u"device.regs_per_sm"_s, QString::number(device.regsPerSm)},
    };
}

QString PromptBuilder::historyText(const QVector<IterationSummary>& history, int fullRows) {
    if (history.isEmpty())
        return u"(none yet: this is the first iteration)"_s;
    const qsizetype full = std::clamp<qsizetype>(fullRows, 0, history.size());
    const qsizetype older = history.size() - full;
    QStringList lines;
    if (older > 0) {
        QHash<QString, int> statuses;
        QStringList families;
        const IterationSummary* best = nullptr;
        for (qsizetype i = 0; i < older; ++i) {
            const IterationSummary& s = history[i];
            ++statuses[s.status];
            if (!s.family.isEmpty() && !families.contains(s.family))
                families << s.family;
            if (s.isTrustworthy() && (!best || *s.speedup > *best->speedup))
                best = &s;
        }
        QStringList counts;
        QStringList keys = statuses.keys();
        keys.sort();
        for (const QString& key : keys)
            counts << u"%1 %2"_s.arg(key).arg(statuses.value(key));
        QString line = u"v%1 to v%2 (%3 steps, summarised): %4; families tried: %5"_s.arg(
            QString::number(history.first().version), QString::number(history[older - 1].version),
            QString::number(older), counts.join(u", "_s),
            families.isEmpty() ? u"-"_s : families.join(u", "_s));
        if (best)
            line += u"; best %1x at v%2 (%3)"_s.arg(number(*best->speedup, 3),
                                                    QString::number(best->version), best->plan);
        lines << line;
    }
    for (qsizetype i = older; i < history.size(); ++i)
        lines << summaryRow(history[i]);
    return lines.join(u'\n');
}

QString PromptBuilder::bestStrategiesText(const QVector<IterationSummary>& history, int count) {
    QVector<IterationSummary> ranked;
    for (const IterationSummary& s : history) {
        if (s.isTrustworthy())
            ranked << s;
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return *a.speedup > *b.speedup; });
    if (ranked.isEmpty())
        return u"(none yet: no correct, timed kernel so far)"_s;
    QStringList lines;
    for (qsizetype i = 0; i < std::min<qsizetype>(count, ranked.size()); ++i)
        lines << u"%1. v%2: %3 at %4x"_s.arg(QString::number(i + 1),
                                             QString::number(ranked[i].version), ranked[i].plan,
                                             number(*ranked[i].speedup, 3));
    return lines.join(u'\n');
}

QString PromptBuilder::trimMiddle(const QString& text, int maxChars) {
    if (text.size() <= maxChars)
        return text;
    const int head = maxChars * 3 / 4;
    const int tail = maxChars - head;
    return text.left(head) +
           u"\n[... %1 characters left out ...]\n"_s.arg(text.size() - head - tail) +
           text.right(tail);
}

QString PromptBuilder::reportText(const EvaluationReport& report, int compileLogChars) {
    QStringList lines;
    lines << u"status: %1%2"_s.arg(EvaluationReport::statusToString(report.status),
                                   report.suspicious ? u" (flagged suspicious)"_s : QString());
    if (!report.message.isEmpty())
        lines << u"message: "_s + withoutPrivatePaths(report.message);
    QString compile = report.compileOk
                          ? u"compile: ok in %1 s"_s.arg(number(report.compileSeconds, 3))
                          : u"compile: failed"_s;
    for (const KernelResources& kernel : report.kernels)
        compile +=
            u"; kernel %1: %2 registers, %3 B static shared memory, %4 B stack, spills "
            u"%5 B stored / %6 B loaded"_s.arg(
                kernel.name, QString::number(kernel.registers),
                QString::number(kernel.sharedStaticBytes), QString::number(kernel.stackBytes),
                QString::number(kernel.spillStoreBytes), QString::number(kernel.spillLoadBytes));
    lines << compile;
    if (!report.rulesOk || !report.violations.isEmpty())
        lines << u"rules: violated: "_s + report.violations.join(u"; "_s);
    if (report.correctness.present) {
        QString correctness = u"correctness: %1, %2 of %3 trials passed, worst error %4 of the "
                              u"bound"_s.arg(report.correctness.ok ? u"ok"_s : u"failed"_s)
                                  .arg(report.correctness.passed)
                                  .arg(report.correctness.trials)
                                  .arg(number(report.correctness.worstMargin, 3));
        if (!report.correctness.firstFailure.isEmpty())
            correctness += u"; first failure: "_s + report.correctness.firstFailure;
        lines << correctness;
    }
    if (report.timed)
        lines << u"timing: %1 ms, reference %2 ms; speedup %3 (95% CI %4 to %5); %6 TFLOP/s, "
                 u"reference %7 TFLOP/s"_s.arg(number(report.medianMs), number(report.referenceMs),
                                               number(report.speedup, 4), number(report.ciLow, 4),
                                               number(report.ciHigh, 4), number(report.tflops),
                                               number(report.referenceTflops));
    else
        lines << u"timing: none (only correct kernels are timed)"_s;
    if (report.floorMs || report.percentOfFloor)
        lines << u"roofline: floor %1, %2 of the floor, %3"_s.arg(
            optionalNumber(report.floorMs, u" ms"_s), optionalNumber(report.percentOfFloor, u"%"_s),
            report.bound.isEmpty() ? u"bound unknown"_s : report.bound + u"-bound"_s);
    for (const auto& [key, section] : {std::pair{u"profile"_s, report.profile.profileSection},
                                       std::pair{u"metrics"_s, report.profile.metricsSection}}) {
        if (section)
            lines << u"%1: %2"_s.arg(
                key, trimMiddle(
                         QString::fromUtf8(QJsonDocument(*section).toJson(QJsonDocument::Compact)),
                         6000));
    }
    if (!report.errorStage.isEmpty() || !report.errorMessage.isEmpty())
        lines << u"error (%1): %2"_s.arg(report.errorStage, report.errorMessage);
    if (!report.compileOk && !report.compileLog.isEmpty())
        lines << u"compiler output:\n"_s +
                     trimMiddle(withoutPrivatePaths(report.compileLog), compileLogChars);
    return lines.join(u'\n');
}

QString PromptBuilder::feedbackText(const std::optional<ReviewFeedback>& feedback) {
    if (!feedback)
        return u"(none yet)"_s;
    return u"```json\n"_s + json(feedback->toJson()) + u"\n```"_s;
}

QJsonObject PromptBuilder::wireSchema(const QString& resource) {
    QString error;
    auto schema = readJsonObjectFile(resource, &error);
    if (!schema)
        return {};
    schema->remove(u"$schema"_s);
    schema->remove(u"$id"_s);
    return *schema;
}

QHash<QString, QString> PromptBuilder::commonValues(const AgentContext& context) const {
    QHash<QString, QString> values = taskValues(context.task);
    const auto device =
        deviceValues(context.device.isValid() ? context.device : DeviceInfo::h200());
    for (auto it = device.begin(); it != device.end(); ++it)
        values.insert(it.key(), it.value());
    values[u"abi"_s] = PromptLibrary::abiText().trimmed();
    values[u"human_note"_s] =
        context.humanNote.isEmpty() ? u"(none)"_s : context.humanNote.trimmed();
    values[u"feedback"_s] = feedbackText(context.lastFeedback);
    return values;
}

std::optional<RenderedPrompt> PromptBuilder::render(const QString& role, const QString& title,
                                                    QHash<QString, QString> values,
                                                    const QVector<Flex>& flexible,
                                                    QString* error) const {
    const auto system = m_library.load(u"system"_s, error);
    const auto user = system ? m_library.load(role, error) : std::nullopt;
    if (!user)
        return std::nullopt;
    values[u"agent.title"_s] = title;

    QVector<int> levels(flexible.size(), 0);
    for (;;) {
        QStringList trimmed;
        for (qsizetype i = 0; i < flexible.size(); ++i) {
            values[flexible[i].placeholder] = flexible[i].text(levels[i]);
            if (levels[i] > 0)
                trimmed << flexible[i].what;
        }
        const auto systemText = system->render(values, error);
        const auto userText = systemText ? user->render(values, error) : std::nullopt;
        if (!userText)
            return std::nullopt;
        const qint64 tokens = estimateTokens(*systemText) + estimateTokens(*userText);
        if (tokens <= m_budget) {
            RenderedPrompt prompt;
            prompt.messages = {{u"system"_s, *systemText}, {u"user"_s, *userText}};
            prompt.estimatedTokens = tokens;
            prompt.trimmed = trimmed;
            return prompt;
        }
        qsizetype next = 0;
        while (next < flexible.size() && levels[next] + 1 >= flexible[next].levels)
            ++next;
        if (next == flexible.size()) {
            if (error)
                *error = u"the %1 prompt needs about %2 tokens even with the history and "
                         u"knowledge shortened, but only %3 fit (context_tokens minus max_tokens); "
                         u"raise context_tokens or lower max_tokens"_s.arg(
                             role, QString::number(tokens), QString::number(m_budget));
            return std::nullopt;
        }
        ++levels[next];
    }
}

std::optional<RenderedPrompt> PromptBuilder::planner(const AgentContext& context,
                                                     QString* error) const {
    QHash<QString, QString> values = commonValues(context);
    // Issue 18: a repeat of a measured kernel is sent back, and a beam's slots should spread.
    QStringList search;
    if (!context.duplicateNote.isEmpty())
        search << u"Your previous plan for this slot was not evaluated: %1. Propose a different "
                  "configuration."_s.arg(context.duplicateNote);
    QStringList others;
    for (const Strategy& other : context.otherSlotPlans)
        others << other.summary();
    if (!others.isEmpty())
        search << u"Other slots of this iteration already hold: %1. Propose a configuration far "
                  "from them."_s.arg(others.join(u"; "_s));
    if (!search.isEmpty())
        values[u"human_note"_s] =
            (context.humanNote.isEmpty() ? QString() : context.humanNote.trimmed() + u'\n') +
            search.join(u'\n');
    values[u"best_strategies"_s] = bestStrategiesText(context.history);
    values[u"knowledge_store"_s] = knowledgeStoreText(context.knowledge);
    if (context.parentStrategy) {
        QString parent = u"Strategy %1:\n```json\n%2\n```"_s.arg(
            context.parentStrategy->summary(), json(context.parentStrategy->toJson()));
        if (context.parentReport)
            parent += u"\nIts report:\n"_s + reportText(*context.parentReport);
        values[u"parent"_s] = parent;
    } else {
        values[u"parent"_s] = u"(none: this is the first iteration)"_s;
    }
    values[u"beam_note"_s] =
        context.beamWidth > 1 && context.beamIndex > 0
            ? u"This iteration explores %1 strategies in parallel and you write number %2: choose "
              u"a clearly different family or tile shape from the parent's and from the best "
              u"strategies so far."_s.arg(context.beamWidth)
                  .arg(context.beamIndex + 1)
            : QString();
    values[u"strategy_schema"_s] = json(wireSchema(u":/schemas/strategy.schema.json"_s));
    values[u"task.plan_checks"_s] = planChecksText(context.task, values);

    const QVector<IterationSummary> history = context.history;
    static const int rows[] = {1 << 30, 16, 8, 4, 2, 1, 0};
    const QString knowledge = plannerKnowledge(context.task, context.device);
    static const int knowledgeChars[] = {1 << 30, 6000, 3000, 1500, 0};
    const QVector<Flex> flexible = {
        {u"history"_s, u"history"_s, 7,
         [history](int level) { return historyText(history, rows[level]); }},
        {u"knowledge"_s, u"knowledge"_s, 5,
         [knowledge](int level) {
             return knowledgeChars[level] == 0 ? u"(left out to fit the context)"_s
                                               : trimMiddle(knowledge, knowledgeChars[level]);
         }},
    };
    return render(u"planner"_s, u"Planning agent"_s, values, flexible, error);
}

std::optional<RenderedPrompt> PromptBuilder::coder(const AgentContext& context,
                                                   const Strategy& strategy, QString* error) const {
    QHash<QString, QString> values = commonValues(context);
    values[u"strategy"_s] = json(strategy.toJson());
    values[u"best_code"_s] = context.parentSource.isEmpty()
                                 ? u"(none yet: this is the first version)"_s
                                 : u"```cuda\n%1\n```"_s.arg(context.parentSource.trimmed());
    return render(u"coder"_s, u"Coding agent"_s, values, {}, error);
}

std::optional<RenderedPrompt>
PromptBuilder::compileFix(const AgentContext& context, const Strategy& strategy,
                          const QString& source, const QString& compileLog, QString* error) const {
    QHash<QString, QString> values = commonValues(context);
    values[u"strategy"_s] = json(strategy.toJson());
    values[u"source"_s] = source.trimmed();
    static const int logChars[] = {1 << 30, 16000, 8000, 4000, 2000};
    const QString log = withoutPrivatePaths(compileLog).trimmed();
    const QVector<Flex> flexible = {
        {u"compile_log"_s, u"compiler output"_s, 5,
         [log](int level) { return trimMiddle(log, logChars[level]); }},
    };
    return render(u"compile_fix"_s, u"Coding agent"_s, values, flexible, error);
}

std::optional<RenderedPrompt> PromptBuilder::reviewer(const AgentContext& context,
                                                      const Strategy& strategy,
                                                      const QString& source,
                                                      const EvaluationReport& report,
                                                      QString* error) const {
    QHash<QString, QString> values = commonValues(context);
    values[u"strategy"_s] = json(strategy.toJson());
    values[u"source"_s] = source.trimmed();
    values[u"review_schema"_s] = json(wireSchema(u":/schemas/review.schema.json"_s));
    if (const auto hints = reviewHints(context.task, report)) {
        values[u"review_hints"_s] = hints->trimmed();
    } else {
        const auto hintTemplate = m_library.load(u"review_hints"_s, error);
        const auto text = hintTemplate ? hintTemplate->render({}, error) : std::nullopt;
        if (!text)
            return std::nullopt;
        values[u"review_hints"_s] = text->trimmed();
    }
    const QVector<IterationSummary> history = context.history;
    static const int rows[] = {1 << 30, 8, 4, 2, 0};
    static const int logChars[] = {4000, 2000, 1000};
    const QVector<Flex> flexible = {
        {u"history"_s, u"history"_s, 5,
         [history](int level) { return historyText(history, rows[level]); }},
        {u"report"_s, u"compiler output in the report"_s, 3,
         [report](int level) { return reportText(report, logChars[level]); }},
    };
    return render(u"reviewer"_s, u"Review agent"_s, values, flexible, error);
}

std::optional<QString> PromptBuilder::reask(const QString& problem, const QString& expected,
                                            QString* error) const {
    const auto reaskTemplate = m_library.load(u"reask"_s, error);
    if (!reaskTemplate)
        return std::nullopt;
    return reaskTemplate->render({{u"error"_s, problem}, {u"expected"_s, expected}}, error);
}

} // namespace kev