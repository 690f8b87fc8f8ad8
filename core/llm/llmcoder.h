// The Coding agent played by a model: the reply must hold exactly one fenced ```cuda block, which
// is extracted exactly and checked for what the referee would certainly refuse; otherwise the
// model is asked again.
#ifndef KEV_LLM_LLMCODER_H
#define KEV_LLM_LLMCODER_H

#include "agents.h"
#include "llm/llmagent.h"

namespace kev {

class LlmCoder : public Coder {
    Q_OBJECT
public:
    explicit LlmCoder(const AgentSettings& settings, QObject* parent = nullptr);

    void code(const kev::AgentContext& context, const kev::Strategy& strategy) override;
    void fixCompile(const kev::AgentContext& context, const kev::Strategy& strategy,
                    const QString& source, const QString& compileLog) override;
    void cancel() override;

    // Empty when `reply` holds a usable source file, else what is wrong with it.
    static QString check(const QString& reply, QString* source = nullptr);

private:
    void start(const std::optional<RenderedPrompt>& prompt, const QString& error,
               LlmExchange::Rerender rerender);

    LlmAgent m_agent;
};

} // namespace kev

#endif // KEV_LLM_LLMCODER_H
