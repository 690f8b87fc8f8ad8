#include "llm/llmhooks.h"

#include "builtin/kernelfamily.h"

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
            knobs << u"%1 {%2}"_s.arg(spec.name, values.join(u", "_s));
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
