// EngineRun and the per-user knowledge store (issue 18): the store is opened with the session,
// every saved step is recorded there with its result and the decision on it, and every agent
// context carries what the store knows about tasks near this one.
#include "enginerun.h"

#include "textdiff.h"

namespace kev {

namespace {

QString decisionText(const Candidate& candidate) {
    const bool edit = candidate.origin == QLatin1String("human_code") ||
                      candidate.origin == QLatin1String("human_plan");
    switch (candidate.decision.kind) {
    case Decision::Kind::Automatic:
        return QStringLiteral("automatic");
    case Decision::Kind::Approved:
        return edit ? QStringLiteral("edited_approved") : QStringLiteral("approved");
    case Decision::Kind::Edited:
        return QStringLiteral("edited");
    case Decision::Kind::Rejected:
        return QStringLiteral("rejected");
    case Decision::Kind::Pending:
        return QStringLiteral("pending");
    }
    return QStringLiteral("automatic");
}

QString planText(Strategy plan) {
    plan.rationale.clear();
    return plan.toText();
}

} // namespace

void EngineRun::openKnowledge() {
    m_knowledge.reset();
    m_hintsDevice.clear();
    m_hints = KnowledgeHints();
    if (m_knowledgePath.isEmpty())
        return;
    QString error;
    m_knowledge = KnowledgeStore::open(m_knowledgePath, &error);
    // The session does not depend on the store: it runs without memory, and says why.
    if (!m_knowledge)
        emit progressAvailable(0, QStringLiteral("knowledge"),
                               error + QStringLiteral(" (this session runs without it)"), -1);
}

const KnowledgeHints& EngineRun::knowledgeHints() const {
    if (!m_knowledge || !m_store)
        return m_hints;
    // The device is known from the harness's greeting: ask again when it changes.
    const QString device = m_device.name + QLatin1Char('|') + QString::number(m_device.smCount);
    if (device != m_hintsDevice) {
        m_hints = m_knowledge->hints(TaskFeatures::of(m_store->task(), m_device));
        m_hintsDevice = device;
    }
    return m_hints;
}

void EngineRun::recordKnowledge(const Candidate& candidate, const IterationSummary& summary) {
    // A step no GPU ran measured nothing.
    if (!m_knowledge || summary.status == QLatin1String("no_device"))
        return;
    KnowledgeRecord r;
    r.sessionId = m_store->info().id.isEmpty() ? m_store->dir() : m_store->info().id;
    r.version = candidate.version;
    r.recordedAt =
        candidate.finishedAt.isValid() ? candidate.finishedAt : QDateTime::currentDateTimeUtc();
    r.kevolveVersion = QStringLiteral(KEVOLVE_VERSION);
    r.task = TaskFeatures::of(m_store->task(), m_device);
    r.family = candidate.strategy.family;
    r.plan = candidate.strategy;
    r.plan.rationale.clear();
    r.origin = candidate.origin;
    r.status = summary.suspicious ? QStringLiteral("suspicious") : summary.status;
    r.speedup = summary.speedup;
    r.percentOfFloor = summary.percentOfFloor;
    r.decision = decisionText(candidate);
    r.reason = candidate.decision.reason;
    if (candidate.origin == QLatin1String("human_code") ||
        candidate.origin == QLatin1String("human_plan")) {
        const std::optional<Candidate> parent =
            candidate.parentVersion > 0 ? candidateFor(candidate.parentVersion) : std::nullopt;
        if (candidate.origin == QLatin1String("human_code"))
            r.editDiff = lineDiff(parent ? parent->source : QString(), candidate.source);
        else
            r.editDiff =
                lineDiff(parent ? planText(parent->strategy) : QString(), planText(r.plan));
    }
    QString error;
    if (!m_knowledge->record(r, &error))
        emit progressAvailable(candidate.version, QStringLiteral("knowledge"), error, -1);
    // The next context sees this step too (a second slot of a beam, a later iteration).
    m_hintsDevice.clear();
}

} // namespace kev
