#include "agenttextview.h"

#include <QLabel>
#include <QScrollBar>
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
    flush();
    if (!document()->isEmpty())
        m_pending += u"\n"_s;
    m_pending += u"── "_s + header + u" ──\n"_s;
    flush();
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
