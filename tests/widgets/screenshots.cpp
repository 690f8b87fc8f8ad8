// kev-screenshots: draws the main states of the window into PNG files (docs/screenshots/), at
// 1600×1000: the start page, the main window, the honesty and metrics views, a compile error, a
// diff of two versions that are not neighbours, the run's progress and the step gate.
//
//   xvfb-run -s "-screen 0 1920x1200x24" kev-screenshots OUT_DIR [SESSION_DIR]
//
// With SESSION_DIR (a recorded session, e.g. the example from the H200) it shows that session;
// without, it builds one from the harness reports recorded on the H200 (tests/data/reports) and
// the kernels they measured (the corpus, and the built-in families' generated sources). The step
// gate is drawn from a short run against scripted agents and the fake harness.
#include "codepanel.h"
#include "gatebar.h"
#include "iterationtimeline.h"
#include "mainwindow.h"
#include "runprogress.h"
#include "startpage.h"

#include "core/builtin/builtinreviewer.h"
#include "core/builtin/kernelfamily.h"
#include "core/metatypes.h"
#include "core/sessionstore.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QPushButton>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSettings>
#include <QSplitter>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace kev;

namespace {

QString readFile(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        qFatal("kev-screenshots: cannot read %s", qPrintable(path));
    return QString::fromUtf8(f.readAll());
}

EvaluationReport realReport(const QString& name) {
    const QString path = QStringLiteral(KEV_SOURCE_DIR) + u"/tests/data/reports/"_s + name;
    QString error;
    const auto r = EvaluationReport::fromJson(
        QJsonDocument::fromJson(readFile(path).toUtf8()).object(), &error);
    if (!r)
        qFatal("kev-screenshots: %s: %s", qPrintable(name), qPrintable(error));
    return *r;
}

struct Step {
    QString report;
    QString family;
    // A corpus kernel (tests/harness/kernels), or empty for the family's generated source.
    QString corpus;
    QJsonObject changes;
    Decision::Kind decision = Decision::Kind::Automatic;
    QString reason;
};

QString buildSession(const QString& dir) {
    QString error;
    const auto task = TaskLibrary().resolve(u"gemm_fp16_fp32_4096"_s, &error);
    EngineSettings settings;
    settings.stepMode = true;
    auto store = SessionStore::create(dir, *task, settings, &error);
    if (!store)
        qFatal("kev-screenshots: %s", qPrintable(error));
    const DeviceInfo device = DeviceInfo::h200();
    const QVector<Step> steps = {
        {u"h200_ok_naive.json"_s,
         u"fma_regblock"_s,
         u"ok_naive.cu"_s,
         {{u"block_m"_s, 32}, {u"block_n"_s, 32}},
         Decision::Kind::Approved,
         {}},
        {u"h200_ok_smem_tiled.json"_s,
         u"fma_regblock"_s,
         u"ok_smem_tiled.cu"_s,
         {{u"block_m"_s, 64}, {u"block_n"_s, 64}},
         Decision::Kind::Approved,
         {}},
        {u"h200_bad_compile_error.json"_s,
         u"fma_regblock"_s,
         u"bad_compile_error.cu"_s,
         {},
         Decision::Kind::Automatic,
         {}},
        {u"h200_ok_regblock.json"_s,
         u"fma_regblock"_s,
         u"ok_regblock.cu"_s,
         {},
         Decision::Kind::Approved,
         {}},
        {u"h200_bad_partial_write.json"_s,
         u"mma_sync"_s,
         u"bad_partial_write.cu"_s,
         {},
         Decision::Kind::Automatic,
         {}},
        {u"h200_gemm_fp16_fp32_4096__mma_sync__0.json"_s,
         u"mma_sync"_s,
         {},
         {},
         Decision::Kind::Approved,
         {}},
        {u"h200_gemm_fp16_fp32_4096__mma_sync_splitk__0.json"_s,
         u"mma_sync_splitk"_s,
         {},
         {},
         Decision::Kind::Rejected,
         u"split-K does not pay at 4096³; go to wgmma"_s},
        {u"h200_bad_fp16_accum.json"_s,
         u"mma_sync"_s,
         u"bad_fp16_accum.cu"_s,
         {},
         Decision::Kind::Automatic,
         {}},
        {u"h200_gemm_fp16_fp32_4096__wgmma_tma__0.json"_s,
         u"wgmma_tma"_s,
         {},
         {},
         Decision::Kind::Approved,
         {}},
    };
    std::optional<Strategy> parent;
    int version = 0;
    for (const Step& s : steps) {
        ++version;
        const KernelFamily* family = FamilyRegistry::instance().find(s.family);
        if (!family)
            qFatal("kev-screenshots: no built-in family %s", qPrintable(s.family));
        Candidate c;
        c.version = version;
        c.parentVersion = version - 1;
        c.iteration = version;
        c.strategy = family->defaultStrategy(*task, device);
        QJsonObject json = c.strategy.toJson();
        for (auto it = s.changes.begin(); it != s.changes.end(); ++it)
            json.insert(it.key(), it.value());
        if (auto changed = Strategy::fromJson(json, &error))
            c.strategy = *changed;
        c.source = s.corpus.isEmpty() ? family->generate(c.strategy, *task)
                                      : readFile(QStringLiteral(KEV_SOURCE_DIR) +
                                                 u"/tests/harness/kernels/"_s + s.corpus);
        c.codeAttempts = 1;
        c.report = realReport(s.report);
        AgentContext context;
        context.task = *task;
        context.device = device;
        context.parentStrategy = parent;
        c.review = reviewReport(context, c.strategy, c.source, *c.report);
        c.decision.kind = s.decision;
        c.decision.reason = s.reason;
        c.finishedAt = QDateTime::currentDateTimeUtc();
        if (!store->appendStep(c, &error))
            qFatal("kev-screenshots: %s", qPrintable(error));
        if (s.decision == Decision::Kind::Approved)
            parent = c.strategy;
    }
    return dir;
}

void grab(QWidget* window, const QString& path) {
    QTest::qWait(400);
    if (!window->grab().save(path))
        qFatal("kev-screenshots: cannot write %s", qPrintable(path));
    qInfo("wrote %s", qPrintable(path));
}

bool waitFor(const std::function<bool()>& condition, int ms) {
    QElapsedTimer t;
    t.start();
    while (!condition() && t.elapsed() < ms)
        QTest::qWait(20);
    return condition();
}

} // namespace

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    registerMetaTypes();
    const QStringList args = QApplication::arguments();
    if (args.size() < 2) {
        qCritical("usage: kev-screenshots OUT_DIR [SESSION_DIR]");
        return 2;
    }
    const QString out = args.at(1);
    // The start page lists the shipped examples from the source tree.
    if (qEnvironmentVariableIsEmpty("KEVOLVE_EXAMPLES"))
        qputenv("KEVOLVE_EXAMPLES", QByteArray(KEV_SOURCE_DIR) + "/resources/examples");
    QDir().mkpath(out);
    QTemporaryDir tmp;
    const QString session = args.size() > 2 ? args.at(2) : buildSession(tmp.filePath(u"session"_s));
    auto settings =
        std::make_shared<QSettings>(tmp.filePath(u"kevolve.ini"_s), QSettings::IniFormat);

    const QSize size(1600, 1000);
    MainWindow window(settings);
    window.resize(size);
    window.show();
    QString error;
    if (!window.openSession(session, &error)) {
        qCritical("kev-screenshots: %s", qPrintable(error));
        return 1;
    }
    const int best = window.bestVersion() > 0 ? window.bestVersion() : window.shownVersion();
    window.showVersion(best);
    window.lowerTabs()->setCurrentIndex(0);
    grab(&window, out + u"/main-window.png"_s);

    window.lowerTabs()->setCurrentIndex(1);
    grab(&window, out + u"/honesty.png"_s);
    window.lowerTabs()->setCurrentIndex(2);
    grab(&window, out + u"/metrics.png"_s);

    // The first failed step: compile errors marked in the code, failed checks in the honesty view.
    int failed = 0;
    for (int v = 1; v <= best && failed == 0; ++v) {
        window.showVersion(v);
        if (!window.codePanel()->errorLines().isEmpty())
            failed = v;
    }
    if (failed > 0) {
        window.lowerTabs()->setCurrentIndex(1);
        grab(&window, out + u"/compile-error.png"_s);
    }
    if (best > 2) {
        // Two versions that are not neighbours: the first against the best, the lower panes
        // given most of the height so the sources read at 1600×1000.
        auto* vertical = window.findChild<QSplitter*>(u"verticalSplitter"_s);
        const QList<int> before = vertical->sizes();
        vertical->setSizes({350, 650});
        window.showVersion(1);
        window.showDiff(1, best);
        grab(&window, out + u"/diff.png"_s);
        vertical->setSizes(before);
    }

    {
        // The start page of a first start, with the session above among the recent ones.
        MainWindow start(settings);
        start.resize(size);
        start.show();
        start.showStartPage();
        grab(&start, out + u"/start-page.png"_s);
    }

