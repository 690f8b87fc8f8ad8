// What the Review agent concludes from one harness report (docs/architecture.md, contract 6).
// Schema: core/schemas/review.schema.json (":/schemas/review.schema.json").
#pragma once

#include <QJsonObject>
#include <QMetaType>
#include <QString>
#include <QStringList>

#include <optional>

namespace kev {

struct ReviewFeedback {
    bool compileOk = false;
    bool correct = false;
    // The report's status string ("ok", "incorrect", ...).
    QString status;
    // Copied from the report; empty when the report has no timing.
    std::optional<double> timeMs;
    std::optional<double> referenceMs;
    // reference_ms / candidate_ms: 1.0 = as fast as the reference (0.93 = 93% of its speed).
    std::optional<double> speedup;
    std::optional<double> percentOfFloor;
    // A short id ("memory_bound", "smem_bank_conflicts", "compile_error", "none", ...) and a
    // sentence.
    QString bottleneckId = QStringLiteral("none");
    QString bottleneckText;
    QStringList suggestions;
    // "strategy" (plan again), "implementation" (code again from the same plan) or "none".
    QString blame = QStringLiteral("none");
    QJsonObject evidence;

    QJsonObject toJson() const;
    static std::optional<ReviewFeedback> fromJson(const QJsonObject& json, QString* error);
    // Schema problems, each naming its field; empty = valid.
    QStringList validate() const;

    bool blamesStrategy() const { return blame == QLatin1String("strategy"); }
};

} // namespace kev

Q_DECLARE_METATYPE(kev::ReviewFeedback)
