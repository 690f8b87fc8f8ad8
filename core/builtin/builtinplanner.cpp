#include "builtin/builtinplanner.h"

#include "builtin/family_wgmma.h"
#include "builtin/kernelfamily.h"
#include "builtin/knowledgebase.h"
#include "builtin/refit.h"
#include "search/seenset.h"

#include <QJsonArray>
#include <QMetaObject>

#include <algorithm>
#include <cmath>
#include <limits>

using namespace Qt::StringLiterals;

namespace kev {

namespace {

// Weight of the bandit's exploration bonus, in units of speed-up (fraction of the reference).
constexpr double kExploration = 0.15;
// Random multi-parameter mutations tried before a family counts as exhausted around its best.
constexpr int kMutationAttempts = 256;
// How far around a plan a person rejected the planner stays away (planDistance: one step of a
// knob with four values is 0.33): the rejected point and its nearest neighbours along the
// ordered knobs; a different mode or a far tile size is another region.
constexpr double kRejectedRadius = 0.34;

bool familyTaken(const QString& id, const AgentContext& context) {
    for (const Strategy& other : context.otherSlotPlans) {
        if (other.family == id)
            return true;
    }
    return false;
}

// Distance of two plans: per knob, the positions apart in its ordered values over the list's
// length (a mode knob counts 1 when it differs); another family is farther than any point.
double planDistance(const KernelFamily& family, const Strategy& a, const Strategy& b) {
    if (a.family != b.family)
        return 1e6;
    double d = 0;
    const auto specs = family.parameters();
    for (const ParameterSpec& spec : specs) {
        const QJsonValue va = parameterValue(spec, a);
        const QJsonValue vb = parameterValue(spec, b);
        if (va == vb)
            continue;
        qsizetype ia = -1;
        qsizetype ib = -1;
        for (qsizetype i = 0; i < spec.values.size(); ++i) {
            if (spec.values.at(i) == va)
                ia = i;
            if (spec.values.at(i) == vb)
                ib = i;
        }
        const bool ordered = va.isDouble() && vb.isDouble() && ia >= 0 && ib >= 0;
        d += ordered ? double(std::abs(ia - ib)) /
                           double(std::max<qsizetype>(spec.values.size() - 1, 1))
                     : 1.0;
    }
    return d;
}

// A move that measured under this share of its starting point's score is not repeated from another
// point of the session (H200, session 11: halving the swapped tile's rows at M = 96 measured 0.54x
// against 0.89x from one parent, then again from its sibling).
constexpr double kLosingMoveRatio = 0.75;

double scoreOf(const IterationSummary& h) {
    if (h.isTrustworthy())
        return *h.speedup;
    return h.status == u"ok" ? 0.0 : -1.0;
}

} // namespace

PlannerSearch::PlannerSearch(quint32 seed)
    : m_rng(seed)
    , m_seed(seed) {}

QString PlannerSearch::key(const Strategy& s) const {
    return canonicalPlanKey(s, m_task, m_device);
}

bool PlannerSearch::isMeasured(const Strategy& strategy) const {
    return m_scores.contains(key(strategy));
}

void PlannerSearch::record(const Strategy& strategy, double score) {
    const QString k = key(strategy);
    m_pending.remove(k);
    if (m_scores.contains(k))
        return;
    m_scores.insert(k, score);
    m_measured.append({score, strategy});
    const auto move = m_moveOf.constFind(k);
    if (move != m_moveOf.cend() && move->baseScore > 0 &&
        score < kLosingMoveRatio * move->baseScore)
        m_losingMoves.insert(move->move);
    m_tries[strategy.family] += 1;
    if (!m_bestScore.contains(strategy.family) || score > m_bestScore.value(strategy.family)) {
        m_bestScore.insert(strategy.family, score);
        m_bestByFamily.insert(strategy.family, strategy);
    }
}

void PlannerSearch::learnFromHistory(const AgentContext& context) {
    m_task = context.task;
    m_device = context.device;
    // Every slot's step, not only this planner's proposals: the engine gives the plan of each.
    for (const IterationSummary& h : context.history) {
        const auto plan = context.historyPlans.constFind(h.version);
        if (plan != context.historyPlans.cend())
            record(*plan, scoreOf(h));
    }
    for (const IterationSummary& h : context.history) {
        for (qsizetype i = 0; i < m_proposals.size(); ++i) {
            const Proposal& p = m_proposals.at(i);
            if (p.iteration == h.iteration && p.beamIndex == h.beamIndex &&
                p.strategy.family == h.family) {
                record(p.strategy, scoreOf(h));
                m_proposals.remove(i);
                break;
            }
        }
    }
    // A resumed session: the parent was measured before this planner existed.
    if (context.parentStrategy && context.parentReport && !isMeasured(*context.parentStrategy))
        record(*context.parentStrategy,
               context.parentReport->isTrustworthyResult() ? context.parentReport->speedup : -1.0);
}

bool PlannerSearch::usable(const KernelFamily& family, const Strategy& s,
                           const AgentContext& context) const {
    const QString k = key(s);
    if (m_scores.contains(k) || m_pending.contains(k))
        return false;
    for (const Strategy& other : context.otherSlotPlans) {
        if (key(other) == k)
            return false;
    }
    if (const KnowledgeDecision* rejection = rejectedRegion(family, s, context)) {
        ++m_avoided;
        m_avoidedLine = rejection->line();
        return false;
    }
    return family.constraints(s, context.task, context.device).isEmpty();
}

const KnowledgeDecision* PlannerSearch::rejectedRegion(const KernelFamily& family,
                                                       const Strategy& s,
                                                       const AgentContext& context) const {
    for (const KnowledgeDecision& d : context.knowledge.decisions) {
        if (d.kind == KnowledgeDecision::Kind::Rejected && d.plan.family == family.id() &&
            planDistance(family, s, d.plan) <= kRejectedRadius)
            return &d;
    }
    return nullptr;
}

QVector<Strategy> PlannerSearch::withoutLosingMoves(const QVector<Strategy>& moves,
                                                    QStringList* skipped) const {
    QVector<Strategy> kept;
    for (const Strategy& m : moves) {
        if (m_losingMoves.contains(m.rationale))
            *skipped << m.rationale;
        else
            kept << m;
    }
    if (kept.isEmpty()) {
        skipped->clear();
        return moves;
    }
    return kept;
}

QVector<Strategy> PlannerSearch::firstTier(const KernelFamily& family, const Strategy& base,
                                           const QVector<Strategy>& moves) {
    int lowest = std::numeric_limits<int>::max();
    for (const Strategy& m : moves)
        lowest = std::min(lowest, family.moveTier(base, m));
    QVector<Strategy> out;
    for (const Strategy& m : moves) {
        if (family.moveTier(base, m) == lowest)
            out << m;
    }
    return out;
}

void PlannerSearch::noteMove(const Strategy& chosen, const QString& move, const Strategy& base) {
    const auto score = m_scores.constFind(key(base));
    m_moveOf.insert(key(chosen), {move, score != m_scores.cend() ? *score : -1.0});
}

Strategy PlannerSearch::farthest(const KernelFamily& family, const QVector<Strategy>& moves,
                                 const AgentContext& context) {
    QVector<qsizetype> best;
    double bestDistance = -1;
    for (qsizetype i = 0; i < moves.size(); ++i) {
        double nearest = 1e9;
        for (const Strategy& other : context.otherSlotPlans)
            nearest = std::min(nearest, planDistance(family, moves.at(i), other));
        if (nearest > bestDistance + 1e-9) {
            bestDistance = nearest;
            best = {i};
        } else if (std::abs(nearest - bestDistance) <= 1e-9) {
            best << i;
        }
    }
    return moves.at(best.at(m_rng.bounded(int(best.size()))));
}

std::optional<Strategy> PlannerSearch::firstPlan(const AgentContext& context, QString* error) {
    const auto families = FamilyRegistry::instance().supporting(context.task, context.device);
    if (families.isEmpty()) {
        *error = u"no built-in kernel family supports task %1 (%2) on %3 (sm_%4%5)"_s
                     .arg(context.task.name, context.task.summary(), context.device.name)
                     .arg(context.device.ccMajor)
                     .arg(context.device.ccMinor);
        return std::nullopt;
    }
    const Roofline roof = knowledge::roofline(context.task, context.device);
    const bool splitK = knowledge::wantsSplitK(context.task, context.device);
    // Start from the best-believed family whose defaults are proven templates: the prior of
    // each family, with split-K preferred when the output has too few tiles for the GPU.
    const KernelFamily* chosen = nullptr;
    double best = -1;
    for (const KernelFamily* family : families) {
        // Compute-bound GEMMs reach wgmma by exploration once the ladder below it is measured;
        // small-M (memory-bound) GEMMs from M = 33 start there: its small-M default streams B
        // once through a deep TMA ring in tiles as tall as M (family_wgmma.h); below, mma_smallm.
        if (family->id() == u"wgmma_tma" &&
            !(context.task.isGemm() && context.task.m >= kSmallMWgmmaFirstM &&
              context.task.m <= kSmallMWgmmaLimit))
            continue;
        if (familyTaken(family->id(), context))
            continue; // another slot of the beam starts there: this one starts elsewhere
        double prior = knowledge::familyPrior(family->id(), context.task);
        if (family->id() == u"mma_sync_splitk")
            prior = splitK ? 1.0 : 0.0;
        const Strategy s = family->defaultStrategy(context.task, context.device);
        if (prior > best && usable(*family, s, context)) {
            best = prior;
            chosen = family;
        }
    }
    if (!chosen) {
        for (const KernelFamily* family : families) {
            if (usable(*family, family->defaultStrategy(context.task, context.device), context)) {
                chosen = family;
                break;
            }
        }
    }
    if (!chosen && m_avoided > 0) {
        // Every default lies in a region a person rejected: the nearest point outside it.
        for (const KernelFamily* family : families) {
            int moves = 0;
            auto s = refitToTask(
                *family, family->defaultStrategy(context.task, context.device), context.task,
                context.device, [&](const Strategy& p) { return usable(*family, p, context); },
                &moves);
            if (s) {
                s->rationale = u"First plan. Roofline: %1. Family %2's starting point lies in a "
                               "region a person rejected; this is the nearest point outside it "
                               "(%3 move(s) away)."_s.arg(roof.text(), family->id())
                                   .arg(moves);
                return s;
            }
        }
    }
    if (!chosen) {
        *error = u"no built-in family has a feasible starting point for task %1 on %2"_s.arg(
            context.task.name, context.device.name);
        if (m_avoided > 0)
            *error += u" outside the regions people rejected (%1)"_s.arg(m_avoidedLine);
        return std::nullopt;
    }
    Strategy s = chosen->defaultStrategy(context.task, context.device);
    if (!context.task.isGemm()) {
        s.rationale =
            u"First plan. Roofline: %1; the target is the DRAM floor (every byte read "
            "and written once), judged as a percentage of that floor. Family %2 (the %3 family "
            "for %4). %5"_s.arg(roof.text(), chosen->id())
                .arg(roof.computeBound ? u"compute-bound"_s : u"memory-bound"_s, context.task.op,
                     s.rationale);
        return s;
    }
    if (knowledge::isMemoryBoundPlan(chosen->id(), context.task, context.device)) {
        s.rationale = u"First plan. Roofline: %1. A small-M GEMM is memory-bound on B (read "
                      "once): the target is the DRAM floor, judged as a percentage of it. Family "
                      "%2. %3"_s.arg(roof.text(), chosen->id(), s.rationale);
        return s;
    }
    s.rationale = u"First plan. Roofline: %1. Family %2 (the most capable proven template for "
                  "%3 inputs%4). %5"_s.arg(roof.text(), chosen->id(), context.task.a)
                      .arg(splitK ? u"; the output has too few tiles, so K is split"_s : QString())
                      .arg(s.rationale);
    return s;
}

std::optional<Strategy> PlannerSearch::beamStart(const AgentContext& context) {
    // Another slot holds the first plan: start a family it does not explore, when one is
    // believed nearly as good (half the best prior or more); otherwise search around the first
    // plan (the caller's local search, farthest from the other slots).
    const auto families = FamilyRegistry::instance().supporting(context.task, context.device);
    double top = 0;
    for (const KernelFamily* family : families)
        top = std::max(top, knowledge::familyPrior(family->id(), context.task));
    const KernelFamily* chosen = nullptr;
    double best = -1;
    for (const KernelFamily* family : families) {
        const double prior = knowledge::familyPrior(family->id(), context.task);
        if (familyTaken(family->id(), context) || prior < 0.5 * top || prior <= best)
            continue;
        if (usable(*family, family->defaultStrategy(context.task, context.device), context)) {
            best = prior;
            chosen = family;
        }
    }
    if (!chosen)
        return std::nullopt;
    Strategy s = chosen->defaultStrategy(context.task, context.device);
    s.rationale =
        u"First plan of beam slot %1: family %2 (prior %3, at least half the best "
        "family's %4), which no other slot of this beam explores. %5"_s.arg(context.beamIndex + 1)
            .arg(chosen->id())
            .arg(best, 0, 'f', 2)
            .arg(top, 0, 'f', 2)
            .arg(s.rationale);
    return s;
}

std::optional<Strategy> PlannerSearch::fromFeedback(const AgentContext& context,
                                                    const Strategy& parent) {
    if (!context.lastFeedback)
        return std::nullopt;
    const KernelFamily* family = FamilyRegistry::instance().find(parent.family);
    if (!family)
        return std::nullopt;
    const QJsonArray moves = context.lastFeedback->evidence.value(u"moves"_s).toArray();
    const auto specs = family->parameters();
    for (const QJsonValue& mv : moves) {
        const QJsonObject move = mv.toObject();
        const QString param = move.value(u"param"_s).toString();
        const int step = move.value(u"step"_s).toInt();
        for (const ParameterSpec& spec : specs) {
            if (spec.name != param)
                continue;
            auto moved = stepParameter(spec, parent, step);
            if (!moved)
                continue;
            family->normalize(*moved);
            if (!usable(*family, *moved, context))
                continue;
            moved->rationale =
                u"Review found %1 (%2); remedy: %3, so %4 %5 -> %6 from the parent %7."_s.arg(
                    context.lastFeedback->bottleneckId, context.lastFeedback->bottleneckText,
                    move.value(u"why"_s).toString(), param,
                    parameterValue(spec, parent).toVariant().toString(),
                    parameterValue(spec, *moved).toVariant().toString(), parent.summary());
            return moved;
        }
    }
    return std::nullopt;
}

const KernelFamily* PlannerSearch::chooseFamily(const AgentContext& context, QString* why) {
    const auto families = FamilyRegistry::instance().supporting(context.task, context.device);
    int total = 0;
    for (int n : std::as_const(m_tries))
        total += n;
    const KernelFamily* chosen = nullptr;
    double best = -1e9;
    for (const KernelFamily* family : families) {
        const int tries = m_tries.value(family->id());
        // An untried family is believed at its prior, or at what the store's nearest tasks
        // measured with it when they did.
        const double value = tries > 0
                                 ? m_bestScore.value(family->id())
                                 : std::max(knowledge::familyPrior(family->id(), context.task),
                                            knowledgeValue(family->id(), context));
        double bonus = kExploration * std::sqrt(std::log(1.0 + total) / (1.0 + tries));
        // A family another slot of this beam already explores loses its bonus: the beam spreads.
        if (familyTaken(family->id(), context))
            bonus -= kExploration;
        if (value + bonus > best) {
            best = value + bonus;
            chosen = family;
            *why = u"bandit: family %1 scores %2 (%3 %4 + exploration %5 after %6 tries)"_s
                       .arg(family->id())
                       .arg(value + bonus, 0, 'f', 3)
                       .arg(tries > 0 ? u"best measured"_s
                            : knowledgeValue(family->id(), context) >
                                    knowledge::familyPrior(family->id(), context.task)
                                ? u"measured on a nearby task (knowledge store)"_s
                                : u"prior"_s)
                       .arg(value, 0, 'f', 3)
                       .arg(bonus, 0, 'f', 3)
                       .arg(tries);
        }
    }
    return chosen;
}

std::optional<Strategy> PlannerSearch::explore(const AgentContext& context,
                                               const KernelFamily& family, const Strategy& base) {
    if (usable(family, base, context)) {
        Strategy s = base;
        s.rationale = u"Family %1 at its starting point: %2"_s.arg(family.id(), base.rationale);
        return s;
    }
    QVector<Strategy> moves;
    const auto neighbours = family.neighbours(base);
    for (const Strategy& n : neighbours) {
        if (usable(family, n, context))
            moves << n;
    }
    QStringList skipped;
    moves = withoutLosingMoves(moves, &skipped);
    if (!moves.isEmpty()) {
        const QVector<Strategy> tier = firstTier(family, base, moves);
        Strategy s = farthest(family, tier, context);
        noteMove(s, s.rationale, base);
        s.rationale = u"Local search around %1: %2%3%4%5."_s.arg(
            base.summary(), s.rationale,
            tier.size() < moves.size()
                ? u" (a move of the family's first tier: %1 of the %2 untried moves; the "
                  "knobs that moved its kernels most are tried first)"_s.arg(tier.size())
                      .arg(moves.size())
                : QString(),
            context.otherSlotPlans.isEmpty()
                ? QString()
                : u" (of %1 such moves, the one farthest from the %2 plan(s) the other "
                  "slots of this beam hold)"_s.arg(tier.size())
                      .arg(context.otherSlotPlans.size()),
            skipped.isEmpty() ? QString()
                              : u"; not repeated, having lost over a quarter from another "
                                "point: %1"_s.arg(skipped.join(u", "_s)));
        return s;
    }
    // Every single move of the base is measured or held by another slot: the untried moves
    // around the family's other measured points, the best first (a beam exhausts one point's
    // neighbourhood in an iteration or two).
    QVector<std::pair<double, Strategy>> measured;
    for (const auto& m : std::as_const(m_measured)) {
        if (m.second.family == family.id())
            measured << m;
    }
    std::stable_sort(measured.begin(), measured.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& [score, point] : std::as_const(measured)) {
        QVector<Strategy> around;
        const auto options = family.neighbours(point);
        for (const Strategy& n : options) {
            if (usable(family, n, context))
                around << n;
        }
        QStringList skippedAround;
        around = withoutLosingMoves(around, &skippedAround);
        if (!around.isEmpty()) {
            Strategy s = farthest(family, firstTier(family, point, around), context);
            noteMove(s, s.rationale, point);
            s.rationale = u"Local search around %1 (measured %2; the moves around %3 are all "
                          "taken): %4."_s.arg(point.summary())
                              .arg(score, 0, 'f', 3)
                              .arg(base.summary(), s.rationale);
            return s;
        }
    }
    // Then mutate several parameters at once, from the base or a measured point.
    for (int attempt = 0; attempt < kMutationAttempts; ++attempt) {
        Strategy s = base;
        if (!measured.isEmpty() && attempt % 2 == 1)
            s = measured.at(m_rng.bounded(int(measured.size()))).second;
        const Strategy start = s;
        QStringList steps;
        const int count = 2 + m_rng.bounded(4);
        for (int i = 0; i < count; ++i) {
            const auto options = family.neighbours(s);
            if (options.isEmpty())
                break;
            const Strategy& pick = options.at(m_rng.bounded(int(options.size())));
            steps << pick.rationale;
            s = pick;
        }
        if (usable(family, s, context)) {
            s.rationale = u"Mutation of %1 (the single moves around the measured points are "
                          "all taken): %2."_s.arg(start.summary(), steps.join(u", "_s));
            return s;
        }
    }
    return std::nullopt;
}

std::optional<Strategy> PlannerSearch::next(const AgentContext& context, QString* error) {
    // The slots of a beam are separate planners with the same history: each draws from its own
    // stream, so their random choices differ even before they see each other's plans.
    m_rng.seed(m_seed ^ (quint32(context.iteration) * 2654435761u) ^
               (quint32(context.beamIndex + 1) * 40503u) ^ quint32(m_proposals.size() * 97));
    learnFromHistory(context);
    m_avoided = 0;
    std::optional<Strategy> chosen;
    if (m_scores.isEmpty() && !context.parentStrategy)
        chosen = fromKnowledge(context);
    if (!chosen && m_scores.isEmpty() && !context.parentStrategy) {
        if (!context.otherSlotPlans.isEmpty())
            chosen = beamStart(context);
        else if (m_pending.isEmpty() && !(chosen = firstPlan(context, error)))
            return std::nullopt;
    }
    if (!chosen && context.beamIndex == 0)
        chosen = ownStartAfterKnowledge(context);
    if (!chosen && context.parentStrategy && context.beamIndex == 0)
        chosen = fromFeedback(context, *context.parentStrategy);
    if (!chosen) {
        QString why;
        const KernelFamily* family = chooseFamily(context, &why);
        QVector<const KernelFamily*> order;
        if (family)
            order << family;
        const auto all = FamilyRegistry::instance().supporting(context.task, context.device);
        for (const KernelFamily* f : all) {
            if (f != family)
                order << f;
        }
        for (const KernelFamily* f : std::as_const(order)) {
            Strategy base = f->defaultStrategy(context.task, context.device);
            if (context.parentStrategy && context.parentStrategy->family == f->id())
                base = *context.parentStrategy;
            else if (m_bestByFamily.contains(f->id()) && m_bestScore.value(f->id()) > 0)
                base = m_bestByFamily.value(f->id());
            chosen = explore(context, *f, base);
            if (chosen) {
                chosen->rationale = (f == family ? why : u"fallback to family "_s + f->id()) +
                                    u". "_s + chosen->rationale;
                break;
            }
        }
    }
    if (!chosen) {
        *error = u"the built-in search has measured every feasible configuration it can reach "
                 "for task %1 (%2 measured)"_s.arg(context.task.name)
                     .arg(m_scores.size());
        if (m_avoided > 0)
            *error +=
                u"; %1 point(s) left out lie in the region of a rejected plan (%2)"_s.arg(m_avoided)
                    .arg(m_avoidedLine);
        return std::nullopt;
    }
    const QString differences = differencesFromDefault(*chosen, context.task, context.device);
    chosen->rationale += differences.isEmpty()
                             ? u" The point is the family's default."_s
                             : u" Differs from the family's default in: %1."_s.arg(differences);
    if (!context.duplicateNote.isEmpty())
        chosen->rationale += u" (Asked again: %1.)"_s.arg(context.duplicateNote);
    chosen->rationale += knowledgeNote(context);
    m_pending.insert(key(*chosen));
    m_proposals.append({context.iteration, context.beamIndex, *chosen});
    return chosen;
}

BuiltinPlanner::BuiltinPlanner(QObject* parent)
    : Planner(parent) {}

void BuiltinPlanner::plan(const AgentContext& context) {
    const quint64 request = ++m_request;
    QString error;
    const std::optional<Strategy> strategy = m_search.next(context, &error);
    AgentTurn turn;
    turn.role = u"planner"_s;
    turn.backend = u"builtin"_s;
    turn.prompt =
        u"iteration %1 of task %2 (%3), beam %4/%5%6"_s.arg(context.iteration)
            .arg(context.task.name, context.task.summary())
            .arg(context.beamIndex + 1)
            .arg(context.beamWidth)
            .arg(context.humanNote.isEmpty() ? QString() : u"; person: "_s + context.humanNote);
    turn.reply = strategy ? strategy->toText() : error;
    QMetaObject::invokeMethod(
        this,
        [this, request, strategy, turn, error] {
            if (request != m_request)
                return;
            if (strategy) {
                emit textAvailable(strategy->rationale);
                emit planAvailable(*strategy, turn);
            } else {
                emit planFailed(error);
            }
        },
        Qt::QueuedConnection);
}

void BuiltinPlanner::cancel() {
    ++m_request;
}

} // namespace kev
