// The planner prompt's section on the per-user knowledge store (issue 18): the same lines the
// built-in planner's rationale cites, so both planners start from what earlier sessions learned.
#pragma once

#include "knowledgehints.h"

#include <QString>

namespace kev {

// The text of {{knowledge_store}}: the best configurations of the nearest solved tasks, the
// regions people rejected (with their reasons) and the edits they approved; a line saying there
// is nothing when the store is off or knows no nearby task.
QString knowledgeStoreText(const KnowledgeHints& hints);

} // namespace kev
