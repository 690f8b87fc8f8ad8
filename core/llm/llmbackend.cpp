// Registers the "llm" agent backend: every role played by a model behind an OpenAI-compatible
// chat-completions endpoint.
#include "llm/llmcoder.h"
#include "llm/llmplanner.h"
#include "llm/llmreviewer.h"

namespace kev {

namespace {

const AgentBackendRegistration registration(
    QStringLiteral("llm"),
    [](const AgentSettings& settings) -> Planner* { return new LlmPlanner(settings); },
    [](const AgentSettings& settings) -> Coder* { return new LlmCoder(settings); },
    [](const AgentSettings& settings) -> Reviewer* { return new LlmReviewer(settings); },
    QStringLiteral("a model behind an OpenAI-compatible chat-completions endpoint (options: "
                   "preset, base_url, model, ...; key from <PRESET>_API_KEY or KEVOLVE_API_KEY)"));

} // namespace

} // namespace kev
