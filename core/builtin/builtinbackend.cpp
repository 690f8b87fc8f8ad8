// Registers the "builtin" agent backend (planner, coder and reviewer) with core's AgentFactory
// when the library loads.
#include "builtin/builtincoder.h"
#include "builtin/builtinplanner.h"
#include "builtin/builtinreviewer.h"

using namespace Qt::StringLiterals;

namespace {

const kev::AgentBackendRegistration registration(
    u"builtin"_s, [](const kev::AgentSettings&) { return new kev::BuiltinPlanner; },
    [](const kev::AgentSettings&) { return new kev::BuiltinCoder; },
    [](const kev::AgentSettings&) { return new kev::BuiltinReviewer; },
    u"Offline expert: kernel families, roofline and metric rules, measured search"_s);

} // namespace
