// What the three LLM agents share: their settings (read once, so a bad option is reported on the
// first request with the option named), the prompt builder, and the exchange with the model.
#ifndef KEV_LLM_LLMAGENT_H
#define KEV_LLM_LLMAGENT_H

#include "agents.h"
#include "llm/llmexchange.h"
#include "llm/llmsettings.h"
#include "llm/promptbuilder.h"

#include <QObject>

#include <functional>
#include <memory>
#include <optional>

namespace kev {

class LlmAgent {
public:
    LlmAgent(const AgentSettings& settings, QObject* owner);

    // Null with *error set when the options are not usable.
    LlmExchange* exchange(QString* error) const { return m_exchange ? m_exchange : fail(error); }
    const PromptBuilder* builder() const { return m_builder.get(); }
    const std::optional<LlmSettings>& settings() const { return m_settings; }

    // Runs `emitter` from the event loop unless the agent was asked for something else or
    // cancelled in between: results never arrive inside the call that asked for them.
    void deferred(QObject* owner, std::function<void()> emitter);
    void cancel();

private:
    LlmExchange* fail(QString* error) const;

    std::optional<LlmSettings> m_settings;
    QString m_error;
    std::unique_ptr<PromptBuilder> m_builder;
    LlmExchange* m_exchange = nullptr;
    quint64 m_generation = 0;
};

} // namespace kev

#endif // KEV_LLM_LLMAGENT_H
