// kevolve-cli run/resume: drives one Engine run from the terminal, hands its events to the
// printer, holds the step-mode gates, and turns the run's end into an exit code.
#pragma once

#include "engine.h"
#include "printer.h"

#include <QByteArray>
#include <QObject>

class QSocketNotifier;

namespace kev::cli {

class Driver : public QObject {
public:
    Driver(Printer& printer, bool step);

    Engine& engine() { return m_engine; }

    // Hands the live state of each agent call to the printer (not with --quiet).
    void showProgress();

    // Ctrl-C: the first cancels and saves the completed steps, the second leaves at once.
    void interrupt();

    // Runs the event loop until the engine ends, with SIGINT and SIGTERM routed to interrupt().
    int exec();

private:
    void onGate(const GateRequest& request);
    void prompt();
    void onInput();
    void answer();
    void edit(bool plan, int version);
    void onFinished(Engine::StopReason reason, const QString& message);
    void onFailed(Engine::Failure failure, const QString& message);

    Engine m_engine;
    Printer& m_printer;
    bool m_step = false;
    bool m_interrupted = false;
    QString m_dir;
    // What the agents' model calls cost so far, this run and the steps before it.
    qint64 m_sessionTokens = 0;
    double m_sessionCost = 0;
    GateRequest m_gate;
    QSocketNotifier* m_stdin = nullptr;
    QByteArray m_input;
    bool m_inputClosed = false;
};

} // namespace kev::cli
