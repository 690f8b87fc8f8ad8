#include "iterationsummary.h"

#include <cmath>

namespace kev {

namespace {

void putOptional(QJsonObject& json, const char* key, const std::optional<double>& value) {
    if (value)
        json.insert(QLatin1String(key), *value);
}

// Reads an index record's fields, checking each one's type and range; the first problem names
// the field ("index record: speedup: 1e+308 is out of range (0 to 1e+06)").
class RecordReader {
public:
    explicit RecordReader(const QJsonObject& json)
        : m_json(json) {}

    int integer(const char* key, int min, int max, int fallback) {
        const QJsonValue v = m_json.value(QLatin1String(key));
        if (v.isUndefined())
            return fallback;
        const double d = v.toDouble();
        if (!v.isDouble() || d != std::floor(d))
            return problem(key, QStringLiteral("expected an integer"), fallback);
        if (d < min || d > max)
            return outOfRange(key, d, min, max, fallback);
        return static_cast<int>(d);
    }

    qint64 integer64(const char* key, qint64 max) {
        const QJsonValue v = m_json.value(QLatin1String(key));
        if (v.isUndefined())
            return 0;
        const double d = v.toDouble();
        if (!v.isDouble() || d != std::floor(d))
            return problem(key, QStringLiteral("expected an integer"), 0);
        if (d < 0 || d > static_cast<double>(max))
            return outOfRange(key, d, 0, static_cast<double>(max), 0);
        return static_cast<qint64>(d);
    }

    double number(const char* key, double max) { return optionalNumber(key, max).value_or(0.0); }

    // Absent or null: no value (a report without timing).
    std::optional<double> optionalNumber(const char* key, double max) {
        const QJsonValue v = m_json.value(QLatin1String(key));
        if (v.isUndefined() || v.isNull())
            return std::nullopt;
        if (!v.isDouble())
            return problem(key, QStringLiteral("expected a number"), std::optional<double>());
        const double d = v.toDouble();
        if (!std::isfinite(d) || d < 0 || d > max)
            return outOfRange(key, d, 0, max, std::optional<double>());
        return d;
    }

    QString string(const char* key) {
        const QJsonValue v = m_json.value(QLatin1String(key));
        if (v.isUndefined())
            return {};
        if (!v.isString())
            return problem(key, QStringLiteral("expected a string"), QString());
        return v.toString();
    }

    bool boolean(const char* key) {
        const QJsonValue v = m_json.value(QLatin1String(key));
        if (v.isUndefined())
            return false;
        if (!v.isBool())
            return problem(key, QStringLiteral("expected true or false"), false);
        return v.toBool();
    }

    const QString& error() const { return m_error; }

private:
    template <typename T> T problem(const char* key, const QString& what, T fallback) {
        if (m_error.isEmpty())
            m_error =
                QStringLiteral("index record: ") + QLatin1String(key) + QStringLiteral(": ") + what;
        return fallback;
    }

    template <typename T>
    T outOfRange(const char* key, double d, double min, double max, T fallback) {
        return problem(key,
                       QString::number(d, 'g', 12) + QStringLiteral(" is out of range (") +
                           QString::number(min, 'g', 12) + QStringLiteral(" to ") +
                           QString::number(max, 'g', 12) + u')',
                       fallback);
    }

