// Renders the LLM agents' prompts from the templates and the agent context, fitted to a token
// budget. What may shrink, in order: the session history (older steps are summarised in one
// line), the knowledge base, compiler output; what never shrinks: the task, the current strategy,
// the best code so far and the latest feedback. A prompt that cannot fit fails with a message
// that says by how much.
#ifndef KEV_LLM_PROMPTBUILDER_H
#define KEV_LLM_PROMPTBUILDER_H

#include "agents.h"
#include "llm/chatrequest.h"
#include "llm/promptlibrary.h"

#include <QHash>
#include <QString>
#include <QStringList>
#include <QVector>

#include <functional>
#include <optional>

namespace kev {

struct RenderedPrompt {
    QVector<ChatMessage> messages; // system, user
    qint64 estimatedTokens = 0;
    // What was shortened to fit, for the log ("history: 12 of 40 steps in full").
    QStringList trimmed;
};

class PromptBuilder {
public:
    PromptBuilder(PromptLibrary library, qint64 promptBudgetTokens);

    std::optional<RenderedPrompt> planner(const AgentContext& context, QString* error) const;
    std::optional<RenderedPrompt> coder(const AgentContext& context, const Strategy& strategy,
                                        QString* error) const;
    std::optional<RenderedPrompt> compileFix(const AgentContext& context, const Strategy& strategy,
                                             const QString& source, const QString& compileLog,
                                             QString* error) const;
    std::optional<RenderedPrompt> reviewer(const AgentContext& context, const Strategy& strategy,
                                           const QString& source, const EvaluationReport& report,
                                           QString* error) const;
    // The message that asks again after an unusable reply.
    std::optional<QString> reask(const QString& problem, const QString& expected,
                                 QString* error) const;

    qint64 budget() const { return m_budget; }
    PromptBuilder withBudget(qint64 promptBudgetTokens) const {
        return PromptBuilder(m_library, promptBudgetTokens);
    }
    // A deliberately high estimate (3 characters per token: code and JSON tokenise densely).
    static qint64 estimateTokens(const QString& text);

    // Pieces of the prompts, public for tests and for other views of the same facts.
    static QHash<QString, QString> taskValues(const Task& task);
    static QHash<QString, QString> deviceValues(const DeviceInfo& device);
    // The history, the last `fullRows` steps one line each and the older ones in one summary.
    static QString historyText(const QVector<IterationSummary>& history, int fullRows);
    static QString bestStrategiesText(const QVector<IterationSummary>& history, int count = 3);
    static QString reportText(const EvaluationReport& report, int compileLogChars = 4000);
    static QString feedbackText(const std::optional<ReviewFeedback>& feedback);
    // Keeps the head and the tail, saying how much was left out.
    static QString trimMiddle(const QString& text, int maxChars);
    // A JSON schema as shown to a model and sent to a server (without $schema and $id).
    static QJsonObject wireSchema(const QString& resource);

private:
    struct Flex {
        QString placeholder;
        QString what;
        int levels;                             // level 0 = in full
        std::function<QString(int level)> text; // the value at a level
    };
    std::optional<RenderedPrompt> render(const QString& role, const QString& title,
                                         QHash<QString, QString> values,
                                         const QVector<Flex>& flexible, QString* error) const;
    QHash<QString, QString> commonValues(const AgentContext& context) const;

    PromptLibrary m_library;
    qint64 m_budget;
};

} // namespace kev

#endif // KEV_LLM_PROMPTBUILDER_H
