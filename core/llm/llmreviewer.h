// The Review agent played by a model: the reply is a ReviewFeedback JSON document, validated
// against the review schema before it is used; otherwise the model is asked again. The measured
// fields (compile ok, correct, status, times, speedup, % of floor) are then taken from the report
// itself: agents interpret, never measure.
#ifndef KEV_LLM_LLMREVIEWER_H
#define KEV_LLM_LLMREVIEWER_H

#include "agents.h"
#include "llm/llmagent.h"

namespace kev {

class LlmReviewer : public Reviewer {
    Q_OBJECT
public:
    explicit LlmReviewer(const AgentSettings& settings, QObject* parent = nullptr);

    void review(const kev::AgentContext& context, const kev::Strategy& strategy,
                const QString& source, const kev::EvaluationReport& report) override;
    void cancel() override;

    // Empty when `reply` holds usable feedback, else what is wrong with it.
    static QString check(const QString& reply, std::optional<ReviewFeedback>* feedback = nullptr);
    // The feedback with every measured field copied from the report.
    static ReviewFeedback withReportFacts(ReviewFeedback feedback, const EvaluationReport& report);

private:
    LlmAgent m_agent;
    EvaluationReport m_report;
};

} // namespace kev

#endif // KEV_LLM_LLMREVIEWER_H
