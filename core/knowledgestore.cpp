// The store's file, schema and migrations, its writes and its queries. Export and import are in
// knowledgetransfer.cpp.
#include "knowledgestore.h"

#include <QAtomicInteger>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QSet>
#include <QStringList>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace kev {

namespace {

QAtomicInteger<quint64> g_connections;

// How far (in octaves of shape, plus the device's penalty) a person's decision carries: a
// rejection on M=64 speaks for M=128 or 32 on the same GPU, not for M=8192.
constexpr double kDecisionReach = 2.0;

// Version 1: the measurements and their decisions. Version 2 added the origin of a step (an agent
// or a person's edit), the edit itself and the Kevolve version, and an index for the nearest-task
// query. Each entry of kMigrations takes the schema one version up; a new store is version 1
// migrated forward, so every store has gone through the same statements.
const char* const kSchemaV1[] = {
    "CREATE TABLE schema_version (version INTEGER NOT NULL)",
    "INSERT INTO schema_version (version) VALUES (1)",
    "CREATE TABLE measurements ("
    " session_id TEXT NOT NULL, version INTEGER NOT NULL, recorded_at TEXT NOT NULL,"
    " task_name TEXT NOT NULL, op TEXT NOT NULL, dtypes TEXT NOT NULL,"
    " m INTEGER NOT NULL, n INTEGER NOT NULL, k INTEGER NOT NULL,"
    " device_name TEXT NOT NULL, sm_count INTEGER NOT NULL, driver TEXT NOT NULL,"
    " family TEXT NOT NULL, plan TEXT NOT NULL, status TEXT NOT NULL,"
    " speedup REAL, percent_of_floor REAL, decision TEXT NOT NULL, reason TEXT NOT NULL,"
    " PRIMARY KEY (session_id, version))",
};

const QVector<QVector<const char*>> kMigrations = {
    // 1 -> 2
    {"ALTER TABLE measurements ADD COLUMN origin TEXT NOT NULL DEFAULT 'agent'",
     "ALTER TABLE measurements ADD COLUMN edit_diff TEXT NOT NULL DEFAULT ''",
     "ALTER TABLE measurements ADD COLUMN kevolve_version TEXT NOT NULL DEFAULT ''",
     "CREATE INDEX measurements_task ON measurements (op, dtypes)"},
};

const QString kColumns =
    u"session_id, version, recorded_at, task_name, op, dtypes, m, n, k, device_name, sm_count, "
    "driver, family, plan, status, speedup, percent_of_floor, decision, reason, origin, "
    "edit_diff, kevolve_version"_s;

// SQLite stores a null QString as NULL, which the NOT NULL text columns refuse.
QVariant text(const QString& s) {
    return s.isNull() ? QVariant(QStringLiteral("")) : QVariant(s);
}

QVariant optionalValue(const std::optional<double>& v) {
    return v ? QVariant(*v) : QVariant(QMetaType::fromType<double>());
}

std::optional<double> optionalDouble(const QVariant& v) {
    if (v.isNull())
        return std::nullopt;
    return v.toDouble();
}

// A row of kColumns, as stored (the plan's text was checked when it was written).
KnowledgeRecord recordFromRow(const QSqlQuery& q) {
    KnowledgeRecord r;
    r.sessionId = q.value(0).toString();
    r.version = q.value(1).toInt();
    r.recordedAt = QDateTime::fromString(q.value(2).toString(), Qt::ISODateWithMs);
    r.task.taskName = q.value(3).toString();
    r.task.op = q.value(4).toString();
    r.task.dtypes = q.value(5).toString();
    r.task.m = q.value(6).toLongLong();
    r.task.n = q.value(7).toLongLong();
    r.task.k = q.value(8).toLongLong();
    r.task.deviceName = q.value(9).toString();
    r.task.smCount = q.value(10).toInt();
    r.task.driver = q.value(11).toString();
    r.family = q.value(12).toString();
    QString ignored;
    const QJsonObject plan = QJsonDocument::fromJson(q.value(13).toString().toUtf8()).object();
    if (auto s = KnowledgeRecord::planFromJson(plan, &ignored))
        r.plan = *s;
    else
        r.plan.family = r.family;
    r.status = q.value(14).toString();
    r.speedup = optionalDouble(q.value(15));
    r.percentOfFloor = optionalDouble(q.value(16));
    r.decision = q.value(17).toString();
    r.reason = q.value(18).toString();
    r.origin = q.value(19).toString();
    r.editDiff = q.value(20).toString();
    r.kevolveVersion = q.value(21).toString();
    return r;
}

QString sqlError(const QString& path, const QString& what, const QSqlError& e) {
    return u"knowledge store %1: %2: %3"_s.arg(path, what, e.text());
}

} // namespace

