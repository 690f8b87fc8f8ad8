// The three agent roles, asynchronous and cancellable: a call starts the work and returns at once;
// the result arrives by signal on the agent's thread (the engine's worker thread, where agents are
// created). After cancel() an agent emits nothing more for the cancelled request.
#pragma once

#include "agentprogress.h"
#include "agentturn.h"
#include "deviceinfo.h"
#include "evaluationreport.h"
#include "iterationsummary.h"
#include "knowledgehints.h"
#include "reviewfeedback.h"
#include "strategy.h"
#include "task.h"

#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QVector>

#include <functional>
#include <memory>
#include <optional>

namespace kev {

class KeyStore;
class SpendLedger;

// Everything an agent may look at. Numbers come from harness reports only.
struct AgentContext {
    Task task;
    DeviceInfo device;
    // Every completed step so far, oldest first.
    QVector<IterationSummary> history;
    // The candidate this iteration improves on (the best trustworthy one, or the one the person
    // approved); empty in the first iteration.
    std::optional<Strategy> parentStrategy;
    QString parentSource;
    std::optional<EvaluationReport> parentReport;
    // The review of the most recent step (which may differ from the parent).
    std::optional<ReviewFeedback> lastFeedback;
    // The reason a person gave when rejecting the last step, or empty.
    QString humanNote;
    int iteration = 1;
    // A beam asks several planners in one iteration; beamIndex > 0 asks for an alternative.
    int beamIndex = 0;
    int beamWidth = 1;
    // The plan of every step in `history`, by version (from the session's plan files), so a
    // planner knows what every slot measured, not only its own proposals.
    QHash<int, Strategy> historyPlans;
    // Plans the other slots of this iteration already hold; the engine re-asks a planner whose
    // plan repeats one of these or a measured one (issue 18: never measure a kernel twice).
    QVector<Strategy> otherSlotPlans;
    // Why this is a second request in the same slot (the previous plan repeated v3, ...); empty
    // for a first request.
    QString duplicateNote;
    // What the per-user knowledge store knows about nearby tasks (their best configurations and
    // the human decisions on them); empty when the store is off or knows nothing near.
    KnowledgeHints knowledge;
};

// How to build one role's agent. `options` is backend-specific and persisted in session.json, so
// it never holds a secret; keys come from `keyStore` at request time.
struct AgentSettings {
    // "planner", "coder" or "reviewer".
    QString role;
    // "builtin", "llm", "scripted", ...
    QString backend;
    QJsonObject options;
    std::shared_ptr<KeyStore> keyStore;
    // The session's spend: a backend that pays per call records each call and asks it before
    // each request whether a budget is used up. Null: no budget and nothing recorded.
    std::shared_ptr<SpendLedger> ledger;
};

class Planner : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;
    virtual void plan(const kev::AgentContext& context) = 0;
    virtual void cancel() = 0;

signals:
    void planAvailable(const kev::Strategy& strategy, const kev::AgentTurn& turn);
    void planFailed(const QString& error);
    // Live text for the panels (e.g. a streamed LLM reply).
    void textAvailable(const QString& chunk);
    // Where a call to a model stands (attempt, tokens, waits), for the live progress line.
    void progressChanged(const kev::AgentProgress& progress);
};

class Coder : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;
    virtual void code(const kev::AgentContext& context, const kev::Strategy& strategy) = 0;
    // The previous source did not compile: fix it (compileLog is the harness's verbatim log).
    virtual void fixCompile(const kev::AgentContext& context, const kev::Strategy& strategy,
                            const QString& source, const QString& compileLog) = 0;
    virtual void cancel() = 0;

signals:
    void codeAvailable(const QString& source, const kev::AgentTurn& turn);
    void codeFailed(const QString& error);
    void textAvailable(const QString& chunk);
    void progressChanged(const kev::AgentProgress& progress);
};

class Reviewer : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;
    virtual void review(const kev::AgentContext& context, const kev::Strategy& strategy,
                        const QString& source, const kev::EvaluationReport& report) = 0;
    virtual void cancel() = 0;

signals:
    void reviewAvailable(const kev::ReviewFeedback& feedback, const kev::AgentTurn& turn);
    void reviewFailed(const QString& error);
    void textAvailable(const QString& chunk);
    void progressChanged(const kev::AgentProgress& progress);
};

// The registry of agent backends. Backends register themselves (see AgentBackendRegistration);
// roles can mix backends (planner=llm, coder=llm, reviewer=builtin).
class AgentFactory {
public:
    using PlannerMaker = std::function<Planner*(const AgentSettings&)>;
    using CoderMaker = std::function<Coder*(const AgentSettings&)>;
    using ReviewerMaker = std::function<Reviewer*(const AgentSettings&)>;

    // A maker may be empty (or return nullptr) for a role the backend does not play.
    static void registerBackend(const QString& name, PlannerMaker planner, CoderMaker coder,
                                ReviewerMaker reviewer, const QString& description = QString());
    static QStringList backends();
    static bool hasBackend(const QString& name);
    static QString description(const QString& name);

    // The caller owns the agent. nullptr with *error naming the backend and the role when the
    // backend is unknown or does not play the role.
    static Planner* createPlanner(const AgentSettings& settings, QString* error);
    static Coder* createCoder(const AgentSettings& settings, QString* error);
    static Reviewer* createReviewer(const AgentSettings& settings, QString* error);
};

// Put one of these at namespace scope in a backend's .cpp; core is a shared library, so it runs
// when the library loads:
//     static const kev::AgentBackendRegistration registration(QStringLiteral("builtin"), ...);
struct AgentBackendRegistration {
    AgentBackendRegistration(const QString& name, AgentFactory::PlannerMaker planner,
                             AgentFactory::CoderMaker coder, AgentFactory::ReviewerMaker reviewer,
                             const QString& description = QString());
};

} // namespace kev

Q_DECLARE_METATYPE(kev::AgentContext)
