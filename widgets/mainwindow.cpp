#include "mainwindow.h"

#include "agenttextview.h"
#include "codepanel.h"
#include "diffview.h"
#include "honestyview.h"
#include "iterationtimeline.h"
#include "keyringkeystore.h"
#include "metricsview.h"
#include "performancechart.h"
#include "reviewpanel.h"
#include "runprogress.h"
#include "startpage.h"
#include "strategypanel.h"
#include "statusstyle.h"
#include "timelinemodel.h"

#include "core/examples.h"
#include "core/exporter.h"
#include "core/knowledgestore.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QSettings>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTabWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace kev {

using namespace Qt::StringLiterals;

namespace {
// Reports loaded per tick when a session opens; each is a small file read and a JSON parse, so a
// tick stays far below the 50 ms a person notices.
constexpr int kReportsPerTick = 8;

} // namespace

MainWindow::MainWindow(std::shared_ptr<QSettings> settings, QWidget* parent)
    : QMainWindow(parent)
    , m_settings(settings ? std::move(settings) : std::make_shared<QSettings>())
    , m_app(AppSettings::load(*m_settings))
    , m_keys(std::make_shared<KeyringKeyStore>())
    , m_engine(new Engine(this)) {
    m_engine->setKeyStore(m_keys);
    m_engine->setKnowledgePath(KnowledgeStore::resolvePath(m_app.knowledgePath));
    m_reasonProvider = [this](int version) {
        bool ok = false;
        const QString reason = QInputDialog::getMultiLineText(
            this, u"Reject v%1"_s.arg(version),
            u"Why? The reason is fed back to the agents for the next iteration."_s, QString(), &ok);
        return ok ? reason.trimmed() : QString();
    };
    m_quitConfirmer = [this] {
        return QMessageBox::question(
                   this, u"Quit during a run?"_s,
                   u"A session is running. Quit and stop it? Completed steps are saved; the "
                   "iteration in progress is lost. Run continues the session later."_s,
                   QMessageBox::Yes | QMessageBox::No, QMessageBox::No) == QMessageBox::Yes;
    };
    buildActions();
    buildUi();
    connectEngine();
    loadKey();
    m_liveRefresh.setSingleShot(true);
    m_liveRefresh.setInterval(0);
    connect(&m_liveRefresh, &QTimer::timeout, this, &MainWindow::refreshLivePanels);
    m_reportLoader.setInterval(0);
    connect(&m_reportLoader, &QTimer::timeout, this, &MainWindow::loadNextReports);
    rebuildRecentMenu();
    rebuildExamples();
    restoreWindowState();
    showStartPage();
    updateActions();
    updateTitle();
}

MainWindow::~MainWindow() {
    if (m_engine->isRunning())
        m_engine->cancel();
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
    m_lowerTabs->setTabToolTip(0,
                               u"Speed-up (or TFLOP/s, % of the DRAM floor) per version (Alt+1)"_s);
    m_lowerTabs->setTabToolTip(1, u"What the harness checked before trusting a time (Alt+2)"_s);
    m_lowerTabs->setTabToolTip(2, u"Hardware counters per version and the roofline (Alt+3)"_s);
    m_lowerTabs->setTabToolTip(3, u"Any two versions side by side (Alt+4)"_s);

    auto* agents = new QSplitter(Qt::Horizontal, this);
    agents->setObjectName(u"agentSplitter"_s);
    m_agentSplitter = agents;
    agents->addWidget(m_strategy);
    agents->addWidget(m_code);
    agents->addWidget(m_review);
    agents->setStretchFactor(0, 2);
    agents->setStretchFactor(1, 3);
    agents->setStretchFactor(2, 2);
    auto* vertical = new QSplitter(Qt::Vertical, this);
    vertical->setObjectName(u"verticalSplitter"_s);
    m_verticalSplitter = vertical;
    vertical->addWidget(agents);
    vertical->addWidget(m_lowerTabs);
    vertical->setStretchFactor(0, 3);
    vertical->setStretchFactor(1, 2);

    m_workbench = new QWidget(this);
    auto* layout = new QVBoxLayout(m_workbench);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(m_gate);
    layout->addWidget(vertical, 1);
    m_start = new StartPage(this);
    m_pages = new QStackedWidget(this);
    m_pages->addWidget(m_start);
    m_pages->addWidget(m_workbench);
    setCentralWidget(m_pages);
    connect(m_start, &StartPage::openRequested, this, [this](const QString& dir) {
        QString error;
        if (!openSession(dir, &error))
            showError(u"Open session"_s, error);
    });
    connect(m_start, &StartPage::newSessionRequested, m_newSession, &QAction::trigger);
    connect(m_start, &StartPage::browseRequested, m_open, &QAction::trigger);

    auto* dock = new QDockWidget(u"Timeline"_s, this);
    m_timelineDock = dock;
    dock->setObjectName(u"timelineDock"_s);
    dock->setWidget(m_timeline);
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::LeftDockWidgetArea, dock);
    resizeDocks({dock}, {500}, Qt::Horizontal);

    m_stateLabel = new QLabel(this);
    m_stateLabel->setObjectName(u"stateLabel"_s);
    m_progressLabel = new QLabel(this);
    m_progressLabel->setObjectName(u"progressLabel"_s);
    // A long message is cut at the window's edge instead of widening the window.
    m_progressLabel->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_progressLabel->setMinimumWidth(120);
    m_runProgress = new RunProgress(this);
    statusBar()->addWidget(m_stateLabel);
    statusBar()->addWidget(m_progressLabel, 1);
    statusBar()->addPermanentWidget(m_runProgress);
    setWindowIcon(QIcon(u":/icons/kevolve.svg"_s));
    resize(1600, 1000);

    connect(m_timeline, &IterationTimeline::versionSelected, this, &MainWindow::showVersion);
    connect(m_timeline, &IterationTimeline::diffRequested, this, &MainWindow::showDiff);
    connect(m_diff, &DiffView::diffRequested, this, &MainWindow::showDiff);
    connect(m_chart, &PerformanceChart::modeChosen, this, [this](PerformanceChart::Mode mode) {
        m_windowState.chartMode = static_cast<int>(mode);
        saveWindowState();
    });
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

