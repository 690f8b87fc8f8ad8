// Context other parts of Kevolve offer to the LLM agents' prompts. The built-in backend's
// knowledge base (core/builtin/) describes the kernel families to the planner; a richer summary
// or the built-in reviewer's metric rules can be installed here without the LLM code knowing them.
#ifndef KEV_LLM_LLMHOOKS_H
#define KEV_LLM_LLMHOOKS_H

#include "deviceinfo.h"
#include "evaluationreport.h"
#include "task.h"

#include <QString>

#include <functional>
#include <optional>

namespace kev {

using PlannerKnowledgeProvider = std::function<QString(const Task&, const DeviceInfo&)>;
using ReviewHintsProvider = std::function<QString(const Task&, const EvaluationReport&)>;

// Replaces the default summary (below); an empty function restores it.
void setPlannerKnowledgeProvider(PlannerKnowledgeProvider provider);
void setReviewHintsProvider(ReviewHintsProvider provider);

// The installed provider's text, else a summary of the built-in family registry: each family that
// supports the task on the device, its knobs and their values, and a feasible starting point.
QString plannerKnowledge(const Task& task, const DeviceInfo& device);
// The installed provider's text, or nullopt: the reviewer then uses prompts/review_hints.txt.
std::optional<QString> reviewHints(const Task& task, const EvaluationReport& report);

} // namespace kev

#endif // KEV_LLM_LLMHOOKS_H
