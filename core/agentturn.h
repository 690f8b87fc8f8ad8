// One exchange with an agent: what it was asked and what it answered, logged in the session.
// Never holds a key: backends put keys in request headers only.
#pragma once

#include <QJsonObject>
#include <QMetaType>
#include <QString>

namespace kev {

struct AgentTurn {
    // "planner", "coder" or "reviewer".
    QString role;
    // "builtin", "llm", "scripted", or "human" for a person's edit.
    QString backend;
    QString model;
    QString prompt;
    QString reply;
    qint64 tokensIn = 0;
    qint64 tokensOut = 0;
    // The server reported no usage for some call: the counts are characters / 4.
    bool tokensEstimated = false;
    double costUsd = 0;
    double seconds = 0;

    QJsonObject toJson() const;
    static AgentTurn fromJson(const QJsonObject& json);
};

} // namespace kev

Q_DECLARE_METATYPE(kev::AgentTurn)
