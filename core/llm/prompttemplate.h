// A prompt template: plain text with named placeholders such as {{task.m}}. Rendering fails,
// naming the placeholder and the line, when a placeholder has no value, so a typo in a template
// never reaches a model as an empty string. Values are inserted verbatim and never re-scanned.
#ifndef KEV_LLM_PROMPTTEMPLATE_H
#define KEV_LLM_PROMPTTEMPLATE_H

#include <QHash>
#include <QString>
#include <QStringList>

#include <optional>

namespace kev {

class PromptTemplate {
public:
    PromptTemplate() = default;
    PromptTemplate(QString name, QString text, QString origin = QString());

    const QString& name() const { return m_name; }
    const QString& text() const { return m_text; }
    // Where the text came from: ":/prompts/planner.txt" or a user file.
    const QString& origin() const { return m_origin; }

    // The placeholder names in order of first use; *error is set for malformed syntax.
    QStringList placeholders(QString* error = nullptr) const;
    std::optional<QString> render(const QHash<QString, QString>& values, QString* error) const;

private:
    QString m_name;
    QString m_text;
    QString m_origin;
};

} // namespace kev

#endif // KEV_LLM_PROMPTTEMPLATE_H
