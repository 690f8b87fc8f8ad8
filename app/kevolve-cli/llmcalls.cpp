#include "llmcalls.h"

#include "keystore.h"
#include "llm/llmsettings.h"
#include "llm/modelcheck.h"
#include "spendledger.h"

#include <QEventLoop>
#include <QSet>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <unistd.h>

using namespace Qt::Literals::StringLiterals;

namespace kev::cli {

QVector<EndpointCheck> checkEndpoints(const EngineSettings& settings) {
    auto keys = std::make_shared<EnvironmentKeyStore>();
    QSet<QString> seen;
    QVector<EndpointCheck> checks;
    for (const QString& role : {u"planner"_s, u"coder"_s, u"reviewer"_s}) {
        const AgentSettings agent = settings.agentSettings(role);
        if (agent.backend != u"llm"_s)
            continue;
        QString error;
        const auto llm = LlmSettings::fromOptions(agent.options, role, &error);
        if (!llm) {
            checks.append({role, false, error});
            continue;
        }
        // Roles that share an endpoint, model and key are asked once.
        const QString key = llm->baseUrl + u'\n' + llm->model + u'\n' + llm->fallbackModel + u'\n' +
                            llm->keyService;
        if (seen.contains(key))
            continue;
        seen.insert(key);
        ModelCheckResult result;
        ModelCheck check(*llm, keys);
        QEventLoop loop;
        QObject::connect(&check, &ModelCheck::finished, &loop, [&](const ModelCheckResult& r) {
            result = r;
            loop.quit();
        });
        check.start();
        loop.exec();
        checks.append({role, result.ok, result.message});
    }
    return checks;
}

QString spendLine(const QString& sessionDir) {
    QString error;
    const auto ledger = SpendLedger::open(sessionDir, &error);
    if (!ledger || ledger->entryCount() == 0)
        return {};
    const bool estimated = ledger->tokensEstimated();
    return u"llm calls: %1 attempts, %2%3 tokens%4, $%5 in this session"_s.arg(
        QString::number(ledger->entryCount()), estimated ? u"~"_s : QString(),
        QString::number(ledger->tokens()),
        estimated ? u" (partly estimated: characters / 4)"_s : QString(),
        QString::number(ledger->costUsd(), 'f', 4));
}

QString progressKey(const AgentProgress& progress) {
    return progress.role + QString::number(progress.version) + QString::number(progress.attempt) +
           progress.model;
}

ProgressLine::ProgressLine()
    : m_tty(::isatty(STDERR_FILENO) == 1) {
    m_ticker.setInterval(500);
    connect(&m_ticker, &QTimer::timeout, this, [this] { render(); });
}

void ProgressLine::show(const AgentProgress& progress) {
    // Sending lasts a moment on a working connection; a log line for it is noise.
    if (!m_tty && progress.state == AgentProgress::State::Sending)
        return;
    m_last = progress;
    m_since.start();
    const bool finalState = progress.state == AgentProgress::State::Done ||
                            progress.state == AgentProgress::State::Failed;
    const QString key = progressKey(progress);
    const bool changed = progress.state != m_printedState || key != m_printedKey;
    if (m_tty) {
        render();
        if (finalState) {
            std::fputs("\n", stderr);
            m_ticker.stop();
        } else if (!m_ticker.isActive()) {
            m_ticker.start();
        }
        m_printedState = progress.state;
        m_printedKey = key;
        return;
    }
    const bool due = progress.state == AgentProgress::State::Streaming &&
                     (!m_lastLine.isValid() || m_lastLine.elapsed() >= 5000);
    if (!changed && !due)
        return;
    m_printedState = progress.state;
    m_printedKey = key;
    m_lastLine.start();
    render();
}

void ProgressLine::render() {
    if (!m_last)
        return;
    AgentProgress shown = *m_last;
    const bool live =
        shown.state != AgentProgress::State::Done && shown.state != AgentProgress::State::Failed;
    if (live && m_tty) {
        shown.elapsedMs += m_since.elapsed();
        if (shown.state == AgentProgress::State::Retrying)
            shown.waitMs = std::max<qint64>(0, shown.waitMs - m_since.elapsed());
    }
    const QByteArray line = (u"  v%1 "_s.arg(shown.version) + shown.line()).toUtf8();
    if (m_tty) {
        std::fputs("\r\x1b[K", stderr);
        std::fputs(line.left(200).constData(), stderr);
    } else {
        std::fputs(line.constData(), stderr);
        std::fputs("\n", stderr);
    }
    std::fflush(stderr);
}

} // namespace kev::cli
