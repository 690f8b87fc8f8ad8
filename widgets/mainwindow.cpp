#include "mainwindow.h"

#include "agenttextview.h"
#include "codepanel.h"
#include "diffview.h"
#include "honestyview.h"
#include "iterationtimeline.h"
#include "keyringkeystore.h"
#include "metricsview.h"
#include "newsessiondialog.h"
#include "performancechart.h"
#include "reviewpanel.h"
#include "settingsdialog.h"
#include "strategypanel.h"
#include "timelinemodel.h"

#include "core/examples.h"
#include "core/exporter.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>
#include <QVBoxLayout>

namespace kev {

using namespace Qt::StringLiterals;

namespace {
// Reports loaded per tick when a session opens; each is a small file read and a JSON parse, so a
// tick stays far below the 50 ms a person notices.
constexpr int kReportsPerTick = 8;

bool isActive(Engine::State state) {
    return state != Engine::State::Idle && state != Engine::State::Finished &&
           state != Engine::State::Failed;
}
} // namespace

MainWindow::MainWindow(std::shared_ptr<QSettings> settings, QWidget* parent)
    : QMainWindow(parent)
    , m_settings(settings ? std::move(settings) : std::make_shared<QSettings>())
    , m_app(AppSettings::load(*m_settings))
    , m_keys(std::make_shared<KeyringKeyStore>())
    , m_engine(new Engine(this)) {
    m_engine->setKeyStore(m_keys);
    m_keys->load(m_app.keyService());
    m_reasonProvider = [this](int version) {
        bool ok = false;
        const QString reason = QInputDialog::getMultiLineText(
            this, u"Reject v%1"_s.arg(version),
            u"Why? The reason is fed back to the agents for the next iteration."_s, QString(), &ok);
        return ok ? reason.trimmed() : QString();
    };
    buildActions();
    buildUi();
    connectEngine();
    m_reportLoader.setInterval(0);
    connect(&m_reportLoader, &QTimer::timeout, this, &MainWindow::loadNextReports);
    rebuildRecentMenu();
    updateActions();
    updateTitle();
}

MainWindow::~MainWindow() {
    if (m_engine->isRunning())
        m_engine->cancel();
}

void MainWindow::buildActions() {
    QMenu* file = menuBar()->addMenu(u"&Session"_s);
    m_newSession = file->addAction(u"&New session…"_s);
    m_newSession->setShortcut(QKeySequence::New);
    m_open = file->addAction(u"&Open session…"_s);
    m_open->setShortcut(QKeySequence::Open);
    m_recentMenu = file->addMenu(u"Open &recent"_s);
    m_examplesMenu = file->addMenu(u"Open e&xample"_s);
    for (const QString& dir : exampleSessions()) {
        QAction* a = m_examplesMenu->addAction(QFileInfo(dir).fileName());
        connect(a, &QAction::triggered, this, [this, dir] {
            QString error;
            if (!openSession(dir, &error))
                showError(u"Open example"_s, error);
        });
    }
    m_examplesMenu->setEnabled(!m_examplesMenu->isEmpty());
    m_export = file->addAction(u"&Export kernel…"_s);
    m_export->setShortcut(u"Ctrl+E"_s);
    file->addSeparator();
    m_settingsAction = file->addAction(u"Se&ttings…"_s);
    file->addSeparator();
    QAction* quit = file->addAction(u"&Quit"_s);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* run = menuBar()->addMenu(u"&Run"_s);
    m_run = run->addAction(u"Run"_s);
    m_run->setShortcut(u"F5"_s);
    m_run->setToolTip(u"Start a session, or continue the open one"_s);
    m_pause = run->addAction(u"Pause"_s);
    m_pause->setShortcut(u"F6"_s);
    m_pause->setToolTip(u"Stop after the iteration in progress"_s);
    m_stop = run->addAction(u"Stop"_s);
    m_stop->setShortcut(u"Shift+F5"_s);
    m_stop->setToolTip(u"Stop now: kill agent requests and harness children"_s);
    run->addSeparator();
    m_automatic = run->addAction(u"Automatic"_s);
    m_automatic->setCheckable(true);
    m_automatic->setToolTip(u"Approve the engine's choice at every gate instead of waiting"_s);
    m_follow = run->addAction(u"Follow the run"_s);
    m_follow->setCheckable(true);
    m_follow->setChecked(true);

    QToolBar* bar = addToolBar(u"Main"_s);
    bar->setObjectName(u"mainToolBar"_s);
    bar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    for (QAction* a : {m_newSession, m_open, m_export})
        bar->addAction(a);
    bar->addSeparator();
    for (QAction* a : {m_run, m_pause, m_stop, m_automatic, m_follow})
        bar->addAction(a);

    connect(quit, &QAction::triggered, this, &QWidget::close);
    connect(m_newSession, &QAction::triggered, this, [this] {
        NewSessionDialog dialog(m_app, !isAutomatic(), this);
        if (dialog.exec() != QDialog::Accepted || !dialog.task())
            return;
        startSession(*dialog.task(), dialog.settings(), dialog.sessionDir());
    });
    connect(m_open, &QAction::triggered, this, [this] {
        const QString dir =
            QFileDialog::getExistingDirectory(this, u"Open session"_s, m_app.sessionsRoot);
        QString error;
        if (!dir.isEmpty() && !openSession(dir, &error))
            showError(u"Open session"_s, error);
    });
    connect(m_export, &QAction::triggered, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, u"Export to"_s);
        if (dir.isEmpty())
            return;
        QString error;
        const std::optional<int> version =
            m_shownVersion > 0 ? std::optional<int>(m_shownVersion) : std::nullopt;
        if (!exportTo(dir, version, &error))
            showError(u"Export"_s, error);
        else
            statusBar()->showMessage(u"Exported to "_s + dir, 5000);
    });
    connect(m_settingsAction, &QAction::triggered, this, [this] {
        SettingsDialog dialog(m_app, this);
        if (dialog.exec() != QDialog::Accepted)
            return;
        m_app = dialog.settings();
        saveAppSettings();
        if (dialog.keyChanged()) {
            m_keys->store(
                m_app.keyService(), dialog.newKey(), [this](bool ok, const QString& error) {
                    if (!ok)
                        showError(u"Keyring"_s, u"The key could not be stored in the keyring: "_s +
                                                    error + u". It is kept for this run only."_s);
                });
        } else {
            m_keys->load(m_app.keyService());
        }
    });
    connect(m_run, &QAction::triggered, this, [this] {
        if (m_sessionDir.isEmpty())
            m_newSession->trigger();
        else
            resumeSession();
    });
    connect(m_pause, &QAction::triggered, m_engine, &Engine::stop);
    connect(m_stop, &QAction::triggered, m_engine, &Engine::cancel);
    connect(m_automatic, &QAction::toggled, this, [this](bool automatic) {
        if (automatic && m_pendingGate && m_gate->editing() == GateBar::Editing::None)
            approve(m_gate->version());
    });
    connect(m_follow, &QAction::toggled, this, [this](bool follow) {
        if (follow && m_liveVersion > 0)
            showVersion(m_liveVersion);
    });
}

