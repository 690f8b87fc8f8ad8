// The live text of one agent (a streamed LLM reply, or the built-in agent's notes). Chunks are
// buffered and flushed on a timer, so a fast stream costs one repaint per tick, not one per token.
#pragma once

#include "core/agentturn.h"
#include "core/agentprogress.h"

#include <QPlainTextEdit>
#include <QTimer>
#include <QVector>

class QLabel;

namespace kev {

class AgentTextView : public QPlainTextEdit {
    Q_OBJECT
public:
    explicit AgentTextView(QWidget* parent = nullptr);

    void appendChunk(const QString& chunk);
    // Starts a new turn: a header line, then the chunks that follow.
    void startTurn(const QString& header);
    // A recorded version's turns of one role (prompt and reply, from logs/run_vN.json), in place
    // of the live text.
    void showRecorded(const QString& role, int version, const QVector<kev::AgentTurn>& turns);
    // Drops the text and anything buffered (a new session).
    void clearText();
    // Writes what is buffered now (tests and the end of a turn).
    void flush();
    // The live line of the agent's model call under the text (attempt, tokens, elapsed, waits);
    // it stays, showing "done" or "failed", until the next call.
    void setProgress(const kev::AgentProgress& progress);
    QString progressText() const;

protected:
    void resizeEvent(QResizeEvent* event) override;

signals:
    // Emitted once per flush that added text, so a panel can raise its live tab.
    void textAvailable();

private:
    QString m_pending;
    QTimer m_flushTimer;
    QLabel* m_progress = nullptr;
};

} // namespace kev
