// The built-in Review agent: rules over the harness report (status, correctness, timing, ptxas
// resources) and, when the report carries them, profiler metrics. Each rule names a bottleneck and
// the parameter moves that usually relieve it; the moves go into the feedback's evidence
// ("moves": [{"param", "step", "why"}]) where the built-in planner reads them.
#ifndef KEV_BUILTIN_BUILTINREVIEWER_H
#define KEV_BUILTIN_BUILTINREVIEWER_H

#include "agents.h"

namespace kev {

// The rules, usable without the agent object (tests, the LLM reviewer's prompt).
ReviewFeedback reviewReport(const AgentContext& context, const Strategy& strategy,
                            const QString& source, const EvaluationReport& report);

// Profiler metrics of the candidate as flat name -> number, from the report's "profile" section
// when present (empty when the report has none).
QJsonObject candidateMetrics(const EvaluationReport& report);

class BuiltinReviewer : public Reviewer {
    Q_OBJECT
public:
    explicit BuiltinReviewer(QObject* parent = nullptr);

    void review(const kev::AgentContext& context, const kev::Strategy& strategy,
                const QString& source, const kev::EvaluationReport& report) override;
    void cancel() override;

private:
    quint64 m_request = 0;
};

} // namespace kev

#endif // KEV_BUILTIN_BUILTINREVIEWER_H
