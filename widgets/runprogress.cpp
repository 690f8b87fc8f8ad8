#include "runprogress.h"

#include <QHBoxLayout>
#include <QProgressBar>

namespace kev {

using namespace Qt::StringLiterals;

namespace {
QString clockText(qint64 ms) {
    const qint64 s = ms / 1000;
    if (s >= 3600)
        return u"%1:%2:%3"_s.arg(s / 3600)
            .arg((s / 60) % 60, 2, 10, QLatin1Char('0'))
            .arg(s % 60, 2, 10, QLatin1Char('0'));
    return u"%1:%2"_s.arg(s / 60, 2, 10, QLatin1Char('0')).arg(s % 60, 2, 10, QLatin1Char('0'));
}
} // namespace

RunProgress::RunProgress(QWidget* parent)
    : QWidget(parent)
    , m_bar(new QProgressBar(this)) {
    setObjectName(u"runProgress"_s);
    m_bar->setObjectName(u"runProgressBar"_s);
    m_bar->setTextVisible(true);
    m_bar->setMinimumWidth(460);
    m_bar->setToolTip(u"Iterations of this run against its limit, what the engine does now, and "
                      "the time since the run started"_s);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_bar);
    // Once a second is enough for a clock and costs nothing between ticks.
    m_tick.setInterval(1000);
    connect(&m_tick, &QTimer::timeout, this, &RunProgress::update);
    reset();
}

void RunProgress::begin(int maxIterations) {
    m_max = std::max(1, maxIterations);
    m_done = 0;
    m_stage = u"starting"_s;
    m_harnessStage.clear();
    m_ended.clear();
    m_running = true;
    m_clock.start();
    m_tick.start();
    show();
    update();
}

void RunProgress::setIterationsDone(int done) {
    m_done = std::min(done, m_max);
    m_harnessStage.clear();
    update();
}

void RunProgress::setStage(const QString& stage) {
    if (stage != m_stage)
        m_harnessStage.clear();
    m_stage = stage;
    update();
}

void RunProgress::setHarnessStage(const QString& stage) {
    m_harnessStage = stage;
    update();
}

void RunProgress::end(const QString& why) {
    if (!m_running)
        return;
    m_running = false;
    m_tick.stop();
    m_endedMs = m_clock.elapsed();
    m_ended = why;
    update();
}

void RunProgress::reset() {
    m_running = false;
    m_tick.stop();
    m_max = 0;
    m_done = 0;
    m_stage.clear();
    m_harnessStage.clear();
    m_ended.clear();
    hide();
}

QString RunProgress::text() const {
    if (m_max == 0)
        return {};
    const qint64 ms = m_running ? m_clock.elapsed() : m_endedMs;
    if (!m_running)
        return u"%1 of %2 iterations · %3 · %4"_s.arg(m_done).arg(m_max).arg(m_ended,
                                                                             clockText(ms));
    QString stage = m_stage;
    if (!m_harnessStage.isEmpty())
        stage += u" ("_s + m_harnessStage + u')';
    return u"Iteration %1 of %2 · %3 · %4"_s.arg(std::min(m_done + 1, m_max))
        .arg(m_max)
        .arg(stage, clockText(ms));
}

void RunProgress::update() {
    m_bar->setRange(0, std::max(1, m_max));
    m_bar->setValue(m_done);
    m_bar->setFormat(text());
}

} // namespace kev
