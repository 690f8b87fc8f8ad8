// The workbench: the timeline beside the three agent panels (Strategy, Code, Review) and the live
// chart, with the honesty, metrics and diff views; gate controls in step mode; Run / Pause / Stop
// and automatic mode; new, open, recent sessions and export; a start page while no session is
// open, the run's progress in the status bar, and the window's layout kept between starts. It
// talks to the Engine through queued signals and fire-and-forget calls only, so the GUI thread
// never waits on the engine. mainwindowactions.cpp holds the menus and shortcuts,
// mainwindowengine.cpp how the window follows the engine.
#pragma once

#include "appsettings.h"
#include "gatebar.h"
#include "windowstate.h"

#include "core/candidate.h"
#include "core/engine.h"
#include "core/sessionstore.h"

#include <QElapsedTimer>
#include <QHash>
#include <QMainWindow>
#include <QTimer>

#include <functional>
#include <memory>
#include <optional>

class QAction;
class QCloseEvent;
class QDockWidget;
class QLabel;
class QMenu;
class QSettings;
class QSplitter;
class QStackedWidget;
class QTabWidget;

namespace kev {

class CodePanel;
class DiffView;
class HonestyView;
class IterationTimeline;
class KeyringKeyStore;
class MetricsView;
class PerformanceChart;
class ReviewPanel;
class RunProgress;
class StartPage;
class StrategyPanel;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    // settings: where AppSettings live (tests pass a temporary file); null = the default QSettings.
    explicit MainWindow(std::shared_ptr<QSettings> settings = nullptr, QWidget* parent = nullptr);
    ~MainWindow() override;

    // Opens a recorded session for viewing (no engine run); false with *error when it cannot.
    bool openSession(const QString& dir, QString* error = nullptr);
    void startSession(const kev::Task& task, const kev::EngineSettings& settings,
                      const QString& dir);
    // Continues the open session (Run).
    void resumeSession();
    // Exports a version (nullopt = exportVersion()); lastExportSummary() then names what was
    // written ("v5, the session's best (1.23× cuBLAS)").
    bool exportTo(const QString& outDir, std::optional<int> version, QString* error = nullptr);
    // What Export writes by default: the session's best trustworthy version, else the one shown.
    int exportVersion();
    QString lastExportSummary() const { return m_lastExport; }
    // Opens the session that was open when the window last closed; false (start page stays) when
    // there was none or it cannot be opened any more.
    bool restoreLastSession();
    // The start page (no session open) or the workbench.
    void showStartPage();
    bool isStartPageShown() const;

    // Sessions shipped with the program (kev::exampleSessions(): the build tree's or the installed
    // share/kevolve/examples), so a person without a GPU can step through a real run.
    static QStringList exampleSessions();

    // Shows a version in the panels (from the live run or loaded from the session).
    void showVersion(int version);
    void showDiff(int left, int right);
    // Diff of the two versions selected in the timeline (Ctrl+D); with one selected, or none,
    // the shown version against the best (Ctrl+Shift+D does that always).
    void diffSelected();
    void diffAgainstBest();

    void setAutomatic(bool automatic);
    bool isAutomatic() const;

    // Asked for a rejection reason; the default opens a dialog. Empty = the person cancelled.
    void setReasonProvider(std::function<QString(int version)> provider);
    // Asked before closing during a run; the default asks in a dialog. false = keep running.
    void setQuitConfirmer(std::function<bool()> confirmer);

    Engine* engine() const { return m_engine; }
    QString sessionDir() const { return m_sessionDir; }
    int shownVersion() const { return m_shownVersion; }
    int bestVersion() const { return m_bestVersion; }
    QString lastError() const { return m_lastError; }
    AppSettings appSettings() const { return m_app; }

    IterationTimeline* timeline() const { return m_timeline; }
    StrategyPanel* strategyPanel() const { return m_strategy; }
    CodePanel* codePanel() const { return m_code; }
    ReviewPanel* reviewPanel() const { return m_review; }
    PerformanceChart* chart() const { return m_chart; }
    HonestyView* honestyView() const { return m_honesty; }
    MetricsView* metricsView() const { return m_metrics; }
    DiffView* diffView() const { return m_diff; }
    GateBar* gateBar() const { return m_gate; }
    StartPage* startPage() const { return m_start; }
    RunProgress* runProgress() const { return m_runProgress; }
    QSplitter* agentSplitter() const { return m_agentSplitter; }
    // The state line of the status bar and any message shown over it, as a person reads them.
    QString statusText() const;
    QTabWidget* lowerTabs() const { return m_lowerTabs; }
    QAction* runAction() const { return m_run; }
    QAction* pauseAction() const { return m_pause; }
    QAction* stopAction() const { return m_stop; }
    QAction* approveAction() const { return m_approveAction; }
    QAction* rejectAction() const { return m_rejectAction; }
    QAction* editCodeAction() const { return m_editCodeAction; }
    QAction* editPlanAction() const { return m_editPlanAction; }
    QAction* diffAction() const { return m_diffAction; }
    QAction* diffBestAction() const { return m_diffBestAction; }
    QAction* exportAction() const { return m_export; }
    QAction* aboutAction() const { return m_about; }

signals:
    // A session was opened or started and its steps are shown.
    void sessionShown(const QString& dir);

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void buildUi();
    void buildGateActions(QMenu* menu);
    void buildViewActions(QMenu* menu);
    void buildHelpMenu();
    void restoreWindowState();
    void showWorkbench();
    void saveWindowState();
    void showRecordedTurns(int version, const Candidate& candidate);
    void updateDiffVersions();
    void chooseAndExport();
    // Reads the current preset's key from the keyring and notes where it is.
    void loadKey();
    void buildActions();
    void connectEngine();
    void updateActions();
    void updateTitle();
    void setSession(const QString& dir, const SessionInfo& info,
                    const QVector<IterationSummary>& steps);
    void resetPanels();
    std::optional<Candidate> candidate(int version);
    SessionStore* store();
    void loadNextReports();
    void rememberRecent(const QString& dir);
    void rebuildRecentMenu();
    void rebuildExamples();
    void saveAppSettings();
    void showError(const QString& title, const QString& message);

