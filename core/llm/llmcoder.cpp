#include "llm/llmcoder.h"

#include "llm/replyparser.h"

using namespace Qt::Literals::StringLiterals;

namespace kev {

LlmCoder::LlmCoder(const AgentSettings& settings, QObject* parent)
    : Coder(parent)
    , m_agent(settings, this) {
    if (LlmExchange* exchange = m_agent.exchange(nullptr)) {
        connect(exchange, &LlmExchange::textAvailable, this, &Coder::textAvailable);
        connect(exchange, &LlmExchange::progressChanged, this, &Coder::progressChanged);
        connect(exchange, &LlmExchange::exchangeFailed, this, &Coder::codeFailed);
        connect(exchange, &LlmExchange::exchangeAvailable, this,
                [this](const QString& reply, const AgentTurn& turn) {
                    QString source;
                    const QString problem = check(reply, &source);
                    if (problem.isEmpty())
                        emit codeAvailable(source, turn);
                    else
                        emit codeFailed(problem);
                });
    }
}

QString LlmCoder::check(const QString& reply, QString* source) {
    QString error;
    const auto block = extractCudaBlock(reply, &error);
    if (!block)
        return error;
    const QStringList problems = lintCandidate(*block);
    if (!problems.isEmpty())
        return u"the file breaks the referee's rules:\n- "_s + problems.join(u"\n- "_s);
    if (source)
        *source = *block;
    return {};
}

void LlmCoder::code(const AgentContext& context, const Strategy& strategy) {
    QString error;
    std::optional<RenderedPrompt> prompt;
    if (m_agent.exchange(&error))
        prompt = m_agent.builder()->coder(context, strategy, &error);
    start(prompt, error, [this, context, strategy](qint64 budget, QString* problem) {
        return m_agent.builder()->withBudget(budget).coder(context, strategy, problem);
    });
}

void LlmCoder::fixCompile(const AgentContext& context, const Strategy& strategy,
                          const QString& source, const QString& compileLog) {
    QString error;
    std::optional<RenderedPrompt> prompt;
    if (m_agent.exchange(&error))
        prompt = m_agent.builder()->compileFix(context, strategy, source, compileLog, &error);
    start(prompt, error,
          [this, context, strategy, source, compileLog](qint64 budget, QString* problem) {
              return m_agent.builder()->withBudget(budget).compileFix(context, strategy, source,
                                                                      compileLog, problem);
          });
}

void LlmCoder::start(const std::optional<RenderedPrompt>& prompt, const QString& error,
                     LlmExchange::Rerender rerender) {
    if (!prompt) {
        m_agent.deferred(this, [this, error] { emit codeFailed(u"llm coder: "_s + error); });
        return;
    }
    m_agent.cancel();
    m_agent.exchange(nullptr)->start(
        *prompt, std::nullopt, QString(),
        u"a short plan and then the whole file in exactly one ```cuda block"_s,
        [](const QString& reply) { return check(reply); }, std::move(rerender));
}

void LlmCoder::cancel() {
    m_agent.cancel();
}

} // namespace kev
