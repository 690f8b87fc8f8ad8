// The engine's states, stop reasons and failures in the words a person reads in the status bar and
// in messages; the enum names (AwaitingGate, HarnessMissing) are for logs and tests.
#pragma once

#include "core/engine.h"

#include <QString>

namespace kev {

class EngineText {
public:
    // "planning v3", "evaluating v3 on the GPU", "waiting for your decision on the result", ...
    // detail is what the engine sent with the state (a version label, "result", "plan", or a
    // message for Finished and Failed).
    static QString state(Engine::State state, const QString& detail);
    // "target reached", "iteration limit", ...
    static QString stopReason(Engine::StopReason reason);
    // "The harness could not be started", ...
    static QString failure(Engine::Failure failure);
};

} // namespace kev
