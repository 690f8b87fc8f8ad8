#include "search/seenset.h"

#include "builtin/kernelfamily.h"
#include "sessionstore.h"

#include <QCryptographicHash>
#include <QJsonDocument>
#include <QJsonObject>

using namespace Qt::StringLiterals;

namespace kev {

namespace {

enum class Lex { Code, LineComment, BlockComment, String, Char };

} // namespace

QString canonicalSource(const QString& source) {
    QString out;
    out.reserve(source.size());
    Lex state = Lex::Code;
    bool pendingSpace = false;
    auto put = [&](QChar c) {
        if (pendingSpace && !out.isEmpty())
            out += u' ';
        pendingSpace = false;
        out += c;
    };
    const qsizetype n = source.size();
    for (qsizetype i = 0; i < n; ++i) {
        const QChar c = source.at(i);
        const QChar next = i + 1 < n ? source.at(i + 1) : QChar();
        switch (state) {
        case Lex::Code:
            if (c.isSpace()) {
                pendingSpace = true;
                break;
            }
            put(c);
            if (c == u'/' && next == u'/') {
                put(next);
                ++i;
                state = Lex::LineComment;
            } else if (c == u'/' && next == u'*') {
                put(next);
                ++i;
                state = Lex::BlockComment;
            } else if (c == u'"') {
                state = Lex::String;
            } else if (c == u'\'') {
                state = Lex::Char;
            }
            break;
        case Lex::LineComment:
            // Its end is kept as a line break: what follows is code, not more comment.
            if (c == u'\n') {
                out += u'\n';
                pendingSpace = false;
                state = Lex::Code;
            } else if (c == u'\r') {
                // CRLF and LF are one line end
            } else if (c.isSpace()) {
                pendingSpace = true;
            } else {
                put(c);
            }
            break;
        case Lex::BlockComment:
            if (c.isSpace()) {
                pendingSpace = true;
            } else {
                put(c);
                if (c == u'*' && next == u'/') {
                    put(next);
                    ++i;
                    state = Lex::Code;
                }
            }
            break;
        case Lex::String:
        case Lex::Char:
            // Literal text is kept as written: whitespace inside a string is meaningful.
            out += c;
            if (c == u'\\' && i + 1 < n) {
                out += next;
                ++i;
            } else if ((state == Lex::String && c == u'"') || (state == Lex::Char && c == u'\'')) {
                state = Lex::Code;
            } else if (c == u'\n') {
                state = Lex::Code; // an unterminated literal ends at the line, as the compiler says
            }
            break;
        }
    }
    return out;
}

QByteArray sourceHash(const QString& source) {
    return QCryptographicHash::hash(canonicalSource(source).toUtf8(), QCryptographicHash::Sha256)
        .toHex();
}

QString canonicalPlanKey(const Strategy& strategy, const Task& task, const DeviceInfo& device) {
    const KernelFamily* family = FamilyRegistry::instance().find(strategy.family);
    if (!family) {
        QJsonObject json = strategy.toJson();
        json.remove(u"rationale"_s);
        return strategy.family + u' ' +
               QString::fromUtf8(QJsonDocument(json).toJson(QJsonDocument::Compact));
    }
    Strategy s = strategy;
    const auto specs = family->parameters();
    std::optional<Strategy> defaults;
    for (const ParameterSpec& spec : specs) {
        const QJsonValue v = parameterValue(spec, s);
        if (!v.isUndefined() && !v.isNull())
            continue;
        if (!defaults)
            defaults =
                family->supports(task, device) ? family->defaultStrategy(task, device) : Strategy{};
        const QJsonValue d = parameterValue(spec, *defaults);
        if (!d.isUndefined() && spec.set)
            spec.set(s, d);
    }
    family->normalize(s);
    return configurationKey(*family, s);
}

QString differencesFromDefault(const Strategy& strategy, const Task& task,
                               const DeviceInfo& device) {
    const KernelFamily* family = FamilyRegistry::instance().find(strategy.family);
    if (!family || !family->supports(task, device))
        return QString();
    const Strategy defaults = family->defaultStrategy(task, device);
    QStringList parts;
    const auto specs = family->parameters();
    for (const ParameterSpec& spec : specs) {
        const QJsonValue v = parameterValue(spec, strategy);
        const QJsonValue d = parameterValue(spec, defaults);
        if (v.isUndefined() || v == d)
            continue;
        const auto text = [](const QJsonValue& x) {
            return x.isDouble() ? QString::number(x.toDouble()) : x.toVariant().toString();
        };
        parts << u"%1 %2 (default %3)"_s.arg(spec.name, text(v),
                                             d.isUndefined() ? u"unset"_s : text(d));
    }
    return parts.join(u", "_s);
}

SeenSet::SeenSet(Task task, DeviceInfo device)
    : m_task(std::move(task))
    , m_device(std::move(device)) {}

SeenSet SeenSet::fromSession(const SessionStore& store, const DeviceInfo& device,
                             QStringList* errors) {
    SeenSet seen(store.task(), device);
    for (const IterationSummary& step : store.steps()) {
        QString error;
        const auto plan = store.loadPlan(step.version, &error);
        if (plan)
            seen.addPlan(*plan, step.version);
        const auto source = plan ? store.loadSource(step.version, &error) : std::nullopt;
        if (source)
            seen.addSource(*source, step.version);
        if ((!plan || !source) && errors)
            *errors << u"v%1: %2"_s.arg(step.version).arg(error);
    }
    return seen;
}

void SeenSet::addPlan(const Strategy& strategy, int version) {
    const QString key = canonicalPlanKey(strategy, m_task, m_device);
    if (!m_plans.contains(key))
        m_plans.insert(key, version);
    m_byVersion.insert(version, strategy);
}

void SeenSet::addSource(const QString& source, int version) {
    if (source.trimmed().isEmpty())
        return;
    const QByteArray hash = sourceHash(source);
    if (!m_sources.contains(hash))
        m_sources.insert(hash, version);
}

void SeenSet::add(const Strategy& strategy, const QString& source, int version) {
    addPlan(strategy, version);
    addSource(source, version);
}

std::optional<int> SeenSet::planSeen(const Strategy& strategy) const {
    const auto it = m_plans.constFind(canonicalPlanKey(strategy, m_task, m_device));
    return it == m_plans.cend() ? std::nullopt : std::optional<int>(it.value());
}

std::optional<int> SeenSet::sourceSeen(const QString& source) const {
    const auto it = m_sources.constFind(sourceHash(source));
    return it == m_sources.cend() ? std::nullopt : std::optional<int>(it.value());
}

} // namespace kev
