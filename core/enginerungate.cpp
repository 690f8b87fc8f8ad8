// The gate commands of EngineRun (step mode: approve, reject, edited code or plan) and the two ways
// a run ends early (stop after the iteration, cancel now).
#include "enginerun.h"

#include <QTimer>

namespace kev {

namespace {

QString versionLabel(int version) {
    return QStringLiteral("v") + QString::number(version);
}

} // namespace

void EngineRun::approve(int version) {
    if (!m_active || !m_gate)
        return;
    if (*m_gate == GateRequest::Kind::Plan) {
        m_gate.reset();
        for (int i = 0; i < m_slots.size(); ++i) {
            if (m_slots[i].phase == Phase::Planned)
                codeSlot(i);
        }
        return;
    }
    const int index = slotIndexOf(version);
    if (index < 0) {
        emit progressAvailable(version, QStringLiteral("gate"),
                               versionLabel(version) + QStringLiteral(" is not in this iteration"),
                               -1);
        return;
    }
    m_slots[index].candidate.decision = Decision{Decision::Kind::Approved, QString()};
    resolveIteration(version, true, QString());
}

void EngineRun::reject(int version, const QString& reason) {
    if (!m_active || !m_gate)
        return;
    if (*m_gate == GateRequest::Kind::Plan) {
        m_gate.reset();
        m_humanNote = reason;
        for (int i = 0; i < m_slots.size() && m_active; ++i)
            planSlot(i);
        return;
    }
    const int index = slotIndexOf(version);
    if (index < 0) {
        emit progressAvailable(version, QStringLiteral("gate"),
                               versionLabel(version) + QStringLiteral(" is not in this iteration"),
                               -1);
        return;
    }
    m_slots[index].candidate.decision = Decision{Decision::Kind::Rejected, reason};
    if (m_slots.size() == 1)
        m_forceReplan = m_forceReplan || (m_lastFeedback && m_lastFeedback->blamesStrategy());
    resolveIteration(0, false, reason);
}

void EngineRun::submitCode(int version, const QString& source) {
    if (!m_active || m_gate != GateRequest::Kind::Result)
        return;
    const int index = slotIndexOf(version);
    if (index < 0) {
        emit progressAvailable(version, QStringLiteral("gate"),
                               versionLabel(version) + QStringLiteral(" is not in this iteration"),
                               -1);
        return;
    }
    m_slots[index].candidate.decision =
        Decision{Decision::Kind::Edited,
                 QStringLiteral("code edited as v") + QString::number(m_nextVersion)};
    startEditIteration(version, QStringLiteral("human_code"), m_slots[index].candidate.strategy,
                       source);
}

void EngineRun::submitPlan(int version, const Strategy& strategy) {
    if (!m_active || !m_gate)
        return;
    const QStringList problems = strategy.validate();
    const int index = slotIndexOf(version);
    if (!problems.isEmpty() || index < 0) {
        emit progressAvailable(
            version, QStringLiteral("gate"),
            index < 0 ? versionLabel(version) + QStringLiteral(" is not in this iteration")
                      : QStringLiteral("the edited plan is invalid:\n") + problems.join(u'\n'),
            -1);
        return;
    }
    if (*m_gate == GateRequest::Kind::Plan) {
        m_gate.reset();
        Slot& slot = m_slots[index];
        slot.candidate.strategy = strategy;
        slot.candidate.origin = QStringLiteral("human_plan");
        slot.phase = Phase::Planned;
        emit planAvailable(slot.candidate.version, strategy);
        for (int i = 0; i < m_slots.size() && m_active; ++i) {
            if (m_slots[i].phase == Phase::Planned)
                codeSlot(i);
        }
        return;
    }
    m_slots[index].candidate.decision =
        Decision{Decision::Kind::Edited,
                 QStringLiteral("plan edited as v") + QString::number(m_nextVersion)};
    startEditIteration(version, QStringLiteral("human_plan"), strategy, QString());
}

void EngineRun::startEditIteration(int parentVersion, const QString& origin,
                                   const Strategy& strategy, const QString& source) {
    for (auto& slot : m_slots) {
        if (!persist(slot))
            return;
    }
    if (auto parent = candidateFor(parentVersion))
        m_parent = parent;
    m_lastFeedback = m_parent ? m_parent->review : std::nullopt;
    m_humanNote.clear();
    m_bestHistory.append(bestTrustworthySpeedup(m_store->steps()));
    emit iterationFinished(m_iteration, parentVersion, m_store->bestVersion().value_or(0));
    m_gate.reset();

    ++m_iteration;
    ++m_iterationsThisRun;
    m_slots.clear();
    Slot slot;
    slot.candidate.version = m_nextVersion++;
    slot.candidate.iteration = m_iteration;
    slot.candidate.parentVersion = parentVersion;
    slot.candidate.origin = origin;
    slot.candidate.strategy = strategy;
    slot.clock.start();
    m_slots.append(slot);
    if (!ensureAgents(0))
        return;
    emit planAvailable(slot.candidate.version, strategy);
    if (origin == QLatin1String("human_code")) {
        Slot& s = m_slots[0];
        s.candidate.source = source;
        s.candidate.codeAttempts = 1;
        AgentTurn turn;
        turn.role = QStringLiteral("coder");
        turn.backend = QStringLiteral("human");
        turn.reply = source;
        s.candidate.turns.append(turn);
        emit codeAvailable(s.candidate.version, source, 1);
        evaluateSlot(0);
    } else {
        codeSlot(0);
    }
}

void EngineRun::stop() {
    if (!m_active)
        return;
    m_stopRequested = true;
    if (m_gate) {
        for (auto& slot : m_slots) {
            if (slot.phase == Phase::Done) {
                slot.candidate.decision = Decision{Decision::Kind::Pending, QString()};
                if (!persist(slot))
                    return;
            }
        }
        finish(Engine::StopReason::UserStop, QStringLiteral("stopped by the user at the gate"));
    }
}

void EngineRun::cancel() {
    if (!m_active)
        return;
    for (auto& slot : m_slots) {
        if (slot.phase == Phase::Done && !slot.persisted) {
            slot.candidate.decision = Decision{Decision::Kind::Pending, QString()};
            if (!persist(slot))
                return;
        }
    }
    finish(Engine::StopReason::Cancelled, QStringLiteral("cancelled; completed steps are saved"));
}

} // namespace kev
