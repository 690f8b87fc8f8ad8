// The built-in planner and the knowledge store (issue 18): a session's first plan starts from the
// best configuration of the nearest solved task, re-fitted to this task's shape; the bandit
// believes an untried family at what nearby tasks measured with it; the rationale cites both and
// the human decisions near this task. Rejected regions are left out in usable().
#include "builtin/builtinplanner.h"

#include "builtin/kernelfamily.h"
#include "builtin/refit.h"

#include <algorithm>

using namespace Qt::StringLiterals;

namespace kev {

std::optional<Strategy> PlannerSearch::fromKnowledge(const AgentContext& context) {
    const auto families = FamilyRegistry::instance().supporting(context.task, context.device);
    // A point another slot holds (or this session measured) is taken: the next prior comes
    // first, and only then the points around a taken one (the second pass).
    const auto taken = [&](const Strategy& plan) {
        const QString k = key(plan);
        if (m_scores.contains(k) || m_pending.contains(k))
            return true;
        for (const Strategy& other : context.otherSlotPlans) {
            if (key(other) == k)
                return true;
        }
        return false;
    };
    for (int pass = 0; pass < 2; ++pass) {
        for (const KnowledgePrior& prior : context.knowledge.priors) {
            if (pass == 0 && taken(prior.plan))
                continue;
            if (auto s = fromPrior(context, families, prior))
                return s;
        }
    }
    return std::nullopt;
}

std::optional<Strategy> PlannerSearch::fromPrior(const AgentContext& context,
                                                 const QVector<const KernelFamily*>& families,
                                                 const KnowledgePrior& prior) {
    const KernelFamily* family = nullptr;
    for (const KernelFamily* f : families) {
        if (f->id() == prior.plan.family)
            family = f;
    }
    if (!family)
        return std::nullopt; // a family this build lacks, or one that cannot run the task here
    int moves = 0;
    auto s = refitToTask(
        *family, prior.plan, context.task, context.device,
        [&](const Strategy& point) { return usable(*family, point, context); }, &moves);
    if (!s)
        return std::nullopt;
    Strategy exact = prior.plan;
    family->normalize(exact);
    const bool fits = family->constraints(exact, context.task, context.device).isEmpty();
    QString refit = u"it fits this task as it is"_s;
    if (moves > 0 && fits)
        refit = u"that point is taken (measured, held by another slot or in a rejected region), "
                "so its nearest free neighbour, %1 move(s) away: %2"_s.arg(moves)
                    .arg(s->summary());
    else if (moves > 0)
        refit = u"re-fitted to this task's shape by the family's feasibility rules in %1 "
                "move(s), to %2"_s.arg(moves)
                    .arg(s->summary());
    s->rationale = u"Start from the knowledge store: the best configuration %1 (task "
                   "distance %2 octaves); %3."_s.arg(prior.citation())
                       .arg(prior.distance, 0, 'f', 2)
                       .arg(refit);
    if (context.beamIndex > 0)
        s->rationale = u"Beam slot %1: "_s.arg(context.beamIndex + 1) + s->rationale;
    return s;
}

std::optional<Strategy> PlannerSearch::ownStartAfterKnowledge(const AgentContext& context) {
    // The first step came from the store; the second measures where this task starts on its own
    // (the family model), so both priors are tried before the local search narrows. The nearest
    // task can sit in another regime: at M = 256 the M = 128 task's best tile ran at 0.65x cuBLAS
    // on the H200, the M = 256 default at 0.9-1.0x (docs/benchmarks.md, session 7).
    if (m_scores.size() != 1 || context.knowledge.priors.isEmpty())
        return std::nullopt;
    QString ignored;
    std::optional<Strategy> own = firstPlan(context, &ignored);
    if (!own)
        return std::nullopt;
    const QString k = key(*own);
    if (m_scores.contains(k) || m_pending.contains(k))
        return std::nullopt;
    const KernelFamily* family = FamilyRegistry::instance().find(own->family);
    if (family && !usable(*family, *own, context))
        return std::nullopt; // in a rejected region: the ordinary search takes over
    own->rationale = u"The first step started from the knowledge store; this one measures the "
                     "task's own starting point, so that both the nearest task's best and the "
                     "family model are tried before the local search. "_s +
                     own->rationale;
    return own;
}

double PlannerSearch::knowledgeValue(const QString& familyId, const AgentContext& context) const {
    double best = -1;
    for (const KnowledgePrior& prior : context.knowledge.priors) {
        if (prior.plan.family == familyId)
            best = std::max(best, prior.speedup);
    }
    return best;
}

QString PlannerSearch::knowledgeNote(const AgentContext& context) const {
    QString note;
    // The decisions are quoted with the first plan a planner makes in a session.
    if (m_proposals.isEmpty() && !context.knowledge.decisions.isEmpty()) {
        QStringList lines;
        for (const KnowledgeDecision& d : context.knowledge.decisions)
            lines << d.line();
        note +=
            u" Human decisions on nearby tasks (knowledge store): %1."_s.arg(lines.join(u"; "_s));
    }
    if (m_avoided > 0)
        note +=
            u" Left out %1 point(s) in the region of a rejected plan (%2)."_s.arg(m_avoided).arg(
                m_avoidedLine);
    return note;
}

} // namespace kev
