// The engine's state machine; lives on the Engine's worker thread and is driven only by queued
// commands and by the signals of its agents and its EvaluatorPool (both created on that thread).
// Use kev::Engine, which owns the thread; this class is its implementation.
#pragma once

#include "agents.h"
#include "candidate.h"
#include "engine.h"
#include "enginesettings.h"
#include "evaluatorpool.h"
#include "gaterequest.h"
#include "knowledgestore.h"
#include "search/seenset.h"
#include "sessionstore.h"
#include "spendledger.h"

#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QVector>

#include <memory>
#include <optional>

namespace kev {

class KeyStore;

class EngineRun : public QObject {
    Q_OBJECT
public:
    explicit EngineRun(QObject* parent = nullptr);
    ~EngineRun() override;

    void setKeyStore(std::shared_ptr<KeyStore> keyStore) { m_keyStore = std::move(keyStore); }
    // The knowledge store the next start or resume opens (KnowledgeStore::resolvePath's
    // result); empty: none.
    void setKnowledgePath(const QString& path) { m_knowledgePath = path; }

    void start(const Task& task, const EngineSettings& settings, const QString& sessionDir);
    void resume(const QString& sessionDir, const std::optional<EngineSettings>& settings);
    void approve(int version);
    void reject(int version, const QString& reason);
    void submitCode(int version, const QString& source);
    void submitPlan(int version, const Strategy& strategy);
    void stop();
    void cancel();

signals:
    void stateChanged(kev::Engine::State state, const QString& detail);
    void sessionOpened(const QString& dir, const kev::SessionInfo& info,
                       const QVector<kev::IterationSummary>& steps);
    void devicesAvailable(const QVector<kev::DeviceInfo>& devices, const QString& harnessVersion);
    void planAvailable(int version, const kev::Strategy& strategy);
    void codeAvailable(int version, const QString& source, int attempt);
    void reportAvailable(int version, const kev::EvaluationReport& report);
    void reviewAvailable(int version, const kev::ReviewFeedback& feedback);
    void gateRequested(const kev::GateRequest& request);
    void stepAvailable(const kev::IterationSummary& step);
    void iterationFinished(int iteration, int parentVersion, int bestVersion);
    void agentTextAvailable(const QString& role, const QString& chunk, int version);
    void agentProgressAvailable(const kev::AgentProgress& progress);
    void progressAvailable(int version, const QString& stage, const QString& message,
                           double fraction);
    void finished(kev::Engine::StopReason reason, const QString& message);
    void failed(kev::Engine::Failure failure, const QString& message);

private:
    // Skipped: the slot's kernel repeated one already measured and the planner found no other;
    // nothing was sent to the harness and no step is recorded.
    enum class Phase { Planning, Planned, Coding, Evaluating, Reviewing, Done, Skipped };

    struct Agents {
        QPointer<Planner> planner;
        QPointer<Coder> coder;
        QPointer<Reviewer> reviewer;
    };

    struct Slot {
        Candidate candidate;
        Phase phase = Phase::Planning;
        QString requestId;
        QElapsedTimer clock;
        bool persisted = false;
        // The harness's report of the last source that did not compile, while the coder repairs
        // it: what the step records if the repair fails.
        std::optional<EvaluationReport> compileError;
        int duplicateRetries = 0;
        QString duplicateNote;
    };

    bool open(SessionStore store);
    bool ensureAgents(int index);
    void dropAgents();
    AgentContext context(int beamIndex) const;
    void setState(Engine::State state, const QString& detail);

    void beginIteration();
    void startSlots(int count);
    void planSlot(int index);
    void onPlan(int index, const Strategy& strategy, const AgentTurn& turn);
    void codeSlot(int index);
    void onCode(int index, const QString& source, const AgentTurn& turn);
    void onCodeFailed(int index, const QString& error);
    void evaluateSlot(int index);
    void onResult(const QString& requestId, const EvaluationReport& report);
    void learnDevice(const EvaluationReport& report);
    void onEvaluationFailed(const QString& requestId, const EvaluationFailure& failure);
    void reviewSlot(int index);
    void onReview(int index, const ReviewFeedback& feedback, const AgentTurn& turn);
    void onSlotDone(int index);
    void afterPlans();
    // The step's stage timeline (enginerun_timeline.cpp): `openStage` ends the open stage and
    // starts `stage`; `closeStage` ends the open one (the harness's split as its detail for an
    // evaluation).
    void openStage(Slot& slot, const QString& stage, const QString& detail = {});
    void closeStage(Slot& slot);
    // Deduplication (enginerun_dedup.cpp): what the source repeats, or empty.
    QString duplicateSource(int index, const QString& source) const;
    // Asks the slot's planner again, or skips the slot when it has asked enough.
    void onDuplicate(int index, const QString& why, bool mayReplan);
    void fillSearchContext(AgentContext& context, int beamIndex) const;
    void resultGate();
    void resolveIteration(int chosenVersion, bool approved, const QString& rejectionReason);
    bool persist(Slot& slot);
    void startEditIteration(int parentVersion, const QString& origin, const Strategy& strategy,
                            const QString& source);
    std::optional<Engine::StopReason> stopTest(QString* message) const;
    int suggestedVersion() const;
    int slotIndexOf(int version) const;
    // The best speedup of a trustworthy step nobody rejected (0 = none), for the plateau rule.
    static double bestTrustworthySpeedup(const QVector<IterationSummary>& steps);
    std::optional<Candidate> candidateFor(int version) const;
    // The knowledge store (enginerun_knowledge.cpp): opened with the session (a store that
    // cannot be opened is reported and the session runs without it), asked once per device for
    // the hints of the task, and written with every step saved.
    void openKnowledge();
    const KnowledgeHints& knowledgeHints() const;
    void recordKnowledge(const Candidate& candidate, const IterationSummary& summary);

    void finish(Engine::StopReason reason, const QString& message);
    void fail(Engine::Failure failure, const QString& message);
    void halt();

    std::shared_ptr<KeyStore> m_keyStore;
    QString m_knowledgePath;
    std::unique_ptr<KnowledgeStore> m_knowledge;
    mutable QString m_hintsDevice; // the device m_hints were asked for
    mutable KnowledgeHints m_hints;
    std::optional<SessionStore> m_store;
    EngineSettings m_settings;
    EvaluatorPool* m_pool = nullptr;
    QVector<Agents> m_agents;
    QVector<Slot> m_slots;
    std::optional<GateRequest::Kind> m_gate;
    bool m_active = false;
    bool m_stopRequested = false;
    bool m_forceReplan = false;
    int m_iteration = 0;
    int m_iterationsThisRun = 0;
    int m_nextVersion = 1;
    SeenSet m_seen; // every plan and source sent to the harness in this session
    std::optional<Candidate> m_parent;
    std::optional<ReviewFeedback> m_lastFeedback;
    QString m_humanNote;
    DeviceInfo m_device = DeviceInfo::h200();
    QElapsedTimer m_runClock;
    qint64 m_runTokens = 0;
    double m_runCost = 0;
    // The session's spend on paid calls (every attempt, across resumes); its steps' totals from
    // earlier runs count for agents that do not record there.
    std::shared_ptr<SpendLedger> m_ledger;
    qint64 m_priorTokens = 0;
    double m_priorCost = 0;
    // Best trustworthy speedup after each iteration of this run, for the plateau rule.
    QVector<double> m_bestHistory;
};

} // namespace kev
