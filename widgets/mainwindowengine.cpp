// How MainWindow follows the engine: each signal updates the panels, the timeline, the chart, the
// status bar and the run's progress. Everything arrives queued on the GUI thread; nothing here
// waits for the engine.
#include "mainwindow.h"

#include "agenttextview.h"
#include "codepanel.h"
#include "enginetext.h"
#include "honestyview.h"
#include "iterationtimeline.h"
#include "metricsview.h"
#include "performancechart.h"
#include "reviewpanel.h"
#include "runprogress.h"
#include "strategypanel.h"

#include <QAction>
#include <QLabel>
#include <QStatusBar>

namespace kev {

using namespace Qt::StringLiterals;

namespace {

bool isActive(Engine::State state) {
    return state != Engine::State::Idle && state != Engine::State::Finished &&
           state != Engine::State::Failed;
}

// The agent whose turn a state starts ("" for states that start none).
QString roleOf(Engine::State state) {
    switch (state) {
    case Engine::State::Planning:
        return u"planner"_s;
    case Engine::State::Coding:
        return u"coder"_s;
    case Engine::State::Reviewing:
        return u"reviewer"_s;
    default:
        return {};
    }
}

} // namespace

void MainWindow::connectEngine() {
    connect(m_engine, &Engine::stateChanged, this,
            [this](Engine::State state, const QString& detail) {
                const bool wasRunning = m_running;
                m_running = isActive(state);
                if (state == Engine::State::Starting) {
                    // A new run: nothing of the last one's outcome stays on screen.
                    statusBar()->clearMessage();
                    m_progressLabel->clear();
                    m_review->clearProgress();
                    m_iterationsThisRun = 0;
                }
                if (state == Engine::State::Finished || state == Engine::State::Failed) {
                    m_stateLabel->setText(EngineText::state(state, QString()));
                } else {
                    m_stateLabel->setText(EngineText::state(state, detail));
                    m_runProgress->setStage(EngineText::state(state, detail));
                }
                if (const QString role = roleOf(state); !role.isEmpty())
                    m_turnPending.insert(role, true);
                if (wasRunning != m_running)
                    updateActions();
            });
    connect(m_engine, &Engine::sessionOpened, this, &MainWindow::setSession);
    connect(m_engine, &Engine::planAvailable, this, [this](int version, const Strategy& strategy) {
        Candidate& c = m_live[version];
        c.version = version;
        c.strategy = strategy;
        m_liveVersion = version;
        if (m_follow->isChecked() && m_gate->editing() == GateBar::Editing::None) {
            if (m_shownVersion != version) {
                m_code->clear();
                m_review->clear();
                m_honesty->clear();
            }
            m_shownVersion = version;
            m_strategy->setStrategy(version, strategy);
        }
    });
    connect(m_engine, &Engine::codeAvailable, this,
            [this](int version, const QString& source, int attempt) {
                Candidate& c = m_live[version];
                c.version = version;
                c.source = source;
                c.codeAttempts = attempt;
                m_liveVersion = version;
                if (m_follow->isChecked() && m_gate->editing() == GateBar::Editing::None) {
                    m_shownVersion = version;
                    m_code->setSource(version, source, attempt);
                }
            });
    connect(m_engine, &Engine::reportAvailable, this,
            [this](int version, const EvaluationReport& report) {
                m_live[version].version = version;
                m_live[version].report = report;
                m_metrics->addReport(version, report);
                m_chart->setRooflineBound(report.bound);
                if (m_follow->isChecked() && m_gate->editing() == GateBar::Editing::None) {
                    m_shownVersion = version;
                    m_code->setCompileLog(report.compileLog);
                    m_review->setReport(version, report);
                    m_honesty->setReport(version, report);
                }
            });
    connect(m_engine, &Engine::reviewAvailable, this,
            [this](int version, const ReviewFeedback& review) {
                m_live[version].version = version;
                m_live[version].review = review;
                if (m_follow->isChecked() && m_gate->editing() == GateBar::Editing::None)
                    m_review->setReview(version, review);
            });
    connect(m_engine, &Engine::gateRequested, this, &MainWindow::onGateRequested);
    connect(m_engine, &Engine::stepAvailable, this, [this](const IterationSummary& step) {
        m_timeline->addStep(step);
        m_chart->addStep(step);
        m_storeStale = true;
        m_live.remove(step.version);
        updateDiffVersions();
        updateActions();
    });
    connect(m_engine, &Engine::iterationFinished, this, [this](int, int, int best) {
        m_bestVersion = best;
        m_timeline->setBestVersion(best);
        m_runProgress->setIterationsDone(++m_iterationsThisRun);
        updateDiffVersions();
    });
    connect(m_engine, &Engine::agentTextAvailable, this,
            [this](const QString& role, const QString& chunk, int version) {
                AgentTextView* view = role == u"planner" ? m_strategy->agentView()
                                      : role == u"coder" ? m_code->agentView()
                                                         : m_review->agentView();
                // A new version, or the same agent asked again (a replan, a compile fix): a new
                // turn with its own header, never run together with the last.
                if (m_turnVersion.value(role) != version || m_turnPending.value(role)) {
                    m_turnVersion.insert(role, version);
                    m_turnPending.insert(role, false);
                    view->startTurn(u"%1, v%2"_s.arg(role).arg(version));
                }
                view->appendChunk(chunk);
            });
    connect(
        m_engine, &Engine::progressAvailable, this,
        [this](int version, const QString& stage, const QString& message, double fraction) {
            m_progressLabel->setText(version > 0 ? u"v%1 %2: %3"_s.arg(version).arg(stage, message)
                                                 : stage + u": "_s + message);
            if (version > 0)
                m_runProgress->setHarnessStage(stage);
            if (m_follow->isChecked() && version == m_shownVersion && !m_live.value(version).report)
                m_review->setProgress(version, stage, message, fraction);
        });
    connect(m_engine, &Engine::finished, this,
            [this](Engine::StopReason reason, const QString& message) {
                m_running = false;
                m_pendingGate.reset();
                m_gate->close();
                m_strategy->setEditing(false);
                m_code->setEditing(false);
                m_review->clearProgress();
                const QString why = EngineText::stopReason(reason);
                m_stateLabel->setText(u"Finished: "_s + why);
                m_progressLabel->setText(message);
                m_runProgress->end(why);
                updateActions();
            });
    connect(m_engine, &Engine::failed, this,
            [this](Engine::Failure failure, const QString& message) {
                m_running = false;
                m_pendingGate.reset();
                m_gate->close();
                m_review->clearProgress();
                m_runProgress->end(u"stopped by an error"_s);
                updateActions();
                showError(EngineText::failure(failure), message);
            });
}

} // namespace kev
