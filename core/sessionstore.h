// A session on disk (docs/architecture.md, contract 7; docs/engine.md): a folder of plain files,
// diffable with git.
//
//   session.json             task, settings (never a secret), device, creation time
//   index.jsonl              one IterationSummary per completed step, appended last
//   plans/plan_vN.json       the step's Strategy
//   generated/kernel_vN.cu   the step's source
//   logs/run_vN.json         every prompt and reply, the harness report, the review, timings,
//                            the decision
//
// Each file of a step is written atomically (QSaveFile) and the index record is appended only
// after all of them, so a session killed at any moment reopens with every completed step and no
// half-written one. Opening reads session.json and index.jsonl only; step files load on demand.
// Not thread-safe: one thread writes a session (the engine's); others open their own copy.
//
// The store never deletes or rewrites a file it did not write in this run. A damaged index (a line
// cut short, not JSON, a bad record, a duplicate version) opens with its problems listed
// (problems(), each naming its line and byte) so that `show` can report them; writing to it is
// refused until a person fixes the index, except for the damage a crash or a full disk leaves,
// which is repaired only by appending: a cut last line is ended with a newline (and stays, as
// written, an ignored line, with a repair record naming it appended), and each step whose files are
// complete but whose record is missing gets its record back, rebuilt from its log. Files of a step
// that never completed are kept and their version is never reused.
#pragma once

#include "candidate.h"
#include "deviceinfo.h"
#include "enginesettings.h"
#include "iterationsummary.h"
#include "task.h"

#include <QDateTime>
#include <QMetaType>
#include <QString>
#include <QStringList>
#include <QVector>

#include <optional>

namespace kev {

// A problem of a session's index.jsonl: where it is and what it is.
struct IndexProblem {
    int line = 0;    // 1-based
    qint64 byte = 0; // offset of the line's first byte
    QString message;
    // A last line without its newline: what a crash or a full disk leaves, repaired by appending.
    bool cut = false;
    // A line a resume ended after a cut: it stays as written, followed by a repair record naming
    // it ({"kevolve_repair": "cut line", "line": N, "byte": B}), and no longer blocks writing.
    bool repaired = false;

    QString toString() const; // "index.jsonl line 3 (byte 412): ..."
};

// The records of an index.jsonl and its problems. A record whose version an earlier line already
// holds is a problem; the first one counts.
struct IndexContents {
    QVector<IterationSummary> steps;
    QVector<IndexProblem> problems;
};
IndexContents parseIndex(const QByteArray& data);

struct SessionInfo {
    QString id;
    QDateTime created;
    Task task;
    EngineSettings settings;
    std::optional<DeviceInfo> device;
    QString harnessVersion;
    // The task as the harness normalised it (every default written out), from the first report
    // that carried it: reports refer to it instead of repeating it in every log.
    QJsonObject harnessTask;

    QJsonObject toJson() const;
    static std::optional<SessionInfo> fromJson(const QJsonObject& json, QString* error);
};

class SessionStore {
public:
    // Makes the folder (it must not hold a session already) and writes session.json.
    static std::optional<SessionStore> create(const QString& dir, const Task& task,
                                              const EngineSettings& settings, QString* error);
    // Reads session.json and the index. A damaged index opens (its problems are listed); a
    // missing or unreadable session.json, or one that is not a FIFO-free regular file, does not.
    static std::optional<SessionStore> open(const QString& dir, QString* error);
    static bool isSession(const QString& dir);

    QString dir() const { return m_dir; }
    const SessionInfo& info() const { return m_info; }
    const Task& task() const { return m_info.task; }
    const EngineSettings& settings() const { return m_info.settings; }
    bool updateInfo(const SessionInfo& info, QString* error);

    const QVector<IterationSummary>& steps() const { return m_steps; }
    std::optional<IterationSummary> step(int version) const;
    int nextVersion() const;
    int lastIteration() const;
    // The fastest step that is correct, timed, not rejected, and either not suspicious or approved
    // by a person.
    std::optional<int> bestVersion() const;

    // Writes the step's files, then appends its index record. Before the first write of a reopened
    // session: refuses an index damaged beyond what a crash leaves (the error names the line and
    // byte and says how to go on), repairs a crash's damage by appending (see above), and removes
    // the store's own leftover temporary files (session.json.XXXXXX).
    bool appendStep(const Candidate& candidate, QString* error);

    // Damage found when the session was opened, in line order.
    const QVector<IndexProblem>& problems() const { return m_problems; }
    // Versions with step files (plan, kernel or log) but no index record, ascending.
    QVector<int> unrecordedVersions() const;
    // One line per problem and per unrecorded step, with what resume will do about it; empty for
    // a sound session.
    QStringList damageReport() const;
    // Whether appendStep may write (it would repair by appending); *error says why not and how to
    // go on.
    bool canWrite(QString* error) const;
    // What appendStep does before its first write (repairs by appending, removes the store's own
    // temporary files); the engine calls it when it resumes, before any agent runs, so that the
    // repaired steps count. Idempotent.
    bool prepareForWriting(QString* error);
    // What the last repair did ("appended a newline to index.jsonl's cut line 3"), for the user.
    const QStringList& repairs() const { return m_repairs; }

    // Lazy loads.
    std::optional<Candidate> loadCandidate(int version, QString* error) const;
    std::optional<QString> loadSource(int version, QString* error) const;
    std::optional<Strategy> loadPlan(int version, QString* error) const;

    QString planPath(int version) const;
    QString kernelPath(int version) const;
    QString logPath(int version) const;
    QString indexPath() const;
    QString infoPath() const;

    static QJsonObject logJson(const Candidate& candidate);

private:
    bool appendRecord(const IterationSummary& summary, QString* error);
    std::optional<Candidate> readCandidate(int version, QString* error) const;
    void removeOwnTemporaryFiles();

    QString m_dir;
    SessionInfo m_info;
    QVector<IterationSummary> m_steps;
    QVector<IndexProblem> m_problems;
    QStringList m_repairs;
    bool m_repaired = false;
};

// Writes data to path atomically (a temporary file renamed over it).
bool writeFileAtomically(const QString& path, const QByteArray& data, QString* error);

} // namespace kev

Q_DECLARE_METATYPE(kev::SessionInfo)
