// The agents of EngineRun: created per session from that session's settings (never carried from an
// earlier session, whose backends or endpoints may differ), wired to the slots, and dropped when
// the run ends.
#include "enginerun.h"

#include "keystore.h"

namespace kev {

bool EngineRun::ensureAgents(int index) {
    while (m_agents.size() <= index)
        m_agents.append(Agents{});
    Agents& agents = m_agents[index];
    QString error;
    const auto settingsFor = [this](const QString& role) {
        AgentSettings s = m_settings.agentSettings(role);
        s.keyStore = m_keyStore;
        s.ledger = m_ledger;
        return s;
    };
    const auto relayProgress = [this, index](AgentProgress progress) {
        if (index < m_slots.size()) {
            progress.version = m_slots[index].candidate.version;
            emit agentProgressAvailable(progress);
        }
    };
    if (!agents.planner) {
        agents.planner =
            AgentFactory::createPlanner(settingsFor(QStringLiteral("planner")), &error);
        if (!agents.planner) {
            fail(Engine::Failure::Agent, error);
            return false;
        }
        agents.planner->setParent(this);
        connect(agents.planner, &Planner::planAvailable, this,
                [this, index](const Strategy& s, const AgentTurn& t) { onPlan(index, s, t); });
        connect(agents.planner, &Planner::planFailed, this, [this, index](const QString& e) {
            if (index < m_slots.size() && m_slots[index].phase == Phase::Planning)
                fail(Engine::Failure::Agent, QStringLiteral("the planner failed: ") + e);
        });
        connect(agents.planner, &Planner::progressChanged, this, relayProgress);
        connect(agents.planner, &Planner::textAvailable, this, [this, index](const QString& chunk) {
            if (index < m_slots.size())
                emit agentTextAvailable(QStringLiteral("planner"), chunk,
                                        m_slots[index].candidate.version);
        });
    }
    if (!agents.coder) {
        agents.coder = AgentFactory::createCoder(settingsFor(QStringLiteral("coder")), &error);
        if (!agents.coder) {
            fail(Engine::Failure::Agent, error);
            return false;
        }
        agents.coder->setParent(this);
        connect(
            agents.coder, &Coder::codeAvailable, this,
            [this, index](const QString& source, const AgentTurn& t) { onCode(index, source, t); });
        connect(agents.coder, &Coder::codeFailed, this,
                [this, index](const QString& e) { onCodeFailed(index, e); });
        connect(agents.coder, &Coder::progressChanged, this, relayProgress);
        connect(agents.coder, &Coder::textAvailable, this, [this, index](const QString& chunk) {
            if (index < m_slots.size())
                emit agentTextAvailable(QStringLiteral("coder"), chunk,
                                        m_slots[index].candidate.version);
        });
    }
    if (!agents.reviewer) {
        agents.reviewer =
            AgentFactory::createReviewer(settingsFor(QStringLiteral("reviewer")), &error);
        if (!agents.reviewer) {
            fail(Engine::Failure::Agent, error);
            return false;
        }
        agents.reviewer->setParent(this);
        connect(
            agents.reviewer, &Reviewer::reviewAvailable, this,
            [this, index](const ReviewFeedback& f, const AgentTurn& t) { onReview(index, f, t); });
        connect(agents.reviewer, &Reviewer::reviewFailed, this, [this, index](const QString& e) {
            if (index < m_slots.size() && m_slots[index].phase == Phase::Reviewing)
                fail(Engine::Failure::Agent, QStringLiteral("the reviewer failed: ") + e);
        });
        connect(agents.reviewer, &Reviewer::progressChanged, this, relayProgress);
        connect(agents.reviewer, &Reviewer::textAvailable, this,
                [this, index](const QString& chunk) {
                    if (index < m_slots.size())
                        emit agentTextAvailable(QStringLiteral("reviewer"), chunk,
                                                m_slots[index].candidate.version);
                });
    }
    return true;
}

void EngineRun::onCodeFailed(int index, const QString& error) {
    if (!m_active || index >= m_slots.size() || m_slots[index].phase != Phase::Coding)
        return;
    Slot& slot = m_slots[index];
    if (slot.candidate.failedSources.isEmpty() || !slot.compileError) {
        fail(Engine::Failure::Agent, QStringLiteral("the coder failed: ") + error);
        return;
    }
    // The coder could not repair a compile error: the step ends as that compile error (the last
    // source, the harness's log, the coder's refusal as its turn), and the next iteration asks the
    // planner for another configuration rather than ending the session.
    AgentTurn turn;
    turn.role = QStringLiteral("coder");
    turn.backend = m_settings.coderBackend;
    turn.prompt =
        QStringLiteral("fix the compile error of v") + QString::number(slot.candidate.version);
    turn.reply = QStringLiteral("could not repair the compile error: ") + error;
    slot.candidate.turns.append(turn);
    slot.candidate.source = slot.candidate.failedSources.last();
    slot.candidate.report = *slot.compileError;
    emit agentTextAvailable(QStringLiteral("coder"), turn.reply + u'\n', slot.candidate.version);
    emit progressAvailable(slot.candidate.version, QStringLiteral("compile"),
                           QStringLiteral("the coder could not repair the compile error; the step "
                                          "is recorded and the planner tries another plan"),
                           -1);
    m_forceReplan = true;
    emit reportAvailable(slot.candidate.version, *slot.candidate.report);
    reviewSlot(index);
}

void EngineRun::dropAgents() {
    for (auto& agents : m_agents) {
        for (QObject* agent : {static_cast<QObject*>(agents.planner.data()),
                               static_cast<QObject*>(agents.coder.data()),
                               static_cast<QObject*>(agents.reviewer.data())}) {
            if (!agent)
                continue;
            disconnect(agent, nullptr, this, nullptr);
            agent->deleteLater();
        }
    }
    m_agents.clear();
}

} // namespace kev
