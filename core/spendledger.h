// What a session has spent on paid agent calls, across resumes: every attempt of every call
// (failed ones too) is appended to <session>/llm_attempts.jsonl with its tokens, cost and raw
// reply, and the totals are read back from it when the session is opened again. Agents ask it
// before each request whether the token or cost budget is used up, so a budget stops a run within
// one request of its limit, not at the end of an iteration. Thread-safe.
#pragma once

#include <QJsonObject>
#include <QMutex>
#include <QString>

#include <memory>

namespace kev {

class SpendLedger {
public:
    struct Entry {
        QString role;
        QString model;
        int attempt = 1;
        int httpStatus = 0;
        QString error; // empty: the attempt produced a reply
        qint64 tokensIn = 0;
        qint64 tokensOut = 0;
        bool tokensEstimated = false; // the server reported no usage: characters / 4
        double costUsd = 0;
        bool priced = true; // false: no price is known for the model, costUsd is 0
        double seconds = 0;
        QString reply; // as received, the key already scrubbed

        QJsonObject toJson() const;
        static Entry fromJson(const QJsonObject& json);
    };

    static constexpr const char* kFileName = "llm_attempts.jsonl";

    // In memory only: nothing is written (tests, agents outside a session).
    SpendLedger() = default;
    // Reads the log of sessionDir when there is one; later entries are appended to it. Null with
    // *error naming the file and line when it cannot be read.
    static std::shared_ptr<SpendLedger> open(const QString& sessionDir, QString* error);

    // 0 = no budget.
    void setBudgets(qint64 tokens, double costUsd);
    // Appends the entry (to the file, when there is one) and adds it to the totals.
    bool record(const Entry& entry, QString* error = nullptr);

    qint64 tokens() const;
    double costUsd() const;
    bool tokensEstimated() const;
    int entryCount() const;
    // Empty while a request may start; else which budget is used up, with the figures.
    QString exhausted() const;
    bool tokenBudgetUsed() const;

private:
    mutable QMutex m_mutex;
    QString m_path;
    qint64 m_tokenBudget = 0;
    double m_costBudget = 0;
    qint64 m_tokens = 0;
    double m_cost = 0;
    bool m_estimated = false;
    int m_entries = 0;
};

} // namespace kev
