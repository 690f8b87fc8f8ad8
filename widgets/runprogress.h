// The run's progress in the status bar, as a profiler shows a long capture: "Iteration 3 of 10 ·
// Evaluating v5 on the GPU (time) · 01:23", with a bar over the iterations of this run.
#pragma once

#include <QElapsedTimer>
#include <QTimer>
#include <QWidget>

class QLabel;
class QProgressBar;

namespace kev {

class RunProgress : public QWidget {
    Q_OBJECT
public:
    explicit RunProgress(QWidget* parent = nullptr);

    // A run starts: maxIterations of this run (the session's limit counts from a resume).
    void begin(int maxIterations);
    // The engine finished an iteration of this run (1-based count of this run).
    void setIterationsDone(int done);
    // What is happening now: the engine's state in words, and a harness stage ("compile", "time").
    void setStage(const QString& stage);
    void setHarnessStage(const QString& stage);
    // The run ended: the bar stays full or where it stopped, with why.
    void end(const QString& why);
    void reset();

    bool isRunning() const { return m_running; }
    int iterationsDone() const { return m_done; }
    int maxIterations() const { return m_max; }
    // The text the bar shows.
    QString text() const;
    QProgressBar* bar() const { return m_bar; }

private:
    void update();

    QProgressBar* m_bar;
    QElapsedTimer m_clock;
    QTimer m_tick;
    QString m_stage;
    QString m_harnessStage;
    QString m_ended;
    qint64 m_endedMs = 0;
    int m_max = 0;
    int m_done = 0;
    bool m_running = false;
};

} // namespace kev