    const QJsonObject& m_json;
    QString m_error;
};

} // namespace

IterationSummary IterationSummary::fromCandidate(const Candidate& c) {
    IterationSummary s;
    s.version = c.version;
    s.parentVersion = c.parentVersion;
    s.iteration = c.iteration;
    s.beamIndex = c.beamIndex;
    s.origin = c.origin;
    s.family = c.strategy.family;
    s.plan = c.strategy.summary();
    s.codeAttempts = c.codeAttempts;
    if (c.report) {
        const EvaluationReport& r = *c.report;
        s.status = EvaluationReport::statusToString(r.status);
        s.suspicious = r.suspicious;
        s.compileOk = r.compileOk;
        s.message = r.message;
        if (r.timed) {
            s.speedup = r.speedup;
            s.ciLow = r.ciLow;
            s.ciHigh = r.ciHigh;
            s.medianMs = r.medianMs;
            s.referenceMs = r.referenceMs;
        }
        s.percentOfFloor = r.percentOfFloor;
        s.bound = r.bound;
        s.measuredBy = r.measuredBy;
    }
    if (c.review) {
        s.bottleneckId = c.review->bottleneckId;
        s.blame = c.review->blame;
    }
    s.decision = Decision::kindToString(c.decision.kind);
    s.decisionReason = c.decision.reason;
    s.tokens = c.tokens();
    for (const auto& turn : c.turns)
        s.tokensEstimated = s.tokensEstimated || turn.tokensEstimated;
    s.costUsd = c.costUsd();
    s.seconds = c.seconds;
    s.finishedAt = c.finishedAt;
    return s;
}

QJsonObject IterationSummary::toJson() const {
    QJsonObject json{
        {QStringLiteral("version"), version},
        {QStringLiteral("parent"), parentVersion},
        {QStringLiteral("iteration"), iteration},
        {QStringLiteral("beam"), beamIndex},
        {QStringLiteral("origin"), origin},
        {QStringLiteral("family"), family},
        {QStringLiteral("plan"), plan},
        {QStringLiteral("status"), status},
        {QStringLiteral("suspicious"), suspicious},
        {QStringLiteral("compile_ok"), compileOk},
        {QStringLiteral("code_attempts"), codeAttempts},
        {QStringLiteral("message"), message},
        {QStringLiteral("bottleneck"), bottleneckId},
        {QStringLiteral("blame"), blame},
        {QStringLiteral("decision"), decision},
        {QStringLiteral("tokens"), tokens},
        {QStringLiteral("cost_usd"), costUsd},
        {QStringLiteral("seconds"), seconds},
        {QStringLiteral("finished_at"), finishedAt.toUTC().toString(Qt::ISODateWithMs)},
    };
    putOptional(json, "speedup", speedup);
    putOptional(json, "ci_low", ciLow);
    putOptional(json, "ci_high", ciHigh);
    putOptional(json, "median_ms", medianMs);
    putOptional(json, "reference_ms", referenceMs);
    putOptional(json, "percent_of_floor", percentOfFloor);
    if (!bound.isEmpty())
        json.insert(QStringLiteral("bound"), bound);
    if (!decisionReason.isEmpty())
        json.insert(QStringLiteral("decision_reason"), decisionReason);
    if (!measuredBy.isEmpty())
        json.insert(QStringLiteral("measured_by"), measuredBy);
    if (tokensEstimated)
        json.insert(QStringLiteral("tokens_estimated"), true);
    return json;
}

std::optional<IterationSummary> IterationSummary::fromJson(const QJsonObject& json,
                                                           QString* error) {
    const auto fail = [&](const QString& message) -> std::optional<IterationSummary> {
        if (error)
            *error = message;
        return std::nullopt;
    };
    if (!json.value(QLatin1String("version")).isDouble())
        return fail(QStringLiteral("index record: version is missing or not a positive integer"));
    if (!json.value(QLatin1String("status")).isString())
        return fail(QStringLiteral("index record: status is missing"));
    RecordReader r(json);
    IterationSummary s;
    s.version = r.integer("version", 1, kMaxVersion, 0);
    s.parentVersion = r.integer("parent", 0, kMaxVersion, 0);
    s.iteration = r.integer("iteration", 0, kMaxVersion, 0);
    s.beamIndex = r.integer("beam", 0, kMaxVersion, 0);
    s.origin = r.string("origin");
    s.family = r.string("family");
    s.plan = r.string("plan");
    s.status = r.string("status");
    s.suspicious = r.boolean("suspicious");
    s.compileOk = r.boolean("compile_ok");
    s.codeAttempts = r.integer("code_attempts", 0, 1000, 0);
    s.message = r.string("message");
    s.bottleneckId = r.string("bottleneck");
    s.blame = r.string("blame");
    s.decision = r.string("decision");
    s.decisionReason = r.string("decision_reason");
    s.tokens = r.integer64("tokens", qint64{1} << 50);
    s.costUsd = r.number("cost_usd", 1e9);
    s.seconds = r.number("seconds", 1e9);
    const QString finished = r.string("finished_at");
    s.finishedAt = QDateTime::fromString(finished, Qt::ISODateWithMs);
    // Far beyond any real kernel (and what a chart can draw): a damaged or forged record otherwise.
    s.speedup = r.optionalNumber("speedup", kMaxSpeedup);
    s.ciLow = r.optionalNumber("ci_low", kMaxSpeedup);
    s.ciHigh = r.optionalNumber("ci_high", kMaxSpeedup);
    s.medianMs = r.optionalNumber("median_ms", 1e9);
    s.referenceMs = r.optionalNumber("reference_ms", 1e9);
    s.percentOfFloor = r.optionalNumber("percent_of_floor", 1e6);
    s.bound = r.string("bound");
    s.measuredBy = json.value(QLatin1String("measured_by")).toObject();
    s.tokensEstimated = json.value(QLatin1String("tokens_estimated")).toBool();
    if (!r.error().isEmpty())
        return fail(r.error());
    if (s.parentVersion >= s.version)
        return fail(QStringLiteral("index record: parent: v") + QString::number(s.parentVersion) +
                    QStringLiteral(" is not earlier than the step's own version v") +
                    QString::number(s.version));
    return s;
}

} // namespace kev
