// A text template with ${NAME} placeholders, ${if NAME} / ${if !NAME} / ${else} / ${endif}
// blocks and ${# comments} (to the first closing brace, never in the output), the one renderer of
// the built-in backend's CUDA templates (core/builtin/templates/*.cu), usable for any generated
// text (no Qt beyond QtCore). `${` does not occur in CUDA C++, so a template reads as the code it
// generates; `{{`, the prompts' syntax, does (nested braces).
//
// Rendering is strict: a placeholder or condition without a value, an unbalanced block or a
// malformed directive is an error naming the template, the line and the name, never an empty
// string in the output. Values are inserted verbatim and never re-scanned. A directive alone on
// its line (only blanks around it) takes the whole line with it, so block structure adds no
// blank lines to the output.
#ifndef KEV_TEXTTEMPLATE_H
#define KEV_TEXTTEMPLATE_H

#include <QHash>
#include <QString>
#include <QStringList>

#include <optional>

namespace kev {

// The values one rendering uses: text for ${NAME}, booleans for ${if NAME}.
class TemplateValues {
public:
    TemplateValues() = default;

    TemplateValues& set(const QString& name, const QString& value);
    TemplateValues& set(const QString& name, qint64 value);
    TemplateValues& flag(const QString& name, bool on);

    const QString* text(const QString& name) const;
    std::optional<bool> condition(const QString& name) const;

private:
    QHash<QString, QString> m_text;
    QHash<QString, bool> m_flags;
};

class TextTemplate {
public:
    TextTemplate() = default;
    // `origin` names the template in errors (a resource path such as
    // ":/builtin/templates/rowwise/softmax.cu").
    TextTemplate(QString text, QString origin);

    // The template in the resource or file at `path`; on a read error a template whose
    // rendering fails naming the path.
    static TextTemplate load(const QString& path);

    const QString& text() const { return m_text; }
    const QString& origin() const { return m_origin; }

    // Placeholder and condition names in order of first use; *error set for malformed syntax.
    QStringList names(QString* error = nullptr) const;
    std::optional<QString> render(const TemplateValues& values, QString* error) const;

private:
    QString m_text;
    QString m_origin;
    QString m_loadError;
};

} // namespace kev

#endif // KEV_TEXTTEMPLATE_H
