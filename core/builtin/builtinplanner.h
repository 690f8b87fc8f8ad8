// The built-in Planning agent. First plan: the family the roofline and the task's dtypes call for,
// at its default point. Later plans: the review's suggested parameter moves applied to the parent,
// then a bandit over families (prior beliefs from the knowledge base, replaced by measured
// speed-ups) and evolutionary mutation of the parent's parameters. A configuration already
// measured is never proposed again. Every strategy carries its rationale.
#ifndef KEV_BUILTIN_BUILTINPLANNER_H
#define KEV_BUILTIN_BUILTINPLANNER_H

#include "agents.h"

#include <QHash>
#include <QRandomGenerator>
#include <QSet>

namespace kev {

class KernelFamily;

// The search, usable without the agent object (tests).
class PlannerSearch {
public:
    explicit PlannerSearch(quint32 seed = 20240607);

    // The next strategy for the context, or nullopt with *error saying why none is left.
    std::optional<Strategy> next(const AgentContext& context, QString* error);

    // Marks a configuration as measured with a score (speed-up, 0 = correct but untimed, -1 =
    // failed); next() then never proposes it again.
    void record(const Strategy& strategy, double score);
    bool isMeasured(const Strategy& strategy) const;

private:
    struct Proposal {
        int iteration;
        int beamIndex;
        Strategy strategy;
    };
    void learnFromHistory(const AgentContext& context);
    std::optional<Strategy> firstPlan(const AgentContext& context, QString* error);
    std::optional<Strategy> beamStart(const AgentContext& context);
    std::optional<Strategy> fromFeedback(const AgentContext& context, const Strategy& parent);
    const KernelFamily* chooseFamily(const AgentContext& context, QString* why);
    std::optional<Strategy> explore(const AgentContext& context, const KernelFamily& family,
                                    const Strategy& base);
    bool usable(const KernelFamily& family, const Strategy& s, const AgentContext& context) const;
    // The knowledge store's best configuration of the nearest solved task that fits this one
    // (refit.h), for the first plan of a session (builtinplanner_knowledge.cpp).
    std::optional<Strategy> fromKnowledge(const AgentContext& context);
    // The second step of a session whose first came from the store: the task's own first plan.
    std::optional<Strategy> ownStartAfterKnowledge(const AgentContext& context);
    std::optional<Strategy> fromPrior(const AgentContext& context,
                                      const QVector<const KernelFamily*>& families,
                                      const KnowledgePrior& prior);
    // The rejection whose region (kRejectedRadius around the rejected plan) holds `s`, if any.
    const KnowledgeDecision* rejectedRegion(const KernelFamily& family, const Strategy& s,
                                            const AgentContext& context) const;
    // What the rationale says about the store: the decisions near this task (once a session),
    // and the points this call left out because a person rejected their region.
    QString knowledgeNote(const AgentContext& context) const;
    // The best speed-up the store's nearest tasks measured with the family, or -1.
    double knowledgeValue(const QString& familyId, const AgentContext& context) const;
    // Of `moves`, the one farthest from the plans the other slots of this iteration hold (a beam
    // spreads over the space instead of four slots taking one point); ties broken at random.
    Strategy farthest(const KernelFamily& family, const QVector<Strategy>& moves,
                      const AgentContext& context);
    QString key(const Strategy& s) const;
    // Of `moves` (a family's neighbours, each rationale naming its move, e.g. "swap_rows 96 ->
    // 48 (...)"), those whose move has not already lost from another point of this session; all
    // of them when every one has. *skipped gets the moves left out.
    QVector<Strategy> withoutLosingMoves(const QVector<Strategy>& moves,
                                         QStringList* skipped) const;
    // Of `moves` from `base`, those of the lowest tier the family ranks them in
    // (KernelFamily::moveTier: the knobs that moved its kernels most on the hardware first).
    static QVector<Strategy> firstTier(const KernelFamily& family, const Strategy& base,
                                       const QVector<Strategy>& moves);
    // Remembers that `chosen` is `move` from `base`, so that record() can judge the move.
    void noteMove(const Strategy& chosen, const QString& move, const Strategy& base);

    QHash<QString, double> m_scores;                 // configuration key -> score
    QHash<QString, Strategy> m_bestByFamily;         // family id -> best measured strategy
    QHash<QString, double> m_bestScore;              // family id -> best score
    QHash<QString, int> m_tries;                     // family id -> configurations measured
    QSet<QString> m_pending;                         // proposed, not yet measured
    QVector<std::pair<double, Strategy>> m_measured; // score, configuration
    QVector<Proposal> m_proposals;
    // A proposal made as one move from a measured point: the move, and that point's score.
    struct Move {
        QString move;
        double baseScore;
    };
    QHash<QString, Move> m_moveOf; // configuration key -> the move that proposed it
    // Moves that measured under kLosingMoveRatio of their starting point's score: the same move
    // from another point (a row split at M = 96 from two parents: 0.54x twice) is not repeated.
    QSet<QString> m_losingMoves;
    QRandomGenerator m_rng;
    quint32 m_seed;
    Task m_task; // of the latest context: canonical keys fill defaults for it
    // Points of rejected regions usable() turned down in the current next() call, and the latest
    // such rejection's line.
    mutable int m_avoided = 0;
    mutable QString m_avoidedLine;
    DeviceInfo m_device;
};

class BuiltinPlanner : public Planner {
    Q_OBJECT
public:
    explicit BuiltinPlanner(QObject* parent = nullptr);

    void plan(const kev::AgentContext& context) override;
    void cancel() override;

private:
    PlannerSearch m_search;
    quint64 m_request = 0;
};

} // namespace kev

#endif // KEV_BUILTIN_BUILTINPLANNER_H
