#include "enginetext.h"

namespace kev {

using namespace Qt::StringLiterals;

QString EngineText::state(Engine::State state, const QString& detail) {
    const QString on = detail.isEmpty() ? QString() : u" "_s + detail;
    switch (state) {
    case Engine::State::Idle:
        return u"Idle"_s;
    case Engine::State::Starting:
        return u"Starting the session"_s;
    case Engine::State::Planning:
        return u"Planning"_s + on;
    case Engine::State::Coding:
        return u"Writing the kernel"_s + on;
    case Engine::State::Evaluating:
        return u"Evaluating"_s + on + u" on the GPU"_s;
    case Engine::State::Reviewing:
        return u"Reviewing"_s + on;
    case Engine::State::AwaitingGate:
        return detail == u"plan" ? u"Waiting for your decision on the plan"_s
                                 : u"Waiting for your decision on the result"_s;
    case Engine::State::Persisting:
        return u"Saving"_s + on;
    case Engine::State::Finished:
        return u"Finished"_s;
    case Engine::State::Failed:
        return u"Stopped by an error"_s;
    }
    return {};
}

QString EngineText::stopReason(Engine::StopReason reason) {
    switch (reason) {
    case Engine::StopReason::TargetReached:
        return u"target reached"_s;
    case Engine::StopReason::IterationLimit:
        return u"iteration limit"_s;
    case Engine::StopReason::TimeBudget:
        return u"time budget used"_s;
    case Engine::StopReason::TokenBudget:
        return u"token budget used"_s;
    case Engine::StopReason::CostBudget:
        return u"cost budget used"_s;
    case Engine::StopReason::Plateau:
        return u"no further gain (plateau)"_s;
    case Engine::StopReason::UserStop:
        return u"paused by you"_s;
    case Engine::StopReason::Cancelled:
        return u"stopped by you"_s;
    case Engine::StopReason::NoDevice:
        return u"no CUDA device"_s;
    }
    return {};
}

QString EngineText::failure(Engine::Failure failure) {
    switch (failure) {
    case Engine::Failure::HarnessMissing:
        return u"The harness could not be started"_s;
    case Engine::Failure::BadTask:
        return u"The harness refused the task"_s;
    case Engine::Failure::Agent:
        return u"An agent failed"_s;
    case Engine::Failure::Session:
        return u"The session folder could not be used"_s;
    case Engine::Failure::Harness:
        return u"The harness failed"_s;
    }
    return {};
}

} // namespace kev