void MainWindow::buildUi() {
    m_timeline = new IterationTimeline(this);
    m_strategy = new StrategyPanel(this);
    m_code = new CodePanel(this);
    m_review = new ReviewPanel(this);
    m_chart = new PerformanceChart(this);
    m_honesty = new HonestyView(this);
    m_metrics = new MetricsView(this);
    m_diff = new DiffView(this);
    m_gate = new GateBar(this);
    m_lowerTabs = new QTabWidget(this);
    m_lowerTabs->addTab(m_chart, u"Performance"_s);
    m_lowerTabs->addTab(m_honesty, u"Honesty"_s);
    m_lowerTabs->addTab(m_metrics, u"Metrics"_s);
    m_lowerTabs->addTab(m_diff, u"Diff"_s);

    auto* agents = new QSplitter(Qt::Horizontal, this);
    agents->addWidget(m_strategy);
    agents->addWidget(m_code);
    agents->addWidget(m_review);
    agents->setStretchFactor(0, 2);
    agents->setStretchFactor(1, 3);
    agents->setStretchFactor(2, 2);
    auto* vertical = new QSplitter(Qt::Vertical, this);
    vertical->addWidget(agents);
    vertical->addWidget(m_lowerTabs);
    vertical->setStretchFactor(0, 3);
    vertical->setStretchFactor(1, 2);

    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(m_gate);
    layout->addWidget(vertical, 1);
    setCentralWidget(central);

    auto* dock = new QDockWidget(u"Timeline"_s, this);
    dock->setObjectName(u"timelineDock"_s);
    dock->setWidget(m_timeline);
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::LeftDockWidgetArea, dock);
    resizeDocks({dock}, {420}, Qt::Horizontal);

    m_stateLabel = new QLabel(this);
    m_progressLabel = new QLabel(this);
    statusBar()->addWidget(m_stateLabel);
    statusBar()->addWidget(m_progressLabel, 1);
    setWindowIcon(QIcon(u":/icons/kevolve.svg"_s));
    resize(1600, 1000);

    connect(m_timeline, &IterationTimeline::versionSelected, this, &MainWindow::showVersion);
    connect(m_timeline, &IterationTimeline::diffRequested, this, &MainWindow::showDiff);
    connect(m_chart, &PerformanceChart::versionClicked, this, &MainWindow::showVersion);
    connect(m_metrics, &MetricsView::versionSelected, this, &MainWindow::showVersion);
    connect(m_gate, &GateBar::approveRequested, this, &MainWindow::approve);
    connect(m_gate, &GateBar::editRequested, this, &MainWindow::beginEdit);
    connect(m_gate, &GateBar::evaluateRequested, this, &MainWindow::evaluateEdit);
    connect(m_gate, &GateBar::editCancelled, this, &MainWindow::cancelEdit);
    connect(m_gate, &GateBar::rejectRequested, this, &MainWindow::reject);
    connect(m_strategy, &StrategyPanel::validityChanged, this, [this](bool valid) {
        if (m_gate->editing() == GateBar::Editing::Plan)
            m_gate->setEvaluateEnabled(valid);
    });
}

