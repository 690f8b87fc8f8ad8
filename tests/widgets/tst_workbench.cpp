// The workbench as a person uses it (issue 17): the start page and the last session on a new
// start, recorded transcripts, a diff of any two versions from the keyboard, an export that names
// its version, nothing stale after a resume, a compile failure that does not end the session, the
// run's progress, the gate's shortcuts, quitting during a run, and the layout kept between starts.
#include "scriptedrun.h"

#include "agenttextview.h"
#include "codepanel.h"
#include "diffview.h"
#include "gatebar.h"
#include "iterationtimeline.h"
#include "mainwindow.h"
#include "metricsview.h"
#include "performancechart.h"
#include "reviewpanel.h"
#include "runprogress.h"
#include "startpage.h"
#include "strategypanel.h"
#include "timelinemodel.h"

#include "core/metatypes.h"
#include "core/sessionstore.h"

#include <QAction>
#include <QChartView>
#include <QComboBox>
#include <QDir>
#include <QHeaderView>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QScatterSeries>
#include <QSettings>
#include <QSignalSpy>
#include <QSplitter>
#include <QTableView>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBlock>
#include <QTextBrowser>
#include <QValueAxis>

using namespace Qt::StringLiterals;
using namespace kev;
using kev::test::marker;
using kev::test::waitFor;

namespace {

QString examplesRoot() {
    return QStringLiteral(KEV_SOURCE_DIR) + u"/resources/examples"_s;
}

QString gemmExample() {
    return examplesRoot() + u"/h200_gemm_fp16_fp32_4096"_s;
}

} // namespace

class WorkbenchTest : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_root;
    int m_counter = 0;

    QString settingsPath() { return m_root.filePath(u"kevolve%1.ini"_s.arg(++m_counter)); }
    std::shared_ptr<QSettings> settingsAt(const QString& path) {
        return std::make_shared<QSettings>(path, QSettings::IniFormat);
    }
    EngineSettings scripted(const QStringList& sources, bool stepMode, int iterations) {
        return kev::test::scriptedSettings(sources, stepMode, iterations,
                                           m_root.filePath(u"state%1"_s.arg(++m_counter)));
    }

