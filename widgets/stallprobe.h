// Measures how long the GUI thread's event loop stays away: a timer asks to run every few
// milliseconds, and the time it came late is the delay a person would feel as a stall. With an
// EventTimingApplication it also names the slowest events (receiver and event type), which is how
// a stall is traced to the code that causes it. Used by `kevolve --debug-stall-probe` and by
// tests/widgets/bench_workbench; never by a pass/fail test (a busy machine moves the figures).
#pragma once

#include <QApplication>
#include <QElapsedTimer>
#include <QHash>
#include <QPair>
#include <QStringList>
#include <QObject>
#include <QString>
#include <QTimer>
#include <QVector>

namespace kev {

class StallProbe : public QObject {
    Q_OBJECT
public:
    explicit StallProbe(int intervalMs = 5, QObject* parent = nullptr);

    void start();
    void stop();
    bool isRunning() const { return m_timer.isActive(); }

    // The worst time the timer came late, in milliseconds (wall clock: includes time the OS gave
    // other processes).
    qint64 worstDelayMs() const { return m_worstDelay; }
    // CPU time the GUI thread itself spent inside the worst gap (what our code did there).
    qint64 worstCpuMs() const { return m_worstCpu; }
    // With an EventTimingApplication: the events the GUI thread ran inside the worst gap, grouped
    // by event type and receiver class, costliest first ("412 × MetaCall → kev::AgentTextView:
    // 61 ms").
    QStringList worstGapEvents() const { return m_worstEvents; }
    // The gap in which the GUI thread itself worked longest (CPU time, whatever the machine's
    // load), and the events it ran there: the figure our own code is responsible for.
    qint64 busiestGapCpuMs() const { return m_busiestCpu; }
    qint64 busiestGapDelayMs() const { return m_busiestDelay; }
    QStringList busiestGapEvents() const { return m_busiestEvents; }
    double medianDelayMs() const;
    int samples() const { return int(m_delays.size()); }
    qint64 elapsedMs() const { return m_clock.isValid() ? m_clock.elapsed() : 0; }
    // One line: "worst event-loop delay 12 ms (GUI-thread CPU 9 ms), median 0 ms, 4210 samples
    // over 21.3 s".
    QString summary() const;

    // CPU time of the calling thread, in milliseconds and microseconds.
    static qint64 threadCpuMs();
    static qint64 threadCpuUs();

private:
    void tick();

    QTimer m_timer;
    QElapsedTimer m_clock;
    int m_intervalMs;
    qint64 m_lastWall = 0;
    qint64 m_lastCpu = 0;
    qint64 m_worstDelay = 0;
    qint64 m_worstCpu = 0;
    QVector<qint64> m_delays;
    QStringList m_worstEvents;
    qint64 m_busiestCpu = 0;
    qint64 m_busiestDelay = 0;
    QStringList m_busiestEvents;
};

// A QApplication that times each event it delivers on the GUI thread (outermost events only: a
// nested event loop's events are inside them) and keeps the slowest, by GUI-thread CPU time.
class EventTimingApplication : public QApplication {
public:
    struct SlowEvent {
        qint64 cpuMs = 0;
        qint64 wallMs = 0;
        // "QMetaCallEvent → kev::MainWindow 'name'", "Paint → QChartView", ...
        QString what;
    };

    EventTimingApplication(int& argc, char** argv);

    void setTiming(bool on);
    bool isTiming() const { return m_timing; }
    // The slowest events since the last reset, slowest first (at most kKept).
    QVector<SlowEvent> slowest() const { return m_slowest; }
    void resetTiming() { m_slowest.clear(); }
    static constexpr int kKept = 8;

    bool notify(QObject* receiver, QEvent* event) override;

    // The events since the last call, grouped by type and receiver class, costliest first; a
    // StallProbe calls it on every tick, so it describes one gap of the event loop.
    QStringList takeGap(int top = 6);

private:
    struct GapEntry {
        const char* className = nullptr;
        int type = 0;
        int count = 0;
        qint64 cpuUs = 0;
    };
    QVector<SlowEvent> m_slowest;
    QHash<QPair<const char*, int>, GapEntry> m_gap;
    int m_depth = 0;
    bool m_timing = false;
};

} // namespace kev
