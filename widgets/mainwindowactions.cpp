// MainWindow's menus, toolbar and shortcuts, and what the gate's commands do: Session (new, open,
// recent, examples, export, settings, quit), Run, Gate (approve, edit, reject), View (diffs,
// panels) and Help.
#include "mainwindow.h"

#include "codepanel.h"
#include "iterationtimeline.h"
#include "keyringkeystore.h"
#include "newsessiondialog.h"
#include "performancechart.h"
#include "settingsdialog.h"
#include "startpage.h"
#include "strategypanel.h"

#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPointer>
#include <QPushButton>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>

namespace kev {

using namespace Qt::StringLiterals;

void MainWindow::buildActions() {
    QMenu* file = menuBar()->addMenu(u"&Session"_s);
    m_newSession = file->addAction(u"&New session…"_s);
    m_newSession->setShortcut(QKeySequence::New);
    m_open = file->addAction(u"&Open session…"_s);
    m_open->setShortcut(QKeySequence::Open);
    m_recentMenu = file->addMenu(u"Open &recent"_s);
    m_examplesMenu = file->addMenu(u"Open e&xample"_s);
    m_export = file->addAction(u"&Export the best kernel…"_s);
    m_export->setShortcut(u"Ctrl+E"_s);
    m_export->setToolTip(u"Write the session's best version (else the one shown) as a kernel, a "
                         "host harness and its report"_s);
    file->addSeparator();
    m_settingsAction = file->addAction(u"Se&ttings…"_s);
    file->addSeparator();
    QAction* quit = file->addAction(u"&Quit"_s);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* run = menuBar()->addMenu(u"&Run"_s);
    m_run = run->addAction(u"Run"_s);
    m_run->setShortcut(u"F5"_s);
    m_run->setToolTip(u"Start a session, or continue the open one (F5)"_s);
    m_pause = run->addAction(u"Pause"_s);
    m_pause->setShortcut(u"F6"_s);
    m_pause->setToolTip(u"Stop after the iteration in progress (F6)"_s);
    m_stop = run->addAction(u"Stop"_s);
    m_stop->setShortcut(u"Shift+F5"_s);
    m_stop->setToolTip(u"Stop now: kill agent requests and harness children (Shift+F5)"_s);
    run->addSeparator();
    m_automatic = run->addAction(u"Automatic"_s);
    m_automatic->setCheckable(true);
    m_automatic->setToolTip(u"Approve the engine's choice at every gate instead of waiting"_s);
    m_follow = run->addAction(u"Follow the run"_s);
    m_follow->setCheckable(true);
    m_follow->setChecked(true);
    m_follow->setToolTip(u"Show each new version as the engine works on it"_s);

    buildGateActions(menuBar()->addMenu(u"&Gate"_s));
    buildViewActions(menuBar()->addMenu(u"&View"_s));
    buildHelpMenu();

    QToolBar* bar = addToolBar(u"Main"_s);
    bar->setObjectName(u"mainToolBar"_s);
    bar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    for (QAction* a : {m_newSession, m_open, m_export})
        bar->addAction(a);
    bar->addSeparator();
    for (QAction* a : {m_run, m_pause, m_stop, m_automatic, m_follow})
        bar->addAction(a);
    bar->addSeparator();
    for (QAction* a : {m_diffAction, m_diffBestAction})
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
    connect(m_export, &QAction::triggered, this, &MainWindow::chooseAndExport);
    connect(m_settingsAction, &QAction::triggered, this, [this] {
        SettingsDialog dialog(m_app, this, m_keys);
        dialog.setKeyNote(m_keyNote.value(m_app.keyService(), u"unchanged"_s));
        if (dialog.exec() != QDialog::Accepted)
            return;
        m_app = dialog.settings();
        saveAppSettings();
        // Kept as typed (nothing is lost), but never accepted silently.
        if (const QStringList problems = m_app.problems(); !problems.isEmpty())
            showError(u"Settings"_s, problems.join(u'\n'));
        const QString service = m_app.keyService();
        if (dialog.keyChanged()) {
            m_keys->store(service, dialog.newKey(),
                          [this, self = QPointer<MainWindow>(this), service,
                           removed = dialog.newKey().isEmpty()](bool ok, const QString& error) {
                              if (!self)
                                  return;
                              if (ok) {
                                  m_keyNote.insert(service, removed ? u"none stored"_s
                                                                    : u"unchanged (stored in the "
                                                                      "system keyring)"_s);
                                  return;
                              }
                              m_keyNote.insert(service, u"kept for this run only: the keyring "
                                                        "refused it"_s);
                              showError(u"Keyring"_s,
                                        u"The key could not be stored in the keyring: "_s + error +
                                            u". It is kept for this run only."_s);
                          });
        } else {
            loadKey();
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

void MainWindow::buildGateActions(QMenu* menu) {
    // The gate's buttons, from the keyboard. Ctrl+Return approves, or evaluates an edit in
    // progress (the one thing the gate can go on with then).
    m_approveAction = menu->addAction(u"&Approve / evaluate the edit"_s);
    m_approveAction->setShortcut(u"Ctrl+Return"_s);
    m_rejectAction = menu->addAction(u"&Reject…"_s);
    m_rejectAction->setShortcut(u"Ctrl+Shift+Backspace"_s);
    m_editCodeAction = menu->addAction(u"Edit the &code"_s);
    m_editCodeAction->setShortcut(u"Ctrl+Shift+E"_s);
    m_editPlanAction = menu->addAction(u"Edit the &plan"_s);
    m_editPlanAction->setShortcut(u"Ctrl+Shift+P"_s);
    QAction* cancelEdit = menu->addAction(u"Cancel the edit"_s);
    for (QAction* a : {m_approveAction, m_rejectAction, m_editCodeAction, m_editPlanAction})
        a->setShortcutContext(Qt::WindowShortcut);
    connect(m_approveAction, &QAction::triggered, this, [this] {
        if (!m_pendingGate)
            return;
        if (m_gate->editing() == GateBar::Editing::None)
            approve(m_gate->version());
        else
            evaluateEdit(m_gate->editing(), m_gate->version());
    });
    connect(m_rejectAction, &QAction::triggered, this, [this] {
        if (m_pendingGate && m_gate->editing() == GateBar::Editing::None)
            reject(m_gate->version());
    });
    connect(m_editCodeAction, &QAction::triggered, this, [this] {
        if (m_pendingGate && m_gate->editing() == GateBar::Editing::None &&
            m_pendingGate->kind == GateRequest::Kind::Result)
            m_gate->editCodeButton()->click();
    });
    connect(m_editPlanAction, &QAction::triggered, this, [this] {
        if (m_pendingGate && m_gate->editing() == GateBar::Editing::None)
            m_gate->editPlanButton()->click();
    });
    connect(cancelEdit, &QAction::triggered, this, [this] {
        if (m_gate->editing() != GateBar::Editing::None)
            m_gate->cancelEditButton()->click();
    });
}

void MainWindow::buildViewActions(QMenu* menu) {
    m_diffAction = menu->addAction(u"&Diff the selected versions"_s);
    m_diffAction->setShortcut(u"Ctrl+D"_s);
    m_diffAction->setToolTip(u"Diff the two versions selected in the timeline (Ctrl+click a second "
                             "row); with one selected, it against the best (Ctrl+D)"_s);
    m_diffBestAction = menu->addAction(u"Diff against the &best"_s);
    m_diffBestAction->setShortcut(u"Ctrl+Shift+D"_s);
    m_diffBestAction->setToolTip(u"Diff the shown version against the session's best "
                                 "(Ctrl+Shift+D)"_s);
    connect(m_diffAction, &QAction::triggered, this, &MainWindow::diffSelected);
    connect(m_diffBestAction, &QAction::triggered, this, &MainWindow::diffAgainstBest);
    menu->addSeparator();
    const QStringList tabs = {u"&Performance"_s, u"&Honesty"_s, u"&Metrics"_s, u"D&iff view"_s};
    for (int i = 0; i < tabs.size(); ++i) {
        QAction* a = menu->addAction(tabs[i]);
        a->setShortcut(QKeySequence(u"Alt+%1"_s.arg(i + 1)));
        connect(a, &QAction::triggered, this, [this, i] { m_lowerTabs->setCurrentIndex(i); });
    }
    QAction* timeline = menu->addAction(u"&Timeline"_s);
    timeline->setShortcut(u"Ctrl+L"_s);
    connect(timeline, &QAction::triggered, this, [this] {
        m_timelineDock->show();
        m_timeline->setFocus();
    });
}

void MainWindow::buildHelpMenu() {
    QMenu* help = menuBar()->addMenu(u"&Help"_s);
    QAction* keys = help->addAction(u"&Keyboard shortcuts"_s);
    keys->setShortcut(QKeySequence::HelpContents);
    connect(keys, &QAction::triggered, this, [this] {
        QString rows;
        for (QAction* a :
             {m_newSession, m_open, m_export, m_run, m_pause, m_stop, m_approveAction,
              m_rejectAction, m_editCodeAction, m_editPlanAction, m_diffAction, m_diffBestAction}) {
            rows += u"<tr><td><b>%1</b></td><td>%2</td></tr>"_s.arg(
                a->shortcut().toString(QKeySequence::NativeText),
                a->text().remove(u'&').toHtmlEscaped());
        }
        auto* box = new QMessageBox(QMessageBox::NoIcon, u"Keyboard shortcuts"_s,
                                    u"<table cellspacing=6>"_s + rows + u"</table>"_s,
                                    QMessageBox::Ok, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    });
    m_about = help->addAction(u"&About Kevolve"_s);
    connect(m_about, &QAction::triggered, this, [this] {
        QMessageBox::about(
            this, u"About Kevolve"_s,
            u"<h3>Kevolve %1</h3><p>Agents write GPU kernels; real hardware judges them. A "
            u"planner, "
            "a coder and a reviewer propose CUDA kernels; <tt>kevolve-harness</tt> compiles each, "
            "checks it against a reference and times it on the GPU, and the session keeps every "
            "step.</p><p>Qt %2. Sessions are kept in %3.</p>"_s.arg(
                QApplication::applicationVersion().isEmpty() ? u"(development build)"_s
                                                             : QApplication::applicationVersion(),
                QString::fromLatin1(qVersion()), m_app.sessionsRoot.toHtmlEscaped()));
    });
    help->addAction(u"About &Qt"_s, qApp, &QApplication::aboutQt);
}

void MainWindow::loadKey() {
    const QString service = m_app.keyService();
    // The keyring may answer after the window is gone.
    m_keys->load(
        service, [self = QPointer<MainWindow>(this), service](bool found, const QString& error) {
            if (!self)
                return;
            self->m_keyNote.insert(
                service, found ? u"unchanged (stored in the system keyring)"_s
                         : error.isEmpty()
                             ? u"none in the keyring: KEVOLVE_API_KEY or the preset's variable "
                               "is used"_s
                             : u"the keyring cannot be read (%1)"_s.arg(error));
        });
}

void MainWindow::chooseAndExport() {
    const int version = exportVersion();
    if (version <= 0)
        return;
    const QString dir = QFileDialog::getExistingDirectory(
        this, u"Export v%1%2 to"_s.arg(version).arg(version == m_bestVersion ? u" (the best)"_s
                                                                             : QString()));
    if (dir.isEmpty())
        return;
    QString error;
    if (!exportTo(dir, version, &error)) {
        showError(u"Export"_s, error);
        return;
    }
    statusBar()->showMessage(u"Exported "_s + m_lastExport + u" to "_s + dir, 10000);
}

void MainWindow::onGateRequested(const GateRequest& request) {
    // The panels show everything that came before the gate.
    refreshLivePanels();
    for (const auto& c : request.candidates) {
        m_live.insert(c.version, c);
        // A result waiting for a decision is plotted now, marked as waiting.
        if (request.kind == GateRequest::Kind::Result && c.report) {
            IterationSummary pending = IterationSummary::fromCandidate(c);
            pending.decision = u"pending"_s;
            m_chart->addStep(pending);
        }
    }
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
    updateActions();
    QApplication::alert(this);
}

void MainWindow::approve(int version) {
    if (!m_pendingGate)
        return;
    m_pendingGate.reset();
    m_gate->close();
    updateActions();
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
        updateActions();
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
    updateActions();
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
    updateActions();
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
    if (m_start)
        m_start->setRecent(m_app.recentSessions);
}

void MainWindow::rebuildExamples() {
    m_examplesMenu->clear();
    const QStringList examples = exampleSessions();
    for (const QString& dir : examples) {
        QAction* a = m_examplesMenu->addAction(QFileInfo(dir).fileName());
        connect(a, &QAction::triggered, this, [this, dir] {
            QString error;
            if (!openSession(dir, &error))
                showError(u"Open example"_s, error);
        });
    }
    m_examplesMenu->setEnabled(!m_examplesMenu->isEmpty());
    if (m_start)
        m_start->setExamples(examples);
}

} // namespace kev
