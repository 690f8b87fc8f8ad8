// The per-user knowledge store (issue 18, "Memory across tasks"): every measured configuration of
// every session, with its task's features, its result and the human decision on it, in an SQLite
// database through Qt SQL. Versioned (table schema_version) and migrated forward in a transaction;
// a damaged, foreign or newer database is refused with a message and never changed or deleted.
// One object is one connection, used on the thread that opened it. docs/knowledge.md.
#pragma once

#include "knowledgehints.h"

#include <QByteArray>
#include <QDateTime>
#include <QJsonObject>
#include <QMap>
#include <QString>

#include <memory>
#include <optional>

class QIODevice;

namespace kev {

// One measured configuration.
struct KnowledgeRecord {
    QString sessionId;
    int version = 0; // the session's step
    QDateTime recordedAt;
    QString kevolveVersion;
    TaskFeatures task;
    QString family;
    Strategy plan;  // the rationale is not kept
    QString origin; // "agent", "human_code", "human_plan"
    QString status; // the harness's status
    std::optional<double> speedup;
    std::optional<double> percentOfFloor;
    // "automatic", "approved", "edited_approved", "rejected", "edited" (replaced by a person's
    // edit), "pending"
    QString decision;
    QString reason;
    QString editDiff;

    QJsonObject toJson() const;
    // *error names the field.
    static std::optional<KnowledgeRecord> fromJson(const QJsonObject& json, QString* error);
    // A plan as the store keeps it: the strategy's JSON without its rationale.
    static QJsonObject planToJson(const Strategy& plan);
    static std::optional<Strategy> planFromJson(QJsonObject json, QString* error);
    bool operator==(const KnowledgeRecord& other) const { return toJson() == other.toJson(); }
};

struct KnowledgeStats {
    QString path;
    int schemaVersion = 0;
    qint64 records = 0;
    qint64 tasks = 0; // distinct task features (op, types, shape, device)
    qint64 sessions = 0;
    QMap<QString, qint64> byOp;
    QMap<QString, qint64> byDevice;
    QMap<QString, qint64> byDecision;
    qint64 trustworthy = 0; // status ok with a speed-up
};

struct KnowledgeImportResult {
    qint64 added = 0;
    qint64 updated = 0;   // the incoming record was decided later than the stored one
    qint64 unchanged = 0; // already there (or the stored one is newer)
};

class KnowledgeStore {
public:
    // The schema this build writes; older ones are migrated on open.
    static constexpr int kSchemaVersion = 2;
    // The JSON-lines format of export and import.
    static constexpr int kFormatVersion = 1;

    // Where the store is: `option` (--knowledge, a setting) when given, else $KEVOLVE_KNOWLEDGE,
    // else the user's data folder (~/.local/share/kevolve/knowledge.sqlite, shared by the window
    // and the CLI). "off" (option or variable) turns the store off: an empty result.
    static QString resolvePath(const QString& option = QString());
    static QString defaultPath();

    // Opens the store, creating it (and its folder) when absent and migrating an older schema.
    // Null with *error naming the path and the problem when the file is not an SQLite database,
    // is another program's database, has a newer schema, or cannot be read or written.
    static std::unique_ptr<KnowledgeStore> open(const QString& path, QString* error);
    ~KnowledgeStore();
    KnowledgeStore(const KnowledgeStore&) = delete;
    KnowledgeStore& operator=(const KnowledgeStore&) = delete;

    QString path() const { return m_path; }

    // Inserts the record, or replaces the one of the same session and version (a decision made
    // after the measurement was recorded).
    bool record(const KnowledgeRecord& record, QString* error);

    // For a task on a device: the best trustworthy configurations (not rejected) of the
    // `maxTasks` nearest solved tasks, `perTask` each, and the human decisions (rejections,
    // edited-and-approved kernels) on tasks of the same op and types within two octaves
    // (featureDistance), nearest first.
    KnowledgeHints hints(const TaskFeatures& task, int maxTasks = 3, int perTask = 2,
                         int maxDecisions = 8) const;

    QVector<KnowledgeRecord> records(QString* error) const;
    std::optional<KnowledgeStats> stats(QString* error) const;

    // JSON lines: a header {"format": "kevolve-knowledge", "format_version": 1, ...} and one
    // record a line. Returns the number of records written.
    std::optional<qint64> exportTo(QIODevice& out, QString* error) const;
    // Reads every line first (a bad line is an error naming the line and the field, and nothing is
    // written), then merges in one transaction: a record of a session and version already stored
    // is kept unless the incoming one was recorded later.
    std::optional<KnowledgeImportResult> importFrom(QIODevice& in, QString* error);

private:
    explicit KnowledgeStore(QString path, QString connection);
    bool prepare(QString* error);
    bool create(QString* error);
    bool migrate(int from, QString* error);

    QString m_path;
    QString m_connection;
};

} // namespace kev