void MainWindow::connectEngine() {
    connect(m_engine, &Engine::stateChanged, this,
            [this](Engine::State state, const QString& detail) {
                m_running = isActive(state);
                m_stateLabel->setText(Engine::stateName(state) +
                                      (detail.isEmpty() ? QString() : u": "_s + detail));
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
    });
    connect(m_engine, &Engine::iterationFinished, this, [this](int, int, int best) {
        m_bestVersion = best;
        m_timeline->setBestVersion(best);
    });
    connect(m_engine, &Engine::agentTextAvailable, this,
            [this, turns = QHash<QString, int>()](const QString& role, const QString& chunk,
                                                  int version) mutable {
                AgentTextView* view = role == u"planner" ? m_strategy->agentView()
                                      : role == u"coder" ? m_code->agentView()
                                                         : m_review->agentView();
                if (turns.value(role) != version) {
                    turns.insert(role, version);
                    view->startTurn(u"%1, v%2"_s.arg(role).arg(version));
                }
                view->appendChunk(chunk);
            });
    connect(m_engine, &Engine::progressAvailable, this,
            [this](int version, const QString& stage, const QString& message, double fraction) {
                m_progressLabel->setText(u"v%1 %2: %3"_s.arg(version).arg(stage, message));
                if (m_follow->isChecked() && version == m_shownVersion &&
                    !m_live.value(version).report)
                    m_review->setProgress(version, stage, message, fraction);
            });
    connect(m_engine, &Engine::finished, this,
            [this](Engine::StopReason reason, const QString& message) {
                m_running = false;
                m_pendingGate.reset();
                m_gate->close();
                m_strategy->setEditing(false);
                m_code->setEditing(false);
                m_stateLabel->setText(u"Finished (%1)"_s.arg(Engine::stopReasonName(reason)));
                m_progressLabel->setText(message);
                updateActions();
            });
    connect(m_engine, &Engine::failed, this,
            [this](Engine::Failure failure, const QString& message) {
                m_running = false;
                m_pendingGate.reset();
                m_gate->close();
                updateActions();
                showError(u"Session failed: "_s + Engine::failureName(failure), message);
            });
}

void MainWindow::updateActions() {
    const bool running = m_running;
    m_newSession->setEnabled(!running);
    m_open->setEnabled(!running);
    m_recentMenu->setEnabled(!running && !m_app.recentSessions.isEmpty());
    m_examplesMenu->setEnabled(!running && !m_examplesMenu->isEmpty());
    m_run->setEnabled(!running);
    m_pause->setEnabled(running);
    m_stop->setEnabled(running);
    m_export->setEnabled(!m_sessionDir.isEmpty() && !m_timeline->model()->steps().isEmpty());
}

void MainWindow::updateTitle() {
    QString title = u"Kevolve"_s;
    if (m_info)
        title = m_info->task.name + u" — "_s + QFileInfo(m_sessionDir).fileName() + u" — Kevolve"_s;
    setWindowTitle(title);
}

void MainWindow::resetPanels() {
    m_live.clear();
    m_pendingGate.reset();
    m_gate->close();
    m_strategy->clear();
    m_code->clear();
    m_review->clear();
    m_honesty->clear();
    m_metrics->clear();
    m_diff->clear();
    m_timeline->clear();
    m_chart->clear();
    m_shownVersion = 0;
    m_liveVersion = 0;
    m_bestVersion = 0;
    m_reportQueue.clear();
    m_reportLoader.stop();
}