void MainWindow::updateActions() {
    const bool running = m_running;
    m_newSession->setEnabled(!running);
    m_open->setEnabled(!running);
    m_recentMenu->setEnabled(!running && !m_app.recentSessions.isEmpty());
    m_examplesMenu->setEnabled(!running && !m_examplesMenu->isEmpty());
    m_run->setEnabled(!running);
    m_pause->setEnabled(running);
    m_stop->setEnabled(running);
    const bool hasSteps = !m_sessionDir.isEmpty() && !m_timeline->model()->steps().isEmpty();
    m_export->setEnabled(hasSteps);
    m_export->setText(m_bestVersion > 0 ? u"&Export the best kernel (v%1)…"_s.arg(m_bestVersion)
                                        : u"&Export the shown kernel…"_s);
    m_diffAction->setEnabled(hasSteps);
    m_diffBestAction->setEnabled(hasSteps && m_bestVersion > 0);
    const bool atGate = m_pendingGate.has_value();
    for (QAction* a : {m_approveAction, m_rejectAction, m_editPlanAction})
        a->setEnabled(atGate);
    m_editCodeAction->setEnabled(atGate && m_pendingGate->kind == GateRequest::Kind::Result);
}

QString MainWindow::statusText() const {
    QString text = m_stateLabel->text();
    if (!m_progressLabel->text().isEmpty())
        text += u" | "_s + m_progressLabel->text();
    if (!statusBar()->currentMessage().isEmpty())
        text += u" | "_s + statusBar()->currentMessage();
    return text;
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
    // The transcripts belong to the session they came from.
    m_strategy->agentView()->clearText();
    m_code->agentView()->clearText();
    m_review->agentView()->clearText();
    m_turnVersion.clear();
    m_turnPending.clear();
    m_liveRefresh.stop();
    m_pending = Pending{};
    m_stateLabel->clear();
    m_progressLabel->clear();
    statusBar()->clearMessage();
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
    if (same) {
        m_chart->setTaskFlops(info.task.flops());
    } else {
        m_chart->setTask(info.task);
        if (m_windowState.chartMode >= 0)
            m_chart->setChosenMode(static_cast<PerformanceChart::Mode>(m_windowState.chartMode));
    }
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
    m_windowState.lastSession = QDir(dir).absolutePath();
    m_windowState.save(*m_settings);
    showWorkbench();
    updateDiffVersions();
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
    m_runProgress->reset();
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
    showWorkbench();
    m_runProgress->begin(settings.maxIterations);
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
    m_review->clearProgress();
    m_runProgress->begin(settings.maxIterations);
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
    const int chosen = version.value_or(exportVersion());
    QStringList written;
    if (!Exporter::exportSession(*s, outDir, chosen > 0 ? std::optional<int>(chosen) : version,
                                 &written, error))
        return false;
    QString summary = u"v%1"_s.arg(chosen);
    const int best = s->bestVersion().value_or(0);
    for (const auto& step : s->steps()) {
        if (step.version != chosen)
            continue;
        summary += chosen == best ? u", the session's best"_s : u", not the session's best"_s;
        if (step.speedup)
            summary += u" ("_s + StatusStyle::speedup(*step.speedup) + u' ' +
                       referenceName(s->task()) + u')';
    }
    m_lastExport = summary;
    return true;
}

