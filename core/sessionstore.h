// A session on disk (DESIGN.md §6): a folder of plain files, diffable with git.
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
#pragma once

#include "candidate.h"
#include "deviceinfo.h"
#include "enginesettings.h"
#include "iterationsummary.h"
#include "task.h"

#include <QDateTime>
#include <QMetaType>
#include <QString>
#include <QVector>

#include <optional>

namespace kev {

struct SessionInfo {
    QString id;
    QDateTime created;
    Task task;
    EngineSettings settings;
    std::optional<DeviceInfo> device;
    QString harnessVersion;

    QJsonObject toJson() const;
    static std::optional<SessionInfo> fromJson(const QJsonObject& json, QString* error);
};

class SessionStore {
public:
    // Makes the folder (it must not hold a session already) and writes session.json.
    static std::optional<SessionStore> create(const QString& dir, const Task& task,
                                              const EngineSettings& settings, QString* error);
    // Reads session.json and the index. A trailing index line cut short by a crash is ignored.
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
    // session, drops what a crash left behind: a cut index line and files of unrecorded steps.
    bool appendStep(const Candidate& candidate, QString* error);

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
    bool repair(QString* error);

    QString m_dir;
    SessionInfo m_info;
    QVector<IterationSummary> m_steps;
    bool m_repaired = false;
};

// Writes data to path atomically (a temporary file renamed over it).
bool writeFileAtomically(const QString& path, const QByteArray& data, QString* error);

} // namespace kev

Q_DECLARE_METATYPE(kev::SessionInfo)
