#include "texttemplate.h"

#include <QFile>
#include <QRegularExpression>

#include <vector>

using namespace Qt::StringLiterals;

namespace kev {

TemplateValues& TemplateValues::set(const QString& name, const QString& value) {
    m_text.insert(name, value);
    return *this;
}

TemplateValues& TemplateValues::set(const QString& name, qint64 value) {
    m_text.insert(name, QString::number(value));
    return *this;
}

TemplateValues& TemplateValues::flag(const QString& name, bool on) {
    m_flags.insert(name, on);
    return *this;
}

const QString* TemplateValues::text(const QString& name) const {
    const auto it = m_text.constFind(name);
    return it == m_text.constEnd() ? nullptr : &*it;
}

std::optional<bool> TemplateValues::condition(const QString& name) const {
    const auto it = m_flags.constFind(name);
    if (it == m_flags.constEnd())
        return std::nullopt;
    return *it;
}

namespace {

enum class Kind { Value, If, Else, Endif, Comment };

struct Token {
    qsizetype start = 0; // first character the token removes from the output
    qsizetype end = 0;   // one past the last
    Kind kind = Kind::Value;
    bool negate = false;
    QString name;
    int line = 0;
};

bool blank(QStringView s) {
    for (const QChar c : s) {
        if (c != u' ' && c != u'\t')
            return false;
    }
    return true;
}

// A directive alone on its line takes the line, its newline included.
void takeLine(const QString& text, Token& token) {
    // lastIndexOf with a negative start searches from the end, so a token at 0 is special.
    const qsizetype lineStart = token.start == 0 ? 0 : text.lastIndexOf(u'\n', token.start - 1) + 1;
    qsizetype lineEnd = text.indexOf(u'\n', token.end);
    const qsizetype stop = lineEnd < 0 ? text.size() : lineEnd;
    if (!blank(QStringView(text).mid(lineStart, token.start - lineStart)) ||
        !blank(QStringView(text).mid(token.end, stop - token.end)))
        return;
    token.start = lineStart;
    token.end = lineEnd < 0 ? text.size() : lineEnd + 1;
}

std::optional<std::vector<Token>> scan(const QString& text, const QString& origin, QString* error) {
    static const QRegularExpression valueName(u"^[A-Z][A-Z0-9_]*$"_s);
    static const QRegularExpression ifDirective(u"^if\\s+(!?)([A-Z][A-Z0-9_]*)$"_s);
    std::vector<Token> tokens;
    qsizetype from = 0;
    int line = 1; // of `from`, counted as the scan goes (templates are tens of KB)
    for (;;) {
        const qsizetype open = text.indexOf(u"${"_s, from);
        if (open < 0)
            break;
        const qsizetype close = text.indexOf(u'}', open + 2);
        const qsizetype newline = text.indexOf(u'\n', open);
        line += static_cast<int>(QStringView(text).mid(from, open - from).count(u'\n'));
        from = open;
        Token token;
        token.start = open;
        token.line = line;
        if (close < 0 || (newline >= 0 && newline < close)) {
            if (error)
                *error = u"template %1 line %2: \"${\" is not closed by \"}\" on its line"_s.arg(
                    origin, QString::number(token.line));
            return std::nullopt;
        }
        token.end = close + 1;
        const QString body = text.mid(open + 2, close - open - 2).trimmed();
        if (valueName.match(body).hasMatch()) {
            token.kind = Kind::Value;
            token.name = body;
        } else if (const auto m = ifDirective.match(body); m.hasMatch()) {
            token.kind = Kind::If;
            token.negate = !m.captured(1).isEmpty();
            token.name = m.captured(2);
        } else if (body == u"else") {
            token.kind = Kind::Else;
        } else if (body == u"endif") {
            token.kind = Kind::Endif;
        } else if (body.startsWith(u'#')) {
            token.kind = Kind::Comment;
        } else {
            if (error)
                *error = u"template %1 line %2: \"${%3}\" is neither a placeholder (upper case, "
                         u"digits, '_') nor if NAME, if !NAME, else, endif or a # comment"_s.arg(
                             origin, QString::number(token.line), body);
            return std::nullopt;
        }
        if (token.kind != Kind::Value)
            takeLine(text, token);
        from = close + 1;
        tokens.push_back(token);
    }
    return tokens;
}

struct Frame {
    bool parentOn = true;
    bool value = false;
    bool inElse = false;
    int line = 0;
};

} // namespace

TextTemplate::TextTemplate(QString text, QString origin)
    : m_text(std::move(text))
    , m_origin(std::move(origin)) {}

TextTemplate TextTemplate::load(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        TextTemplate broken(QString(), path);
        broken.m_loadError = u"template %1: cannot be read (%2)"_s.arg(path, file.errorString());
        return broken;
    }
    return TextTemplate(QString::fromUtf8(file.readAll()), path);
}

QStringList TextTemplate::names(QString* error) const {
    QStringList out;
    if (!m_loadError.isEmpty()) {
        if (error)
            *error = m_loadError;
        return out;
    }
    const auto tokens = scan(m_text, m_origin, error);
    if (!tokens)
        return out;
    for (const Token& token : *tokens) {
        if (!token.name.isEmpty() && !out.contains(token.name))
            out << token.name;
    }
    return out;
}

std::optional<QString> TextTemplate::render(const TemplateValues& values, QString* error) const {
    if (!m_loadError.isEmpty()) {
        if (error)
            *error = m_loadError;
        return std::nullopt;
    }
    const auto tokens = scan(m_text, m_origin, error);
    if (!tokens)
        return std::nullopt;
    const auto fail = [&](const Token& token, const QString& what) {
        if (error)
            *error = u"template %1 line %2: %3"_s.arg(m_origin, QString::number(token.line), what);
        return std::nullopt;
    };
    QString out;
    out.reserve(m_text.size());
    std::vector<Frame> frames;
    bool on = true;
    qsizetype at = 0;
    for (const Token& token : *tokens) {
        if (on)
            out += QStringView(m_text).mid(at, token.start - at);
        at = token.end;
        switch (token.kind) {
        case Kind::Value:
            if (on) {
                const QString* value = values.text(token.name);
                if (!value)
                    return fail(token, u"no value for ${%1}"_s.arg(token.name));
                out += *value;
            }
            break;
        case Kind::If: {
            Frame frame{on, false, false, token.line};
            if (on) {
                const auto value = values.condition(token.name);
                if (!value)
                    return fail(token, u"no value for the condition %1"_s.arg(token.name));
                frame.value = *value != token.negate;
            }
            frames.push_back(frame);
            on = frame.parentOn && frame.value;
            break;
        }
        case Kind::Else:
            if (frames.empty() || frames.back().inElse)
                return fail(token, frames.empty() ? u"${else} outside ${if}"_s
                                                  : u"a second ${else} for one ${if}"_s);
            frames.back().inElse = true;
            on = frames.back().parentOn && !frames.back().value;
            break;
        case Kind::Endif:
            if (frames.empty())
                return fail(token, u"${endif} without ${if}"_s);
            on = frames.back().parentOn;
            frames.pop_back();
            break;
        case Kind::Comment:
            break;
        }
    }
    if (!frames.empty()) {
        if (error)
            *error = u"template %1 line %2: ${if} is not closed by ${endif}"_s.arg(
                m_origin, QString::number(frames.back().line));
        return std::nullopt;
    }
    out += QStringView(m_text).mid(at);
    return out;
}

} // namespace kev
