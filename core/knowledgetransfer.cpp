// A knowledge record's JSON form, and the store's export and import as JSON lines (kevolve-cli
// knowledge export|import): how a store is shared between machines.
#include "knowledgestore.h"

#include <QHash>
#include <QIODevice>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>

#include <cmath>

using namespace Qt::StringLiterals;

namespace kev {

namespace {

const QString kFormat = u"kevolve-knowledge"_s;
const QStringList kDecisions = {u"automatic"_s, u"approved"_s, u"edited_approved"_s,
                                u"rejected"_s,  u"edited"_s,   u"pending"_s};

QJsonValue optionalJson(const std::optional<double>& v) {
    return v ? QJsonValue(*v) : QJsonValue(QJsonValue::Null);
}

// Reads one object's fields with their types; the first problem names the field by its path.
class FieldReader {
public:
    FieldReader(const QJsonObject& object, QString prefix, QString* error)
        : m_object(object)
        , m_prefix(std::move(prefix))
        , m_error(error) {}

    bool ok() const { return m_error->isEmpty(); }

    void allow(const QStringList& names) {
        for (auto it = m_object.constBegin(); it != m_object.constEnd() && ok(); ++it) {
            if (!names.contains(it.key()))
                fail(it.key(), u"unknown field"_s);
        }
    }
    QString string(const QString& name, bool mayBeEmpty = true) {
        const QJsonValue v = m_object.value(name);
        if (!ok())
            return {};
        if (!v.isString()) {
            fail(name, v.isUndefined() ? u"missing"_s : u"expected a string"_s);
            return {};
        }
        if (!mayBeEmpty && v.toString().isEmpty())
            fail(name, u"must not be empty"_s);
        return v.toString();
    }
    qint64 integer(const QString& name, qint64 min, qint64 max) {
        const QJsonValue v = m_object.value(name);
        if (!ok())
            return 0;
        const double d = v.toDouble(std::nan(""));
        if (!v.isDouble() || d != std::floor(d) || d < double(min) || d > double(max)) {
            fail(name, v.isUndefined() ? u"missing"_s
                                       : u"expected an integer from %1 to %2"_s.arg(min).arg(max));
            return 0;
        }
        return qint64(d);
    }
    std::optional<double> optionalNumber(const QString& name) {
        const QJsonValue v = m_object.value(name);
        if (!ok() || v.isNull() || v.isUndefined())
            return std::nullopt;
        if (!v.isDouble() || !std::isfinite(v.toDouble()) || v.toDouble() < 0) {
            fail(name, u"expected a number >= 0 or null"_s);
            return std::nullopt;
        }
        return v.toDouble();
    }
    QJsonObject object(const QString& name) {
        const QJsonValue v = m_object.value(name);
        if (ok() && !v.isObject())
            fail(name, v.isUndefined() ? u"missing"_s : u"expected an object"_s);
        return v.toObject();
    }
    void fail(const QString& name, const QString& problem) {
        if (ok())
            *m_error = m_prefix + name + u": "_s + problem;
    }

private:
    QJsonObject m_object;
    QString m_prefix;
    QString* m_error;
};

} // namespace

QJsonObject KnowledgeRecord::planToJson(const Strategy& plan) {
    QJsonObject json = plan.toJson();
    json.remove(u"rationale"_s);
    return json;
}

std::optional<Strategy> KnowledgeRecord::planFromJson(QJsonObject json, QString* error) {
    // The strategy schema requires a rationale; the store does not keep one.
    json.insert(u"rationale"_s, u"(from the knowledge store)"_s);
    auto plan = Strategy::fromJson(json, error);
    if (plan)
        plan->rationale.clear();
    return plan;
}

QJsonObject KnowledgeRecord::toJson() const {
    return {
        {u"session_id"_s, sessionId},
        {u"version"_s, version},
        {u"recorded_at"_s, recordedAt.toUTC().toString(Qt::ISODateWithMs)},
        {u"kevolve_version"_s, kevolveVersion},
        {u"task"_s, QJsonObject{{u"name"_s, task.taskName},
                                {u"op"_s, task.op},
                                {u"dtypes"_s, task.dtypes},
                                {u"m"_s, double(task.m)},
                                {u"n"_s, double(task.n)},
                                {u"k"_s, double(task.k)}}},
        {u"device"_s, QJsonObject{{u"name"_s, task.deviceName},
                                  {u"sm_count"_s, task.smCount},
                                  {u"driver"_s, task.driver}}},
        {u"family"_s, family},
        {u"plan"_s, planToJson(plan)},
        {u"origin"_s, origin},
        {u"status"_s, status},
        {u"speedup"_s, optionalJson(speedup)},
        {u"percent_of_floor"_s, optionalJson(percentOfFloor)},
        {u"decision"_s, decision},
        {u"reason"_s, reason},
        {u"edit_diff"_s, editDiff},
    };
}

std::optional<KnowledgeRecord> KnowledgeRecord::fromJson(const QJsonObject& json, QString* error) {
    error->clear();
    FieldReader f(json, QString(), error);
    f.allow({u"session_id"_s, u"version"_s, u"recorded_at"_s, u"kevolve_version"_s, u"task"_s,
             u"device"_s, u"family"_s, u"plan"_s, u"origin"_s, u"status"_s, u"speedup"_s,
             u"percent_of_floor"_s, u"decision"_s, u"reason"_s, u"edit_diff"_s});
    KnowledgeRecord r;
    r.sessionId = f.string(u"session_id"_s, false);
    r.version = int(f.integer(u"version"_s, 1, 1000000));
    const QString at = f.string(u"recorded_at"_s, false);
    r.recordedAt = QDateTime::fromString(at, Qt::ISODateWithMs);
    if (f.ok() && !r.recordedAt.isValid())
        f.fail(u"recorded_at"_s, u"not an ISO 8601 date and time: \"%1\""_s.arg(at));
    r.kevolveVersion = f.string(u"kevolve_version"_s);
    const QJsonObject task = f.object(u"task"_s);
    const QJsonObject device = f.object(u"device"_s);
    if (f.ok()) {
        FieldReader t(task, u"task."_s, error);
        t.allow({u"name"_s, u"op"_s, u"dtypes"_s, u"m"_s, u"n"_s, u"k"_s});
        r.task.taskName = t.string(u"name"_s);
        r.task.op = t.string(u"op"_s, false);
        r.task.dtypes = t.string(u"dtypes"_s, false);
        constexpr qint64 kMaxExtent = qint64(1) << 40;
        r.task.m = t.integer(u"m"_s, 0, kMaxExtent);
        r.task.n = t.integer(u"n"_s, 0, kMaxExtent);
        r.task.k = t.integer(u"k"_s, 0, kMaxExtent);
    }
    if (f.ok()) {
        FieldReader d(device, u"device."_s, error);
        d.allow({u"name"_s, u"sm_count"_s, u"driver"_s});
        r.task.deviceName = d.string(u"name"_s);
        r.task.smCount = int(d.integer(u"sm_count"_s, 0, 100000));
        r.task.driver = d.string(u"driver"_s);
    }
    r.family = f.string(u"family"_s, false);
    const QJsonObject plan = f.object(u"plan"_s);
    if (f.ok()) {
        QString planError;
        const auto parsed = planFromJson(plan, &planError);
        if (!parsed)
            f.fail(u"plan"_s, planError.replace(u'\n', u"; "_s));
        else if (parsed->family != r.family)
            f.fail(u"plan.family"_s, u"\"%1\" differs from the record's family \"%2\""_s.arg(
                                         parsed->family, r.family));
        else
            r.plan = *parsed;
    }
    r.origin = f.string(u"origin"_s, false);
    r.status = f.string(u"status"_s, false);
    r.speedup = f.optionalNumber(u"speedup"_s);
    r.percentOfFloor = f.optionalNumber(u"percent_of_floor"_s);
    r.decision = f.string(u"decision"_s, false);
    if (f.ok() && !kDecisions.contains(r.decision))
        f.fail(u"decision"_s,
               u"\"%1\" is not one of %2"_s.arg(r.decision, kDecisions.join(u", "_s)));
    r.reason = f.string(u"reason"_s);
    r.editDiff = f.string(u"edit_diff"_s);
    if (!f.ok())
        return std::nullopt;
    return r;
}

std::optional<qint64> KnowledgeStore::exportTo(QIODevice& out, QString* error) const {
    QString readError;
    const QVector<KnowledgeRecord> all = records(&readError);
    if (!readError.isEmpty()) {
        *error = readError;
        return std::nullopt;
    }
    const QJsonObject header{
        {u"format"_s, kFormat},
        {u"format_version"_s, kFormatVersion},
        {u"schema_version"_s, kSchemaVersion},
        {u"exported_at"_s, QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs)},
        {u"records"_s, double(all.size())}};
    QByteArray text = QJsonDocument(header).toJson(QJsonDocument::Compact) + '\n';
    for (const KnowledgeRecord& r : all)
        text += QJsonDocument(r.toJson()).toJson(QJsonDocument::Compact) + '\n';
    if (out.write(text) != text.size()) {
        *error = u"cannot write the export: %1"_s.arg(out.errorString());
        return std::nullopt;
    }
    return all.size();
}

