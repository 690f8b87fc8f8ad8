#include "reportmetrics.h"

#include <QHash>
#include <QJsonObject>

namespace kev {

using namespace Qt::StringLiterals;

namespace {

QVector<ReportMetrics::Metric> numbers(const QJsonObject& object) {
    QVector<ReportMetrics::Metric> result;
    // Known metrics first, in the documented order, then the rest alphabetically (QJsonObject
    // iterates in key order).
    for (const QString& key : ReportMetrics::knownKeys()) {
        if (object.value(key).isDouble())
            result.append({key, object.value(key).toDouble()});
    }
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (it->isDouble() && !ReportMetrics::knownKeys().contains(it.key()))
            result.append({it.key(), it->toDouble()});
    }
    return result;
}

std::optional<double> find(const QVector<ReportMetrics::Metric>& metrics, const QString& key) {
    for (const auto& m : metrics) {
        if (m.key == key)
            return m.value;
    }
    return std::nullopt;
}

} // namespace

ReportMetrics ReportMetrics::fromReport(const EvaluationReport& report) {
    // Kevolve's names first (derived from the harness's counters), then the counters themselves
    // under their Nsight Compute names.
    const DerivedMetrics derived = DerivedMetrics::fromReport(report);
    ReportMetrics result;
    result.candidate = numbers(derived.candidate) + numbers(derived.candidateCounters);
    result.reference = numbers(derived.reference) + numbers(derived.referenceCounters);
    for (auto it = derived.candidateStalls.begin(); it != derived.candidateStalls.end(); ++it) {
        if (it->isDouble())
            result.warpStalls.append({it.key(), it->toDouble()});
    }
    return result;
}

std::optional<double> ReportMetrics::value(const QString& key) const {
    return find(candidate, key);
}

std::optional<double> ReportMetrics::referenceValue(const QString& key) const {
    return find(reference, key);
}

const QStringList& ReportMetrics::knownKeys() {
    static const QStringList keys = {u"achieved_occupancy"_s,  u"theoretical_occupancy"_s,
                                     u"smem_bank_conflicts"_s, u"smem_wavefronts_per_request"_s,
                                     u"dram_throughput_pct"_s, u"sm_throughput_pct"_s,
                                     u"tensor_pipe_pct"_s,     u"fma_pipe_pct"_s,
                                     u"l2_hit_rate_pct"_s,     u"dram_bytes"_s,
                                     u"local_memory_bytes"_s};
    return keys;
}

QString ReportMetrics::label(const QString& key) {
    static const QHash<QString, QString> labels = {
        {u"achieved_occupancy"_s, u"achieved occupancy"_s},
        {u"theoretical_occupancy"_s, u"theoretical occupancy"_s},
        {u"smem_bank_conflicts"_s, u"shared-memory bank conflicts"_s},
        {u"smem_wavefronts_per_request"_s, u"shared-memory wavefronts / request"_s},
        {u"dram_throughput_pct"_s, u"DRAM throughput"_s},
        {u"sm_throughput_pct"_s, u"SM throughput"_s},
        {u"tensor_pipe_pct"_s, u"tensor pipe utilisation"_s},
        {u"fma_pipe_pct"_s, u"FMA pipe utilisation"_s},
        {u"l2_hit_rate_pct"_s, u"L2 hit rate"_s},
        {u"dram_bytes"_s, u"DRAM bytes"_s},
        {u"local_memory_bytes"_s, u"local-memory traffic"_s}};
    return labels.value(key, key);
}

QString ReportMetrics::format(const QString& key, double value) {
    if (key.endsWith(u"_occupancy"))
        return QString::number(value * 100.0, 'f', 1) + u" %"_s;
    if (key.endsWith(u"_pct"))
        return QString::number(value, 'f', 1) + u" %"_s;
    if (key.endsWith(u"_bytes"))
        return QString::number(value / (1024.0 * 1024.0), 'f', 1) + u" MiB"_s;
    if (key == u"smem_bank_conflicts")
        return QString::number(qint64(value));
    return QString::number(value, 'g', 4);
}

} // namespace kev
