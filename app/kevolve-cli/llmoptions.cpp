#include "llmoptions.h"

#include "keystore.h"
#include "llm/llmsettings.h"
#include "llm/modelcheck.h"
#include "spendledger.h"

#include <QCoreApplication>
#include <QEventLoop>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>

#include <algorithm>
#include <QTextStream>

#include <cstdio>
#include <unistd.h>

using namespace Qt::Literals::StringLiterals;

namespace kev::cli {

const char* const kLlmUsage =
    R"(Options of run and resume for the llm backend (every role it plays):
  --token-budget N            stop the session once N tokens are spent (every call of every run
                              of the session, failed ones too; checked before each request)
  --cost-budget USD           the same in US dollars (built-in prices of the OpenAI and DeepSeek
                              models; "prices" in --agent-options overrides them)
  --connect-timeout S         default 10
  --first-token-timeout S     from sending a request to its first token (default 60)
  --stall-timeout S           longest silence once tokens flow (default 120)
  --total-timeout S           one attempt in all (default 1800)
  --max-retries N             default 3; a server that sends no token is retried once, so a
                              dead server fails in about 2 minutes
  --max-tokens N, --context-tokens N, --temperature T
  --fallback-model M          asked when the model is missing or keeps failing
  --num-ctx N, --keep-alive D Ollama: the context it loads the model with (default: the
                              context tokens), how long it keeps it loaded ("30m", "-1")
  --check                     ask each endpoint for its models (GET /v1/models): is the server
                              up, does the key work, is the model served; then exit (0 or 5)
  --quiet                     no progress lines
Keys come from $<PRESET>_API_KEY (e.g. OPENAI_API_KEY), else $KEVOLVE_API_KEY for presets that
need a key and for custom; local presets (ollama, vllm, llamacpp) get only their own variable.
The options of an --agent-options file (one object, or one per role):
)";

QList<QCommandLineOption> LlmOptions::all() const {
    return {quiet,         check,        tokenBudget, costBudget, connectTimeout, firstTokenTimeout,
            stallTimeout,  totalTimeout, maxRetries,  maxTokens,  contextTokens,  temperature,
            fallbackModel, numCtx,       keepAlive};
}

namespace {

struct Flag {
    const QCommandLineOption* option;
    QString key;
    enum class Kind { Seconds, Count, Number, Text } kind;
};

QString flagName(const QCommandLineOption& option) {
    return u"--"_s + option.names().constFirst();
}

} // namespace

QString applyLlmOptions(const QCommandLineParser& p, const LlmOptions& o, EngineSettings* s) {
    bool ok = true;
    if (p.isSet(o.tokenBudget)) {
        s->tokenBudget = p.value(o.tokenBudget).toLongLong(&ok);
        if (!ok || s->tokenBudget < 0)
            return u"--token-budget: expected a number of tokens (0 = none), got \"%1\""_s.arg(
                p.value(o.tokenBudget));
    }
    if (p.isSet(o.costBudget)) {
        QString text = p.value(o.costBudget);
        if (text.startsWith(u'$'))
            text.remove(0, 1);
        s->costBudgetUsd = text.toDouble(&ok);
        if (!ok || s->costBudgetUsd < 0)
            return u"--cost-budget: expected US dollars (0 = none), got \"%1\""_s.arg(
                p.value(o.costBudget));
    }
    const QList<Flag> flags = {
        {&o.connectTimeout, u"connect_timeout_s"_s, Flag::Kind::Seconds},
        {&o.firstTokenTimeout, u"first_token_timeout_s"_s, Flag::Kind::Seconds},
        {&o.stallTimeout, u"stall_timeout_s"_s, Flag::Kind::Seconds},
        {&o.totalTimeout, u"total_timeout_s"_s, Flag::Kind::Seconds},
        {&o.maxRetries, u"max_retries"_s, Flag::Kind::Count},
        {&o.maxTokens, u"max_tokens"_s, Flag::Kind::Count},
        {&o.contextTokens, u"context_tokens"_s, Flag::Kind::Count},
        {&o.temperature, u"temperature"_s, Flag::Kind::Number},
        {&o.fallbackModel, u"fallback_model"_s, Flag::Kind::Text},
        {&o.numCtx, u"num_ctx"_s, Flag::Kind::Count},
        {&o.keepAlive, u"keep_alive"_s, Flag::Kind::Text},
    };
    const QList<std::pair<QString, QJsonObject*>> roles = {
        {s->plannerBackend, &s->plannerOptions},
        {s->coderBackend, &s->coderOptions},
        {s->reviewerBackend, &s->reviewerOptions}};
    for (const Flag& flag : flags) {
        if (!p.isSet(*flag.option))
            continue;
        const QString text = p.value(*flag.option);
        QJsonValue value;
        switch (flag.kind) {
        case Flag::Kind::Seconds:
        case Flag::Kind::Number: {
            const double number = text.toDouble(&ok);
            if (!ok || number < 0)
                return u"%1: expected a number%2, got \"%3\""_s.arg(
                    flagName(*flag.option),
                    flag.kind == Flag::Kind::Seconds ? u" of seconds"_s : QString(), text);
            value = number;
            break;
        }
        case Flag::Kind::Count: {
            const int number = text.toInt(&ok);
            if (!ok || number < 0)
                return u"%1: expected a whole number, got \"%2\""_s.arg(flagName(*flag.option),
                                                                        text);
            value = number;
            break;
        }
        case Flag::Kind::Text:
            value = text;
            break;
        }
        bool used = false;
        for (const auto& [backend, options] : roles) {
            if (backend != u"llm"_s)
                continue;
            options->insert(flag.key, value);
            used = true;
        }
        if (!used)
            return u"%1: no role is played by the llm backend (add --backend llm)"_s.arg(
                flagName(*flag.option));
    }
    static const QStringList roleNames = {u"planner"_s, u"coder"_s, u"reviewer"_s};
    for (qsizetype i = 0; i < roles.size(); ++i) {
        if (roles[i].first != u"llm"_s)
            continue;
        QString error;
        if (!LlmSettings::fromOptions(*roles[i].second, roleNames[i], &error))
            return u"the llm %1's options: %2"_s.arg(roleNames[i], error);
    }
    return {};
}

