#include "agentturn.h"

namespace kev {

QJsonObject AgentTurn::toJson() const {
    QJsonObject json{
        {QStringLiteral("role"), role},          {QStringLiteral("backend"), backend},
        {QStringLiteral("prompt"), prompt},      {QStringLiteral("reply"), reply},
        {QStringLiteral("tokens_in"), tokensIn}, {QStringLiteral("tokens_out"), tokensOut},
        {QStringLiteral("cost_usd"), costUsd},   {QStringLiteral("seconds"), seconds},
    };
    if (!model.isEmpty())
        json.insert(QStringLiteral("model"), model);
    if (tokensEstimated)
        json.insert(QStringLiteral("tokens_estimated"), true);
    return json;
}

AgentTurn AgentTurn::fromJson(const QJsonObject& json) {
    AgentTurn t;
    t.role = json.value(QLatin1String("role")).toString();
    t.backend = json.value(QLatin1String("backend")).toString();
    t.model = json.value(QLatin1String("model")).toString();
    t.prompt = json.value(QLatin1String("prompt")).toString();
    t.reply = json.value(QLatin1String("reply")).toString();
    t.tokensIn = json.value(QLatin1String("tokens_in")).toInteger();
    t.tokensOut = json.value(QLatin1String("tokens_out")).toInteger();
    t.tokensEstimated = json.value(QLatin1String("tokens_estimated")).toBool();
    t.costUsd = json.value(QLatin1String("cost_usd")).toDouble();
    t.seconds = json.value(QLatin1String("seconds")).toDouble();
    return t;
}

} // namespace kev
