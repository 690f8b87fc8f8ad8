// One version of the kernel: a plan, its source, what the harness measured, what the reviewer
// said, and what the gate decided. A session's step N is the candidate with version N.
#pragma once

#include "agentturn.h"
#include "decision.h"
#include "evaluationreport.h"
#include "reviewfeedback.h"
#include "strategy.h"

#include <QDateTime>
#include <QMetaType>
#include <QString>
#include <QVector>

#include <optional>

namespace kev {

// One stage of a step on the session's clock: where the step's wall time went, so that a person
// can see what ran in parallel (the slots of a beam) and what waited (issue 18, "Throughput").
struct StageSpan {
    // "plan", "code", "evaluate" or "review".
    QString stage;
    QDateTime start;     // UTC
    double seconds = -1; // -1 while the stage runs (a step is never written with one)
    // evaluate: the harness's own split ("compile 2.9 s, gpu 1.4 s, profile 0.7 s"); code: the
    // attempt number; otherwise empty.
    QString detail;
};

struct Candidate {
    // 1, 2, 3, ... unique in a session; the N of plan_vN / kernel_vN / run_vN.
    int version = 0;
    // The version this one improves on; 0 for the first.
    int parentVersion = 0;
    // 1-based loop iteration; a beam puts several candidates in one iteration.
    int iteration = 0;
    int beamIndex = 0;
    // "agent", "human_code" (a person's edited source) or "human_plan" (a person's edited plan).
    QString origin = QStringLiteral("agent");
    Strategy strategy;
    QString source;
    // How many times the coder was asked (1 + compile-error fixes).
    int codeAttempts = 0;
    std::optional<EvaluationReport> report;
    std::optional<ReviewFeedback> review;
    Decision decision;
    // Every prompt and reply of this step, in order (also failed compile attempts).
    QVector<AgentTurn> turns;
    // Sources that failed to compile before the final one, oldest first.
    QStringList failedSources;
    double seconds = 0;
    QDateTime finishedAt;
    // The stages of this step in the order they started (older sessions: empty).
    QVector<StageSpan> timeline;

    QString kernelFileName() const {
        return QStringLiteral("kernel_v") + QString::number(version) + QStringLiteral(".cu");
    }
    // Correct, timed and not suspicious: may become the best without a person.
    bool isTrustworthy() const { return report && report->isTrustworthyResult(); }
    // The report's speedup when timed, else 0.
    double speedup() const { return report && report->timed ? report->speedup : 0.0; }
    qint64 tokens() const;
    double costUsd() const;
};

} // namespace kev

Q_DECLARE_METATYPE(kev::Candidate)