QString KnowledgeStore::defaultPath() {
    // The generic data folder plus "kevolve" once, as the sessions folder: the window and
    // kevolve-cli (whose application names differ) share one store.
    return QDir(QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation))
        .filePath(u"kevolve/knowledge.sqlite"_s);
}

QString KnowledgeStore::resolvePath(const QString& option) {
    QString chosen = option;
    if (chosen.isEmpty())
        chosen = qEnvironmentVariable("KEVOLVE_KNOWLEDGE");
    if (chosen.isEmpty())
        return defaultPath();
    if (chosen == u"off")
        return QString();
    return chosen;
}

KnowledgeStore::KnowledgeStore(QString path, QString connection)
    : m_path(std::move(path))
    , m_connection(std::move(connection)) {}

KnowledgeStore::~KnowledgeStore() {
    {
        QSqlDatabase db = QSqlDatabase::database(m_connection, false);
        db.close();
    }
    QSqlDatabase::removeDatabase(m_connection);
}

std::unique_ptr<KnowledgeStore> KnowledgeStore::open(const QString& path, QString* error) {
    if (path.isEmpty()) {
        *error = u"knowledge store: no path given"_s;
        return nullptr;
    }
    const QFileInfo info(path);
    if (info.exists()) {
        if (!info.isFile()) {
            *error = u"knowledge store %1: not a regular file"_s.arg(path);
            return nullptr;
        }
        // Checked before SQLite sees the file, so that nothing is ever written into a file that
        // is not a database.
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly)) {
            *error = u"knowledge store %1: cannot read it: %2"_s.arg(path, file.errorString());
            return nullptr;
        }
        const QByteArray head = file.read(16);
        if (!head.isEmpty() && head != QByteArrayLiteral("SQLite format 3\0")) {
            *error = u"knowledge store %1: not an SQLite database (damaged, or another kind of "
                     "file); it was left as it is. Move it away or give another path "
                     "(--knowledge PATH)"_s.arg(path);
            return nullptr;
        }
    } else if (!QDir().mkpath(info.absolutePath())) {
        *error =
            u"knowledge store %1: cannot create the folder %2"_s.arg(path, info.absolutePath());
        return nullptr;
    }
    if (!QSqlDatabase::isDriverAvailable(u"QSQLITE"_s)) {
        *error = u"knowledge store %1: Qt's SQLite driver (QSQLITE) is not installed (Debian: "
                 "apt-get install libqt6sql6-sqlite)"_s.arg(path);
        return nullptr;
    }
    const QString connection = u"kev_knowledge_%1"_s.arg(g_connections.fetchAndAddRelaxed(1));
    std::unique_ptr<KnowledgeStore> store(new KnowledgeStore(path, connection));
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(u"QSQLITE"_s, connection);
        db.setDatabaseName(path);
        // The window and a CLI run may write at once: wait for the other's transaction.
        db.setConnectOptions(u"QSQLITE_BUSY_TIMEOUT=5000"_s);
        if (!db.open()) {
            *error = sqlError(path, u"cannot open it"_s, db.lastError());
            return nullptr;
        }
    }
    if (!store->prepare(error))
        return nullptr;
    return store;
}

bool KnowledgeStore::prepare(QString* error) {
    QSqlDatabase db = QSqlDatabase::database(m_connection, false);
    QSqlQuery q(db);
    if (!q.exec(u"PRAGMA quick_check"_s) || !q.next()) {
        *error =
            sqlError(m_path, u"cannot be read (damaged?); it was left as it is"_s, q.lastError());
        return false;
    }
    if (q.value(0).toString() != u"ok") {
        *error = u"knowledge store %1: SQLite finds it damaged (%2); it was left as it is"_s.arg(
            m_path, q.value(0).toString());
        return false;
    }
    QStringList tables;
    if (!q.exec(u"SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"_s)) {
        *error = sqlError(m_path, u"cannot list its tables"_s, q.lastError());
        return false;
    }
    while (q.next())
        tables << q.value(0).toString();
    if (tables.isEmpty())
        return create(error);
    if (!tables.contains(u"schema_version"_s)) {
        *error = u"knowledge store %1: not a Kevolve knowledge store (it has the tables %2 and "
                 "no schema_version); it was left as it is"_s.arg(m_path, tables.join(u", "_s));
        return false;
    }
    if (!q.exec(u"SELECT version FROM schema_version"_s) || !q.next()) {
        *error = u"knowledge store %1: its schema_version table is empty or unreadable; it was "
                 "left as it is"_s.arg(m_path);
        return false;
    }
    const int version = q.value(0).toInt();
    if (version > kSchemaVersion) {
        *error = u"knowledge store %1: schema version %2 is newer than this Kevolve understands "
                 "(%3); it was left as it is (use a newer Kevolve, or another path)"_s.arg(m_path)
                     .arg(version)
                     .arg(kSchemaVersion);
        return false;
    }
    if (version < 1 || !tables.contains(u"measurements"_s)) {
        *error = u"knowledge store %1: damaged (schema version %2, tables %3); it was left as it "
                 "is"_s.arg(m_path)
                     .arg(version)
                     .arg(tables.join(u", "_s));
        return false;
    }
    return version == kSchemaVersion || migrate(version, error);
}

