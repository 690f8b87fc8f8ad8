// kev-bench-workbench: how responsive the workbench is, as figures for docs/benchmarks.md (not a
// pass/fail test: a busy machine moves them).
//
//   xvfb-run -a -s "-screen 0 1920x1200x24" kev-bench-workbench [stall|open|all] [ITERATIONS]
//
// stall: a run of ITERATIONS (default 30) iterations in automatic mode against scripted agents and
//        kev-fake-harness (the real harness protocol), the window resized and its panels switched
//        every 150 ms; prints the worst event-loop delay (a 5 ms timer's lateness) and the slowest
//        GUI-thread events with their receivers.
// open:  a 1,000-step session built from recorded reports, opened five times in a fresh window;
//        prints the time until the window shows it (timeline, chart, best version's panels) and
//        until every report has reached the metrics view in the background.
#include "fixtures.h"
#include "scriptedrun.h"

#include "iterationtimeline.h"
#include "mainwindow.h"
#include "metricsview.h"
#include "performancechart.h"
#include "stallprobe.h"
#include "timelinemodel.h"

#include "core/metatypes.h"
#include "core/sessionstore.h"

#include <QSettings>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>

#include <algorithm>
#include <cstdio>

using namespace Qt::StringLiterals;
using namespace kev;

namespace {

int benchStall(EventTimingApplication& app, const QTemporaryDir& root, int iterations) {
    MainWindow window(
        std::make_shared<QSettings>(root.filePath(u"stall.ini"_s), QSettings::IniFormat));
    window.resize(1600, 1000);
    QSignalSpy finished(window.engine(), &Engine::finished);
    QSignalSpy failed(window.engine(), &Engine::failed);
    QStringList sources;
    for (int i = 0; i < 12; ++i)
        sources << test::marker(u"ok speedup=0.%1"_s.arg(40 + i * 4));
    sources << test::marker(u"compile_error"_s) << test::marker(u"incorrect"_s)
            << test::marker(u"ok speedup=0.91"_s);
    // The LLM-like cadence of a real run: agents answer after 50 ms, streamed text included.
    const EngineSettings settings =
        test::scriptedSettings(sources, false, iterations, root.filePath(u"stall-state"_s), 50);

    StallProbe probe;
    QTimer churn;
    int tick = 0;
    churn.setInterval(150);
    QObject::connect(&churn, &QTimer::timeout, &window, [&] {
        ++tick;
        window.resize(tick % 2 ? QSize(1280, 800) : QSize(1600, 1000));
        window.lowerTabs()->setCurrentIndex(tick % window.lowerTabs()->count());
    });
    app.resetTiming();
    app.setTiming(true);
    // As a person does: the window appears and the run starts at once, so the first paint of
    // every panel (fonts, glyph fallbacks, the charts' scenes) happens during the run.
    window.show();
    probe.start();
    churn.start();
    window.startSession(test::headlineTask(), settings, root.filePath(u"stall-session"_s));
    test::waitFor([&] { return !finished.isEmpty() || !failed.isEmpty(); }, 600000);
    churn.stop();
    probe.stop();
    app.setTiming(false);
    if (!failed.isEmpty()) {
        std::fprintf(stderr, "kev-bench-workbench: the run failed: %s\n",
                     qPrintable(window.lastError()));
        return 1;
    }
    std::printf("stall: %d iterations, %d steps, %d resizes and tab switches\n", iterations,
                int(window.timeline()->model()->rowCount()), tick);
    std::printf("stall: %s\n", qPrintable(probe.summary()));
    for (const QString& line : probe.worstGapEvents())
        std::printf("stall:   in the worst gap: %s\n", qPrintable(line));
    for (const QString& line : probe.busiestGapEvents())
        std::printf("stall:   in the busiest gap: %s\n", qPrintable(line));
    for (const auto& e : app.slowest())
        std::printf("stall:   %4lld ms GUI-thread CPU (%4lld ms wall) %s\n", e.cpuMs, e.wallMs,
                    qPrintable(e.what));
    return 0;
}

QString buildThousandSteps(const QTemporaryDir& root) {
    const QString dir = root.filePath(u"synthetic-1000"_s);
    QString error;
    auto store = SessionStore::create(dir, test::headlineTask(), EngineSettings(), &error);
    if (!store)
        qFatal("%s", qPrintable(error));
    const EvaluationReport ok = test::report(u"report_ok_gemm_panels.json"_s);
    const EvaluationReport compileError = test::report(u"report_compile_error.json"_s);
    const QString source = test::readText(u"kernel_a.cu"_s);
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
        if (!store->appendStep(c, &error))
            qFatal("%s", qPrintable(error));
    }
    return dir;
}

int benchOpen(const QTemporaryDir& root) {
    const QString dir = buildThousandSteps(root);
    QVector<qint64> shown, loaded;
    for (int run = 0; run < 5; ++run) {
        MainWindow window(std::make_shared<QSettings>(root.filePath(u"open%1.ini"_s.arg(run)),
                                                      QSettings::IniFormat));
        window.resize(1600, 1000);
        window.show();
        QTest::qWait(100);
        QElapsedTimer t;
        t.start();
        QString error;
        if (!window.openSession(dir, &error)) {
            std::fprintf(stderr, "kev-bench-workbench: %s\n", qPrintable(error));
            return 1;
        }
        QCoreApplication::processEvents();
        window.chart()->refresh();
        window.repaint();
        shown.append(t.elapsed());
        // 857 of the 1,000 steps are timed; every one reaches the metrics view.
        test::waitFor([&] { return window.metricsView()->rowCount() >= 857; }, 60000);
        loaded.append(t.elapsed());
    }
    const auto median = [](QVector<qint64> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    std::printf("open: 1000-step session shown in median %lld ms (max %lld) over %d opens\n",
                median(shown), *std::max_element(shown.begin(), shown.end()), int(shown.size()));
    std::printf("open: every report in the metrics view after median %lld ms (max %lld)\n",
                median(loaded), *std::max_element(loaded.begin(), loaded.end()));
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    EventTimingApplication app(argc, argv);
    registerMetaTypes();
    const QStringList args = QCoreApplication::arguments().mid(1);
    const QString what = args.value(0, u"all"_s);
    const int iterations = args.value(1, u"30"_s).toInt();
    QTemporaryDir root;
    if (!root.isValid())
        return 1;
    int rc = 0;
    if (what == u"stall" || what == u"all")
        rc |= benchStall(app, root, iterations > 0 ? iterations : 30);
    if (what == u"open" || what == u"all")
        rc |= benchOpen(root);
    return rc;
}
