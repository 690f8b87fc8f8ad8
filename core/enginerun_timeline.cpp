// The stage timeline of each step: when its plan, code, evaluation and review started and how long
// each took, on the wall clock, so that the slots of a beam show what ran in parallel and what
// waited for the GPU (issue 18, "Throughput"; docs/search.md).
#include "enginerun.h"

namespace kev {

namespace {

QString harnessSplit(const EvaluationReport& report) {
    const HarnessStages& s = report.stages;
    if (!s.present())
        return {};
    QString text = QStringLiteral("harness %1 s: compile %2 s, gpu %3 s")
                       .arg(s.totalS, 0, 'f', 2)
                       .arg(s.compileS, 0, 'f', 2)
                       .arg(s.gpuS, 0, 'f', 2);
    if (s.profileS > 0)
        text += QStringLiteral(", profile %1 s").arg(s.profileS, 0, 'f', 2);
    return text;
}

} // namespace

void EngineRun::openStage(Slot& slot, const QString& stage, const QString& detail) {
    closeStage(slot);
    StageSpan span;
    span.stage = stage;
    span.start = QDateTime::currentDateTimeUtc();
    span.detail = detail;
    slot.candidate.timeline.append(span);
}

void EngineRun::closeStage(Slot& slot) {
    if (slot.candidate.timeline.isEmpty())
        return;
    StageSpan& open = slot.candidate.timeline.last();
    if (open.seconds >= 0)
        return;
    open.seconds =
        static_cast<double>(open.start.msecsTo(QDateTime::currentDateTimeUtc())) / 1000.0;
    if (open.stage == QLatin1String("evaluate") && slot.candidate.report) {
        const QString split = harnessSplit(*slot.candidate.report);
        if (!split.isEmpty())
            open.detail =
                open.detail.isEmpty() ? split : open.detail + QStringLiteral("; ") + split;
    }
}

} // namespace kev