#ifdef KEV_FAKE_HARNESS
    // The gate in step mode, from a short run against scripted agents and the fake harness.
    MainWindow live(settings);
    live.resize(size);
    live.show();
    EngineSettings s;
    s.plannerBackend = s.coderBackend = u"scripted"_s;
    s.reviewerBackend = u"builtin"_s;
    const QString wgmma = readFile(QStringLiteral(KEV_SOURCE_DIR) +
                                   u"/tests/harness/kernels/ok_wgmma_tma_fp16_f32.cu"_s);
    s.plannerOptions = s.coderOptions = QJsonObject{
        {u"sources"_s,
         QJsonArray::fromStringList({u"// fake: ok speedup=0.62\n// {iteration}\n"_s + wgmma,
                                     u"// fake: ok speedup=0.91\n// {iteration}\n"_s + wgmma})},
        // Slow enough agents that the progress bar is caught mid-iteration.
        {u"delay_ms"_s, 1500}};
    s.maxIterations = 3;
    s.targetSpeedup = 0;
    s.plateauIterations = 0;
    s.stepMode = true;
    s.harnessCommands = {QString::fromUtf8(KEV_FAKE_HARNESS) + u" serve --state "_s +
                         tmp.filePath(u"fake-state"_s)};
    live.startSession(*TaskLibrary().resolve(u"gemm_fp16_fp32_4096"_s, &error), s,
                      tmp.filePath(u"live"_s));
    if (waitFor([&] { return live.gateBar()->isOpen(); }, 30000)) {
        live.gateBar()->approveButton()->click();
        // Mid-iteration: the progress bar with the iteration, the stage and the clock.
        waitFor([&] { return live.runProgress()->text().contains(u"Iteration 2"_s); }, 30000);
        grab(&live, out + u"/run-progress.png"_s);
        if (waitFor([&] { return live.gateBar()->isOpen(); }, 30000))
            grab(&live, out + u"/step-gate.png"_s);
    } else {
        qWarning("kev-screenshots: no gate: %s", qPrintable(live.lastError()));
    }
    live.engine()->cancel();
    QTest::qWait(500);
#endif
    return 0;
}
