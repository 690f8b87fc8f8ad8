// The workbench: the timeline beside the three agent panels (Strategy, Code, Review) and the live
// chart, with the honesty, metrics and diff views; gate controls in step mode; Run / Pause / Stop
// and automatic mode; new, open, recent sessions and export. It talks to the Engine through
// queued signals and fire-and-forget calls only, so the GUI thread never waits on the engine.
#pragma once

#include "appsettings.h"
#include "gatebar.h"

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
class QLabel;
class QMenu;
class QSettings;
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
    bool exportTo(const QString& outDir, std::optional<int> version, QString* error = nullptr);

    // Sessions shipped with the program (kev::exampleSessions(): the build tree's or the installed
    // share/kevolve/examples), so a person without a GPU can step through a real run.
    static QStringList exampleSessions();

    // Shows a version in the panels (from the live run or loaded from the session).
    void showVersion(int version);
    void showDiff(int left, int right);

    void setAutomatic(bool automatic);
    bool isAutomatic() const;

    // Asked for a rejection reason; the default opens a dialog. Empty = the person cancelled.
    void setReasonProvider(std::function<QString(int version)> provider);

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
    QTabWidget* lowerTabs() const { return m_lowerTabs; }
    QAction* runAction() const { return m_run; }
    QAction* pauseAction() const { return m_pause; }
    QAction* stopAction() const { return m_stop; }

signals:
    // A session was opened or started and its steps are shown.
    void sessionShown(const QString& dir);

private:
    void buildUi();
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

    QString m_sessionDir;
    std::optional<SessionInfo> m_info;
    std::optional<SessionStore> m_store;
    bool m_storeStale = false;
    // What the engine sent for versions not yet in the session (or not yet re-read from it).
    QHash<int, Candidate> m_live;
    std::optional<GateRequest> m_pendingGate;
    std::function<QString(int)> m_reasonProvider;
    QVector<int> m_reportQueue;
    QTimer m_reportLoader;
    QString m_lastError;
    int m_shownVersion = 0;
    int m_liveVersion = 0;
    int m_bestVersion = 0;
    bool m_running = false;
};

} // namespace kev