int MainWindow::exportVersion() {
    SessionStore* s = store();
    if (s) {
        if (const auto best = s->bestVersion())
            return *best;
    }
    return m_shownVersion;
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
    showRecordedTurns(version, *c);
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
    if (left <= 0 || right <= 0 || left == right)
        return;
    const auto a = candidate(std::min(left, right));
    const auto b = candidate(std::max(left, right));
    if (!a || !b)
        return;
    m_diff->setCandidates(*a, *b);
    m_lowerTabs->setCurrentWidget(m_diff);
}

void MainWindow::diffSelected() {
    const QVector<int> versions = m_timeline->selectedVersions();
    if (versions.size() >= 2) {
        showDiff(versions.first(), versions.last());
        return;
    }
    diffAgainstBest();
}

void MainWindow::diffAgainstBest() {
    const int shown = m_shownVersion > 0 ? m_shownVersion : m_timeline->selectedVersion();
    if (m_bestVersion <= 0 || shown <= 0) {
        statusBar()->showMessage(u"No best version yet to compare with"_s, 5000);
        return;
    }
    if (shown == m_bestVersion) {
        statusBar()->showMessage(
            u"v%1 is the best: select another version, or two rows with Ctrl+click"_s.arg(shown),
            5000);
        return;
    }
    showDiff(shown, m_bestVersion);
}

void MainWindow::updateDiffVersions() {
    QVector<int> versions;
    versions.reserve(m_timeline->model()->steps().size());
    for (const auto& step : m_timeline->model()->steps())
        versions.append(step.version);
    std::sort(versions.begin(), versions.end());
    m_diff->setVersions(versions, m_bestVersion);
}

void MainWindow::showRecordedTurns(int version, const Candidate& candidate) {
    // A live version's text streams in; a recorded one shows what logs/run_vN.json kept.
    if (candidate.turns.isEmpty() || (m_running && version == m_liveVersion))
        return;
    m_strategy->agentView()->showRecorded(u"planner"_s, version, candidate.turns);
    m_code->agentView()->showRecorded(u"coder"_s, version, candidate.turns);
    m_review->agentView()->showRecorded(u"reviewer"_s, version, candidate.turns);
    // The next live chunk starts a fresh turn below the recorded text.
    m_turnVersion.clear();
}

void MainWindow::showStartPage() {
    if (m_running)
        return;
    m_pages->setCurrentWidget(m_start);
    // The timeline has nothing to list without a session.
    m_timelineDock->hide();
}

bool MainWindow::isStartPageShown() const {
    return m_pages->currentWidget() == m_start;
}

bool MainWindow::restoreLastSession() {
    const QString last = m_windowState.lastSession;
    if (last.isEmpty())
        return false;
    QString error;
    if (!openSession(last, &error)) {
        statusBar()->showMessage(u"The last session could not be opened again: "_s + error, 15000);
        m_windowState.lastSession.clear();
        m_windowState.save(*m_settings);
        return false;
    }
    return true;
}

void MainWindow::restoreWindowState() {
    m_windowState = WindowState::load(*m_settings);
    if (!m_windowState.geometry.isEmpty())
        restoreGeometry(m_windowState.geometry);
    if (!m_windowState.dockState.isEmpty())
        restoreState(m_windowState.dockState);
    if (m_windowState.lowerTab >= 0 && m_windowState.lowerTab < m_lowerTabs->count())
        m_lowerTabs->setCurrentIndex(m_windowState.lowerTab);
}

void MainWindow::showWorkbench() {
    m_pages->setCurrentWidget(m_workbench);
    m_timelineDock->show();
    if (m_splittersRestored)
        return;
    m_splittersRestored = true;
    // Once the page has its real size: a splitter restored while hidden lays its panels out
    // again when first shown, and loses the proportions.
    QTimer::singleShot(0, this, [this] {
        if (!m_windowState.agentSplitter.isEmpty())
            m_agentSplitter->restoreState(m_windowState.agentSplitter);
        if (!m_windowState.verticalSplitter.isEmpty())
            m_verticalSplitter->restoreState(m_windowState.verticalSplitter);
    });
}

void MainWindow::saveWindowState() {
    m_windowState.geometry = saveGeometry();
    m_windowState.dockState = saveState();
    m_windowState.agentSplitter = m_agentSplitter->saveState();
    m_windowState.verticalSplitter = m_verticalSplitter->saveState();
    m_windowState.lowerTab = m_lowerTabs->currentIndex();
    m_windowState.save(*m_settings);
}

void MainWindow::setQuitConfirmer(std::function<bool()> confirmer) {
    m_quitConfirmer = std::move(confirmer);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (m_running && m_quitConfirmer && !m_quitConfirmer()) {
        event->ignore();
        return;
    }
    if (m_running)
        m_engine->cancel();
    saveWindowState();
    event->accept();
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
