#include "agenttextview.h"

#include <QLabel>
#include <QScrollBar>
#include <QTextBlock>
#include <QTextCursor>

namespace kev {

using namespace Qt::StringLiterals;

namespace {
// Enough to look live, few enough that the GUI thread stays idle during a fast stream.
constexpr int kFlushIntervalMs = 50;
// The view keeps the end of a long session's log; older text is of no use live.
constexpr int kMaxBlocks = 5000;
} // namespace

AgentTextView::AgentTextView(QWidget* parent)
    : QPlainTextEdit(parent) {
    setReadOnly(true);
    setMaximumBlockCount(kMaxBlocks);
    setLineWrapMode(QPlainTextEdit::WidgetWidth);
    setPlaceholderText(u"The agent's live output appears here."_s);
    m_flushTimer.setSingleShot(true);
    m_flushTimer.setInterval(kFlushIntervalMs);
    connect(&m_flushTimer, &QTimer::timeout, this, &AgentTextView::flush);
}

void AgentTextView::appendChunk(const QString& chunk) {
    m_pending += chunk;
    if (!m_flushTimer.isActive())
        m_flushTimer.start();
}

void AgentTextView::startTurn(const QString& header) {
    // Buffered like the chunks (a new version starts three turns at once). A blank line between
    // turns, whether or not the last reply ended its line; the document ends its text with a
    // newline exactly when its last block is empty.
    bool empty = false;
    bool endsLine = false;
    if (!m_pending.isEmpty())
        endsLine = m_pending.endsWith(u'\n');
    else if (document()->isEmpty())
        empty = true;
    else
        endsLine = document()->lastBlock().text().isEmpty();
    if (!empty)
        m_pending += endsLine ? u"\n"_s : u"\n\n"_s;
    m_pending += u"── "_s + header + u" ──\n"_s;
    if (!m_flushTimer.isActive())
        m_flushTimer.start();
}

void AgentTextView::showRecorded(const QString& role, int version,
                                 const QVector<AgentTurn>& turns) {
    clearText();
    int shown = 0;
    for (const AgentTurn& turn : turns) {
        if (turn.role != role)
            continue;
        QString header = u"%1, v%2 — %3"_s.arg(role).arg(version).arg(turn.backend);
        if (!turn.model.isEmpty())
            header += u" ("_s + turn.model + u')';
        if (turn.tokensIn + turn.tokensOut > 0)
            header += u", %1 + %2 tokens"_s.arg(turn.tokensIn).arg(turn.tokensOut);
        startTurn(header);
        if (!turn.prompt.isEmpty())
            m_pending += u"▶ asked:\n"_s + turn.prompt.trimmed() + u"\n\n"_s;
        m_pending += u"◀ answered:\n"_s +
                     (turn.reply.trimmed().isEmpty() ? u"(no text)"_s : turn.reply.trimmed()) +
                     u'\n';
        ++shown;
    }
    if (shown == 0)
        m_pending = u"(no %1 turn recorded for v%2)\n"_s.arg(role).arg(version);
    flush();
    moveCursor(QTextCursor::Start);
}

void AgentTextView::clearText() {
    m_flushTimer.stop();
    m_pending.clear();
    clear();
}

void AgentTextView::flush() {
    m_flushTimer.stop();
    if (m_pending.isEmpty())
        return;
    QScrollBar* bar = verticalScrollBar();
    const bool follow = bar->value() == bar->maximum();
    QTextCursor cursor(document());
    cursor.movePosition(QTextCursor::End);
    cursor.insertText(m_pending);
    m_pending.clear();
    if (follow)
        bar->setValue(bar->maximum());
    emit textAvailable();
}

void AgentTextView::setProgress(const AgentProgress& progress) {
    if (!m_progress) {
        m_progress = new QLabel(this);
        m_progress->setTextFormat(Qt::PlainText);
        m_progress->setContentsMargins(4, 1, 4, 1);
        m_progress->setAutoFillBackground(true);
        m_progress->setBackgroundRole(QPalette::AlternateBase);
        setViewportMargins(0, 0, 0, m_progress->sizeHint().height());
        m_progress->show();
    }
    m_progress->setText(u"v%1 "_s.arg(progress.version) + progress.line());
    m_progress->setToolTip(progress.detail);
    resizeEvent(nullptr);
}

QString AgentTextView::progressText() const {
    return m_progress ? m_progress->text() : QString();
}

void AgentTextView::resizeEvent(QResizeEvent* event) {
    if (event)
        QPlainTextEdit::resizeEvent(event);
    if (m_progress) {
        const QRect area = contentsRect();
        const int height = m_progress->sizeHint().height();
        m_progress->setGeometry(area.left(), area.bottom() - height + 1, area.width(), height);
    }
}

} // namespace kev
