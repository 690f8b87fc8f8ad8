#include "llm/llmreviewer.h"

#include "llm/replyparser.h"

using namespace Qt::Literals::StringLiterals;

namespace kev {

LlmReviewer::LlmReviewer(const AgentSettings& settings, QObject* parent)
    : Reviewer(parent)
    , m_agent(settings, this) {
    if (LlmExchange* exchange = m_agent.exchange(nullptr)) {
        connect(exchange, &LlmExchange::textAvailable, this, &Reviewer::textAvailable);
        connect(exchange, &LlmExchange::progressChanged, this, &Reviewer::progressChanged);
        connect(exchange, &LlmExchange::exchangeFailed, this, &Reviewer::reviewFailed);
        connect(exchange, &LlmExchange::exchangeAvailable, this,
                [this](const QString& reply, const AgentTurn& turn) {
                    std::optional<ReviewFeedback> feedback;
                    const QString problem = check(reply, &feedback);
                    if (feedback)
                        emit reviewAvailable(withReportFacts(*feedback, m_report), turn);
                    else
                        emit reviewFailed(problem);
                });
    }
}

QString LlmReviewer::check(const QString& reply, std::optional<ReviewFeedback>* feedback) {
    QString error;
    const auto object = extractJsonObject(reply, &error);
    if (!object)
        return error;
    auto parsed = ReviewFeedback::fromJson(*object, &error);
    if (!parsed)
        return u"the feedback does not follow the schema:\n"_s + error;
    if (feedback)
        *feedback = std::move(parsed);
    return {};
}

ReviewFeedback LlmReviewer::withReportFacts(ReviewFeedback feedback,
                                            const EvaluationReport& report) {
    feedback.compileOk = report.compileOk;
    feedback.correct = report.isCorrect();
    feedback.status = EvaluationReport::statusToString(report.status);
    feedback.timeMs = report.timed ? std::optional<double>(report.medianMs) : std::nullopt;
    feedback.referenceMs = report.timed ? std::optional<double>(report.referenceMs) : std::nullopt;
    feedback.speedup = report.timed ? std::optional<double>(report.speedup) : std::nullopt;
    feedback.percentOfFloor = report.percentOfFloor;
    return feedback;
}

void LlmReviewer::review(const AgentContext& context, const Strategy& strategy,
                         const QString& source, const EvaluationReport& report) {
    QString error;
    LlmExchange* exchange = m_agent.exchange(&error);
    const auto prompt = exchange
                            ? m_agent.builder()->reviewer(context, strategy, source, report, &error)
                            : std::optional<RenderedPrompt>();
    if (!prompt) {
        m_agent.deferred(this, [this, error] { emit reviewFailed(u"llm reviewer: "_s + error); });
        return;
    }
    m_agent.cancel();
    m_report = report;
    exchange->start(
        *prompt, PromptBuilder::wireSchema(u":/schemas/review.schema.json"_s), u"review"_s,
        u"one JSON object: the feedback, valid against the schema"_s,
        [](const QString& reply) { return check(reply); },
        [this, context, strategy, source](qint64 budget, QString* problem) {
            return m_agent.builder()->withBudget(budget).reviewer(context, strategy, source,
                                                                  m_report, problem);
        });
}

void LlmReviewer::cancel() {
    m_agent.cancel();
}

} // namespace kev