bool KnowledgeStore::create(QString* error) {
    QSqlDatabase db = QSqlDatabase::database(m_connection, false);
    if (!db.transaction()) {
        *error = sqlError(m_path, u"cannot write"_s, db.lastError());
        return false;
    }
    QSqlQuery q(db);
    for (const char* statement : kSchemaV1) {
        if (!q.exec(QString::fromLatin1(statement))) {
            *error = sqlError(m_path, u"cannot create the schema"_s, q.lastError());
            db.rollback();
            return false;
        }
    }
    if (!db.commit()) {
        *error = sqlError(m_path, u"cannot create the schema"_s, db.lastError());
        return false;
    }
    return migrate(1, error);
}

bool KnowledgeStore::migrate(int from, QString* error) {
    QSqlDatabase db = QSqlDatabase::database(m_connection, false);
    // All steps in one transaction: a failure leaves the store at the version it had.
    if (!db.transaction()) {
        *error = sqlError(m_path, u"cannot write"_s, db.lastError());
        return false;
    }
    QSqlQuery q(db);
    for (int v = from; v < kSchemaVersion; ++v) {
        for (const char* statement : kMigrations.at(v - 1)) {
            if (!q.exec(QString::fromLatin1(statement))) {
                *error =
                    sqlError(m_path, u"migration from schema %1 to %2 failed"_s.arg(v).arg(v + 1),
                             q.lastError());
                db.rollback();
                return false;
            }
        }
    }
    if (!q.exec(u"UPDATE schema_version SET version = %1"_s.arg(kSchemaVersion)) || !db.commit()) {
        *error = sqlError(m_path, u"migration failed"_s, q.lastError());
        db.rollback();
        return false;
    }
    return true;
}

bool KnowledgeStore::record(const KnowledgeRecord& r, QString* error) {
    QSqlDatabase db = QSqlDatabase::database(m_connection, false);
    QSqlQuery q(db);
    q.prepare(u"INSERT OR REPLACE INTO measurements (%1) VALUES "
              "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"_s.arg(kColumns));
    const QList<QVariant> values = {
        text(r.sessionId),
        r.version,
        r.recordedAt.toUTC().toString(Qt::ISODateWithMs),
        text(r.task.taskName),
        text(r.task.op),
        text(r.task.dtypes),
        r.task.m,
        r.task.n,
        r.task.k,
        text(r.task.deviceName),
        r.task.smCount,
        text(r.task.driver),
        text(r.family),
        QString::fromUtf8(
            QJsonDocument(KnowledgeRecord::planToJson(r.plan)).toJson(QJsonDocument::Compact)),
        text(r.status),
        optionalValue(r.speedup),
        optionalValue(r.percentOfFloor),
        text(r.decision),
        text(r.reason),
        text(r.origin),
        text(r.editDiff),
        r.kevolveVersion};
    for (const QVariant& v : values)
        q.addBindValue(v);
    if (!q.exec()) {
        *error =
            sqlError(m_path, u"cannot record v%1 of session %2"_s.arg(r.version).arg(r.sessionId),
                     q.lastError());
        return false;
    }
    return true;
}

QVector<KnowledgeRecord> KnowledgeStore::records(QString* error) const {
    QVector<KnowledgeRecord> out;
    QSqlQuery q(QSqlDatabase::database(m_connection, false));
    if (!q.exec(u"SELECT %1 FROM measurements ORDER BY recorded_at, session_id, version"_s.arg(
            kColumns))) {
        *error = sqlError(m_path, u"cannot read"_s, q.lastError());
        return out;
    }
    while (q.next())
        out << recordFromRow(q);
    return out;
}

