// What the engine shows a person when it waits at the gate in step mode.
#pragma once

#include "candidate.h"

#include <QMetaType>
#include <QVector>

namespace kev {

struct GateRequest {
    enum class Kind {
        // After planning (EngineSettings::gatePlans): approve to code the plans, submitPlan to
        // replace one, reject to plan again with the reason.
        Plan,
        // After evaluation and review: approve a version (the next iteration builds on it),
        // submitCode / submitPlan (the edit is evaluated as the next version), or reject with a
        // reason (fed back to the agents).
        Result
    };

    Kind kind = Kind::Result;
    int iteration = 0;
    // The iteration's candidates: plans only for Kind::Plan, evaluated and reviewed for Result.
    QVector<Candidate> candidates;
    // The engine's own choice among them (the fastest trustworthy one), or 0.
    int suggestedVersion = 0;
};

} // namespace kev

Q_DECLARE_METATYPE(kev::GateRequest)
