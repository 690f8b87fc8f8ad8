// Helpers the prompt builder's two halves share: the task section (llm/prompttask.cpp: the op,
// its tensors, sizes and rules in words) and the rest (llm/promptbuilder.cpp: history, reports,
// fitting to the budget). Internal to core/llm; the prompts' wording is pinned by tests/llm/golden.
#ifndef KEV_LLM_PROMPTTEXT_H
#define KEV_LLM_PROMPTTEXT_H

#include <QHash>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>

namespace kev {

struct Task;

namespace prompttext {

inline QString json(const QJsonObject& object) {
    return QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Indented)).trimmed();
}

inline QString number(double value, int precision = 4) {
    return QString::number(value, 'g', precision);
}

// What the planner checks before answering; `device` holds the device placeholders' values.
QString planChecksText(const Task& task, const QHash<QString, QString>& device);

} // namespace prompttext
} // namespace kev

#endif // KEV_LLM_PROMPTTEXT_H
