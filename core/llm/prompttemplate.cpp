#include "llm/prompttemplate.h"

#include <QRegularExpression>

using namespace Qt::Literals::StringLiterals;

namespace kev {

namespace {

struct Token {
    qsizetype start = 0;
    qsizetype end = 0; // one past the closing braces
    QString name;
};

int lineOf(const QString& text, qsizetype position) {
    return static_cast<int>(QStringView(text).left(position).count(u'\n')) + 1;
}

// Every {{name}} in the text, or an error naming the first malformed one.
std::optional<QList<Token>> scan(const QString& text, const QString& where, QString* error) {
    static const QRegularExpression validName(u"^[a-z][a-z0-9_]*(\\.[a-z0-9_]+)*$"_s);
    QList<Token> tokens;
    qsizetype from = 0;
    for (;;) {
        const qsizetype open = text.indexOf(u"{{"_s, from);
        if (open < 0)
            break;
        const qsizetype close = text.indexOf(u"}}"_s, open + 2);
        const qsizetype nextOpen = text.indexOf(u"{{"_s, open + 2);
        if (close < 0 || (nextOpen >= 0 && nextOpen < close)) {
            if (error)
                *error = u"prompt template %1 line %2: \"{{\" is not closed by \"}}\""_s.arg(
                    where, QString::number(lineOf(text, open)));
            return std::nullopt;
        }
        const QString name = text.mid(open + 2, close - open - 2).trimmed();
        if (!validName.match(name).hasMatch()) {
            if (error)
                *error = u"prompt template %1 line %2: \"%3\" is not a placeholder name "
                         u"(lower case, digits, '_' and '.')"_s.arg(
                             where, QString::number(lineOf(text, open)), name);
            return std::nullopt;
        }
        tokens.append({open, close + 2, name});
        from = close + 2;
    }
    return tokens;
}

} // namespace

PromptTemplate::PromptTemplate(QString name, QString text, QString origin)
    : m_name(std::move(name))
    , m_text(std::move(text))
    , m_origin(std::move(origin)) {}

QStringList PromptTemplate::placeholders(QString* error) const {
    QStringList names;
    const auto tokens = scan(m_text, m_origin.isEmpty() ? m_name : m_origin, error);
    if (!tokens)
        return names;
    for (const Token& token : *tokens) {
        if (!names.contains(token.name))
            names << token.name;
    }
    return names;
}

std::optional<QString> PromptTemplate::render(const QHash<QString, QString>& values,
                                              QString* error) const {
    const QString where = m_origin.isEmpty() ? m_name : m_origin;
    const auto tokens = scan(m_text, where, error);
    if (!tokens)
        return std::nullopt;
    QString out;
    out.reserve(m_text.size());
    qsizetype at = 0;
    for (const Token& token : *tokens) {
        const auto value = values.constFind(token.name);
        if (value == values.constEnd()) {
            if (error)
                *error = u"prompt template %1 line %2: unknown placeholder {{%3}}"_s.arg(
                    where, QString::number(lineOf(m_text, token.start)), token.name);
            return std::nullopt;
        }
        out += QStringView(m_text).mid(at, token.start - at);
        out += *value;
        at = token.end;
    }
    out += QStringView(m_text).mid(at);
    return out;
}

} // namespace kev
