// What happened at the gate for one candidate.
#pragma once

#include <QJsonObject>
#include <QMetaType>
#include <QString>

#include <optional>

namespace kev {

struct Decision {
    enum class Kind {
        // Automatic mode: the engine applied its own rule.
        Automatic,
        // Step mode: the person approved; this version is the parent of the next iteration.
        Approved,
        // The person replaced the code or the plan; the edit is evaluated as the next version.
        Edited,
        // The person rejected it; `reason` is fed back to the agents.
        Rejected,
        // Step mode, not decided yet (a session stopped at the gate).
        Pending
    };

    Kind kind = Kind::Automatic;
    QString reason;

    QJsonObject toJson() const;
    static Decision fromJson(const QJsonObject& json);

    static QString kindToString(Kind kind);
    static std::optional<Kind> kindFromString(const QString& text);
};

} // namespace kev

Q_DECLARE_METATYPE(kev::Decision)
