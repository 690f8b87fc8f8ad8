// What a session has already sent to the harness, so that the same kernel is never measured
// twice (issue 18): every plan by its canonical parameters and every source by the hash of its
// tokens. Rebuilt from a session's files on resume; the engine consults it before a candidate is
// coded (plan) and before it is evaluated (source), across the slots of a beam and across
// iterations.
#pragma once

#include "deviceinfo.h"
#include "strategy.h"
#include "task.h"

#include <QByteArray>
#include <QHash>
#include <QString>
#include <QStringList>

#include <optional>

namespace kev {

class SessionStore;

// The source with its layout normalised: every run of whitespace outside string and character
// literals one space (a // comment's end kept as a line break), none at the ends, CRLF as LF.
// Two files that differ only in indentation, blank lines or line endings are the same kernel.
// Comments are kept: a harness directive or a note in a comment may be the difference.
QString canonicalSource(const QString& source);
// SHA-256 of canonicalSource(), hex.
QByteArray sourceHash(const QString& source);

// The plan's identity: for a family the built-in backend knows, its knobs after normalisation,
// with the knobs the plan leaves out filled from the family's default for the task (so "not
// given" and "given as the default" are one configuration) and the fields the family does not
// read dropped. For any other family, every field of the plan but the rationale.
QString canonicalPlanKey(const Strategy& strategy, const Task& task, const DeviceInfo& device);

// "ctas_per_sm 3 (default 0), warps 8 (default 4)": every knob of a registered family whose value
// differs from the family's default for the task; empty when none does or the family is unknown.
// Plans name their point with it, so two variants never read alike.
QString differencesFromDefault(const Strategy& strategy, const Task& task,
                               const DeviceInfo& device);

class SeenSet {
public:
    SeenSet() = default;
    SeenSet(Task task, DeviceInfo device);

    // Every step of the session (its plan and its kernel); *error names a step whose files
    // cannot be read (that step is then left out; nothing else is lost).
    static SeenSet fromSession(const SessionStore& store, const DeviceInfo& device,
                               QStringList* errors);

    void addPlan(const Strategy& strategy, int version);
    void addSource(const QString& source, int version);
    void add(const Strategy& strategy, const QString& source, int version);

    // The version that measured this plan (or this source) first, if any.
    std::optional<int> planSeen(const Strategy& strategy) const;
    std::optional<int> sourceSeen(const QString& source) const;

    int planCount() const { return int(m_plans.size()); }
    int sourceCount() const { return int(m_sources.size()); }
    // version -> plan, every plan added.
    const QHash<int, Strategy>& plans() const { return m_byVersion; }

private:
    Task m_task;
    DeviceInfo m_device;
    QHash<QString, int> m_plans;
    QHash<QByteArray, int> m_sources;
    QHash<int, Strategy> m_byVersion;
};

} // namespace kev
