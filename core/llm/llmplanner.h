// The Planning agent played by a model: the reply is a Strategy JSON document, validated against
// the strategy schema and its cross-field rules (and, for a family the built-in backend knows, its
// feasibility on the device) before it is used; otherwise the model is asked again.
#ifndef KEV_LLM_LLMPLANNER_H
#define KEV_LLM_LLMPLANNER_H

#include "agents.h"
#include "llm/llmagent.h"

namespace kev {

class LlmPlanner : public Planner {
    Q_OBJECT
public:
    explicit LlmPlanner(const AgentSettings& settings, QObject* parent = nullptr);

    void plan(const kev::AgentContext& context) override;
    void cancel() override;

    // Empty when `reply` holds a usable strategy, else what is wrong with it.
    static QString check(const QString& reply, const AgentContext& context,
                         std::optional<Strategy>* strategy = nullptr);

private:
    LlmAgent m_agent;
    AgentContext m_context;
};

} // namespace kev

#endif // KEV_LLM_LLMPLANNER_H
