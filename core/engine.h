// The agent loop (docs/engine.md), run on a worker thread: plan -> code (compile errors
// go back to the coder) -> evaluate -> review -> gate -> persist -> stop test. This class is the
// thread-safe face of it: create it on any thread (usually the GUI's) and connect to its signals;
// every call returns at once, and every signal carries values and arrives queued on the thread
// that owns the Engine. The loop itself never blocks its thread: a step-mode gate is a state that
// waits for a command.
#pragma once

#include "deviceinfo.h"
#include "enginesettings.h"
#include "evaluationreport.h"
#include "gaterequest.h"
#include "iterationsummary.h"
#include "reviewfeedback.h"
#include "sessionstore.h"
#include "strategy.h"
#include "task.h"

#include <QObject>
#include <QString>
#include <QThread>
#include <QVector>

#include <functional>
#include <memory>
#include <optional>

namespace kev {

class EngineRun;
class KeyStore;

class Engine : public QObject {
    Q_OBJECT
public:
    enum class State {
        Idle,
        Starting,
        Planning,
        Coding,
        Evaluating,
        Reviewing,
        AwaitingGate,
        Persisting,
        Finished,
        Failed
    };
    Q_ENUM(State)

    enum class StopReason {
        TargetReached,
        IterationLimit,
        TimeBudget,
        TokenBudget,
        CostBudget,
        Plateau,
        // stop(): the iteration in progress finished, then the loop ended.
        UserStop,
        // cancel(): in-flight work was killed; completed steps are saved.
        Cancelled,
        // The harness found no CUDA device; the session holds the step that found out.
        NoDevice
    };
    Q_ENUM(StopReason)

    enum class Failure {
        // The harness could not be started (wrong command, not installed).
        HarnessMissing,
        // The harness refused the task (the message names the field).
        BadTask,
        // An agent could not be created or failed to answer.
        Agent,
        // The session folder could not be created, read or written.
        Session,
        // The harness broke the protocol or failed internally.
        Harness
    };
    Q_ENUM(Failure)

    explicit Engine(QObject* parent = nullptr);
    ~Engine() override;

    // Keys for LLM agents, handed over in memory only.
    void setKeyStore(std::shared_ptr<KeyStore> keyStore);
    // The per-user knowledge store that sessions started or resumed afterwards read and write
    // (KnowledgeStore::resolvePath); empty (the default): sessions use none.
    void setKnowledgePath(const QString& path);

    // A new session in sessionDir (created; it must not hold a session).
    void start(const kev::Task& task, const kev::EngineSettings& settings,
               const QString& sessionDir);
    // Continues the session in sessionDir; settings, when given, replace the stored ones (budgets
    // and iteration limits count from the resume).
    void resume(const QString& sessionDir,
                const std::optional<kev::EngineSettings>& settings = std::nullopt);

    // Gate commands (step mode). Each resolves the pending gate; a command for no gate is ignored.
    void approve(int version);
    void reject(int version, const QString& reason);
    void submitCode(int version, const QString& source);
    void submitPlan(int version, const kev::Strategy& strategy);

    // Ends the loop after the iteration in progress (at a gate: saves the iteration as pending).
    void stop();
    // Ends the loop now: kills in-flight agent requests and harness children; completed steps are
    // saved, nothing half-done is.
    void cancel();

    State state() const { return m_state; }
    bool isRunning() const;

    static QString stateName(State state);
    static QString stopReasonName(StopReason reason);
    static QString failureName(Failure failure);

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
    // A step was written to the session (its index record included).
    void stepAvailable(const kev::IterationSummary& step);
    // parentVersion: what the next iteration builds on (0 = none yet); bestVersion: the session's
    // best trustworthy step (0 = none yet).
    void iterationFinished(int iteration, int parentVersion, int bestVersion);
    // Live text of an agent ("planner", "coder", "reviewer") working on a version.
    void agentTextAvailable(const QString& role, const QString& chunk, int version);
    // Where an agent's call to a model stands (progress.version: the candidate).
    void agentProgressAvailable(const kev::AgentProgress& progress);
    // Harness progress (stage: compile, lint, validate, time, recheck, queued) and engine notes.
    void progressAvailable(int version, const QString& stage, const QString& message,
                           double fraction);
    void finished(kev::Engine::StopReason reason, const QString& message);
    void failed(kev::Engine::Failure failure, const QString& message);

private:
    void post(std::function<void(EngineRun*)> command);

    QThread m_thread;
    EngineRun* m_run = nullptr;
    State m_state = State::Idle;
};

} // namespace kev

Q_DECLARE_METATYPE(kev::Engine::State)
Q_DECLARE_METATYPE(kev::Engine::StopReason)
Q_DECLARE_METATYPE(kev::Engine::Failure)
