#include "metatypes.h"

#include "agents.h"
#include "candidate.h"
#include "decision.h"
#include "deviceinfo.h"
#include "engine.h"
#include "enginesettings.h"
#include "evaluatorpool.h"
#include "gaterequest.h"
#include "sessionstore.h"
#include "evaluationreport.h"
#include "iterationsummary.h"
#include "reviewfeedback.h"
#include "strategy.h"
#include "task.h"

namespace kev {

void registerMetaTypes() {
    qRegisterMetaType<kev::Task>();
    qRegisterMetaType<kev::DeviceInfo>();
    qRegisterMetaType<kev::Strategy>();
    qRegisterMetaType<kev::ReviewFeedback>();
    qRegisterMetaType<kev::EvaluationReport>();
    qRegisterMetaType<kev::AgentTurn>();
    qRegisterMetaType<kev::AgentProgress>();
    qRegisterMetaType<kev::Decision>();
    qRegisterMetaType<kev::Candidate>();
    qRegisterMetaType<kev::IterationSummary>();
    qRegisterMetaType<kev::AgentContext>();
    qRegisterMetaType<kev::EngineSettings>();
    qRegisterMetaType<kev::GateRequest>();
    qRegisterMetaType<kev::SessionInfo>();
    qRegisterMetaType<QVector<kev::IterationSummary>>();
    qRegisterMetaType<QVector<kev::DeviceInfo>>();
    qRegisterMetaType<kev::Engine::State>();
    qRegisterMetaType<kev::Engine::StopReason>();
    qRegisterMetaType<kev::Engine::Failure>();
    qRegisterMetaType<kev::EvaluatorPool::Failure>();
    qRegisterMetaType<kev::EvaluationFailure>();
}

} // namespace kev