private slots:
    void initTestCase() {
        registerMetaTypes();
        QVERIFY(m_root.isValid());
        if (!QFileInfo::exists(gemmExample()))
            QSKIP("no recorded example under resources/examples");
        qputenv("KEVOLVE_EXAMPLES", examplesRoot().toUtf8());
    }

    void firstStartShowsTheStartPage() {
        const QString ini = settingsPath();
        {
            MainWindow window(settingsAt(ini));
            window.show();
            QVERIFY(window.isStartPageShown());
            QVERIFY(!window.restoreLastSession());
            StartPage* start = window.startPage();
            QVERIFY(start->isVisible());
            QCOMPARE(start->headlineExample(), QDir(gemmExample()).absolutePath());
            QVERIFY(start->exampleButton()->isEnabled());
            QCOMPARE(start->recentList()->count(), 0);
            QVERIFY(start->exampleList()->count() >= 2);

            // The big button opens the recorded H200 session.
            QTest::mouseClick(start->exampleButton(), Qt::LeftButton);
            QVERIFY(!window.isStartPageShown());
            QCOMPARE(window.timeline()->model()->rowCount(), 6);
            QCOMPARE(window.shownVersion(), window.bestVersion());
        }
        // The next start reopens it, and lists it as recent.
        MainWindow again(settingsAt(ini));
        QVERIFY(again.isStartPageShown());
        QCOMPARE(again.startPage()->recentList()->count(), 1);
        QVERIFY(again.restoreLastSession());
        QVERIFY(!again.isStartPageShown());
        QCOMPARE(again.sessionDir(), QDir(gemmExample()).absolutePath());

        // A last session that went away leaves the start page, with the reason.
        const QString gone = m_root.filePath(u"gone-session"_s);
        QString error;
        QVERIFY(SessionStore::create(gone, kev::test::headlineTask(), EngineSettings(), &error));
        const QString ini2 = settingsPath();
        {
            MainWindow window(settingsAt(ini2));
            QVERIFY2(window.openSession(gone, &error), qPrintable(error));
        }
        QVERIFY(QDir(gone).removeRecursively());
        MainWindow third(settingsAt(ini2));
        QVERIFY(!third.restoreLastSession());
        QVERIFY(third.isStartPageShown());
        QVERIFY2(third.statusText().contains(u"could not be opened"_s),
                 qPrintable(third.statusText()));
    }

    void recordedSessionsShowTheirTranscripts() {
        MainWindow window(settingsAt(settingsPath()));
        QString error;
        QVERIFY2(window.openSession(gemmExample(), &error), qPrintable(error));
        window.showVersion(2);
        const QString planner = window.strategyPanel()->agentView()->toPlainText();
        const QString coder = window.codePanel()->agentView()->toPlainText();
        const QString reviewer = window.reviewPanel()->agentView()->toPlainText();
        QVERIFY2(planner.contains(u"planner, v2 — builtin"_s), qPrintable(planner.left(300)));
        QVERIFY2(planner.contains(u"iteration 2 of task gemm_fp16_fp32_4096"_s),
                 qPrintable(planner.left(300)));
        QVERIFY2(coder.contains(u"Kevolve strategy"_s), qPrintable(coder.left(300)));
        QVERIFY2(reviewer.contains(u"report status ok"_s), qPrintable(reviewer.left(300)));
        // Another version replaces the text; nothing of v2 is left.
        window.showVersion(1);
        QVERIFY(window.strategyPanel()->agentView()->toPlainText().contains(u"v1"_s));
        QVERIFY(!window.strategyPanel()->agentView()->toPlainText().contains(u"iteration 2 of"_s));
    }

    void anyTwoVersionsDiffFromTheKeyboard() {
        MainWindow window(settingsAt(settingsPath()));
        window.resize(1600, 1000);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QString error;
        QVERIFY2(window.openSession(gemmExample(), &error), qPrintable(error));
        QTableView* view = window.timeline()->view();
        // Click v1, then Ctrl+click v5: both stay selected (the second click used to clear it).
        const auto rowRect = [&](int version) {
            return view->visualRect(window.timeline()->model()->index(
                window.timeline()->model()->rowOfVersion(version), TimelineModel::FamilyColumn));
        };
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, rowRect(1).center());
        QCOMPARE(window.shownVersion(), 1);
        QTest::mouseClick(view->viewport(), Qt::LeftButton, Qt::ControlModifier,
                          rowRect(5).center());
        QCOMPARE(window.timeline()->selectedVersions(), (QVector<int>{1, 5}));
        QCOMPARE(window.diffAction()->shortcut(), QKeySequence(u"Ctrl+D"_s));
        window.diffAction()->trigger();
        DiffView* diff = window.diffView();
        QCOMPARE(window.lowerTabs()->currentWidget(), diff);
        QCOMPARE(diff->leftPicker()->currentData().toInt(), 1);
        QCOMPARE(diff->rightPicker()->currentData().toInt(), 5);
        QVERIFY(diff->changedLineCount() > 0);
        QVERIFY(!diff->strategyChanges().isEmpty()); // mma_sync against wgmma_tma

        // The shown version against the best (v6), from its own shortcut.
        window.showVersion(3);
        QCOMPARE(window.diffBestAction()->shortcut(), QKeySequence(u"Ctrl+Shift+D"_s));
        window.diffBestAction()->trigger();
        QCOMPARE(diff->leftPicker()->currentData().toInt(), 3);
        QCOMPARE(diff->rightPicker()->currentData().toInt(), 6);

        // The pickers in the diff tab reach any pair too.
        QCOMPARE(diff->leftPicker()->count(), 6);
        QVERIFY(diff->rightPicker()->itemText(5).contains(u"best"_s));
        diff->leftPicker()->setCurrentIndex(1);
        emit diff->leftPicker()->activated(1);
        QCOMPARE(diff->leftPicker()->currentData().toInt(), 2);
        QCOMPARE(diff->rightPicker()->currentData().toInt(), 6);
    }

    void exportWritesTheBestAndSaysSo() {
        MainWindow window(settingsAt(settingsPath()));
        QString error;
        QVERIFY2(window.openSession(gemmExample(), &error), qPrintable(error));
        window.showVersion(2);
        // The menu names what it exports; the default is the best, not the version on screen.
        QCOMPARE(window.exportVersion(), 6);
        QVERIFY2(window.exportAction()->text().contains(u"v6"_s),
                 qPrintable(window.exportAction()->text()));
        const QString out = m_root.filePath(u"export-best"_s);
        QVERIFY2(window.exportTo(out, std::nullopt, &error), qPrintable(error));
        QVERIFY2(window.lastExportSummary().startsWith(u"v6, the session's best"_s),
                 qPrintable(window.lastExportSummary()));
        const QString source = m_root.filePath(u"export-best/kernel.cu"_s);
        QFile kernel(source);
        QVERIFY(kernel.open(QIODevice::ReadOnly));
        QString loadError;
        const auto store = SessionStore::open(gemmExample(), &loadError);
        QCOMPARE(QString::fromUtf8(kernel.readAll()).trimmed(),
                 store->loadSource(6, &loadError)->trimmed());
        // A chosen version is named as not the best.
        QVERIFY2(window.exportTo(m_root.filePath(u"export-v2"_s), 2, &error), qPrintable(error));
        QVERIFY2(window.lastExportSummary().startsWith(u"v2, not the session's best"_s),
                 qPrintable(window.lastExportSummary()));
    }

    void nothingIsClippedAt1600() {
        MainWindow window(settingsAt(settingsPath()));
        window.resize(1600, 1000);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QString error;
        QVERIFY2(window.openSession(gemmExample(), &error), qPrintable(error));
        window.showVersion(6);
        QCoreApplication::processEvents();
        // The correctness table's cells keep each figure on one line however narrow the panel.
        auto* browser = window.reviewPanel()->findChild<QTextBrowser*>(u"reviewBrowser"_s);
        QVERIFY(browser);
        int checked = 0;
        for (QTextBlock b = browser->document()->begin(); b.isValid(); b = b.next()) {
            const QString text = b.text();
            if (text == u"phase"_s || text.contains(u"4096×4096×4096"_s)) {
                QVERIFY(b.layout());
                QVERIFY2(b.layout()->lineCount() == 1, qPrintable(text));
                ++checked;
            }
        }
        QVERIFY(checked >= 2);
        // Nothing makes the window wider than the screen it was sized for, diff shown or not.
        window.showDiff(1, 5);
        QCoreApplication::processEvents();
        QVERIFY2(window.minimumSizeHint().width() <= 1300,
                 qPrintable(QString::number(window.minimumSizeHint().width())));
        QCOMPARE(window.width(), 1600);
        // The timeline's header fits its text.
        QHeaderView* header = window.timeline()->view()->horizontalHeader();
        for (int c = 0; c < TimelineModel::DecisionColumn; ++c) {
            const QString title = window.timeline()
                                      ->model()
                                      ->headerData(c, Qt::Horizontal, Qt::DisplayRole)
                                      .toString();
            QVERIFY2(header->sectionSize(c) > header->fontMetrics().horizontalAdvance(title),
                     qPrintable(title));
        }
    }

    void noStaleStateAfterAFailureAndAResume() {
        const QString dir = m_root.filePath(u"stale-session"_s);
        MainWindow window(settingsAt(settingsPath()));
        window.show();
        QSignalSpy finished(window.engine(), &Engine::finished);
        QSignalSpy failed(window.engine(), &Engine::failed);
        // v1 does not compile and the coder gives up on it (the second coder call fails): a
        // recorded compile_error step, and the session goes on; the reviewer fails at v2.
        EngineSettings s =
            scripted({marker(u"compile_error"_s), marker(u"ok speedup=0.5 alpha-run"_s)}, false, 3);
        s.coderOptions.insert(u"fail_coder_at"_s, 2);
        s.reviewerOptions.insert(u"fail_reviewer_at"_s, 2);
        window.startSession(kev::test::headlineTask(), s, dir);
        QVERIFY(waitFor([&] { return !failed.isEmpty() || !finished.isEmpty(); }));
        QCOMPARE(failed.size(), 1);
        QCOMPARE(window.timeline()->model()->rowCount(), 1);
        QCOMPARE(window.timeline()->model()->steps().first().status, u"compile_error"_s);
        QVERIFY2(window.statusText().contains(u"An agent failed"_s),
                 qPrintable(window.statusText()));
        QVERIFY(!window.statusText().contains(u"Agent:"_s));
        QVERIFY(window.codePanel()->agentView()->toPlainText().contains(
            u"could not repair the compile error"_s));

        // The person fixes the settings and resumes: the run reaches its target.
        QString error;
        auto store = SessionStore::open(dir, &error);
        QVERIFY2(store, qPrintable(error));
        SessionInfo info = store->info();
        info.settings.reviewerOptions.remove(u"fail_reviewer_at"_s);
        info.settings.coderOptions.remove(u"fail_coder_at"_s);
        info.settings.coderOptions.insert(u"sources"_s,
                                          QJsonArray{marker(u"ok speedup=0.5 beta-run"_s)});
        info.settings.targetSpeedup = 0.45;
        info.settings.targetFloorPercent = 0;
        QVERIFY2(store->updateInfo(info, &error), qPrintable(error));
        QVERIFY2(window.openSession(dir, &error), qPrintable(error));
        window.setAutomatic(true);
        window.resumeSession();
        QVERIFY(waitFor([&] { return !finished.isEmpty() || failed.size() > 1; }));
        QCOMPARE(failed.size(), 1);
        QCOMPARE(finished.first().at(0).value<Engine::StopReason>(),
                 Engine::StopReason::TargetReached);
        const QString status = window.statusText();
        QVERIFY2(!status.contains(u"failed"_s, Qt::CaseInsensitive), qPrintable(status));
        QVERIFY2(status.contains(u"target reached"_s), qPrintable(status));
        QVERIFY2(!window.reviewPanel()->plainText().contains(u"asking the coder"_s),
                 qPrintable(window.reviewPanel()->plainText()));
        QVERIFY(window.runProgress()->text().contains(u"target reached"_s));

        // Another session: no transcript of this one stays in the agent tabs.
        QVERIFY2(window.openSession(gemmExample(), &error), qPrintable(error));
        for (AgentTextView* v :
             {window.strategyPanel()->agentView(), window.codePanel()->agentView(),
              window.reviewPanel()->agentView()}) {
            QVERIFY2(!v->toPlainText().contains(u"beta-run"_s), qPrintable(v->toPlainText()));
            QVERIFY2(!v->toPlainText().contains(u"scripted"_s), qPrintable(v->toPlainText()));
        }
        QVERIFY(!window.statusText().contains(u"target reached"_s));
    }

    void progressAndGateShortcutsDuringAStepModeRun() {
        MainWindow window(settingsAt(settingsPath()));
        window.show();
        QSignalSpy finished(window.engine(), &Engine::finished);
        QSignalSpy failed(window.engine(), &Engine::failed);
        QStringList reasons;
        window.setReasonProvider([&reasons](int version) {
            reasons << QString::number(version);
            return u"too slow"_s;
        });
        window.startSession(kev::test::headlineTask(),
                            scripted({marker(u"ok speedup=0.5"_s), marker(u"ok speedup=0.6"_s),
                                      marker(u"ok speedup=0.7"_s)},
                                     true, 3),
                            m_root.filePath(u"shortcut-session"_s));
        GateBar* gate = window.gateBar();
        QVERIFY(waitFor([&] { return gate->isOpen() || !failed.isEmpty(); }));
        QVERIFY(failed.isEmpty());
        RunProgress* progress = window.runProgress();
        QVERIFY(progress->isVisible());
        QVERIFY2(progress->text().startsWith(u"Iteration 1 of 3"_s), qPrintable(progress->text()));
        QVERIFY2(progress->text().contains(u"Waiting for your decision"_s),
                 qPrintable(progress->text()));
        QVERIFY(!window.statusText().contains(u"AwaitingGate"_s));
        // The result waiting for a decision is plotted already.
        window.chart()->refresh();
        QCOMPARE(window.chart()->correctSeries()->count(), 1);
        QVERIFY(window.chart()->pointToolTip(1).contains(u"awaiting your decision"_s));

        QCOMPARE(window.approveAction()->shortcut(), QKeySequence(u"Ctrl+Return"_s));
        QVERIFY(window.approveAction()->isEnabled());
        window.approveAction()->trigger();
        QVERIFY(!gate->isOpen());
        QVERIFY(waitFor([&] { return gate->isOpen() && gate->version() == 2; }));
        QVERIFY2(progress->text().startsWith(u"Iteration 2 of 3"_s), qPrintable(progress->text()));
        QCOMPARE(progress->bar()->value(), 1);
        window.rejectAction()->trigger();
        QCOMPARE(reasons, QStringList{u"2"_s});
        QVERIFY(waitFor([&] { return gate->isOpen() && gate->version() == 3; }));
        window.editCodeAction()->trigger();
        QCOMPARE(gate->editing(), GateBar::Editing::Code);
        QVERIFY(!window.codePanel()->isReadOnly());
        // Ctrl+Return evaluates the edit in progress; Pause keeps it from running further.
        window.approveAction()->trigger();
        QVERIFY(window.codePanel()->isReadOnly());
        window.pauseAction()->trigger();
        QVERIFY(waitFor([&] { return !finished.isEmpty() || !failed.isEmpty(); }));
        QVERIFY(failed.isEmpty());
        QVERIFY2(window.runProgress()->text().contains(u"of 3 iterations"_s),
                 qPrintable(window.runProgress()->text()));
        QString error;
        const auto store = SessionStore::open(window.sessionDir(), &error);
        QVERIFY2(store, qPrintable(error));
        QCOMPARE(store->steps()[0].decision, u"approved"_s);
        QCOMPARE(store->steps()[1].decision, u"rejected"_s);
        QCOMPARE(store->steps()[2].decision, u"edited"_s);
    }

    void quittingDuringARunAsks() {
        MainWindow window(settingsAt(settingsPath()));
        window.show();
        QSignalSpy finished(window.engine(), &Engine::finished);
        int asked = 0;
        bool answer = false;
        window.setQuitConfirmer([&] {
            ++asked;
            return answer;
        });
        window.startSession(kev::test::headlineTask(),
                            scripted({marker(u"ok speedup=0.5"_s)}, true, 2),
                            m_root.filePath(u"quit-session"_s));
        QVERIFY(waitFor([&] { return window.gateBar()->isOpen(); }));
        QVERIFY(!window.close());
        QCOMPARE(asked, 1);
        QVERIFY(window.isVisible());
        answer = true;
        QVERIFY(window.close());
        QCOMPARE(asked, 2);
        QVERIFY(waitFor([&] { return !finished.isEmpty(); }, 10000));
        QCOMPARE(finished.first().at(0).value<Engine::StopReason>(), Engine::StopReason::Cancelled);
    }

    void settingsProblemsAreNamed() {
        AppSettings app;
        QVERIFY(app.problems().isEmpty());
        app.llmBaseUrl = u"localhost:8000/v1"_s;
        app.harnessCommands = {u"/nonexistent/kevolve-harness serve"_s, u"sh -c true"_s};
        const QStringList problems = app.problems();
        QCOMPARE(problems.size(), 2);
        QVERIFY2(problems[0].contains(u"localhost:8000/v1"_s), qPrintable(problems[0]));
        QVERIFY2(problems[1].contains(u"/nonexistent/kevolve-harness"_s), qPrintable(problems[1]));
        app.llmBaseUrl = u"http://gpu1:8000/v1"_s;
        app.harnessCommands = {u"sh -c true"_s};
        QVERIFY(app.problems().isEmpty());
        // ~/.local/share/kevolve/sessions, the program's name once.
        QVERIFY2(AppSettings::defaultSessionsRoot().endsWith(u"/kevolve/sessions"_s),
                 qPrintable(AppSettings::defaultSessionsRoot()));
        QVERIFY(!AppSettings::defaultSessionsRoot().contains(u"kevolve/kevolve"_s));
    }

    void chartAxisOnlyGrows() {
        PerformanceChart chart;
        QCOMPARE(PerformanceChart::niceCeiling(1.26), 1.5);
        QCOMPARE(PerformanceChart::niceCeiling(0.93), 1.0);
        QCOMPARE(PerformanceChart::niceCeiling(230), 250.0);
        IterationSummary step;
        step.status = u"ok"_s;
        step.version = 1;
        step.speedup = 2.2;
        chart.addStep(step);
        chart.refresh();
        auto* axis = qobject_cast<QValueAxis*>(
            chart.findChild<QChartView*>()->chart()->axes(Qt::Vertical).first());
        QVERIFY(axis);
        const double top = axis->max();
        QVERIFY(top >= 2.2);
        step.version = 2;
        step.speedup = 0.5;
        chart.addStep(step);
        chart.refresh();
        QCOMPARE(axis->max(), top);
    }

    void layoutChartModeAndTabAreKept() {
        const QString ini = settingsPath();
        QList<int> sizes;
        {
            MainWindow window(settingsAt(ini));
            window.show();
            QVERIFY(QTest::qWaitForWindowExposed(&window));
            window.resize(1300, 900);
            QString error;
            QVERIFY2(window.openSession(gemmExample(), &error), qPrintable(error));
            window.agentSplitter()->setSizes({500, 300, 200});
            sizes = window.agentSplitter()->sizes();
            window.lowerTabs()->setCurrentIndex(2);
            auto* mode = window.chart()->findChild<QComboBox*>(u"chartMode"_s);
            QVERIFY(mode);
            mode->setCurrentIndex(1);
            emit mode->activated(1);
            QCOMPARE(window.chart()->mode(), PerformanceChart::Mode::Tflops);
            QVERIFY(window.close());
        }
        MainWindow again(settingsAt(ini));
        again.show();
        QVERIFY(QTest::qWaitForWindowExposed(&again));
        QCOMPARE(again.size(), QSize(1300, 900));
        QCOMPARE(again.lowerTabs()->currentIndex(), 2);
        QVERIFY(again.restoreLastSession());
        // The panels keep their proportions (the pixels follow the dock's restored width).
        QTest::qWait(50);
        const QList<int> restored = again.agentSplitter()->sizes();
        QCOMPARE(restored.size(), sizes.size());
        const auto share = [](const QList<int>& v, int i) {
            return double(v[i]) / double(v[0] + v[1] + v[2]);
        };
        for (int i = 0; i < 3; ++i)
            QVERIFY2(qAbs(share(restored, i) - share(sizes, i)) < 0.05,
                     qPrintable(u"%1 against %2"_s.arg(share(restored, i)).arg(share(sizes, i))));
        // The task's default (speed-up for a GEMM) gives way to the mode the person picked.
        QCOMPARE(again.chart()->mode(), PerformanceChart::Mode::Tflops);
        QVERIFY(again.aboutAction());
    }
};

QTEST_MAIN(WorkbenchTest)
#include "tst_workbench.moc"