KnowledgeHints KnowledgeStore::hints(const TaskFeatures& task, int maxTasks, int perTask,
                                     int maxDecisions) const {
    KnowledgeHints hints;
    hints.storePath = m_path;
    QSqlQuery q(QSqlDatabase::database(m_connection, false));
    q.prepare(u"SELECT %1 FROM measurements WHERE op = ? AND dtypes = ?"_s.arg(kColumns));
    q.addBindValue(task.op);
    q.addBindValue(task.dtypes);
    if (!q.exec())
        return hints;
    struct Solved {
        double distance = 0;
        QVector<KnowledgeRecord> best;
    };
    QHash<QString, Solved> solved; // task features -> its trustworthy configurations
    QVector<std::pair<double, KnowledgeRecord>> decided;
    while (q.next()) {
        const KnowledgeRecord r = recordFromRow(q);
        const auto distance = featureDistance(task, r.task);
        if (!distance)
            continue;
        if ((r.decision == u"rejected" || r.decision == u"edited_approved") &&
            *distance <= kDecisionReach)
            decided.append({*distance, r});
        if (r.status != u"ok" || !r.speedup || *r.speedup <= 0 || r.decision == u"rejected" ||
            r.decision == u"edited")
            continue;
        Solved& s = solved[r.task.shapeText() + u'|' + r.task.deviceName + u'|' +
                           QString::number(r.task.smCount)];
        s.distance = *distance;
        s.best.append(r);
    }
    QVector<Solved> ranked = solved.values();
    for (Solved& s : ranked) {
        std::stable_sort(s.best.begin(), s.best.end(),
                         [](const KnowledgeRecord& a, const KnowledgeRecord& b) {
                             return *a.speedup > *b.speedup;
                         });
    }
    std::sort(ranked.begin(), ranked.end(), [](const Solved& a, const Solved& b) {
        if (a.distance != b.distance)
            return a.distance < b.distance;
        return *a.best.first().speedup > *b.best.first().speedup;
    });
    for (qsizetype i = 0; i < ranked.size() && i < maxTasks; ++i) {
        QStringList plans; // one entry per distinct configuration
        for (const KnowledgeRecord& r : std::as_const(ranked.at(i).best)) {
            const QString plan =
                QString::fromUtf8(QJsonDocument(KnowledgeRecord::planToJson(r.plan)).toJson());
            if (plans.contains(plan))
                continue;
            plans << plan;
            KnowledgePrior p;
            p.task = r.task;
            p.distance = ranked.at(i).distance;
            p.plan = r.plan;
            p.speedup = *r.speedup;
            p.percentOfFloor = r.percentOfFloor;
            p.recordedAt = r.recordedAt;
            p.sessionId = r.sessionId;
            p.version = r.version;
            hints.priors << p;
            if (plans.size() >= perTask)
                break;
        }
    }
    std::stable_sort(decided.begin(), decided.end(), [](const auto& a, const auto& b) {
        if (a.first != b.first)
            return a.first < b.first;
        return a.second.recordedAt > b.second.recordedAt;
    });
    for (qsizetype i = 0; i < decided.size() && i < maxDecisions; ++i) {
        const KnowledgeRecord& r = decided.at(i).second;
        KnowledgeDecision d;
        d.kind = r.decision == u"rejected" ? KnowledgeDecision::Kind::Rejected
                                           : KnowledgeDecision::Kind::EditedApproved;
        d.task = r.task;
        d.distance = decided.at(i).first;
        d.plan = r.plan;
        d.reason = r.reason;
        d.editDiff = r.editDiff;
        d.speedup = r.speedup;
        d.recordedAt = r.recordedAt;
        hints.decisions << d;
    }
    return hints;
}

std::optional<KnowledgeStats> KnowledgeStore::stats(QString* error) const {
    QString readError;
    const QVector<KnowledgeRecord> all = records(&readError);
    if (!readError.isEmpty()) {
        *error = readError;
        return std::nullopt;
    }
    KnowledgeStats s;
    s.path = m_path;
    s.schemaVersion = kSchemaVersion;
    s.records = all.size();
    QSet<QString> tasks;
    QSet<QString> sessions;
    for (const KnowledgeRecord& r : all) {
        tasks.insert(r.task.shapeText() + u'|' + r.task.deviceName);
        sessions.insert(r.sessionId);
        s.byOp[r.task.op] += 1;
        s.byDevice[r.task.deviceName.isEmpty() ? u"(unknown)"_s : r.task.deviceName] += 1;
        s.byDecision[r.decision] += 1;
        if (r.status == u"ok" && r.speedup)
            s.trustworthy += 1;
    }
    s.tasks = tasks.size();
    s.sessions = sessions.size();
    return s;
}

} // namespace kev
