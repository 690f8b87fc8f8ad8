// The "scripted" agent backend: deterministic planner, coder and reviewer for tests and demos.
// Their behaviour comes from AgentSettings::options, or from the JSON file named by
// options["script"] or by $KEVOLVE_SCRIPTED_AGENTS when options are empty:
//
//   {
//     "plans":   [ {strategy}, ... ],        planner call n answers plans[n] (the last repeats);
//                                            without plans, a valid fma_tiled plan
//     "sources": [ "...", ... ],             coder call n (code or fixCompile) answers sources[n]
//     "beam_sources": [[...], [...]],        per beam index, instead of sources
//     "blames":  [ "strategy", ... ],        reviewer call n blames blames[n] (default: derived)
//     "fail_planner_at": 2,                  1-based call that fails (also coder, reviewer)
//     "delay_ms": 0,                         answer after this delay
//     "tokens": 0                            tokens counted per turn
//   }
//
// Sources may hold {iteration}, {beam}, {attempt} and {version_hint}, replaced per call; the fake
// harness picks its report from a "// fake: ..." line in the source.
#pragma once

#include "agents.h"

#include <QJsonObject>

namespace kev {

QJsonObject scriptedAgentOptions(const AgentSettings& settings);

} // namespace kev
