#include "spendledger.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QMutexLocker>

using namespace Qt::Literals::StringLiterals;

namespace kev {

QJsonObject SpendLedger::Entry::toJson() const {
    QJsonObject json{{u"time"_s, QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs)},
                     {u"role"_s, role},
                     {u"model"_s, model},
                     {u"attempt"_s, attempt},
                     {u"http_status"_s, httpStatus},
                     {u"ok"_s, error.isEmpty()},
                     {u"tokens_in"_s, tokensIn},
                     {u"tokens_out"_s, tokensOut},
                     {u"tokens_estimated"_s, tokensEstimated},
                     {u"cost_usd"_s, costUsd},
                     {u"priced"_s, priced},
                     {u"seconds"_s, seconds},
                     {u"reply"_s, reply}};
    if (!error.isEmpty())
        json[u"error"_s] = error;
    return json;
}

SpendLedger::Entry SpendLedger::Entry::fromJson(const QJsonObject& json) {
    Entry e;
    e.role = json.value(u"role"_s).toString();
    e.model = json.value(u"model"_s).toString();
    e.attempt = json.value(u"attempt"_s).toInt(1);
    e.httpStatus = json.value(u"http_status"_s).toInt();
    e.error = json.value(u"error"_s).toString();
    e.tokensIn = json.value(u"tokens_in"_s).toInteger();
    e.tokensOut = json.value(u"tokens_out"_s).toInteger();
    e.tokensEstimated = json.value(u"tokens_estimated"_s).toBool();
    e.costUsd = json.value(u"cost_usd"_s).toDouble();
    e.priced = json.value(u"priced"_s).toBool(true);
    e.seconds = json.value(u"seconds"_s).toDouble();
    e.reply = json.value(u"reply"_s).toString();
    return e;
}

std::shared_ptr<SpendLedger> SpendLedger::open(const QString& sessionDir, QString* error) {
    auto ledger = std::make_shared<SpendLedger>();
    ledger->m_path = QDir(sessionDir).filePath(QString::fromLatin1(kFileName));
    QFile file(ledger->m_path);
    if (!file.exists())
        return ledger;
    if (!file.open(QIODevice::ReadOnly)) {
        if (error)
            *error = u"cannot read %1: %2"_s.arg(ledger->m_path, file.errorString());
        return nullptr;
    }
    int line = 0;
    while (!file.atEnd()) {
        ++line;
        const QByteArray text = file.readLine().trimmed();
        if (text.isEmpty())
            continue;
        QJsonParseError parseError{};
        const QJsonDocument doc = QJsonDocument::fromJson(text, &parseError);
        if (!doc.isObject()) {
            // The last line of a run killed while writing it: the totals keep what was whole.
            if (file.atEnd())
                break;
            if (error)
                *error = u"%1, line %2: not a JSON object (%3)"_s.arg(
                    ledger->m_path, QString::number(line), parseError.errorString());
            return nullptr;
        }
        const Entry entry = Entry::fromJson(doc.object());
        ledger->m_tokens += entry.tokensIn + entry.tokensOut;
        ledger->m_cost += entry.costUsd;
        ledger->m_estimated = ledger->m_estimated || entry.tokensEstimated;
        ++ledger->m_entries;
    }
    return ledger;
}

void SpendLedger::setBudgets(qint64 tokens, double costUsd) {
    QMutexLocker lock(&m_mutex);
    m_tokenBudget = tokens;
    m_costBudget = costUsd;
}

bool SpendLedger::record(const Entry& entry, QString* error) {
    QMutexLocker lock(&m_mutex);
    m_tokens += entry.tokensIn + entry.tokensOut;
    m_cost += entry.costUsd;
    m_estimated = m_estimated || entry.tokensEstimated;
    ++m_entries;
    if (m_path.isEmpty())
        return true;
    QFile file(m_path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Append) ||
        file.write(QJsonDocument(entry.toJson()).toJson(QJsonDocument::Compact) + '\n') < 0) {
        if (error)
            *error = u"cannot append to %1: %2"_s.arg(m_path, file.errorString());
        return false;
    }
    return true;
}

qint64 SpendLedger::tokens() const {
    QMutexLocker lock(&m_mutex);
    return m_tokens;
}

double SpendLedger::costUsd() const {
    QMutexLocker lock(&m_mutex);
    return m_cost;
}

bool SpendLedger::tokensEstimated() const {
    QMutexLocker lock(&m_mutex);
    return m_estimated;
}

int SpendLedger::entryCount() const {
    QMutexLocker lock(&m_mutex);
    return m_entries;
}

bool SpendLedger::tokenBudgetUsed() const {
    QMutexLocker lock(&m_mutex);
    return m_tokenBudget > 0 && m_tokens >= m_tokenBudget;
}

QString SpendLedger::exhausted() const {
    QMutexLocker lock(&m_mutex);
    const QString approx = m_estimated ? u"~"_s : QString();
    if (m_tokenBudget > 0 && m_tokens >= m_tokenBudget)
        return u"token budget of %1 used (%2%3 tokens in this session)"_s.arg(
            QString::number(m_tokenBudget), approx, QString::number(m_tokens));
    if (m_costBudget > 0 && m_cost >= m_costBudget)
        return u"cost budget of $%1 used ($%2 in this session)"_s.arg(
            QString::number(m_costBudget, 'f', 2), QString::number(m_cost, 'f', 4));
    return {};
}

} // namespace kev