bool checkEndpoints(const EngineSettings& settings, bool json) {
    QTextStream out(stdout);
    auto keys = std::make_shared<EnvironmentKeyStore>();
    QSet<QString> seen;
    bool allOk = true;
    bool any = false;
    for (const QString& role : {u"planner"_s, u"coder"_s, u"reviewer"_s}) {
        const AgentSettings agent = settings.agentSettings(role);
        if (agent.backend != u"llm"_s)
            continue;
        QString error;
        const auto llm = LlmSettings::fromOptions(agent.options, role, &error);
        ModelCheckResult result;
        if (!llm) {
            result.message = error;
        } else {
            const QString key = llm->baseUrl + u'\n' + llm->model + u'\n' + llm->fallbackModel +
                                u'\n' + llm->keyService;
            if (seen.contains(key))
                continue;
            seen.insert(key);
            ModelCheck check(*llm, keys);
            QEventLoop loop;
            QObject::connect(&check, &ModelCheck::finished, &loop, [&](const ModelCheckResult& r) {
                result = r;
                loop.quit();
            });
            check.start();
            loop.exec();
        }
        any = true;
        allOk = allOk && result.ok;
        if (json)
            out << QString::fromUtf8(QJsonDocument(QJsonObject{{u"event"_s, u"check"_s},
                                                               {u"role"_s, role},
                                                               {u"ok"_s, result.ok},
                                                               {u"message"_s, result.message}})
                                         .toJson(QJsonDocument::Compact))
                << '\n';
        else
            out << "check " << role << ": " << (result.ok ? "ok, " : "FAILED, ") << result.message
                << '\n';
        out.flush();
    }
    if (!any) {
        out << "check: no role is played by the llm backend (add --backend llm)\n";
        return false;
    }
    return allOk;
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

ProgressPrinter::ProgressPrinter(bool json, QObject* parent)
    : QObject(parent)
    , m_json(json)
    , m_tty(!json && ::isatty(STDERR_FILENO) == 1) {
    m_ticker.setInterval(500);
    connect(&m_ticker, &QTimer::timeout, this, [this] { render(); });
}

void ProgressPrinter::show(const AgentProgress& progress) {
    // Sending lasts a moment on a working connection; a log line for it is noise.
    if (!m_tty && progress.state == AgentProgress::State::Sending)
        return;
    m_last = progress;
    m_since.start();
    const bool finalState = progress.state == AgentProgress::State::Done ||
                            progress.state == AgentProgress::State::Failed;
    const QString key = progress.role + QString::number(progress.version) +
                        QString::number(progress.attempt) + progress.model;
    const bool changed = progress.state != m_printedState || key != m_printedKey;
    if (m_json) {
        if (!changed)
            return;
        m_printedState = progress.state;
        m_printedKey = key;
        QTextStream out(stdout);
        out << QString::fromUtf8(
                   QJsonDocument(
                       QJsonObject{{u"event"_s, u"agent_progress"_s},
                                   {u"role"_s, progress.role},
                                   {u"model"_s, progress.model},
                                   {u"version"_s, progress.version},
                                   {u"state"_s, AgentProgress::stateName(progress.state)},
                                   {u"attempt"_s, progress.attempt},
                                   {u"max_attempts"_s, progress.maxAttempts},
                                   {u"tokens"_s, progress.tokens},
                                   {u"tokens_estimated"_s, progress.tokensEstimated},
                                   {u"elapsed_s"_s, static_cast<double>(progress.elapsedMs) / 1e3},
                                   {u"wait_s"_s, static_cast<double>(progress.waitMs) / 1e3},
                                   {u"detail"_s, progress.detail}})
                       .toJson(QJsonDocument::Compact))
            << '\n';
        return;
    }
    if (m_tty) {
        render();
        if (finalState) {
            std::fputs("\n", stderr);
            m_lineOpen = false;
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

void ProgressPrinter::render() {
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
        m_lineOpen = true;
    } else {
        std::fputs(line.constData(), stderr);
        std::fputs("\n", stderr);
    }
    std::fflush(stderr);
}

void ProgressPrinter::clearLine() {
    if (m_lineOpen) {
        std::fputs("\r\x1b[K", stderr);
        std::fflush(stderr);
        m_lineOpen = false;
    }
}

} // namespace kev::cli
