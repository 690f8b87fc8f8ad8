#include "llm/llmplanner.h"

#include "builtin/kernelfamily.h"
#include "llm/replyparser.h"

using namespace Qt::Literals::StringLiterals;

namespace kev {

LlmPlanner::LlmPlanner(const AgentSettings& settings, QObject* parent)
    : Planner(parent)
    , m_agent(settings, this) {
    if (LlmExchange* exchange = m_agent.exchange(nullptr)) {
        connect(exchange, &LlmExchange::textAvailable, this, &Planner::textAvailable);
        connect(exchange, &LlmExchange::progressChanged, this, &Planner::progressChanged);
        connect(exchange, &LlmExchange::exchangeFailed, this, &Planner::planFailed);
        connect(exchange, &LlmExchange::exchangeAvailable, this,
                [this](const QString& reply, const AgentTurn& turn) {
                    std::optional<Strategy> strategy;
                    const QString problem = check(reply, m_context, &strategy);
                    if (strategy)
                        emit planAvailable(*strategy, turn);
                    else
                        emit planFailed(problem);
                });
    }
}

QString LlmPlanner::check(const QString& reply, const AgentContext& context,
                          std::optional<Strategy>* strategy) {
    QString error;
    const auto object = extractJsonObject(reply, &error);
    if (!object)
        return error;
    auto parsed = Strategy::fromJson(*object, &error);
    if (!parsed)
        return u"the strategy does not follow the schema:\n"_s + error;
    if (const KernelFamily* family = FamilyRegistry::instance().find(parsed->family)) {
        const DeviceInfo device = context.device.isValid() ? context.device : DeviceInfo::h200();
        const QStringList problems = family->constraints(*parsed, context.task, device);
        if (!problems.isEmpty())
            return u"the strategy cannot run on %1:\n- %2"_s.arg(device.name,
                                                                 problems.join(u"\n- "_s));
    }
    if (strategy)
        *strategy = std::move(parsed);
    return {};
}

void LlmPlanner::plan(const AgentContext& context) {
    QString error;
    LlmExchange* exchange = m_agent.exchange(&error);
    const auto prompt =
        exchange ? m_agent.builder()->planner(context, &error) : std::optional<RenderedPrompt>();
    if (!prompt) {
        m_agent.deferred(this, [this, error] { emit planFailed(u"llm planner: "_s + error); });
        return;
    }
    m_agent.cancel();
    m_context = context;
    exchange->start(
        *prompt, PromptBuilder::wireSchema(u":/schemas/strategy.schema.json"_s), u"strategy"_s,
        u"one JSON object: the strategy, valid against the schema"_s,
        [this](const QString& reply) { return check(reply, m_context); },
        [this](qint64 budget, QString* problem) {
            return m_agent.builder()->withBudget(budget).planner(m_context, problem);
        });
}

void LlmPlanner::cancel() {
    m_agent.cancel();
}

} // namespace kev