void MainWindow::setSession(const QString& dir, const SessionInfo& info,
                            const QVector<IterationSummary>& steps) {
    const bool same = dir == m_sessionDir;
    if (!same)
        resetPanels();
    m_sessionDir = dir;
    m_info = info;
    m_store.reset();
    m_storeStale = true;
    const QString reference = referenceName(info.task);
    m_timeline->setReferenceName(reference);
    m_gate->setReferenceName(reference);
    m_honesty->setReferenceName(reference);
    m_diff->setReferenceName(reference);
    m_review->setReferenceName(reference);
    m_timeline->setSteps(steps);
    if (same)
        m_chart->setTaskFlops(info.task.flops());
    else
        m_chart->setTask(info.task);
    m_metrics->setTaskCounts(info.task.flops(), info.task.minBytes());
    m_chart->setSteps(steps);
    if (SessionStore* s = store()) {
        m_bestVersion = s->bestVersion().value_or(0);
        m_timeline->setBestVersion(m_bestVersion);
    }
    if (!same) {
        m_reportQueue.clear();
        for (const auto& step : steps) {
            if (step.status == u"ok")
                m_reportQueue.append(step.version);
        }
        if (!m_reportQueue.isEmpty())
            m_reportLoader.start();
    }
    rememberRecent(dir);
    updateTitle();
    updateActions();
    emit sessionShown(dir);
}

SessionStore* MainWindow::store() {
    if (m_sessionDir.isEmpty())
        return nullptr;
    if (!m_store || m_storeStale) {
        QString error;
        auto opened = SessionStore::open(m_sessionDir, &error);
        if (!opened)
            return m_store ? &*m_store : nullptr;
        m_store = std::move(opened);
        m_storeStale = false;
    }
    return &*m_store;
}

std::optional<Candidate> MainWindow::candidate(int version) {
    if (const auto it = m_live.constFind(version); it != m_live.constEnd())
        return *it;
    SessionStore* s = store();
    if (!s)
        return std::nullopt;
    QString error;
    auto loaded = s->loadCandidate(version, &error);
    if (!loaded)
        statusBar()->showMessage(error, 5000);
    return loaded;
}

void MainWindow::loadNextReports() {
    SessionStore* s = store();
    if (!s) {
        m_reportLoader.stop();
        return;
    }
    for (int i = 0; i < kReportsPerTick && !m_reportQueue.isEmpty(); ++i) {
        const int version = m_reportQueue.takeFirst();
        QString error;
        if (const auto c = s->loadCandidate(version, &error); c && c->report) {
            m_metrics->addReport(version, *c->report);
            m_chart->setRooflineBound(c->report->bound);
        }
    }
    if (m_reportQueue.isEmpty())
        m_reportLoader.stop();
}

bool MainWindow::openSession(const QString& dir, QString* error) {
    if (m_running) {
        if (error)
            *error = u"a session is running: stop it before opening another"_s;
        return false;
    }
    QString why;
    auto opened = SessionStore::open(dir, &why);
    if (!opened) {
        if (error)
            *error = why;
        return false;
    }
    m_sessionDir.clear();
    setSession(opened->dir(), opened->info(), opened->steps());
    const auto& steps = opened->steps();
    if (!steps.isEmpty())
        showVersion(m_bestVersion > 0 ? m_bestVersion : steps.last().version);
    return true;
}

void MainWindow::startSession(const Task& task, const EngineSettings& settings,
                              const QString& dir) {
    resetPanels();
    m_sessionDir.clear();
    m_info.reset();
    m_automatic->setChecked(!settings.stepMode);
    m_follow->setChecked(true);
    m_running = true;
    updateActions();
    m_engine->start(task, settings, dir);
}

void MainWindow::resumeSession() {
    if (m_sessionDir.isEmpty() || !m_info)
        return;
    EngineSettings settings = m_info->settings;
    settings.stepMode = !isAutomatic();
    m_follow->setChecked(true);
    m_running = true;
    updateActions();
    m_engine->resume(m_sessionDir, settings);
}

bool MainWindow::exportTo(const QString& outDir, std::optional<int> version, QString* error) {
    SessionStore* s = store();
    if (!s) {
        if (error)
            *error = u"no session is open"_s;
        return false;
    }
    QStringList written;
    return Exporter::exportSession(*s, outDir, version, &written, error);
}

QStringList MainWindow::exampleSessions() {
    return kev::exampleSessions();
}

