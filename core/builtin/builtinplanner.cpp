#include "builtin/builtinplanner.h"

#include "builtin/kernelfamily.h"
#include "builtin/knowledgebase.h"

#include <QJsonArray>
#include <QMetaObject>

#include <cmath>

using namespace Qt::StringLiterals;

namespace kev {

namespace {

// Weight of the bandit's exploration bonus, in units of speed-up (fraction of the reference).
constexpr double kExploration = 0.15;
// Random multi-parameter mutations tried before a family counts as exhausted around its best.
constexpr int kMutationAttempts = 64;

double scoreOf(const IterationSummary& h) {
    if (h.isTrustworthy())
        return *h.speedup;
    return h.status == u"ok" ? 0.0 : -1.0;
}

} // namespace

PlannerSearch::PlannerSearch(quint32 seed)
    : m_rng(seed) {}

QString PlannerSearch::key(const Strategy& s) const {
    const KernelFamily* family = FamilyRegistry::instance().find(s.family);
    return family ? configurationKey(*family, s) : s.family + u' ' + s.summary();
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
    m_tries[strategy.family] += 1;
    if (!m_bestScore.contains(strategy.family) || score > m_bestScore.value(strategy.family)) {
        m_bestScore.insert(strategy.family, score);
        m_bestByFamily.insert(strategy.family, strategy);
    }
}

void PlannerSearch::learnFromHistory(const AgentContext& context) {
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
    return !m_scores.contains(k) && !m_pending.contains(k) &&
           family.constraints(s, context.task, context.device).isEmpty();
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
        if (family->id() == u"wgmma_tma")
            continue; // reached by exploration once the ladder below it is measured
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
    if (!chosen) {
        *error = u"no built-in family has a feasible starting point for task %1 on %2"_s.arg(
            context.task.name, context.device.name);
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
    s.rationale = u"First plan. Roofline: %1. Family %2 (the most capable proven template for "
                  "%3 inputs%4). %5"_s.arg(roof.text(), chosen->id(), context.task.a)
                      .arg(splitK ? u"; the output has too few tiles, so K is split"_s : QString())
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
        const double value = tries > 0 ? m_bestScore.value(family->id())
                                       : knowledge::familyPrior(family->id(), context.task);
        const double bonus = kExploration * std::sqrt(std::log(1.0 + total) / (1.0 + tries));
        if (value + bonus > best) {
            best = value + bonus;
            chosen = family;
            *why = u"bandit: family %1 scores %2 (%3 %4 + exploration %5 after %6 tries)"_s
                       .arg(family->id())
                       .arg(value + bonus, 0, 'f', 3)
                       .arg(tries > 0 ? u"best measured"_s : u"prior"_s)
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
    if (!moves.isEmpty()) {
        Strategy s = moves.at(m_rng.bounded(int(moves.size())));
        s.rationale = u"Local search around %1: %2."_s.arg(base.summary(), s.rationale);
        return s;
    }
    // Every single move is measured: mutate several parameters at once.
    for (int attempt = 0; attempt < kMutationAttempts; ++attempt) {
        Strategy s = base;
        QStringList steps;
        const int count = 2 + m_rng.bounded(2);
        for (int i = 0; i < count; ++i) {
            const auto options = family.neighbours(s);
            if (options.isEmpty())
                break;
            const Strategy& pick = options.at(m_rng.bounded(int(options.size())));
            steps << pick.rationale;
            s = pick;
        }
        if (usable(family, s, context)) {
            s.rationale = u"Mutation of %1 (its single moves are all measured): %2."_s.arg(
                base.summary(), steps.join(u", "_s));
            return s;
        }
    }
    return std::nullopt;
}

std::optional<Strategy> PlannerSearch::next(const AgentContext& context, QString* error) {
    learnFromHistory(context);
    std::optional<Strategy> chosen;
    if (m_scores.isEmpty() && m_pending.isEmpty() && !context.parentStrategy) {
        chosen = firstPlan(context, error);
        if (!chosen)
            return std::nullopt;
    }
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
        return std::nullopt;
    }
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
