#include "reviewfeedback.h"

#include "jsonschema.h"

#include <QJsonArray>

namespace kev {

namespace {

const JsonSchema& reviewSchema() {
    static const JsonSchema schema = [] {
        auto loaded = JsonSchema::load(QStringLiteral(":/schemas/review.schema.json"));
        Q_ASSERT_X(loaded, "reviewSchema", "the embedded review schema is missing");
        return loaded ? *loaded : JsonSchema();
    }();
    return schema;
}

QJsonValue optionalNumber(const std::optional<double>& value) {
    return value ? QJsonValue(*value) : QJsonValue(QJsonValue::Null);
}

std::optional<double> readOptional(const QJsonObject& json, const char* key) {
    const QJsonValue value = json.value(QLatin1String(key));
    if (value.isDouble())
        return value.toDouble();
    return std::nullopt;
}

} // namespace

QJsonObject ReviewFeedback::toJson() const {
    return {
        {QStringLiteral("compile_ok"), compileOk},
        {QStringLiteral("correct"), correct},
        {QStringLiteral("status"), status},
        {QStringLiteral("time_ms"), optionalNumber(timeMs)},
        {QStringLiteral("reference_ms"), optionalNumber(referenceMs)},
        {QStringLiteral("speedup"), optionalNumber(speedup)},
        {QStringLiteral("percent_of_floor"), optionalNumber(percentOfFloor)},
        {QStringLiteral("bottleneck"), QJsonObject{{QStringLiteral("id"), bottleneckId},
                                                   {QStringLiteral("text"), bottleneckText}}},
        {QStringLiteral("suggestions"), QJsonArray::fromStringList(suggestions)},
        {QStringLiteral("blame"), blame},
        {QStringLiteral("evidence"), evidence},
    };
}

std::optional<ReviewFeedback> ReviewFeedback::fromJson(const QJsonObject& json, QString* error) {
    const QStringList problems = reviewSchema().validate(json, QStringLiteral("review"));
    if (!problems.isEmpty()) {
        if (error)
            *error = problems.join(u'\n');
        return std::nullopt;
    }
    ReviewFeedback r;
    r.compileOk = json.value(QLatin1String("compile_ok")).toBool();
    r.correct = json.value(QLatin1String("correct")).toBool();
    r.status = json.value(QLatin1String("status")).toString();
    r.timeMs = readOptional(json, "time_ms");
    r.referenceMs = readOptional(json, "reference_ms");
    r.speedup = readOptional(json, "speedup");
    r.percentOfFloor = readOptional(json, "percent_of_floor");
    const QJsonObject bottleneck = json.value(QLatin1String("bottleneck")).toObject();
    r.bottleneckId = bottleneck.value(QLatin1String("id")).toString();
    r.bottleneckText = bottleneck.value(QLatin1String("text")).toString();
    for (const auto& s : json.value(QLatin1String("suggestions")).toArray())
        r.suggestions << s.toString();
    r.blame = json.value(QLatin1String("blame")).toString();
    r.evidence = json.value(QLatin1String("evidence")).toObject();
    return r;
}

QStringList ReviewFeedback::validate() const {
    return reviewSchema().validate(toJson(), QStringLiteral("review"));
}

} // namespace kev
