// kevolve-cli run/resume with the llm backend: what the terminal learns about the model calls.
// --check asks each endpoint before a run, the spend line sums every attempt of the session, and
// the text face's live line shows each call as it goes (--quiet turns it off). The flags
// themselves are declared in options.h and applied in runoptions.cpp.
#pragma once

#include "agentprogress.h"
#include "enginesettings.h"

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QTimer>
#include <QVector>

#include <optional>

namespace kev::cli {

// One endpoint and model of an llm role, as --check found it.
struct EndpointCheck {
    QString role;
    bool ok = false;
    QString message;
};

// --check: for each distinct endpoint and model of the llm roles, GET /models. Empty when no
// role is played by the llm backend.
QVector<EndpointCheck> checkEndpoints(const EngineSettings& settings);

// What the session's model calls cost, every attempt of every run (llm_attempts.jsonl); empty
// when the session made none.
QString spendLine(const QString& sessionDir);

// The text face's live line of each agent call, on stderr: rewritten in place on a terminal,
// one line per change of state otherwise (and a streaming line at most every 5 s).
class ProgressLine : public QObject {
public:
    ProgressLine();
    void show(const AgentProgress& progress);

private:
    void render();

    bool m_tty;
    std::optional<AgentProgress> m_last;
    AgentProgress::State m_printedState = AgentProgress::State::Sending;
    QString m_printedKey;
    QElapsedTimer m_since;    // since m_last arrived, to keep the elapsed time ticking
    QElapsedTimer m_lastLine; // non-terminal output: at most one streaming line per 5 s
    QTimer m_ticker;
};

// Which call a progress report is about: a new key, or a new state, is worth a line.
QString progressKey(const AgentProgress& progress);

} // namespace kev::cli
