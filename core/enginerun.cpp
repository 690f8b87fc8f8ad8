#include "enginerun.h"

#include "keystore.h"

#include <QTimer>

#include <algorithm>

namespace kev {

namespace {

QString versionLabel(int version) {
    return QStringLiteral("v") + QString::number(version);
}

bool floorTargetApplies(const IterationSummary& step, const EngineSettings& settings) {
    return settings.targetFloorPercent > 0 && step.bound == QLatin1String("memory");
}

// The best step that meets every target that applies to it: trustworthy, not rejected, at the
// target speedup and, for a memory-bound task, at the target share of the DRAM floor (beating a
// plain reference kernel says little there).
std::optional<IterationSummary> stepMeetingTarget(const QVector<IterationSummary>& steps,
                                                  const EngineSettings& settings) {
    if (settings.targetSpeedup <= 0)
        return std::nullopt;
    std::optional<IterationSummary> best;
    for (const auto& s : steps) {
        if (!s.isTrustworthy() || s.decision == QLatin1String("rejected") ||
            *s.speedup < settings.targetSpeedup)
            continue;
        if (floorTargetApplies(s, settings) &&
            (!s.percentOfFloor || *s.percentOfFloor < settings.targetFloorPercent))
            continue;
        if (!best || *s.speedup > *best->speedup)
            best = s;
    }
    return best;
}

QString targetMessage(const IterationSummary& step, const EngineSettings& settings) {
    const QString speedup = QString::number(*step.speedup, 'f', 3);
    const QString target = QString::number(settings.targetSpeedup, 'f', 3);
    if (!floorTargetApplies(step, settings))
        return QStringLiteral("target reached: ") + speedup +
               QStringLiteral("x the reference (target ") + target +
               QStringLiteral("x), correct and not suspicious");
    return QStringLiteral("target reached: ") + speedup + QStringLiteral("x the reference and ") +
           QString::number(*step.percentOfFloor, 'f', 1) +
           QStringLiteral("% of the DRAM floor (targets ") + target + QStringLiteral("x, ") +
           QString::number(settings.targetFloorPercent) +
           QStringLiteral("%), correct and not suspicious");
}

} // namespace

double EngineRun::bestTrustworthySpeedup(const QVector<IterationSummary>& steps) {
    double best = 0;
    for (const auto& s : steps) {
        if (s.isTrustworthy() && s.decision != QLatin1String("rejected"))
            best = std::max(best, *s.speedup);
    }
    return best;
}

EngineRun::EngineRun(QObject* parent)
    : QObject(parent) {}

EngineRun::~EngineRun() {
    halt();
}

void EngineRun::setState(Engine::State state, const QString& detail) {
    emit stateChanged(state, detail);
}

void EngineRun::start(const Task& task, const EngineSettings& settings, const QString& sessionDir) {
    if (m_active) {
        emit progressAvailable(0, QStringLiteral("engine"), QStringLiteral("already running"), -1);
        return;
    }
    setState(Engine::State::Starting, sessionDir);
    const QStringList problems = settings.validate();
    if (!problems.isEmpty()) {
        fail(Engine::Failure::Session, problems.join(u'\n'));
        return;
    }
    QString error;
    auto store = SessionStore::create(sessionDir, task, settings, &error);
    if (!store) {
        fail(Engine::Failure::Session, error);
        return;
    }
    open(std::move(*store));
}

void EngineRun::resume(const QString& sessionDir, const std::optional<EngineSettings>& settings) {
    if (m_active) {
        emit progressAvailable(0, QStringLiteral("engine"), QStringLiteral("already running"), -1);
        return;
    }
    setState(Engine::State::Starting, sessionDir);
    QString error;
    auto store = SessionStore::open(sessionDir, &error);
    // A damaged index is refused before any agent runs; a crash's damage is repaired by appending.
    if (!store || !store->prepareForWriting(&error)) {
        fail(Engine::Failure::Session, error);
        return;
    }
    for (const QString& repair : store->repairs())
        emit progressAvailable(0, QStringLiteral("session"), repair, -1);
    if (settings) {
        const QStringList problems = settings->validate();
        if (!problems.isEmpty()) {
            fail(Engine::Failure::Session, problems.join(u'\n'));
            return;
        }
        SessionInfo info = store->info();
        info.settings = *settings;
        if (!store->updateInfo(info, &error)) {
            fail(Engine::Failure::Session, error);
            return;
        }
    }
    open(std::move(*store));
}

bool EngineRun::open(SessionStore store) {
    m_store = std::move(store);
    m_settings = m_store->settings();
    m_active = true;
    m_stopRequested = false;
    m_forceReplan = false;
    m_gate.reset();
    m_slots.clear();
    m_iteration = m_store->lastIteration();
    m_iterationsThisRun = 0;
    m_nextVersion = m_store->nextVersion();
    m_runTokens = 0;
    m_runCost = 0;
    m_bestHistory.clear();
    m_humanNote.clear();
    m_parent.reset();
    m_lastFeedback.reset();
    if (m_store->info().device)
        m_device = *m_store->info().device;
    m_runClock.start();
    {
        QString error;
        m_ledger = SpendLedger::open(m_store->dir(), &error);
        if (!m_ledger) {
            fail(Engine::Failure::Session, error);
            return false;
        }
        m_ledger->setBudgets(m_settings.tokenBudget, m_settings.costBudgetUsd);
        m_priorTokens = 0;
        m_priorCost = 0;
        for (const auto& step : m_store->steps()) {
            m_priorTokens += step.tokens;
            m_priorCost += step.costUsd;
        }
    }
    openKnowledge();
    {
        QStringList unreadable; // a step whose files are gone is only not deduplicated against
        m_seen = SeenSet::fromSession(*m_store, m_device, &unreadable);
    }

    // A resumed session builds on its best step, else its latest; the latest review is the
    // feedback.
    const auto& steps = m_store->steps();
    if (!steps.isEmpty()) {
        QString error;
        const int parentVersion = m_store->bestVersion().value_or(steps.last().version);
        m_parent = m_store->loadCandidate(parentVersion, &error);
        const auto latest = m_store->loadCandidate(steps.last().version, &error);
        if (!m_parent || !latest) {
            fail(Engine::Failure::Session, error);
            return false;
        }
        m_lastFeedback = latest->review;
        if (latest->decision.kind == Decision::Kind::Rejected)
            m_humanNote = latest->decision.reason;
    }

    emit sessionOpened(m_store->dir(), m_store->info(), m_store->steps());

    m_pool = new EvaluatorPool(this);
    m_pool->setCommands(m_settings.harnessCommands);
    m_pool->setRequestTimeoutMs(m_settings.evalTimeoutS * 1000);
    connect(m_pool, &EvaluatorPool::devicesAvailable, this,
            [this](const QVector<DeviceInfo>& devices, const QString& harnessVersion) {
                emit devicesAvailable(devices, harnessVersion);
                if (!m_store)
                    return;
                SessionInfo info = m_store->info();
                // A restarted worker greets again; keep what a report measured about the same GPU.
                if (!devices.isEmpty() && devices.first().uuid != m_device.uuid)
                    m_device = devices.first();
                info.device =
                    devices.isEmpty() ? std::nullopt : std::optional<DeviceInfo>(m_device);
                info.harnessVersion = harnessVersion;
                QString error;
                if (!m_store->updateInfo(info, &error))
                    emit progressAvailable(0, QStringLiteral("session"), error, -1);
                if (devices.isEmpty())
                    emit progressAvailable(0, QStringLiteral("engine"),
                                           QStringLiteral("the harness sees no CUDA device"), -1);
            });
    connect(m_pool, &EvaluatorPool::progressAvailable, this,
            [this](const QString& requestId, const QString& stage, const QString& message,
                   double fraction) {
                for (const auto& slot : std::as_const(m_slots)) {
                    if (slot.requestId == requestId)
                        emit progressAvailable(slot.candidate.version, stage, message, fraction);
                }
            });
    connect(m_pool, &EvaluatorPool::resultAvailable, this, &EngineRun::onResult);
    connect(m_pool, &EvaluatorPool::evaluationFailed, this, &EngineRun::onEvaluationFailed);
    connect(m_pool, &EvaluatorPool::workerMessageAvailable, this,
            [this](int worker, const QString& message) {
                emit progressAvailable(0, QStringLiteral("harness ") + QString::number(worker),
                                       message, -1);
            });
    m_pool->start();

    QTimer::singleShot(0, this, &EngineRun::beginIteration);
    return true;
}

AgentContext EngineRun::context(int beamIndex) const {
    AgentContext c;
    c.task = m_store->task();
    c.device = m_device;
    c.history = m_store->steps();
    if (m_parent) {
        c.parentStrategy = m_parent->strategy;
        c.parentSource = m_parent->source;
        c.parentReport = m_parent->report;
    }
    c.lastFeedback = m_lastFeedback;
    c.humanNote = m_humanNote;
    c.iteration = m_iteration;
    c.beamIndex = beamIndex;
    c.beamWidth = static_cast<int>(m_slots.size());
    c.knowledge = knowledgeHints();
    fillSearchContext(c, beamIndex);
    return c;
}

std::optional<Engine::StopReason> EngineRun::stopTest(QString* message) const {
    if (m_stopRequested) {
        *message = QStringLiteral("stopped by the user");
        return Engine::StopReason::UserStop;
    }
    if (const auto met = stepMeetingTarget(m_store->steps(), m_settings)) {
        *message = targetMessage(*met, m_settings);
        return Engine::StopReason::TargetReached;
    }
    if (m_iterationsThisRun >= m_settings.maxIterations) {
        *message =
            QString::number(m_iterationsThisRun) + QStringLiteral(" iterations done (the limit)");
        return Engine::StopReason::IterationLimit;
    }
    if (m_settings.timeBudgetS > 0 && m_runClock.elapsed() >= m_settings.timeBudgetS * 1000) {
        *message = QStringLiteral("time budget of ") + QString::number(m_settings.timeBudgetS) +
                   QStringLiteral(" s used");
        return Engine::StopReason::TimeBudget;
    }
    // Budgets are per session: earlier runs count, and so does every failed call.
    const qint64 tokens = std::max(m_ledger->tokens(), m_priorTokens + m_runTokens);
    const double cost = std::max(m_ledger->costUsd(), m_priorCost + m_runCost);
    if (m_settings.tokenBudget > 0 && tokens >= m_settings.tokenBudget) {
        *message = QStringLiteral("token budget of ") + QString::number(m_settings.tokenBudget) +
                   QStringLiteral(" used (") + QString::number(tokens) +
                   QStringLiteral(" tokens in this session)");
        return Engine::StopReason::TokenBudget;
    }
    if (m_settings.costBudgetUsd > 0 && cost >= m_settings.costBudgetUsd) {
        *message = QStringLiteral("cost budget used ($") + QString::number(cost, 'f', 2) +
                   QStringLiteral(" in this session)");
        return Engine::StopReason::CostBudget;
    }
    const int window = m_settings.plateauIterations;
    if (window > 0 && m_bestHistory.size() > window) {
        const double then = m_bestHistory.at(m_bestHistory.size() - 1 - window);
        const double now = m_bestHistory.last();
        if (now <= then * (1.0 + m_settings.plateauMinGain)) {
            *message = QStringLiteral("plateau: no gain of ") +
                       QString::number(m_settings.plateauMinGain * 100) + QStringLiteral("% in ") +
                       QString::number(window) + QStringLiteral(" iterations");
            return Engine::StopReason::Plateau;
        }
    }
    return std::nullopt;
}

void EngineRun::beginIteration() {
    if (!m_active)
        return;
    QString message;
    if (const auto reason = stopTest(&message)) {
        finish(*reason, message);
        return;
    }
    startSlots(m_settings.beamWidth);
}

void EngineRun::startSlots(int count) {
    ++m_iteration;
    ++m_iterationsThisRun;
    m_slots.clear();
    m_gate.reset();
    for (int i = 0; i < count; ++i) {
        Slot slot;
        slot.candidate.version = m_nextVersion++;
        slot.candidate.iteration = m_iteration;
        slot.candidate.beamIndex = i;
        slot.candidate.parentVersion = m_parent ? m_parent->version : 0;
        slot.clock.start();
        m_slots.append(slot);
    }
    for (int i = 0; i < count; ++i) {
        if (!ensureAgents(i))
            return;
    }
    const bool replan =
        m_forceReplan || !m_parent || (m_lastFeedback && m_lastFeedback->blamesStrategy());
    m_forceReplan = false;
    for (int i = 0; i < count && m_active; ++i) {
        if (i == 0 && !replan) {
            Slot& slot = m_slots[i];
            slot.candidate.strategy = m_parent->strategy;
            openStage(slot, QStringLiteral("plan"),
                      QStringLiteral("v") + QString::number(m_parent->version) +
                          QStringLiteral("'s plan kept: the review blamed the code"));
            closeStage(slot);
            slot.phase = Phase::Planned;
            emit planAvailable(slot.candidate.version, slot.candidate.strategy);
        } else {
            planSlot(i);
        }
    }
    if (m_active)
        afterPlans();
}

void EngineRun::planSlot(int index) {
    Slot& slot = m_slots[index];
    slot.phase = Phase::Planning;
    setState(Engine::State::Planning, versionLabel(slot.candidate.version));
    openStage(slot, QStringLiteral("plan"));
    if (Planner* planner = m_agents[index].planner.data())
        planner->plan(context(index));
}

void EngineRun::onPlan(int index, const Strategy& strategy, const AgentTurn& turn) {
    if (!m_active || index >= m_slots.size() || m_slots[index].phase != Phase::Planning)
        return;
    Slot& slot = m_slots[index];
    closeStage(slot);
    slot.candidate.turns.append(turn);
    const QStringList problems = strategy.validate();
    if (!problems.isEmpty()) {
        fail(Engine::Failure::Agent, QStringLiteral("the planner returned an invalid plan for ") +
                                         versionLabel(slot.candidate.version) +
                                         QStringLiteral(":\n") + problems.join(u'\n'));
        return;
    }
    slot.candidate.strategy = strategy;
    slot.phase = Phase::Planned;
    emit planAvailable(slot.candidate.version, strategy);
    afterPlans();
}

void EngineRun::afterPlans() {
    // Agents may answer synchronously, so this runs more than once per iteration: once the plan
    // gate is open, only a command closes it.
    if (m_gate)
        return;
    for (const auto& slot : std::as_const(m_slots)) {
        if (slot.phase == Phase::Planning)
            return;
    }
    if (m_settings.stepMode && m_settings.gatePlans && !m_stopRequested) {
        bool anyPlanned = false;
        for (const auto& slot : std::as_const(m_slots))
            anyPlanned = anyPlanned || slot.phase == Phase::Planned;
        if (anyPlanned) {
            GateRequest request;
            request.kind = GateRequest::Kind::Plan;
            request.iteration = m_iteration;
            for (const auto& slot : std::as_const(m_slots))
                request.candidates.append(slot.candidate);
            request.suggestedVersion = m_slots.first().candidate.version;
            m_gate = GateRequest::Kind::Plan;
            setState(Engine::State::AwaitingGate, QStringLiteral("plan"));
            emit gateRequested(request);
            return;
        }
    }
    for (int i = 0; i < m_slots.size() && m_active; ++i) {
        if (m_slots[i].phase == Phase::Planned)
            codeSlot(i);
    }
}

void EngineRun::codeSlot(int index) {
    Slot& slot = m_slots[index];
    slot.phase = Phase::Coding;
    ++slot.candidate.codeAttempts;
    setState(Engine::State::Coding, versionLabel(slot.candidate.version));
    openStage(slot, QStringLiteral("code"),
              slot.candidate.codeAttempts > 1
                  ? QStringLiteral("attempt ") + QString::number(slot.candidate.codeAttempts)
                  : QString());
    Coder* coder = m_agents[index].coder.data();
    if (!coder)
        return;
    if (slot.candidate.failedSources.isEmpty()) {
        coder->code(context(index), slot.candidate.strategy);
    } else {
        slot.compileError = slot.candidate.report;
        const QString log = slot.compileError ? slot.compileError->compileLog : QString();
        slot.candidate.report.reset();
        coder->fixCompile(context(index), slot.candidate.strategy,
                          slot.candidate.failedSources.last(), log);
    }
}

void EngineRun::onCode(int index, const QString& source, const AgentTurn& turn) {
    if (!m_active || index >= m_slots.size() || m_slots[index].phase != Phase::Coding)
        return;
    Slot& slot = m_slots[index];
    closeStage(slot);
    slot.candidate.turns.append(turn);
    slot.candidate.source = source;
    // A person's plan is coded as asked, even when it makes a kernel already measured.
    const bool human = slot.candidate.origin.startsWith(QLatin1String("human"));
    if (const QString why = human ? QString() : duplicateSource(index, source); !why.isEmpty()) {
        onDuplicate(index, why, !(m_settings.stepMode && m_settings.gatePlans));
        return;
    }
    emit codeAvailable(slot.candidate.version, source, slot.candidate.codeAttempts);
    evaluateSlot(index);
}

void EngineRun::evaluateSlot(int index) {
    Slot& slot = m_slots[index];
    slot.phase = Phase::Evaluating;
    setState(Engine::State::Evaluating, versionLabel(slot.candidate.version));
    m_seen.add(slot.candidate.strategy, slot.candidate.source, slot.candidate.version);
    openStage(slot, QStringLiteral("evaluate"));
    slot.requestId =
        m_pool->evaluate(m_store->task(), slot.candidate.source, slot.candidate.kernelFileName(),
                         m_settings.effectiveEvalOptions(bestTrustworthySpeedup(m_store->steps())));
}

void EngineRun::onResult(const QString& requestId, const EvaluationReport& report) {
    if (!m_active)
        return;
    for (int i = 0; i < m_slots.size(); ++i) {
        Slot& slot = m_slots[i];
        if (slot.requestId != requestId || slot.phase != Phase::Evaluating)
            continue;
        slot.requestId.clear();
        slot.candidate.report = report;
        closeStage(slot);
        learnDevice(report);
        if (report.status == EvaluationReport::Status::CompileError &&
            slot.candidate.origin != QLatin1String("human_code") &&
            slot.candidate.codeAttempts < m_settings.maxCodeAttempts) {
            emit progressAvailable(
                slot.candidate.version, QStringLiteral("compile"),
                QStringLiteral("compile error; asking the coder to fix it (attempt ") +
                    QString::number(slot.candidate.codeAttempts + 1) + QStringLiteral(" of ") +
                    QString::number(m_settings.maxCodeAttempts) + u')',
                -1);
            slot.candidate.failedSources.append(slot.candidate.source);
            codeSlot(i);
            return;
        }
        emit reportAvailable(slot.candidate.version, report);
        reviewSlot(i);
        return;
    }
}

void EngineRun::learnDevice(const EvaluationReport& report) {
    // The CUDA child measures what the supervisor's hello cannot (SM count, L2 size).
    if (!report.environment.device)
        return;
    const DeviceInfo& measured = *report.environment.device;
    if (!measured.isValid() || measured.toJson() == m_device.toJson())
        return;
    m_device = measured;
    SessionInfo info = m_store->info();
    info.device = measured;
    QString error;
    if (!m_store->updateInfo(info, &error))
        emit progressAvailable(0, QStringLiteral("session"), error, -1);
}

void EngineRun::onEvaluationFailed(const QString& requestId, const EvaluationFailure& failure) {
    const QString& message = failure.message;
    if (!m_active)
        return;
    for (int i = 0; i < m_slots.size(); ++i) {
        Slot& slot = m_slots[i];
        if (slot.requestId != requestId || slot.phase != Phase::Evaluating)
            continue;
        slot.requestId.clear();
        switch (failure.kind) {
        case EvaluatorPool::Failure::HarnessMissing:
            fail(Engine::Failure::HarnessMissing, message);
            return;
        case EvaluatorPool::Failure::Refused:
            // The task itself is wrong (a person must fix it), not the harness or the request.
            fail(failure.code == HarnessErrorCode::BadTask ? Engine::Failure::BadTask
                                                           : Engine::Failure::Harness,
                 QStringLiteral("the harness refused ") + versionLabel(slot.candidate.version) +
                     QStringLiteral(": ") + failure.describe());
            return;
        case EvaluatorPool::Failure::Timeout:
            slot.candidate.report =
                EvaluationReport::synthetic(EvaluationReport::Status::Timeout, message);
            break;
        case EvaluatorPool::Failure::WorkerDied:
        case EvaluatorPool::Failure::Protocol:
            slot.candidate.report =
                EvaluationReport::synthetic(EvaluationReport::Status::RuntimeError, message);
            break;
        }
        emit reportAvailable(slot.candidate.version, *slot.candidate.report);
        reviewSlot(i);
        return;
    }
}

void EngineRun::reviewSlot(int index) {
    Slot& slot = m_slots[index];
    slot.phase = Phase::Reviewing;
    setState(Engine::State::Reviewing, versionLabel(slot.candidate.version));
    openStage(slot, QStringLiteral("review"));
    if (Reviewer* reviewer = m_agents[index].reviewer.data())
        reviewer->review(context(index), slot.candidate.strategy, slot.candidate.source,
                         *slot.candidate.report);
}

void EngineRun::onReview(int index, const ReviewFeedback& feedback, const AgentTurn& turn) {
    if (!m_active || index >= m_slots.size() || m_slots[index].phase != Phase::Reviewing)
        return;
    Slot& slot = m_slots[index];
    closeStage(slot);
    slot.candidate.turns.append(turn);
    slot.candidate.review = feedback;
    emit reviewAvailable(slot.candidate.version, feedback);
    onSlotDone(index);
}

void EngineRun::onSlotDone(int index) {
    Slot& slot = m_slots[index];
    slot.phase = Phase::Done;
    closeStage(slot);
    slot.candidate.seconds = static_cast<double>(slot.clock.elapsed()) / 1000.0;
    slot.candidate.finishedAt = QDateTime::currentDateTimeUtc();
    const bool noDevice = slot.candidate.report &&
                          slot.candidate.report->status == EvaluationReport::Status::NoDevice;
    // Automatic decisions are known now, so the step is saved at once; a person's come at the gate.
    if ((!m_settings.stepMode || noDevice) && !persist(slot))
        return;
    for (const auto& s : std::as_const(m_slots)) {
        if (s.phase != Phase::Done && s.phase != Phase::Skipped)
            return;
    }
    resultGate();
}

int EngineRun::suggestedVersion() const {
    int best = 0;
    double bestSpeedup = -1;
    for (const auto& slot : m_slots) {
        if (slot.candidate.isTrustworthy() && slot.candidate.speedup() > bestSpeedup) {
            best = slot.candidate.version;
            bestSpeedup = slot.candidate.speedup();
        }
    }
    return best;
}

void EngineRun::resultGate() {
    for (const auto& slot : std::as_const(m_slots)) {
        if (slot.candidate.report &&
            slot.candidate.report->status == EvaluationReport::Status::NoDevice) {
            for (auto& s : m_slots) {
                if (!s.persisted && !persist(s))
                    return;
            }
            finish(
                Engine::StopReason::NoDevice,
                QStringLiteral("no CUDA device: the harness found no GPU to run the kernel on (") +
                    slot.candidate.report->message + u')');
            return;
        }
    }
    if (m_settings.stepMode && m_stopRequested) {
        // Nobody decided: the steps are kept as pending, for a person to judge after a resume.
        for (auto& slot : m_slots) {
            slot.candidate.decision = Decision{Decision::Kind::Pending, QString()};
            if (!persist(slot))
                return;
        }
        finish(Engine::StopReason::UserStop, QStringLiteral("stopped by the user"));
        return;
    }
    if (m_settings.stepMode) {
        GateRequest request;
        request.kind = GateRequest::Kind::Result;
        request.iteration = m_iteration;
        for (const auto& slot : std::as_const(m_slots)) {
            if (slot.phase != Phase::Skipped)
                request.candidates.append(slot.candidate);
        }
        request.suggestedVersion = suggestedVersion();
        m_gate = GateRequest::Kind::Result;
        setState(Engine::State::AwaitingGate, QStringLiteral("result"));
        emit gateRequested(request);
        return;
    }
    resolveIteration(0, false, QString());
}

bool EngineRun::persist(Slot& slot) {
    if (slot.persisted || slot.phase == Phase::Skipped)
        return true;
    setState(Engine::State::Persisting, versionLabel(slot.candidate.version));
    QString error;
    if (!m_store->appendStep(slot.candidate, &error)) {
        fail(Engine::Failure::Session, error);
        return false;
    }
    slot.persisted = true;
    m_runTokens += slot.candidate.tokens();
    m_runCost += slot.candidate.costUsd();
    recordKnowledge(slot.candidate, m_store->steps().last());
    emit stepAvailable(m_store->steps().last());
    return true;
}

int EngineRun::slotIndexOf(int version) const {
    for (int i = 0; i < m_slots.size(); ++i) {
        if (m_slots[i].candidate.version == version)
            return i;
    }
    return -1;
}

std::optional<Candidate> EngineRun::candidateFor(int version) const {
    const int index = slotIndexOf(version);
    if (index >= 0)
        return m_slots[index].candidate;
    QString error;
    return m_store->loadCandidate(version, &error);
}

void EngineRun::resolveIteration(int chosenVersion, bool approved, const QString& rejectionReason) {
    for (auto& slot : m_slots) {
        if (!persist(slot))
            return;
    }
    // Parent of the next iteration: the approved version, else the best trustworthy step, else the
    // latest step nobody rejected (so its faults are fixed rather than forgotten).
    std::optional<Candidate> next;
    if (approved && chosenVersion > 0)
        next = candidateFor(chosenVersion);
    if (!next) {
        int best = 0;
        double bestSpeedup = 0;
        for (const auto& s : m_store->steps()) {
            if (s.isTrustworthy() && s.decision != QLatin1String("rejected") &&
                *s.speedup > bestSpeedup) {
                best = s.version;
                bestSpeedup = *s.speedup;
            }
        }
        if (best > 0 && (!m_parent || m_parent->version != best))
            next = candidateFor(best);
        else if (best > 0)
            next = m_parent;
    }
    if (!next) {
        for (auto it = m_slots.crbegin(); it != m_slots.crend(); ++it) {
            if (it->phase != Phase::Skipped &&
                it->candidate.decision.kind != Decision::Kind::Rejected) {
                next = it->candidate;
                break;
            }
        }
    }
    if (next)
        m_parent = next;

    const int feedbackIndex = slotIndexOf(chosenVersion > 0 ? chosenVersion : suggestedVersion());
    const Slot& feedbackSlot = m_slots[feedbackIndex >= 0 ? feedbackIndex : 0];
    m_lastFeedback = feedbackSlot.candidate.review;
    m_humanNote = rejectionReason;
    m_bestHistory.append(bestTrustworthySpeedup(m_store->steps()));
    emit iterationFinished(m_iteration, m_parent ? m_parent->version : 0,
                           m_store->bestVersion().value_or(0));
    m_slots.clear();
    m_gate.reset();
    QTimer::singleShot(0, this, &EngineRun::beginIteration);
}

void EngineRun::halt() {
    for (auto& agents : m_agents) {
        if (Planner* planner = agents.planner.data())
            planner->cancel();
        if (Coder* coder = agents.coder.data())
            coder->cancel();
        if (Reviewer* reviewer = agents.reviewer.data())
            reviewer->cancel();
    }
    // The next start or resume builds its agents from its own session's settings.
    dropAgents();
    if (m_pool) {
        m_pool->killAll();
        m_pool->deleteLater();
        m_pool = nullptr;
    }
    m_active = false;
    m_gate.reset();
    m_knowledge.reset();
    m_hintsDevice.clear();
    m_hints = KnowledgeHints();
}

void EngineRun::finish(Engine::StopReason reason, const QString& message) {
    if (!m_active)
        return;
    halt();
    setState(Engine::State::Finished, message);
    emit finished(reason, message);
}

void EngineRun::fail(Engine::Failure failure, const QString& message) {
    // An agent refuses to start a request once a budget is used up: the run ends there, as a
    // budget stop, not as an agent failure.
    if (failure == Engine::Failure::Agent && m_ledger && !m_ledger->exhausted().isEmpty()) {
        finish(m_ledger->tokenBudgetUsed() ? Engine::StopReason::TokenBudget
                                           : Engine::StopReason::CostBudget,
               m_ledger->exhausted());
        return;
    }
    halt();
    setState(Engine::State::Failed, message);
    emit failed(failure, message);
}

} // namespace kev
