// kevolve-cli's LLM flags: budgets, time-outs, retries and model options as flags (so that no
// option hides in an --agent-options file), --check before a run, and the live progress line of
// each agent call (--quiet turns it off).
#pragma once

#include "agentprogress.h"
#include "enginesettings.h"

#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

#include <optional>

namespace kev::cli {

extern const char* const kLlmUsage;

struct LlmOptions {
    QCommandLineOption quiet{QStringLiteral("quiet"), QStringLiteral("no progress lines")};
    QCommandLineOption check{QStringLiteral("check"), QStringLiteral("check the endpoints")};
    QCommandLineOption tokenBudget{QStringLiteral("token-budget"), QStringLiteral("tokens"),
                                   QStringLiteral("N")};
    QCommandLineOption costBudget{QStringLiteral("cost-budget"), QStringLiteral("US dollars"),
                                  QStringLiteral("USD")};
    QCommandLineOption connectTimeout{QStringLiteral("connect-timeout"), QStringLiteral("s"),
                                      QStringLiteral("S")};
    QCommandLineOption firstTokenTimeout{QStringLiteral("first-token-timeout"), QStringLiteral("s"),
                                         QStringLiteral("S")};
    QCommandLineOption stallTimeout{QStringLiteral("stall-timeout"), QStringLiteral("s"),
                                    QStringLiteral("S")};
    QCommandLineOption totalTimeout{QStringLiteral("total-timeout"), QStringLiteral("s"),
                                    QStringLiteral("S")};
    QCommandLineOption maxRetries{QStringLiteral("max-retries"), QStringLiteral("n"),
                                  QStringLiteral("N")};
    QCommandLineOption maxTokens{QStringLiteral("max-tokens"), QStringLiteral("n"),
                                 QStringLiteral("N")};
    QCommandLineOption contextTokens{QStringLiteral("context-tokens"), QStringLiteral("n"),
                                     QStringLiteral("N")};
    QCommandLineOption temperature{QStringLiteral("temperature"), QStringLiteral("t"),
                                   QStringLiteral("T")};
    QCommandLineOption fallbackModel{QStringLiteral("fallback-model"), QStringLiteral("model"),
                                     QStringLiteral("M")};
    QCommandLineOption numCtx{QStringLiteral("num-ctx"), QStringLiteral("n"), QStringLiteral("N")};
    QCommandLineOption keepAlive{QStringLiteral("keep-alive"), QStringLiteral("duration"),
                                 QStringLiteral("D")};

    QList<QCommandLineOption> all() const;
};

// Applies the flags to the settings, then reads every llm role's options as the agents will, so
// that a bad value is reported now, naming the option, before a session folder exists. Returns an
// error message, or empty.
QString applyLlmOptions(const QCommandLineParser& parser, const LlmOptions& options,
                        EngineSettings* settings);

// --check: for each distinct endpoint and model of the llm roles, GET /models; prints one line
// each and returns true when all are usable.
bool checkEndpoints(const EngineSettings& settings, bool json);

// What the session's model calls cost, every attempt of every run (llm_attempts.jsonl); empty
// when the session made none.
QString spendLine(const QString& sessionDir);

// The live line of each agent call on stderr: rewritten in place on a terminal, one line per
// change of state otherwise; JSON events with --json.
class ProgressPrinter : public QObject {
public:
    ProgressPrinter(bool json, QObject* parent = nullptr);
    void show(const AgentProgress& progress);
    // Ends a line being rewritten before other output.
    void clearLine();

private:
    void render();

    bool m_json;
    bool m_tty;
    std::optional<AgentProgress> m_last;
    AgentProgress::State m_printedState = AgentProgress::State::Sending;
    QString m_printedKey;
    QElapsedTimer m_since;    // since m_last arrived, to keep the elapsed time ticking
    QElapsedTimer m_lastLine; // non-terminal output: at most one streaming line per 5 s
    QTimer m_ticker;
    bool m_lineOpen = false;
};

} // namespace kev::cli