void MainWindow::showVersion(int version) {
    if (version <= 0)
        return;
    if (m_gate->editing() != GateBar::Editing::None && version != m_gate->version())
        return;
    const auto c = candidate(version);
    if (!c)
        return;
    if (m_running && version != m_liveVersion && m_follow->isChecked()) {
        const QSignalBlocker block(m_follow);
        m_follow->setChecked(false);
    }
    m_shownVersion = version;
    m_strategy->setStrategy(version, c->strategy);
    m_code->setSource(version, c->source, c->codeAttempts);
    if (c->report) {
        m_code->setCompileLog(c->report->compileLog);
        m_review->setReport(version, *c->report);
        m_honesty->setReport(version, *c->report);
    } else {
        m_review->clear();
        m_honesty->clear();
    }
    if (c->review)
        m_review->setReview(version, *c->review);
    m_metrics->selectVersion(version);
    m_timeline->selectVersion(version);
    if (m_pendingGate) {
        for (const auto& gc : m_pendingGate->candidates) {
            if (gc.version == version)
                m_gate->setVersion(version);
        }
    }
}

void MainWindow::showDiff(int left, int right) {
    const auto a = candidate(left);
    const auto b = candidate(right);
    if (!a || !b)
        return;
    m_diff->setCandidates(*a, *b);
    m_lowerTabs->setCurrentWidget(m_diff);
}

void MainWindow::setAutomatic(bool automatic) {
    m_automatic->setChecked(automatic);
}

bool MainWindow::isAutomatic() const {
    return m_automatic->isChecked();
}

void MainWindow::setReasonProvider(std::function<QString(int)> provider) {
    m_reasonProvider = std::move(provider);
}

void MainWindow::onGateRequested(const GateRequest& request) {
    for (const auto& c : request.candidates)
        m_live.insert(c.version, c);
    m_pendingGate = request;
    int version = request.suggestedVersion;
    if (version == 0 && !request.candidates.isEmpty())
        version = request.candidates.first().version;
    if (isAutomatic()) {
        m_engine->approve(version);
        m_pendingGate.reset();
        return;
    }
    m_gate->showRequest(request, version);
    m_follow->setChecked(true);
    showVersion(version);
    QApplication::alert(this);
}

void MainWindow::approve(int version) {
    if (!m_pendingGate)
        return;
    m_pendingGate.reset();
    m_gate->close();
    m_engine->approve(version);
}

void MainWindow::beginEdit(GateBar::Editing editing, int version) {
    showVersion(version);
    if (editing == GateBar::Editing::Code)
        m_code->setEditing(true);
    else
        m_strategy->setEditing(true);
}

void MainWindow::evaluateEdit(GateBar::Editing editing, int version) {
    if (!m_pendingGate)
        return;
    if (editing == GateBar::Editing::Code) {
        const QString source = m_code->source();
        m_pendingGate.reset();
        m_gate->close();
        m_code->setEditing(false);
        m_engine->submitCode(version, source);
        return;
    }
    m_strategy->validateNow();
    const auto plan = m_strategy->editedStrategy();
    if (!plan) {
        m_gate->setEvaluateEnabled(false);
        return;
    }
    m_pendingGate.reset();
    m_gate->close();
    m_strategy->setEditing(false);
    m_engine->submitPlan(version, *plan);
}

void MainWindow::cancelEdit() {
    m_code->setEditing(false);
    m_strategy->setEditing(false);
}

void MainWindow::reject(int version) {
    if (!m_pendingGate)
        return;
    const QString reason = m_reasonProvider ? m_reasonProvider(version) : QString();
    if (reason.isEmpty())
        return;
    m_pendingGate.reset();
    m_gate->close();
    m_engine->reject(version, reason);
}

void MainWindow::rememberRecent(const QString& dir) {
    m_app.addRecent(dir);
    saveAppSettings();
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
    m_recentMenu->clear();
    for (const QString& dir : m_app.recentSessions) {
        QAction* a = m_recentMenu->addAction(dir);
        connect(a, &QAction::triggered, this, [this, dir] {
            QString error;
            if (!openSession(dir, &error))
                showError(u"Open session"_s, error);
        });
    }
    m_recentMenu->setEnabled(!m_app.recentSessions.isEmpty());
}

void MainWindow::saveAppSettings() {
    m_app.save(*m_settings);
}

void MainWindow::showError(const QString& title, const QString& message) {
    m_lastError = message;
    statusBar()->showMessage(title + u": "_s + message);
    // Non-modal: the event loop (and the engine's signals) keep flowing while it is shown.
    auto* box = new QMessageBox(QMessageBox::Warning, title, message, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

} // namespace kev
