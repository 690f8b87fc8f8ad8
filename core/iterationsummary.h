// The small record of one completed step: a line of a session's index.jsonl, the history agents
// see, and a row of the timeline. Built from a Candidate; never needs the step's logs.
#pragma once

#include "candidate.h"

#include <QDateTime>
#include <QJsonObject>
#include <QMetaType>
#include <QString>

#include <optional>

namespace kev {

struct IterationSummary {
    // What an index record may hold: versions (and iterations) up to a million, speed-ups up to a
    // million times the reference. Anything beyond is a damaged or forged record.
    static constexpr int kMaxVersion = 1000000;
    static constexpr double kMaxSpeedup = 1e6;

    int version = 0;
    int parentVersion = 0;
    int iteration = 0;
    int beamIndex = 0;
    QString origin;
    QString family;
    // Strategy::summary() of the plan.
    QString plan;
    QString status;
    bool suspicious = false;
    bool compileOk = false;
    int codeAttempts = 0;
    std::optional<double> speedup;
    std::optional<double> ciLow;
    std::optional<double> ciHigh;
    std::optional<double> medianMs;
    std::optional<double> referenceMs;
    std::optional<double> percentOfFloor;
    // The roofline's "memory" or "compute"; empty when the report had no roofline.
    QString bound;
    QString message;
    // Which worker (launcher) and GPU measured the step (EvaluationReport::measuredBy).
    QJsonObject measuredBy;
    QString bottleneckId;
    QString blame;
    QString decision;
    QString decisionReason;
    qint64 tokens = 0;
    bool tokensEstimated = false; // some call had no usage figures: characters / 4
    double costUsd = 0;
    double seconds = 0;
    QDateTime finishedAt;

    static IterationSummary fromCandidate(const Candidate& candidate);
    QJsonObject toJson() const;
    // Checks every field's type and range; *error names the first bad field.
    static std::optional<IterationSummary> fromJson(const QJsonObject& json, QString* error);

    bool isTrustworthy() const { return status == QLatin1String("ok") && speedup && !suspicious; }
};

} // namespace kev

Q_DECLARE_METATYPE(kev::IterationSummary)
