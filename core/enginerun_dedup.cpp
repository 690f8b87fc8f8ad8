// EngineRun's guard against measuring one kernel twice (issue 18). Before a kernel reaches the
// harness its source hash (layout normalised) is compared with every kernel the session sent and
// with the other slots of this iteration; a repeat goes back to the slot's planner (with the
// reason, the plans of every step and of the other slots in its context) a bounded number of
// times, then the slot is skipped: no evaluation, no step. Plans are compared by canonical
// parameters in the planner (the built-in one: PlannerSearch), not here: an LLM coder may write
// a different kernel for the same plan, and that is a new measurement.
#include "enginerun.h"

namespace kev {

namespace {

QString label(int version) {
    return QStringLiteral("v") + QString::number(version);
}

} // namespace

void EngineRun::fillSearchContext(AgentContext& context, int beamIndex) const {
    context.historyPlans = m_seen.plans();
    for (int i = 0; i < m_slots.size(); ++i) {
        const Slot& slot = m_slots[i];
        if (i != beamIndex && slot.phase != Phase::Planning && slot.phase != Phase::Skipped &&
            !slot.candidate.strategy.family.isEmpty())
            context.otherSlotPlans.append(slot.candidate.strategy);
    }
    if (beamIndex >= 0 && beamIndex < m_slots.size())
        context.duplicateNote = m_slots[beamIndex].duplicateNote;
}

QString EngineRun::duplicateSource(int index, const QString& source) const {
    if (const auto version = m_seen.sourceSeen(source))
        return QStringLiteral("the kernel source is identical (comments and whitespace aside) to "
                              "%1, already measured in this session")
            .arg(label(*version));
    const QByteArray hash = sourceHash(source);
    for (int i = 0; i < m_slots.size(); ++i) {
        const Slot& other = m_slots[i];
        if (i != index && !other.candidate.source.isEmpty() &&
            (other.phase == Phase::Evaluating || other.phase == Phase::Reviewing ||
             other.phase == Phase::Done) &&
            sourceHash(other.candidate.source) == hash)
            return QStringLiteral("the kernel source is identical to %1 of this iteration")
                .arg(label(other.candidate.version));
    }
    return QString();
}

void EngineRun::onDuplicate(int index, const QString& why, bool mayReplan) {
    Slot& slot = m_slots[index];
    // Each other slot can take at most one plan from this one, so beam width + 2 requests find a
    // distinct plan whenever the planner has one.
    const int limit = static_cast<int>(m_slots.size()) + 2;
    if (mayReplan && slot.duplicateRetries < limit) {
        ++slot.duplicateRetries;
        slot.duplicateNote = why;
        emit progressAvailable(slot.candidate.version, QStringLiteral("plan"),
                               why + QStringLiteral("; asking the planner for another plan"), -1);
        slot.candidate.strategy = Strategy{};
        slot.candidate.source.clear();
        slot.candidate.failedSources.clear();
        slot.candidate.codeAttempts = 0;
        slot.candidate.report.reset();
        planSlot(index);
        return;
    }
    slot.phase = Phase::Skipped;
    emit progressAvailable(slot.candidate.version, QStringLiteral("plan"),
                           why + QStringLiteral("; the slot is skipped (nothing sent to the "
                                                "harness, no step recorded)"),
                           -1);
    bool anyDone = false;
    for (const auto& s : std::as_const(m_slots)) {
        if (s.phase == Phase::Planning)
            return; // its plan's arrival continues the iteration
        anyDone = anyDone || s.phase == Phase::Done;
    }
    for (const auto& s : std::as_const(m_slots)) {
        if (s.phase == Phase::Planned) {
            afterPlans();
            return;
        }
    }
    for (const auto& s : std::as_const(m_slots)) {
        if (s.phase != Phase::Done && s.phase != Phase::Skipped)
            return; // a slot still at work closes the iteration when it is done
    }
    if (anyDone)
        resultGate();
    else
        resolveIteration(0, false, QString());
}

} // namespace kev
