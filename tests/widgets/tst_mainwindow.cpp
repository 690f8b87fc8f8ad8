// The whole window against scripted agents and kev-fake-harness (the real harness protocol): a
// step-mode session driven through the gate buttons (approve, edit, reject), an automatic run
// through compile errors, and a 1,000-step session opened in the window. How fast (event-loop
// delay, opening time) is measured by kev-bench-workbench, not asserted here: a busy machine
// moves those figures, and docs/benchmarks.md records them.
#include "fixtures.h"

#include "codepanel.h"
#include "gatebar.h"
#include "iterationtimeline.h"
#include "mainwindow.h"
#include "performancechart.h"
#include "reviewpanel.h"
#include "strategypanel.h"
#include "timelinemodel.h"

#include "core/metatypes.h"
#include "core/sessionstore.h"

#include <Qsci/qsciscintilla.h>

#include <QAction>
#include <QDir>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QPushButton>
#include <QScatterSeries>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace kev;

namespace {

QString marker(const QString& directive) {
    // {iteration}.{beam}: each step a distinct kernel (the engine never measures one twice).
    return u"// fake: "_s + directive + u"\n// {iteration}.{beam}\n#include <kevolve/abi.h>\n"_s;
}

Task headline() {
    QString error;
    auto t = TaskLibrary().resolve(u"gemm_fp16_fp32_4096"_s, &error);
    if (!t)
        qFatal("%s", qPrintable(error));
    return *t;
}

} // namespace

class MainWindowTest : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_root;
    int m_counter = 0;

    std::shared_ptr<QSettings> settingsFile() {
        return std::make_shared<QSettings>(m_root.filePath(u"kevolve%1.ini"_s.arg(++m_counter)),
                                           QSettings::IniFormat);
    }

    EngineSettings scripted(const QStringList& sources, bool stepMode, int iterations) {
        EngineSettings s;
        s.plannerBackend = s.coderBackend = s.reviewerBackend = u"scripted"_s;
        const QJsonObject script{{u"sources"_s, QJsonArray::fromStringList(sources)},
                                 {u"delay_ms"_s, 20}};
        s.plannerOptions = s.coderOptions = s.reviewerOptions = script;
        s.maxIterations = iterations;
        s.targetSpeedup = 0;
        s.plateauIterations = 0;
        s.stepMode = stepMode;
        s.harnessCommands = {QString::fromUtf8(KEV_FAKE_HARNESS) + u" serve --state "_s +
                             m_root.filePath(u"state%1"_s.arg(m_counter))};
        s.evalTimeoutS = 10;
        return s;
    }

    static bool waitFor(const std::function<bool()>& condition, int ms = 30000) {
        QElapsedTimer t;
        t.start();
        while (!condition() && t.elapsed() < ms)
            QTest::qWait(10);
        return condition();
    }

