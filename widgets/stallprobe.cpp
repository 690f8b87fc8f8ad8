#include "stallprobe.h"

#include <QEvent>
#include <QMetaEnum>
#include <QPointer>
#include <QThread>

#include <algorithm>
#include <ctime>

namespace kev {

using namespace Qt::StringLiterals;

StallProbe::StallProbe(int intervalMs, QObject* parent)
    : QObject(parent)
    , m_intervalMs(intervalMs) {
    m_timer.setInterval(intervalMs);
    m_timer.setTimerType(Qt::PreciseTimer);
    connect(&m_timer, &QTimer::timeout, this, &StallProbe::tick);
}

qint64 StallProbe::threadCpuMs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return qint64(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

void StallProbe::start() {
    m_delays.clear();
    m_worstDelay = 0;
    m_worstCpu = 0;
    m_clock.start();
    m_lastWall = 0;
    m_lastCpu = threadCpuMs();
    m_timer.start();
}

void StallProbe::stop() {
    m_timer.stop();
}

void StallProbe::tick() {
    const qint64 wall = m_clock.elapsed();
    const qint64 cpu = threadCpuMs();
    const qint64 delay = std::max<qint64>(0, wall - m_lastWall - m_intervalMs);
    m_delays.append(delay);
    if (delay > m_worstDelay) {
        m_worstDelay = delay;
        m_worstCpu = cpu - m_lastCpu;
    }
    m_lastWall = wall;
    m_lastCpu = cpu;
}

double StallProbe::medianDelayMs() const {
    if (m_delays.isEmpty())
        return 0;
    QVector<qint64> sorted = m_delays;
    std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
    return double(sorted[sorted.size() / 2]);
}

QString StallProbe::summary() const {
    return u"worst event-loop delay %1 ms (GUI-thread CPU %2 ms in it), median %3 ms, %4 samples "
           "over %5 s"_s.arg(m_worstDelay)
               .arg(m_worstCpu)
               .arg(medianDelayMs(), 0, 'f', 0)
               .arg(m_delays.size())
               .arg(double(elapsedMs()) / 1000.0, 0, 'f', 1);
}

EventTimingApplication::EventTimingApplication(int& argc, char** argv)
    : QApplication(argc, argv) {}

void EventTimingApplication::setTiming(bool on) {
    m_timing = on;
}

bool EventTimingApplication::notify(QObject* receiver, QEvent* event) {
    if (!m_timing || m_depth > 0 || QThread::currentThread() != thread())
        return QApplication::notify(receiver, event);
    ++m_depth;
    QElapsedTimer wall;
    wall.start();
    const qint64 cpuBefore = StallProbe::threadCpuMs();
    // Read before delivery: a deferred delete removes the receiver (the class name is static).
    const QEvent::Type type = event->type();
    const char* className = receiver->metaObject()->className();
    const QPointer<QObject> guard(receiver);
    const bool result = QApplication::notify(receiver, event);
    const qint64 cpu = StallProbe::threadCpuMs() - cpuBefore;
    --m_depth;
    if (m_slowest.size() < kKept || cpu > m_slowest.last().cpuMs) {
        const char* typeName = QMetaEnum::fromType<QEvent::Type>().valueToKey(type);
        QString what = (typeName ? QString::fromLatin1(typeName) : QString::number(int(type))) +
                       u" → "_s + QString::fromLatin1(className);
        if (guard && !guard->objectName().isEmpty())
            what += u" '"_s + guard->objectName() + u'\'';
        m_slowest.append({cpu, wall.elapsed(), what});
        std::sort(m_slowest.begin(), m_slowest.end(),
                  [](const SlowEvent& a, const SlowEvent& b) { return a.cpuMs > b.cpuMs; });
        if (m_slowest.size() > kKept)
            m_slowest.removeLast();
    }
    return result;
}

} // namespace kev
