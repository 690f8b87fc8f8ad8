// The profiler's numbers of one report, read from its raw JSON: "profile": {"candidate":
// {"metrics":
// {...}, "warp_stalls": {...}}, "reference": {"metrics": {...}}}; a report with a top-level
// "metrics" object (older harnesses) is read as the candidate's metrics.
#pragma once

#include "core/evaluationreport.h"

#include <QString>
#include <QVector>

#include <optional>

namespace kev {

struct ReportMetrics {
    struct Metric {
        QString key;
        double value = 0;
    };
    QVector<Metric> candidate;
    QVector<Metric> reference;
    QVector<Metric> warpStalls;

    static ReportMetrics fromReport(const EvaluationReport& report);
    bool isEmpty() const { return candidate.isEmpty(); }
    std::optional<double> value(const QString& key) const;
    std::optional<double> referenceValue(const QString& key) const;

    // The metrics every view shows first, in this order.
    static const QStringList& knownKeys();
    // "achieved occupancy", "DRAM throughput", ...; the key itself for unknown metrics.
    static QString label(const QString& key);
    // A tooltip: what the metric is, the Nsight Compute counters it comes from, and which values
    // are good or bad.
    static QString description(const QString& key);
    // Fractions as percentages, byte counts in MiB, percentages with one decimal.
    static QString format(const QString& key, double value);
};

} // namespace kev