    // Gate handling.
    void onGateRequested(const GateRequest& request);
    void approve(int version);
    void beginEdit(GateBar::Editing editing, int version);
    void evaluateEdit(GateBar::Editing editing, int version);
    void cancelEdit();
    void reject(int version);

    std::shared_ptr<QSettings> m_settings;
    AppSettings m_app;
    std::shared_ptr<KeyringKeyStore> m_keys;
    Engine* m_engine;

    IterationTimeline* m_timeline = nullptr;
    StrategyPanel* m_strategy = nullptr;
    CodePanel* m_code = nullptr;
    ReviewPanel* m_review = nullptr;
    PerformanceChart* m_chart = nullptr;
    HonestyView* m_honesty = nullptr;
    MetricsView* m_metrics = nullptr;
    DiffView* m_diff = nullptr;
    GateBar* m_gate = nullptr;
    QTabWidget* m_lowerTabs = nullptr;
    QStackedWidget* m_pages = nullptr;
    StartPage* m_start = nullptr;
    QWidget* m_workbench = nullptr;
    QSplitter* m_agentSplitter = nullptr;
    QSplitter* m_verticalSplitter = nullptr;
    QDockWidget* m_timelineDock = nullptr;
    RunProgress* m_runProgress = nullptr;
    QLabel* m_stateLabel = nullptr;
    QLabel* m_progressLabel = nullptr;
    QMenu* m_recentMenu = nullptr;
    QMenu* m_examplesMenu = nullptr;

    QAction* m_newSession = nullptr;
    QAction* m_open = nullptr;
    QAction* m_export = nullptr;
    QAction* m_run = nullptr;
    QAction* m_pause = nullptr;
    QAction* m_stop = nullptr;
    QAction* m_automatic = nullptr;
    QAction* m_follow = nullptr;
    QAction* m_settingsAction = nullptr;
    QAction* m_approveAction = nullptr;
    QAction* m_rejectAction = nullptr;
    QAction* m_editCodeAction = nullptr;
    QAction* m_editPlanAction = nullptr;
    QAction* m_diffAction = nullptr;
    QAction* m_diffBestAction = nullptr;
    QAction* m_about = nullptr;

    QString m_sessionDir;
    std::optional<SessionInfo> m_info;
    std::optional<SessionStore> m_store;
    bool m_storeStale = false;
    // What the engine sent for versions not yet in the session (or not yet re-read from it).
    QHash<int, Candidate> m_live;
    std::optional<GateRequest> m_pendingGate;
    std::function<QString(int)> m_reasonProvider;
    std::function<bool()> m_quitConfirmer;
    WindowState m_windowState;
    // Live agent text: the version each role's view shows a turn of, and roles whose next chunk
    // starts a new turn (the engine entered that role's state again).
    QHash<QString, int> m_turnVersion;
    QHash<QString, bool> m_turnPending;
    // What arrived from the engine since the panels were last refreshed (mainwindowengine.cpp).
    struct HarnessProgress {
        QString stage;
        QString message;
        double fraction = -1;
    };
    struct LiveUpdate {
        int version = 0;
        Candidate candidate;
        bool plan = false;
        bool code = false;
        bool report = false;
        bool review = false;
        std::optional<HarnessProgress> harnessProgress;
    };
    struct Pending {
        LiveUpdate live;
        std::optional<QString> stateText;
        std::optional<QString> harnessStage;
        std::optional<QString> progressText;
        bool versionsChanged = false;
    };
    // The followed version's pending update, or null when the panels do not follow the run.
    LiveUpdate* followed(int version);
    void scheduleLiveRefresh();
    void refreshLivePanels();
    Pending m_pending;
    QTimer m_liveRefresh;
    QString m_lastExport;
    // Per key service: where its key is, as the settings dialog's key field says it.
    QHash<QString, QString> m_keyNote;
    int m_iterationsThisRun = 0;
    bool m_splittersRestored = false;
    QVector<int> m_reportQueue;
    QTimer m_reportLoader;
    QString m_lastError;
    int m_shownVersion = 0;
    int m_liveVersion = 0;
    int m_bestVersion = 0;
    bool m_running = false;
};

} // namespace kev
