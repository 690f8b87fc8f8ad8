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
    return threadCpuUs() / 1000;
}

qint64 StallProbe::threadCpuUs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return qint64(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

void StallProbe::start() {
    m_delays.clear();
    m_worstEvents.clear();
    m_busiestEvents.clear();
    m_busiestCpu = 0;
    m_busiestDelay = 0;
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
    auto* timing = dynamic_cast<EventTimingApplication*>(QCoreApplication::instance());
    const QStringList events = timing && timing->isTiming() ? timing->takeGap() : QStringList();
    if (delay > m_worstDelay) {
        m_worstDelay = delay;
        m_worstCpu = cpu - m_lastCpu;
        m_worstEvents = events;
    }
    if (cpu - m_lastCpu > m_busiestCpu) {
        m_busiestCpu = cpu - m_lastCpu;
        m_busiestDelay = delay;
        m_busiestEvents = events;
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
           "over %5 s; the GUI thread's own longest work between two ticks: %6 ms"_s
               .arg(m_worstDelay)
               .arg(m_worstCpu)
               .arg(medianDelayMs(), 0, 'f', 0)
               .arg(m_delays.size())
               .arg(double(elapsedMs()) / 1000.0, 0, 'f', 1)
               .arg(m_busiestCpu);
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
    const qint64 cpuBefore = StallProbe::threadCpuUs();
    // Read before delivery: a deferred delete removes the receiver (the class name is static).
    const QEvent::Type type = event->type();
    const char* className = receiver->metaObject()->className();
    const QPointer<QObject> guard(receiver);
    const bool result = QApplication::notify(receiver, event);
    const qint64 cpuUs = StallProbe::threadCpuUs() - cpuBefore;
    const qint64 cpu = cpuUs / 1000;
    --m_depth;
    GapEntry& entry = m_gap[qMakePair(className, int(type))];
    entry.className = className;
    entry.type = int(type);
    ++entry.count;
    entry.cpuUs += cpuUs;
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

QStringList EventTimingApplication::takeGap(int top) {
    QVector<GapEntry> entries;
    entries.reserve(m_gap.size());
    for (const GapEntry& e : std::as_const(m_gap))
        entries.append(e);
    m_gap.clear();
    std::sort(entries.begin(), entries.end(),
              [](const GapEntry& a, const GapEntry& b) { return a.cpuUs > b.cpuUs; });
    QStringList lines;
    for (int i = 0; i < entries.size() && i < top; ++i) {
        const GapEntry& e = entries[i];
        const char* typeName =
            QMetaEnum::fromType<QEvent::Type>().valueToKey(static_cast<QEvent::Type>(e.type));
        lines << u"%1 × %2 → %3: %4 ms"_s.arg(e.count)
                     .arg(typeName ? QString::fromLatin1(typeName) : QString::number(e.type),
                          QString::fromLatin1(e.className))
                     .arg(double(e.cpuUs) / 1000.0, 0, 'f', 1);
    }
    return lines;
}

} // namespace kev
