#include "llm/llmagent.h"

#include <QTimer>

using namespace Qt::Literals::StringLiterals;

namespace kev {

namespace {

// What the prompt may use: the context minus the reply, and a margin for the chat template's own
// tokens and for the estimate's error.
qint64 promptBudget(const LlmSettings& settings) {
    return settings.contextTokens - settings.maxTokens - 256;
}

} // namespace

LlmAgent::LlmAgent(const AgentSettings& settings, QObject* owner) {
    m_settings = LlmSettings::fromOptions(settings.options, settings.role, &m_error);
    if (!m_settings)
        return;
    const QStringList dirs =
        m_settings->promptsDir.isEmpty()
            ? PromptLibrary::defaultOverrideDirs()
            : QStringList{m_settings->promptsDir} + PromptLibrary::defaultOverrideDirs();
    m_builder = std::make_unique<PromptBuilder>(PromptLibrary(dirs), promptBudget(*m_settings));
    m_exchange =
        new LlmExchange(*m_settings, settings.keyStore, m_builder.get(), settings.ledger, owner);
}

LlmExchange* LlmAgent::fail(QString* error) const {
    if (error)
        *error = m_error;
    return nullptr;
}

void LlmAgent::deferred(QObject* owner, std::function<void()> emitter) {
    const quint64 generation = ++m_generation;
    QTimer::singleShot(0, owner, [this, generation, emitter = std::move(emitter)] {
        if (generation == m_generation)
            emitter();
    });
}

void LlmAgent::cancel() {
    ++m_generation;
    if (m_exchange)
        m_exchange->cancel();
}

} // namespace kev
