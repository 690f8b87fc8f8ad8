#include "decision.h"

namespace kev {

namespace {

struct KindName {
    Decision::Kind kind;
    const char* name;
};

constexpr KindName kKindNames[] = {
    {Decision::Kind::Automatic, "automatic"}, {Decision::Kind::Approved, "approved"},
    {Decision::Kind::Edited, "edited"},       {Decision::Kind::Rejected, "rejected"},
    {Decision::Kind::Pending, "pending"},
};

} // namespace

QString Decision::kindToString(Kind kind) {
    for (const auto& entry : kKindNames) {
        if (entry.kind == kind)
            return QLatin1String(entry.name);
    }
    return QStringLiteral("automatic");
}

std::optional<Decision::Kind> Decision::kindFromString(const QString& text) {
    for (const auto& entry : kKindNames) {
        if (text == QLatin1String(entry.name))
            return entry.kind;
    }
    return std::nullopt;
}

QJsonObject Decision::toJson() const {
    QJsonObject json{{QStringLiteral("kind"), kindToString(kind)}};
    if (!reason.isEmpty())
        json.insert(QStringLiteral("reason"), reason);
    return json;
}

Decision Decision::fromJson(const QJsonObject& json) {
    Decision d;
    d.kind = kindFromString(json.value(QLatin1String("kind")).toString()).value_or(Kind::Automatic);
    d.reason = json.value(QLatin1String("reason")).toString();
    return d;
}

} // namespace kev
