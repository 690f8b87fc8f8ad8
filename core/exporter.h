// Exports one kernel of a session with everything needed to judge and re-verify it, as plain
// text (no QtGui): kernel.cu, task.json, ref.cu (a copy of the task's reference kernel, when it has
// one; task.json names it by that relative name), report.json (the harness report), report.md,
// report.html (self-contained, the performance chart as inline SVG), chart.svg, samples.csv (raw
// timing samples), environment.json and reverify.sh (one kevolve-harness eval command).
#pragma once

#include "evaluationreport.h"
#include "iterationsummary.h"
#include "sessionstore.h"

#include <QString>
#include <QStringList>
#include <QVector>

#include <optional>

namespace kev {

class Exporter {
public:
    // Exports `version`, or else the session's best step, or else its latest. *written lists the
    // files created, in outDir.
    static bool exportSession(const SessionStore& store, const QString& outDir,
                              std::optional<int> version, QStringList* written, QString* error);

    // Speedup per version (reference = 1.0), best-so-far line, `highlight` ringed; standalone SVG.
    static QString chartSvg(const QVector<IterationSummary>& steps, int highlight);
    static QString samplesCsv(const EvaluationReport& report);
    static QString markdownReport(const SessionStore& store, const Candidate& candidate);
    static QString htmlReport(const SessionStore& store, const Candidate& candidate);
    static QString reverifyCommand();
    // The exported copy of a task's reference file, next to task.json.
    static QString referenceFileName();
};

} // namespace kev