std::optional<KnowledgeImportResult> KnowledgeStore::importFrom(QIODevice& in, QString* error) {
    const QList<QByteArray> lines = in.readAll().split('\n');
    // Every line is checked before anything is written: a bad file changes nothing.
    QVector<KnowledgeRecord> incoming;
    bool headerSeen = false;
    for (qsizetype i = 0; i < lines.size(); ++i) {
        const QByteArray line = lines.at(i).trimmed();
        if (line.isEmpty())
            continue;
        const QString where = u"line %1"_s.arg(i + 1);
        QJsonParseError parseError;
        const QJsonDocument doc = QJsonDocument::fromJson(line, &parseError);
        if (parseError.error != QJsonParseError::NoError || !doc.isObject()) {
            *error = where + u": not a JSON object ("_s +
                     (parseError.error != QJsonParseError::NoError
                          ? parseError.errorString() + u" at offset "_s +
                                QString::number(parseError.offset)
                          : u"another JSON value"_s) +
                     u')';
            return std::nullopt;
        }
        const QJsonObject object = doc.object();
        if (!headerSeen) {
            if (object.value(u"format"_s).toString() != kFormat) {
                *error = where +
                         u": format: expected the header {\"format\": \"kevolve-knowledge\", "
                         "\"format_version\": 1, ...} first (is this a knowledge export?)"_s;
                return std::nullopt;
            }
            const QJsonValue version = object.value(u"format_version"_s);
            if (!version.isDouble() || version.toDouble() < 1 ||
                version.toDouble() != std::floor(version.toDouble())) {
                *error = where + u": format_version: expected a positive integer"_s;
                return std::nullopt;
            }
            if (version.toInt() > kFormatVersion) {
                *error = where + u": format_version: %1 is newer than this Kevolve reads (%2)"_s
                                     .arg(version.toInt())
                                     .arg(kFormatVersion);
                return std::nullopt;
            }
            headerSeen = true;
            continue;
        }
        QString recordError;
        auto parsed = KnowledgeRecord::fromJson(object, &recordError);
        if (!parsed) {
            *error = where + u": "_s + recordError;
            return std::nullopt;
        }
        incoming << *parsed;
    }
    if (!headerSeen) {
        *error = u"the file is empty: expected a knowledge export (JSON lines with a header)"_s;
        return std::nullopt;
    }

    QString readError;
    QHash<QString, KnowledgeRecord> stored;
    const QVector<KnowledgeRecord> existing = records(&readError);
    if (!readError.isEmpty()) {
        *error = readError;
        return std::nullopt;
    }
    const auto keyOf = [](const KnowledgeRecord& r) -> QString {
        return r.sessionId + u'\x1f' + QString::number(r.version);
    };
    for (const KnowledgeRecord& r : existing)
        stored.insert(keyOf(r), r);

    QSqlDatabase db = QSqlDatabase::database(m_connection, false);
    if (!db.transaction()) {
        *error = u"knowledge store %1: cannot write: %2"_s.arg(m_path, db.lastError().text());
        return std::nullopt;
    }
    KnowledgeImportResult result;
    for (const KnowledgeRecord& r : std::as_const(incoming)) {
        const auto it = stored.constFind(keyOf(r));
        const bool known = it != stored.cend();
        // The same step seen twice: the later record carries the later decision.
        if (known && (*it == r || it->recordedAt >= r.recordedAt)) {
            ++result.unchanged;
            continue;
        }
        if (!record(r, error)) {
            db.rollback();
            return std::nullopt;
        }
        stored.insert(keyOf(r), r);
        ++(known ? result.updated : result.added);
    }
    if (!db.commit()) {
        *error = u"knowledge store %1: cannot write: %2"_s.arg(m_path, db.lastError().text());
        db.rollback();
        return std::nullopt;
    }
    return result;
}

} // namespace kev
