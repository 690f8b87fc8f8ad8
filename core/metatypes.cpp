#include "metatypes.h"

#include "agents.h"
#include "candidate.h"
#include "decision.h"
#include "deviceinfo.h"
#include "enginesettings.h"
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
    qRegisterMetaType<kev::Decision>();
    qRegisterMetaType<kev::Candidate>();
    qRegisterMetaType<kev::IterationSummary>();
    qRegisterMetaType<kev::AgentContext>();
    qRegisterMetaType<kev::EngineSettings>();
}

} // namespace kev
