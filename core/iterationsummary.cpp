#include "iterationsummary.h"

namespace kev {

namespace {

void putOptional(QJsonObject& json, const char* key, const std::optional<double>& value) {
    if (value)
        json.insert(QLatin1String(key), *value);
}

std::optional<double> getOptional(const QJsonObject& json, const char* key) {
    const QJsonValue value = json.value(QLatin1String(key));
    if (value.isDouble())
        return value.toDouble();
    return std::nullopt;
}

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
    if (tokensEstimated)
        json.insert(QStringLiteral("tokens_estimated"), true);
    return json;
}

std::optional<IterationSummary> IterationSummary::fromJson(const QJsonObject& json,
                                                           QString* error) {
    if (!json.value(QLatin1String("version")).isDouble() ||
        json.value(QLatin1String("version")).toInt() < 1) {
        if (error)
            *error = QStringLiteral("index record: version is missing or not a positive integer");
        return std::nullopt;
    }
    if (!json.value(QLatin1String("status")).isString()) {
        if (error)
            *error = QStringLiteral("index record: status is missing");
        return std::nullopt;
    }
    IterationSummary s;
    s.version = json.value(QLatin1String("version")).toInt();
    s.parentVersion = json.value(QLatin1String("parent")).toInt();
    s.iteration = json.value(QLatin1String("iteration")).toInt();
    s.beamIndex = json.value(QLatin1String("beam")).toInt();
    s.origin = json.value(QLatin1String("origin")).toString();
    s.family = json.value(QLatin1String("family")).toString();
    s.plan = json.value(QLatin1String("plan")).toString();
    s.status = json.value(QLatin1String("status")).toString();
    s.suspicious = json.value(QLatin1String("suspicious")).toBool();
    s.compileOk = json.value(QLatin1String("compile_ok")).toBool();
    s.codeAttempts = json.value(QLatin1String("code_attempts")).toInt();
    s.message = json.value(QLatin1String("message")).toString();
    s.bottleneckId = json.value(QLatin1String("bottleneck")).toString();
    s.blame = json.value(QLatin1String("blame")).toString();
    s.decision = json.value(QLatin1String("decision")).toString();
    s.decisionReason = json.value(QLatin1String("decision_reason")).toString();
    s.tokens = json.value(QLatin1String("tokens")).toInteger();
    s.tokensEstimated = json.value(QLatin1String("tokens_estimated")).toBool();
    s.costUsd = json.value(QLatin1String("cost_usd")).toDouble();
    s.seconds = json.value(QLatin1String("seconds")).toDouble();
    s.finishedAt = QDateTime::fromString(json.value(QLatin1String("finished_at")).toString(),
                                         Qt::ISODateWithMs);
    s.speedup = getOptional(json, "speedup");
    s.ciLow = getOptional(json, "ci_low");
    s.ciHigh = getOptional(json, "ci_high");
    s.medianMs = getOptional(json, "median_ms");
    s.referenceMs = getOptional(json, "reference_ms");
    s.percentOfFloor = getOptional(json, "percent_of_floor");
    s.bound = json.value(QLatin1String("bound")).toString();
    return s;
}

} // namespace kev