private slots:
    void initTestCase() {
        registerMetaTypes();
        QVERIFY(m_root.isValid());
    }

    void stepModeSessionThroughTheGate() {
        MainWindow window(settingsFile());
        window.show();
        QStringList asked;
        window.setReasonProvider([&asked](int version) {
            asked << QString::number(version);
            return u"keep the agent's loop structure"_s;
        });
        QSignalSpy finished(window.engine(), &Engine::finished);
        QSignalSpy failed(window.engine(), &Engine::failed);
        const QString dir = m_root.filePath(u"step-session"_s);
        window.startSession(headline(),
                            scripted({marker(u"ok speedup=0.5"_s), marker(u"ok speedup=0.6"_s),
                                      marker(u"ok speedup=0.4"_s), marker(u"ok speedup=0.55"_s)},
                                     true, 4),
                            dir);
        QVERIFY(!window.runAction()->isEnabled());
        QVERIFY(window.stopAction()->isEnabled());
        GateBar* gate = window.gateBar();

        // Gate 1: the panels show v1 and the person approves it.
        QVERIFY2(waitFor([&] { return gate->isOpen() || !failed.isEmpty(); }),
                 qPrintable(window.lastError()));
        QVERIFY2(failed.isEmpty(), qPrintable(window.lastError()));
        QCOMPARE(gate->version(), 1);
        QCOMPARE(window.codePanel()->version(), 1);
        QVERIFY(window.codePanel()->source().contains(u"speedup=0.5"_s));
        QVERIFY(window.reviewPanel()->plainText().contains(u"0.500×"_s));
        QVERIFY(window.codePanel()->isReadOnly());
        QTest::mouseClick(gate->approveButton(), Qt::LeftButton);
        QVERIFY(!gate->isOpen());

        // Gate 2: edit the code; the edit is evaluated as v3.
        QVERIFY(waitFor([&] { return gate->isOpen() && gate->version() == 2; }));
        QTest::mouseClick(gate->editCodeButton(), Qt::LeftButton);
        QVERIFY(!window.codePanel()->isReadOnly());
        QVERIFY(gate->evaluateButton()->isVisible());
        window.codePanel()->editor()->setText(marker(u"ok speedup=0.77"_s) + u"// by hand\n"_s);
        QTest::mouseClick(gate->evaluateButton(), Qt::LeftButton);
        QVERIFY(!gate->isOpen());
        QVERIFY(window.codePanel()->isReadOnly());

        // Gate 3: the person's kernel, measured; reject it with a reason.
        QVERIFY(waitFor([&] { return gate->isOpen() && gate->version() == 3; }));
        QVERIFY(window.codePanel()->source().contains(u"// by hand"_s));
        QVERIFY(window.reviewPanel()->plainText().contains(u"0.770×"_s));
        QTest::mouseClick(gate->rejectButton(), Qt::LeftButton);
        QCOMPARE(asked, QStringList{u"3"_s});
        QVERIFY(!gate->isOpen());

        // Then approve whatever comes until the iteration limit.
        while (finished.isEmpty() && failed.isEmpty()) {
            QVERIFY(waitFor(
                [&] { return gate->isOpen() || !finished.isEmpty() || !failed.isEmpty(); }));
            if (gate->isOpen())
                QTest::mouseClick(gate->approveButton(), Qt::LeftButton);
        }
        QVERIFY2(failed.isEmpty(), qPrintable(window.lastError()));
        QVERIFY(waitFor([&] { return window.runAction()->isEnabled(); }, 5000));

        QString error;
        const auto store = SessionStore::open(dir, &error);
        QVERIFY2(store, qPrintable(error));
        const auto& steps = store->steps();
        QVERIFY(steps.size() >= 4);
        QCOMPARE(steps[0].decision, u"approved"_s);
        QCOMPARE(steps[1].decision, u"edited"_s);
        QCOMPARE(steps[2].origin, u"human_code"_s);
        QCOMPARE(steps[2].decision, u"rejected"_s);
        QCOMPARE(steps[2].decisionReason, u"keep the agent's loop structure"_s);
        QCOMPARE(steps[3].decision, u"approved"_s);
        QVERIFY(store->loadSource(3, &error)->contains(u"// by hand"_s));

        // The window shows what the session holds.
        QCOMPARE(window.timeline()->model()->rowCount(), int(steps.size()));
        QCOMPARE(
            window.timeline()->model()->index(2, TimelineModel::DecisionColumn).data().toString(),
            u"rejected"_s);
        window.chart()->refresh();
        QCOMPARE(window.chart()->rejectedSeries()->count(), 1);

        // Reopening the session from disk shows the same decisions.
        MainWindow reopened(settingsFile());
        QVERIFY2(reopened.openSession(dir, &error), qPrintable(error));
        QCOMPARE(reopened.timeline()->model()->rowCount(), int(steps.size()));
        reopened.showVersion(3);
        QVERIFY(reopened.codePanel()->source().contains(u"// by hand"_s));
        QVERIFY(reopened.appSettings().recentSessions.contains(QDir(dir).absolutePath()));

        // Export goes through the engine's exporter.
        const QString out = m_root.filePath(u"export"_s);
        QVERIFY2(reopened.exportTo(out, 3, &error), qPrintable(error));
        QVERIFY(QFileInfo::exists(out + u"/kernel.cu"_s));
    }

    void automaticRunThroughCompileErrors() {
        MainWindow window(settingsFile());
        window.show();
        QSignalSpy finished(window.engine(), &Engine::finished);
        QSignalSpy failed(window.engine(), &Engine::failed);
        QStringList sources;
        for (int i = 0; i < 8; ++i)
            sources << marker(u"ok speedup=0.%1"_s.arg(40 + i * 5));
        sources << marker(u"compile_error"_s) << marker(u"incorrect"_s);
        window.startSession(headline(), scripted(sources, false, 10),
                            m_root.filePath(u"auto-session"_s));
        QVERIFY(waitFor([&] { return !finished.isEmpty() || !failed.isEmpty(); }, 60000));
        QVERIFY2(failed.isEmpty(), qPrintable(window.lastError()));
        QCOMPARE(window.timeline()->model()->rowCount(), 10);
        QVERIFY(window.runAction()->isEnabled());
    }

    void thousandStepSessionOpens() {
        const QString dir = m_root.filePath(u"synthetic-1000"_s);
        QString error;
        auto store = SessionStore::create(dir, headline(), EngineSettings(), &error);
        QVERIFY2(store, qPrintable(error));
        const EvaluationReport ok = kev::test::report(u"report_ok_gemm_panels.json"_s);
        const EvaluationReport compileError = kev::test::report(u"report_compile_error.json"_s);
        const QString source = kev::test::readText(u"kernel_a.cu"_s);
        for (int v = 1; v <= 1000; ++v) {
            Candidate c;
            c.version = v;
            c.parentVersion = v - 1;
            c.iteration = v;
            c.strategy.family = u"fma_tiled"_s;
            c.strategy.rationale = u"synthetic"_s;
            c.source = source;
            c.codeAttempts = 1;
            EvaluationReport r = v % 7 == 0 ? compileError : ok;
            if (r.timed) {
                r.speedup = 0.3 + 0.6 * v / 1000.0;
                r.medianMs = r.referenceMs / r.speedup;
            }
            c.report = r;
            c.finishedAt = QDateTime::currentDateTimeUtc();
            QVERIFY2(store->appendStep(c, &error), qPrintable(error));
        }

        MainWindow window(settingsFile());
        window.show();
        QVERIFY2(window.openSession(dir, &error), qPrintable(error));
        QCoreApplication::processEvents();
        window.chart()->refresh();
        QCOMPARE(window.timeline()->model()->rowCount(), 1000);
        QVERIFY(window.shownVersion() > 0);
        QCOMPARE(window.chart()->failedSeries()->count(), 142);
    }

    void exampleSessionOpens() {
        const QString examples = QStringLiteral(KEV_SOURCE_DIR) + u"/resources/examples"_s;
        if (!QFileInfo::exists(examples))
            QSKIP("no example session under resources/examples");
        // No $KEVOLVE_EXAMPLES: the build tree's copy is found from the program's folder.
        QVERIFY(qEnvironmentVariableIsEmpty("KEVOLVE_EXAMPLES"));
        const QStringList found = MainWindow::exampleSessions();
        QVERIFY(!found.isEmpty());
        MainWindow window(settingsFile());
        QString error;
        QVERIFY2(window.openSession(found.first(), &error), qPrintable(error));
        QVERIFY(window.timeline()->model()->rowCount() > 0);
        QVERIFY(window.bestVersion() > 0);
        QCOMPARE(window.shownVersion(), window.bestVersion());
        QVERIFY(!window.codePanel()->source().isEmpty());
        QVERIFY(window.reviewPanel()->plainText().contains(u"CI95"_s));
    }

    void badSessionFolderIsRefusedWithAReason() {
        MainWindow window(settingsFile());
        QString error;
        QVERIFY(!window.openSession(m_root.filePath(u"no-such-session"_s), &error));
        QVERIFY2(error.contains(u"no-such-session"_s) || error.contains(u"session.json"_s),
                 qPrintable(error));
    }
};

QTEST_MAIN(MainWindowTest)
#include "tst_mainwindow.moc"
