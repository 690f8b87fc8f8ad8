#include "llm/llmhooks.h"

#include "builtin/kernelfamily.h"
#include "llm/promptbuilder.h"

#include <QJsonArray>
#include <QMutex>
#include <QMutexLocker>

using namespace Qt::Literals::StringLiterals;

namespace kev {

namespace {

struct Hooks {
    QMutex mutex;
    PlannerKnowledgeProvider knowledge;
    ReviewHintsProvider hints;
};

Hooks& hooks() {
    static Hooks instance;
    return instance;
}

// A knob as the strategy JSON names it: a Strategy field in snake_case ("blockM" -> "block_m"),
// else a family-specific entry of "params".
QString jsonName(const QString& knob) {
    static const QJsonObject properties =
        PromptBuilder::wireSchema(u":/schemas/strategy.schema.json"_s)
            .value(u"properties"_s)
            .toObject();
    QString snake;
    for (const QChar c : knob) {
        if (c.isUpper()) {
            snake += u'_';
            snake += c.toLower();
        } else {
            snake += c;
        }
    }
    return properties.contains(snake) ? snake : u"params."_s + knob;
}

QString valueText(const QJsonValue& value) {
    return value.isString() ? value.toString() : QString::number(value.toDouble());
}

QString familySummary(const Task& task, const DeviceInfo& device) {
    const auto families = FamilyRegistry::instance().supporting(task, device);
    if (families.isEmpty())
        return u"(no built-in kernel family supports this task on this device)"_s;
    QString text = u"Families the built-in backend knows for this task and device, simplest "
                   u"first; you may also propose another family id with its knobs in \"params\"."_s;
    for (const KernelFamily* family : families) {
        text += u"\n- %1: %2"_s.arg(family->id(), family->description().simplified());
        QStringList knobs;
        for (const ParameterSpec& spec : family->parameters()) {
            QStringList values;
            for (const QJsonValue& value : spec.values)
                values << valueText(value);
            knobs << u"%1 {%2}"_s.arg(jsonName(spec.name), values.join(u", "_s));
        }
        if (!knobs.isEmpty())
            text += u"\n  knobs: "_s + knobs.join(u"; "_s);
        text += u"\n  a feasible start: "_s + family->defaultStrategy(task, device).summary();
    }
    return text;
}

} // namespace

void setPlannerKnowledgeProvider(PlannerKnowledgeProvider provider) {
    QMutexLocker lock(&hooks().mutex);
    hooks().knowledge = std::move(provider);
}

void setReviewHintsProvider(ReviewHintsProvider provider) {
    QMutexLocker lock(&hooks().mutex);
    hooks().hints = std::move(provider);
}

QString plannerKnowledge(const Task& task, const DeviceInfo& device) {
    PlannerKnowledgeProvider provider;
    {
        QMutexLocker lock(&hooks().mutex);
        provider = hooks().knowledge;
    }
    return provider ? provider(task, device) : familySummary(task, device);
}

std::optional<QString> reviewHints(const Task& task, const EvaluationReport& report) {
    ReviewHintsProvider provider;
    {
        QMutexLocker lock(&hooks().mutex);
        provider = hooks().hints;
    }
    if (!provider)
        return std::nullopt;
    return provider(task, report);
}

} // namespace kev
