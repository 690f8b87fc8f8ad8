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
                if (state != Engine::State::Finished && state != Engine::State::Failed) {
                    m_pending.stateText = EngineText::state(state, detail);
                    scheduleLiveRefresh();
                }
                if (const QString role = roleOf(state); !role.isEmpty())
                    m_turnPending.insert(role, true);
                if (wasRunning != m_running)
                    updateActions();
            });
    connect(m_engine, &Engine::sessionOpened, this, &MainWindow::setSession);
    // The panels follow the run through m_pending: a burst of signals (a GUI thread that got no
    // CPU for a while on a busy machine) costs one refresh of the latest state, not one per
    // signal. That burst was the 100 ms stall of issue 17.
    connect(m_engine, &Engine::planAvailable, this, [this](int version, const Strategy& strategy) {
        Candidate& c = m_live[version];
        c.version = version;
        c.strategy = strategy;
        m_liveVersion = version;
        if (LiveUpdate* u = followed(version)) {
            u->candidate.strategy = strategy;
            u->plan = true;
        }
    });
    connect(m_engine, &Engine::codeAvailable, this,
            [this](int version, const QString& source, int attempt) {
                Candidate& c = m_live[version];
                c.version = version;
                c.source = source;
                c.codeAttempts = attempt;
                m_liveVersion = version;
                if (LiveUpdate* u = followed(version)) {
                    u->candidate.source = source;
                    u->candidate.codeAttempts = attempt;
                    u->code = true;
                }
            });
    connect(m_engine, &Engine::reportAvailable, this,
            [this](int version, const EvaluationReport& report) {
                m_live[version].version = version;
                m_live[version].report = report;
                m_metrics->addReport(version, report);
                m_chart->setRooflineBound(report.bound);
                if (LiveUpdate* u = followed(version)) {
                    u->candidate.report = report;
                    u->report = true;
                    u->harnessProgress.reset();
                }
            });
    connect(m_engine, &Engine::reviewAvailable, this,
            [this](int version, const ReviewFeedback& review) {
                m_live[version].version = version;
                m_live[version].review = review;
                if (LiveUpdate* u = followed(version)) {
                    u->candidate.review = review;
                    u->review = true;
                }
            });
    connect(m_engine, &Engine::gateRequested, this, &MainWindow::onGateRequested);
    connect(m_engine, &Engine::stepAvailable, this, [this](const IterationSummary& step) {
        m_timeline->addStep(step);
        m_chart->addStep(step);
        m_storeStale = true;
        m_live.remove(step.version);
        m_pending.versionsChanged = true;
        scheduleLiveRefresh();
    });
    connect(m_engine, &Engine::iterationFinished, this, [this](int, int, int best) {
        m_bestVersion = best;
        m_timeline->setBestVersion(best);
        m_runProgress->setIterationsDone(++m_iterationsThisRun);
        m_pending.versionsChanged = true;
        scheduleLiveRefresh();
    });
    connect(m_engine, &Engine::agentProgressAvailable, this, [this](const AgentProgress& p) {
        AgentTextView* view = p.role == u"planner" ? m_strategy->agentView()
                              : p.role == u"coder" ? m_code->agentView()
                                                   : m_review->agentView();
        view->setProgress(p);
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
    connect(m_engine, &Engine::progressAvailable, this,
            [this](int version, const QString& stage, const QString& message, double fraction) {
                m_pending.progressText = version > 0
                                             ? u"v%1 %2: %3"_s.arg(version).arg(stage, message)
                                             : stage + u": "_s + message;
                if (version > 0)
                    m_pending.harnessStage = stage;
                if (!m_live.value(version).report) {
                    if (LiveUpdate* u = followed(version))
                        u->harnessProgress = HarnessProgress{stage, message, fraction};
                }
                scheduleLiveRefresh();
            });
    connect(m_engine, &Engine::finished, this,
            [this](Engine::StopReason reason, const QString& message) {
                refreshLivePanels();
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
                refreshLivePanels();
                m_running = false;
                m_pendingGate.reset();
                m_gate->close();
                m_review->clearProgress();
                m_runProgress->end(u"stopped by an error"_s);
                updateActions();
                showError(EngineText::failure(failure), message);
            });
}

MainWindow::LiveUpdate* MainWindow::followed(int version) {
    if (!m_follow->isChecked() || m_gate->editing() != GateBar::Editing::None)
        return nullptr;
    if (m_pending.live.version != version) {
        // A newer version takes over; what was pending for the older one is superseded.
        m_pending.live = LiveUpdate{};
        m_pending.live.version = version;
        m_pending.live.candidate = m_live.value(version);
    }
    scheduleLiveRefresh();
    return &m_pending.live;
}

void MainWindow::scheduleLiveRefresh() {
    // A zero timer runs once the queued signals already posted are handled: the whole burst.
    if (!m_liveRefresh.isActive())
        m_liveRefresh.start();
}

void MainWindow::refreshLivePanels() {
    m_liveRefresh.stop();
    Pending pending = std::move(m_pending);
    m_pending = Pending{};
    LiveUpdate& u = pending.live;
    if (u.version > 0 && m_follow->isChecked() && m_gate->editing() == GateBar::Editing::None) {
        const Candidate& c = u.candidate;
        if (m_shownVersion != u.version) {
            m_code->clear();
            m_review->clear();
            m_honesty->clear();
            m_shownVersion = u.version;
        }
        if (u.plan)
            m_strategy->setStrategy(u.version, c.strategy);
        if (u.code)
            m_code->setSource(u.version, c.source, c.codeAttempts);
        if (u.harnessProgress && !c.report)
            m_review->setProgress(u.version, u.harnessProgress->stage, u.harnessProgress->message,
                                  u.harnessProgress->fraction);
        if (u.report && c.report) {
            m_code->setCompileLog(c.report->compileLog);
            m_review->setReport(u.version, *c.report);
            m_honesty->setReport(u.version, *c.report);
        }
        if (u.review && c.review)
            m_review->setReview(u.version, *c.review);
    }
    // The harness's stage first: a state that changed since (a gate) replaces it.
    if (pending.harnessStage)
        m_runProgress->setHarnessStage(*pending.harnessStage);
    if (pending.stateText) {
        m_stateLabel->setText(*pending.stateText);
        m_runProgress->setStage(*pending.stateText);
    }
    if (pending.progressText)
        m_progressLabel->setText(*pending.progressText);
    if (pending.versionsChanged) {
        updateDiffVersions();
        updateActions();
    }
}

} // namespace kev
