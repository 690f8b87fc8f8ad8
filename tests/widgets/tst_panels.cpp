// Each panel fed from the report fixtures (tests/data/reports/synthetic, and the H200 recordings
// beside them) and value types.
#include "fixtures.h"

#include "agenttextview.h"
#include "codepanel.h"
#include "compilelog.h"
#include "core/task.h"
#include "gatebar.h"
#include "honestyview.h"
#include "iterationtimeline.h"
#include "metricsview.h"
#include "performancechart.h"
#include "reviewpanel.h"
#include "strategypanel.h"
#include "timelinemodel.h"

#include <Qsci/qsciscintilla.h>

#include <QAbstractItemModelTester>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QDir>
#include <QApplication>
#include <QLabel>
#include <QLineSeries>
#include <QPlainTextEdit>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QTableView>
#include <QTableWidget>
#include <QTest>
#include <QTreeWidget>
#include <QValueAxis>

#include <algorithm>

using namespace Qt::StringLiterals;
using namespace kev;
using kev::test::report;

namespace {

Strategy mmaStrategy() {
    Strategy s;
    s.family = u"mma_sync"_s;
    s.blockM = 128;
    s.blockN = 128;
    s.blockK = 32;
    s.warps = 8;
    s.warpM = 64;
    s.warpN = 32;
    s.mma = u"mma.sync"_s;
    s.vectorWidth = 8;
    s.stages = 3;
    s.smemLayout = u"padded"_s;
    s.smemPaddingBytes = 16;
    s.rationale = u"tensor cores through mma.sync with a 3-stage cp.async pipeline"_s;
    return s;
}

IterationSummary step(int version, const QString& status, std::optional<double> speedup,
                      const QString& decision = u"automatic"_s, bool suspicious = false) {
    IterationSummary s;
    s.version = version;
    s.iteration = version;
    s.family = u"mma_sync"_s;
    s.status = status;
    s.speedup = speedup;
    if (speedup) {
        s.medianMs = 0.1995 / *speedup;
        s.referenceMs = 0.1995;
    }
    s.decision = decision;
    s.suspicious = suspicious;
    return s;
}

QStringList names(const QVector<HonestyView::Check>& checks) {
    QStringList result;
    for (const auto& c : checks)
        result << c.name;
    return result;
}

Task libraryTask(const QString& name) {
    QString error;
    const auto task = TaskLibrary().resolve(name, &error);
    if (!task)
        qFatal("built-in task %s: %s", qPrintable(name), qPrintable(error));
    return *task;
}

QString axisTitle(const PerformanceChart& chart) {
    return chart.chartView()->chart()->axes(Qt::Vertical).value(0)->titleText();
}

QStringList modeTexts(const PerformanceChart& chart) {
    QStringList texts;
    const auto* box = chart.findChild<QComboBox*>(u"chartMode"_s);
    for (int i = 0; i < box->count(); ++i)
        texts << box->itemText(i);
    return texts;
}

const HonestyView::Check* findCheck(const QVector<HonestyView::Check>& checks,
                                    const QString& name) {
    for (const auto& c : checks) {
        if (c.name == name)
            return &c;
    }
    return nullptr;
}

} // namespace

class PanelsTest : public QObject {
    Q_OBJECT
private slots:
    void timelineShowsStepsAndSelects();
    void strategyPanelShowsAndValidatesEdits();
    void compileLogParsesBothForms();
    void codePanelMarksCompileErrorsAndIsReadOnlyUntilEdit();
    void reviewPanelShowsMeasuredFacts();
    void reviewPanelShowsFailures();
    void chartDistinguishesPointsAndThrottles();
    void chartTflopsMode();
    void chartNamesTheTaskReference();
    void chartPercentOfFloorMode();
    void gateAndTimelineNameTheReference();
    void honestyViewListsEveryCheck();
    void honestyViewFlagsFailures();
    void metricsViewTablesAndRoofline();
    void metricsViewShowsBankConflictsAsAShare();
    void timelineSummaryNeverCountsARejectedVersionAsBest();
    void agentTextViewBuffersChunks();
    void recordedH200Reports();
};

void PanelsTest::timelineShowsStepsAndSelects() {
    IterationTimeline timeline;
    QAbstractItemModelTester tester(timeline.model(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    timeline.addStep(step(1, u"ok"_s, 0.41));
    timeline.addStep(step(2, u"compile_error"_s, std::nullopt));
    timeline.addStep(step(3, u"ok"_s, 0.874, u"approved"_s));
    timeline.setBestVersion(3);
    QCOMPARE(timeline.model()->rowCount(), 3);
    const auto* model = timeline.model();
    QCOMPARE(model->index(2, TimelineModel::SpeedupColumn).data().toString(), u"0.874×"_s);
    QCOMPARE(model->index(1, TimelineModel::SpeedupColumn).data().toString(), u"—"_s);
    QCOMPARE(model->index(1, TimelineModel::StatusColumn).data().toString(), u"compile error"_s);
    QCOMPARE(model->index(2, TimelineModel::DecisionColumn).data().toString(), u"approved"_s);
    QCOMPARE(model->index(0, TimelineModel::FamilyColumn).data().toString(), u"mma_sync"_s);
    QVERIFY(!model->index(0, TimelineModel::StatusColumn).data(Qt::DecorationRole).isNull());
    QVERIFY(model->index(2, 0).data(Qt::FontRole).value<QFont>().bold());
    QVERIFY(!model->index(0, 0).data(Qt::FontRole).value<QFont>().bold());

    // A changed decision replaces the row instead of adding one.
    timeline.addStep(step(3, u"ok"_s, 0.874, u"rejected"_s));
    QCOMPARE(timeline.model()->rowCount(), 3);
    QCOMPARE(model->index(2, TimelineModel::DecisionColumn).data().toString(), u"rejected"_s);

    QSignalSpy spy(&timeline, &IterationTimeline::versionSelected);
    timeline.view()->setCurrentIndex(model->index(1, 0));
    QCOMPARE(spy.size(), 1);
    QCOMPARE(spy.at(0).at(0).toInt(), 2);
    // Programmatic selection does not echo back.
    timeline.selectVersion(3);
    QCOMPARE(spy.size(), 1);
    QCOMPARE(timeline.selectedVersion(), 3);
}

void PanelsTest::strategyPanelShowsAndValidatesEdits() {
    const Strategy s = mmaStrategy();
    QVERIFY2(s.validate().isEmpty(), qPrintable(s.validate().join(u"; "_s)));
    StrategyPanel panel;
    panel.setStrategy(3, s);
    QCOMPARE(panel.version(), 3);
    const auto families = panel.structuredView()->findItems(u"family"_s, Qt::MatchRecursive, 0);
    QCOMPARE(families.size(), 1);
    QCOMPARE(families.first()->text(1), u"mma_sync"_s);
    QVERIFY(panel.textView()->isReadOnly());
    QVERIFY(panel.problems().isEmpty());

    panel.setEditing(true);
    QVERIFY(!panel.textView()->isReadOnly());
    QSignalSpy validity(&panel, &StrategyPanel::validityChanged);
    QString text = panel.textView()->toPlainText();
    QVERIFY2(text.contains(u"block_m: 128"_s), qPrintable(text));
    panel.textView()->setPlainText(text.replace(u"block_m: 128"_s, u"block_m: 100"_s));
    panel.validateNow();
    QVERIFY(!panel.problems().isEmpty());
    QVERIFY2(panel.problems().join(u' ').contains(u"block_m"_s),
             qPrintable(panel.problems().join(u"; "_s)));
    QVERIFY(!panel.problemsLabel()->isHidden());
    QVERIFY(!panel.editedStrategy());
    QCOMPARE(validity.size(), 1);
    QCOMPARE(validity.at(0).at(0).toBool(), false);

    text.replace(u"block_m: 100"_s, u"block_m: 128"_s);
    QVERIFY2(text.contains(u"stages: 3"_s), qPrintable(text));
    panel.textView()->setPlainText(text.replace(u"stages: 3"_s, u"stages: 4"_s));
    panel.validateNow();
    QVERIFY2(panel.problems().isEmpty(), qPrintable(panel.problems().join(u"; "_s)));
    const auto edited = panel.editedStrategy();
    QVERIFY(edited);
    QCOMPARE(edited->stages, 4);
    QCOMPARE(validity.size(), 2);

    // Text that is not a plan names the problem too.
    panel.textView()->setPlainText(u"this is not a plan"_s);
    panel.validateNow();
    QVERIFY(!panel.problems().isEmpty());

    panel.setEditing(false);
    QVERIFY(panel.textView()->isReadOnly());
    QVERIFY(panel.textView()->toPlainText().contains(u"block_m: 128"_s));
}

void PanelsTest::compileLogParsesBothForms() {
    const auto diagnostics = parseCompileLog(
        u"kernel_v2.cu(7): error: expected a \";\"\n"
        "/tmp/k/kernel_v2.cu:12:5: fatal error: missing.h: No such file or directory\n"
        "/opt/kevolve/include/kevolve/abi.h(40): warning: something in a header\n"
        "kernel_v2.cu(9): warning #177-D: variable \"x\" was declared but never referenced\n"_s);
    QCOMPARE(diagnostics.size(), 3);
    QCOMPARE(diagnostics[0].line, 7);
    QVERIFY(diagnostics[0].error);
    QCOMPARE(diagnostics[0].message, u"expected a \";\""_s);
    QCOMPARE(diagnostics[1].line, 12);
    QCOMPARE(diagnostics[1].column, 5);
    QVERIFY(diagnostics[1].error);
    QCOMPARE(diagnostics[2].line, 9);
    QVERIFY(!diagnostics[2].error);
}

void PanelsTest::codePanelMarksCompileErrorsAndIsReadOnlyUntilEdit() {
    CodePanel panel;
    const QString source = kev::test::readText(u"kernel_v4.cu"_s);
    panel.setSource(4, source, 2);
    QVERIFY(panel.isReadOnly());
    QCOMPARE(panel.source(), source);
    const EvaluationReport r = report(u"report_compile_error.json"_s);
    panel.setCompileLog(r.compileLog);
    QCOMPARE(panel.errorLines(), (QVector<int>{14, 32}));
    QCOMPARE(panel.diagnostics().size(), 3);

    panel.setEditing(true);
    QVERIFY(!panel.isReadOnly());
    QSignalSpy modified(&panel, &CodePanel::modificationChanged);
    panel.editor()->insertAt(u"// edited\n"_s, 0, 0);
    QVERIFY(panel.isModified());
    QCOMPARE(modified.size(), 1);
    QVERIFY(panel.source().startsWith(u"// edited\n"_s));
    // Leaving edit mode without submitting restores the agent's source.
    panel.setEditing(false);
    QVERIFY(panel.isReadOnly());
    QCOMPARE(panel.source(), source);

    // A new source clears the previous markers.
    panel.setSource(5, kev::test::readText(u"kernel_a.cu"_s));
    QVERIFY(panel.errorLines().isEmpty());
}

void PanelsTest::reviewPanelShowsMeasuredFacts() {
    ReviewPanel panel;
    panel.setReport(3, report(u"report_ok_gemm_panels.json"_s));
    ReviewFeedback feedback;
    feedback.status = u"ok"_s;
    feedback.compileOk = true;
    feedback.correct = true;
    feedback.speedup = 0.874;
    feedback.bottleneckId = u"smem_bank_conflicts"_s;
    feedback.bottleneckText = u"MIO throttle dominates: shared-memory loads conflict"_s;
    feedback.suggestions = {u"swizzle the shared-memory tiles (128 B)"_s};
    feedback.blame = u"strategy"_s;
    panel.setReview(3, feedback);
    const QString text = panel.plainText();
    for (const QString& expected :
         {u"1000×1064×904"_s, u"257×392×520"_s, u"post"_s, u"0.2283 ms"_s, u"0.1995 ms"_s,
          u"0.874×"_s, u"CI95 [0.869, 0.879]"_s, u"Roofline"_s, u"60.8 %"_s, u"compute-bound"_s,
          u"registers / thread"_s, u"168"_s, u"achieved occupancy"_s, u"11.8 %"_s,
          u"tensor pipe utilisation"_s, u"smem_bank_conflicts"_s, u"swizzle the shared-memory"_s,
          u"Blame: strategy"_s}) {
        QVERIFY2(text.contains(expected),
                 qPrintable(u"missing \""_s + expected + u"\" in:\n"_s + text));
    }
    QVERIFY(!text.contains(u"FAIL"_s));
}

void PanelsTest::reviewPanelShowsFailures() {
    ReviewPanel panel;
    panel.setReport(5, report(u"report_incorrect.json"_s));
    QString text = panel.plainText();
    QVERIFY(text.contains(u"FAIL"_s));
    QVERIFY(text.contains(u"12288"_s));
    QVERIFY(!text.contains(u"Timing"_s));

    panel.setReport(9, report(u"report_suspicious.json"_s));
    QVERIFY(panel.plainText().contains(u"Suspicious"_s));

    panel.setReport(7, report(u"report_rule_violation.json"_s));
    QVERIFY(panel.plainText().contains(u"dlopen"_s));

    panel.setProgress(8, u"time"_s, u"round 2 of 3"_s, 0.5);
    QVERIFY(panel.plainText().contains(u"round 2 of 3"_s));
    QVERIFY(!panel.plainText().contains(u"dlopen"_s));
}

void PanelsTest::chartDistinguishesPointsAndThrottles() {
    PerformanceChart chart;
    chart.setSteps({step(1, u"ok"_s, 0.41), step(2, u"incorrect"_s, std::nullopt),
                    step(3, u"ok"_s, 0.874), step(4, u"ok"_s, 0.95, u"rejected"_s),
                    step(5, u"ok"_s, 1.16, u"automatic"_s, true), step(6, u"ok"_s, 0.80)});
    QCOMPARE(chart.correctSeries()->count(), 3);
    QCOMPARE(chart.failedSeries()->count(), 1);
    QCOMPARE(chart.failedSeries()->at(0), QPointF(2, 0));
    QCOMPARE(chart.rejectedSeries()->count(), 1);
    QCOMPARE(chart.suspiciousSeries()->count(), 1);
    // Best so far ignores the rejected and the suspicious versions.
    QCOMPARE(chart.bestSeries()->count(), 6);
    QCOMPARE(chart.bestSeries()->at(5).y(), 0.874);
    QCOMPARE(chart.referenceSeries()->at(0).y(), 1.0);
    QCOMPARE(chart.referenceSeries()->at(1).y(), 1.0);

    const int before = chart.refreshCount();
    for (int v = 7; v < 207; ++v)
        chart.addStep(step(v, u"ok"_s, 0.5 + v * 0.001));
    // Two hundred steps in one burst: no redraw yet, then one.
    QCOMPARE(chart.refreshCount(), before);
    QTRY_COMPARE_WITH_TIMEOUT(chart.refreshCount(), before + 1, 2000);
    QTest::qWait(PerformanceChart::kRefreshIntervalMs * 2);
    QCOMPARE(chart.refreshCount(), before + 1);
    QCOMPARE(chart.correctSeries()->count(), 203);
}

void PanelsTest::chartTflopsMode() {
    PerformanceChart chart;
    chart.setMode(PerformanceChart::Mode::Tflops);
    QCOMPARE(chart.mode(), PerformanceChart::Mode::Speedup);
    const double flops = 2.0 * 4096.0 * 4096.0 * 4096.0;
    chart.setTaskFlops(flops);
    chart.setSteps({step(1, u"ok"_s, 0.874)});
    chart.setMode(PerformanceChart::Mode::Tflops);
    QCOMPARE(chart.mode(), PerformanceChart::Mode::Tflops);
    QVERIFY(qAbs(chart.correctSeries()->at(0).y() - flops / (0.1995 / 0.874 * 1e-3) / 1e12) < 1e-6);
    QVERIFY(qAbs(chart.referenceSeries()->at(0).y() - flops / (0.1995e-3) / 1e12) < 1e-6);
}

void PanelsTest::chartNamesTheTaskReference() {
    PerformanceChart chart;
    chart.setTask(libraryTask(u"gemm_fp16_fp32_4096"_s));
    QCOMPARE(chart.mode(), PerformanceChart::Mode::Speedup);
    QCOMPARE(chart.referenceSeries()->name(), u"cuBLAS"_s);
    QCOMPARE(axisTitle(chart), u"speed-up vs cuBLAS"_s);
    QCOMPARE(modeTexts(chart),
             QStringList({u"Speed-up vs cuBLAS"_s, u"TFLOP/s"_s, u"% of roofline floor"_s}));

    chart.setTask(libraryTask(u"softmax_f32_8192"_s));
    QCOMPARE(chart.referenceSeries()->name(), u"harness reference"_s);
    QCOMPARE(modeTexts(chart).value(0), u"Speed-up vs harness reference"_s);
    chart.setMode(PerformanceChart::Mode::Speedup);
    QCOMPARE(axisTitle(chart), u"speed-up vs harness reference"_s);
    QVERIFY(!modeTexts(chart).join(u' ').contains(u"cuBLAS"_s));

    // The roofline's own verdict, when a report gave one, decides the default mode.
    chart.setTask(libraryTask(u"softmax_f32_8192"_s), u"compute"_s);
    QCOMPARE(chart.mode(), PerformanceChart::Mode::Speedup);
    chart.setTask(libraryTask(u"gemm_fp16_fp32_4096"_s), u"memory"_s);
    QCOMPARE(chart.mode(), PerformanceChart::Mode::PercentOfFloor);
    chart.setTask(libraryTask(u"gemm_fp16_fp32_4096"_s));
    chart.setRooflineBound(u"memory"_s);
    QCOMPARE(chart.mode(), PerformanceChart::Mode::PercentOfFloor);
    chart.setRooflineBound(u"compute"_s);
    QCOMPARE(chart.mode(), PerformanceChart::Mode::Speedup);
    // A mode the person picked stays.
    auto* box = chart.findChild<QComboBox*>(u"chartMode"_s);
    box->setCurrentIndex(2);
    emit box->activated(2);
    chart.setRooflineBound(u"memory"_s);
    chart.setRooflineBound(u"compute"_s);
    QCOMPARE(chart.mode(), PerformanceChart::Mode::PercentOfFloor);
}

void PanelsTest::chartPercentOfFloorMode() {
    PerformanceChart chart;
    chart.setTask(libraryTask(u"softmax_f32_8192"_s));
    QCOMPARE(chart.mode(), PerformanceChart::Mode::PercentOfFloor);
    QCOMPARE(axisTitle(chart), u"% of roofline floor"_s);
    auto first = step(1, u"ok"_s, 2.0);
    first.percentOfFloor = 60.0;
    auto second = step(2, u"ok"_s, 3.0);
    second.percentOfFloor = 87.5;
    chart.setSteps({first, second, step(3, u"incorrect"_s, std::nullopt)});
    QCOMPARE(chart.correctSeries()->count(), 2);
    QCOMPARE(chart.correctSeries()->at(0).y(), 60.0);
    QCOMPARE(chart.correctSeries()->at(1).y(), 87.5);
    QCOMPARE(chart.bestSeries()->at(1).y(), 87.5);
    QCOMPARE(chart.failedSeries()->count(), 1);
    // The reference ran 2x and 3x slower: 30 % and about 29.2 % of the floor, averaged.
    QVERIFY(qAbs(chart.referenceSeries()->at(0).y() - (30.0 + 87.5 / 3.0) / 2) < 1e-9);

    chart.setMode(PerformanceChart::Mode::Speedup);
    QCOMPARE(chart.correctSeries()->at(1).y(), 3.0);
    QCOMPARE(chart.referenceSeries()->at(0).y(), 1.0);
    chart.setMode(PerformanceChart::Mode::PercentOfFloor);
    QCOMPARE(chart.correctSeries()->at(0).y(), 60.0);
}

void PanelsTest::gateAndTimelineNameTheReference() {
    Candidate candidate;
    candidate.version = 3;
    candidate.report = report(u"report_ok_gemm_panels.json"_s);
    GateRequest request;
    request.iteration = 2;
    request.candidates = {candidate};
    GateBar gate;
    gate.showRequest(request, 3);
    const auto* label = gate.findChild<QLabel*>();
    QVERIFY(label->text().contains(u"0.874× cuBLAS"_s));
    gate.setReferenceName(referenceName(libraryTask(u"softmax_f32_8192"_s)));
    QVERIFY2(label->text().contains(u"0.874× harness reference"_s), qPrintable(label->text()));
    QVERIFY(!label->text().contains(u"cuBLAS"_s));

    IterationTimeline timeline;
    timeline.setSteps({step(1, u"ok"_s, 1.5)});
    QCOMPARE(timeline.model()
                 ->headerData(TimelineModel::SpeedupColumn, Qt::Horizontal, Qt::DisplayRole)
                 .toString(),
             u"vs cuBLAS"_s);
    timeline.setReferenceName(u"harness reference"_s);
    QCOMPARE(timeline.model()
                 ->headerData(TimelineModel::SpeedupColumn, Qt::Horizontal, Qt::DisplayRole)
                 .toString(),
             u"vs harness reference"_s);
    const auto labels = timeline.findChildren<QLabel*>();
    QVERIFY(std::any_of(labels.begin(), labels.end(), [](const QLabel* l) {
        return l->text().contains(u"best 1.500× harness reference"_s);
    }));

    const auto gemmChecks = HonestyView::checksOf(report(u"report_ok_gemm_panels.json"_s));
    const auto* gemm = findCheck(gemmChecks, u"suspicious"_s);
    QVERIFY2(gemm->evidence.contains(u"0.874× cuBLAS"_s), qPrintable(gemm->evidence));
    const auto checks =
        HonestyView::checksOf(report(u"report_ok_gemm_panels.json"_s), u"harness reference"_s);
    const auto* softmax = findCheck(checks, u"suspicious"_s);
    QVERIFY2(softmax->evidence.contains(u"60.8 % of the DRAM roofline floor"_s),
             qPrintable(softmax->evidence));
    QVERIFY(!softmax->evidence.contains(u"cuBLAS"_s));
}

void PanelsTest::honestyViewListsEveryCheck() {
    HonestyView view;
    view.setReport(3, report(u"report_ok_gemm_panels.json"_s));
    const auto checks = view.checks();
    for (const QString& name :
         {u"rules: undefined_symbols"_s, u"rules: exported_symbols"_s,
          u"rules: static_constructors"_s, u"rules: launch_audit"_s, u"rules: sandbox"_s,
          u"poisoning"_s, u"completeness"_s, u"correctness (before timing)"_s,
          u"post-timing re-check"_s, u"stability"_s, u"timed outputs checked"_s, u"suspicious"_s}) {
        const auto* c = findCheck(checks, name);
        QVERIFY2(c, qPrintable(u"missing "_s + name + u" in "_s + names(checks).join(u", "_s)));
        QVERIFY2(c->result == HonestyView::Result::Pass, qPrintable(name + u": "_s + c->evidence));
        QVERIFY2(!c->evidence.isEmpty(), qPrintable(name));
    }
    QVERIFY(findCheck(checks, u"launch_audit"_s) == nullptr);
    QVERIFY(findCheck(checks, u"rules: launch_audit"_s)->evidence.contains(u"harness stream"_s));
    QVERIFY(findCheck(checks, u"completeness"_s)->evidence.contains(u"0 NaN"_s));
    QVERIFY(findCheck(checks, u"post-timing re-check"_s)->evidence.contains(u"1 of 1"_s));
    QCOMPARE(view.tree()->topLevelItemCount(), checks.size());
}

void PanelsTest::honestyViewFlagsFailures() {
    const auto incorrect = HonestyView::checksOf(report(u"report_incorrect.json"_s));
    QCOMPARE(findCheck(incorrect, u"completeness"_s)->result, HonestyView::Result::Fail);
    QVERIFY(findCheck(incorrect, u"completeness"_s)->evidence.contains(u"16232 NaN"_s));
    QVERIFY(
        findCheck(incorrect, u"completeness"_s)->evidence.contains(u"1000×1064×904: 12288 NaN"_s));
    QCOMPARE(findCheck(incorrect, u"correctness (before timing)"_s)->result,
             HonestyView::Result::Fail);
    QCOMPARE(findCheck(incorrect, u"stability"_s)->result, HonestyView::Result::NotRun);

    const auto unstable = HonestyView::checksOf(report(u"report_unstable.json"_s));
    QCOMPARE(findCheck(unstable, u"stability"_s)->result, HonestyView::Result::Fail);
    QVERIFY(findCheck(unstable, u"stability"_s)->evidence.contains(u"22.4 %"_s));

    const auto suspicious = HonestyView::checksOf(report(u"report_suspicious.json"_s));
    QCOMPARE(findCheck(suspicious, u"suspicious"_s)->result, HonestyView::Result::Warn);

    const auto violation = HonestyView::checksOf(report(u"report_rule_violation.json"_s));
    QCOMPARE(findCheck(violation, u"rules: undefined_symbols"_s)->result,
             HonestyView::Result::Fail);
    QVERIFY(findCheck(violation, u"rules: undefined_symbols"_s)->evidence.contains(u"dlopen"_s));

    const auto compile = HonestyView::checksOf(report(u"report_compile_error.json"_s));
    QCOMPARE(findCheck(compile, u"rules"_s)->result, HonestyView::Result::NotRun);
}

void PanelsTest::metricsViewTablesAndRoofline() {
    MetricsView view;
    const double flops = 2.0 * 4096.0 * 4096.0 * 4096.0;
    view.setTaskCounts(flops, 4096.0 * 4096.0 * 8.0);
    view.addReport(3, report(u"report_ok_gemm_panels.json"_s));
    view.addReport(4, report(u"report_compile_error.json"_s));
    view.addReport(9, report(u"report_suspicious.json"_s));
    QCOMPARE(view.rowCount(), 2);
    QCOMPARE(view.table()->item(0, 0)->text(), u"v3"_s);
    QCOMPARE(view.table()->item(0, 2)->text(), u"11.8 %"_s);
    // Bank conflicts: the profile shape carries only a count, labelled as one.
    QCOMPARE(view.table()->item(0, 3)->text(), u"1048576 (count)"_s);
    QCOMPARE(view.table()->item(1, 3)->text(), u"0 (count)"_s);
    QCOMPARE(view.table()->item(0, 4)->text(), u"1.262"_s);
    // Every column says what it is, its Nsight Compute name and what is good.
    for (int c = 0; c < view.table()->columnCount(); ++c) {
        const QString tip = view.table()->horizontalHeaderItem(c)->toolTip();
        QVERIFY2(!tip.isEmpty(), qPrintable(QString::number(c)));
        if (c >= 2)
            QVERIFY2(tip.contains(u"Nsight Compute"_s) && tip.contains(u"ood"_s), qPrintable(tip));
    }
    const auto points = view.points();
    QCOMPARE(points.size(), 2);
    QVERIFY(points[0].measuredIntensity);
    QVERIFY(qAbs(points[0].intensity - flops / 402653184.0) < 1e-9);
    QCOMPARE(points[0].tflops, report(u"report_ok_gemm_panels.json"_s).tflops);
    QCOMPARE(view.candidateSeries()->count(), 2);
    // The roof bends at the ridge: peak FLOP/s over peak bandwidth.
    QCOMPARE(view.roofSeries()->count(), 3);
    QVERIFY(qAbs(view.roofSeries()->at(1).x() - 9.89e14 / 4.8e12) < 1e-6);
    QVERIFY(qAbs(view.roofSeries()->at(2).y() - 989.0) < 1e-6);

    QSignalSpy spy(&view, &MetricsView::versionSelected);
    view.selectVersion(9);
    QCOMPARE(spy.size(), 0);
    view.table()->setCurrentCell(0, 0);
    QCOMPARE(spy.size(), 1);
    QCOMPARE(spy.at(0).at(0).toInt(), 3);
}

void PanelsTest::metricsViewShowsBankConflictsAsAShare() {
    // A GEMM profiled on the H200: 33.5 M shared-memory wavefronts, no bank conflict.
    QFile file(QStringLiteral(KEV_SOURCE_DIR) +
               u"/tests/data/reports/h200_profiled_gemm_fp16_fp32_4096__mma_sync.json"_s);
    if (!file.exists())
        QSKIP("no profiled H200 report under tests/data/reports");
    QVERIFY(file.open(QIODevice::ReadOnly));
    QString error;
    const auto r =
        EvaluationReport::fromJson(QJsonDocument::fromJson(file.readAll()).object(), &error);
    QVERIFY2(r, qPrintable(error));
    MetricsView view;
    view.addReport(1, *r);
    QCOMPARE(view.rowCount(), 1);
    QCOMPARE(view.table()->item(0, 3)->text(), u"0.0 %"_s);
    QCOMPARE(view.table()->item(0, 4)->text(), u"21.33"_s);
    QVERIFY(view.table()->item(0, 2)->text().endsWith(u" %"_s));
}

void PanelsTest::timelineSummaryNeverCountsARejectedVersionAsBest() {
    IterationTimeline timeline;
    IterationSummary fast;
    fast.version = 1;
    fast.status = u"ok"_s;
    fast.speedup = 1.5;
    fast.decision = u"rejected"_s;
    IterationSummary slow = fast;
    slow.version = 2;
    slow.speedup = 0.8;
    slow.decision = u"approved"_s;
    timeline.setSteps({fast, slow});
    const QString summary = timeline.findChild<QLabel*>()->text();
    QVERIFY2(summary.contains(u"best 0.800×"_s), qPrintable(summary));
    QVERIFY2(!summary.contains(u"1.500×"_s), qPrintable(summary));
}

void PanelsTest::agentTextViewBuffersChunks() {
    AgentTextView view;
    QSignalSpy spy(&view, &AgentTextView::textAvailable);
    view.startTurn(u"planner v1"_s);
    for (int i = 0; i < 100; ++i)
        view.appendChunk(u"tok%1 "_s.arg(i));
    const int afterHeader = int(spy.size());
    QVERIFY(!view.toPlainText().contains(u"tok0"_s));
    QTRY_VERIFY_WITH_TIMEOUT(view.toPlainText().contains(u"tok99"_s), 2000);
    QCOMPARE(spy.size(), afterHeader + 1);
    QVERIFY(view.toPlainText().startsWith(u"── planner v1 ──"_s));
    // A second turn starts on a line of its own, after a blank line, even when the last reply
    // did not end its line.
    view.startTurn(u"planner v1"_s);
    view.appendChunk(u"second"_s);
    view.flush();
    QVERIFY2(view.toPlainText().contains(u"tok99 \n\n── planner v1 ──\nsecond"_s),
             qPrintable(view.toPlainText().right(80)));

    // A recorded version: each turn of the role with its backend, prompt and reply.
    AgentTurn asked;
    asked.role = u"planner"_s;
    asked.backend = u"llm"_s;
    asked.model = u"qwen2.5-coder"_s;
    asked.prompt = u"plan the next GEMM"_s;
    asked.reply = u"{\"family\": \"wgmma_tma\"}"_s;
    AgentTurn coder = asked;
    coder.role = u"coder"_s;
    view.showRecorded(u"planner"_s, 4, {asked, coder, asked});
    const QString text = view.toPlainText();
    QCOMPARE(text.count(u"── planner, v4 — llm (qwen2.5-coder) ──"_s), 2);
    QVERIFY(text.contains(u"plan the next GEMM"_s));
    QVERIFY(!text.contains(u"tok99"_s));
    view.showRecorded(u"reviewer"_s, 4, {asked});
    QVERIFY(view.toPlainText().contains(u"no reviewer turn recorded for v4"_s));
}

void PanelsTest::recordedH200Reports() {
    // Every report recorded on the H200 (tests/data/reports): the panels show it, and the honesty
    // view fails a check exactly when the referee refused the kernel.
    const QDir dir(QStringLiteral(KEV_SOURCE_DIR) + u"/tests/data/reports"_s);
    const QStringList files = dir.entryList({u"h200_*.json"_s}, QDir::Files);
    if (files.isEmpty())
        QSKIP("no recorded reports under tests/data/reports");
    ReviewPanel review;
    HonestyView honesty;
    MetricsView metrics;
    int version = 0;
    for (const QString& name : files) {
        QFile file(dir.filePath(name));
        QVERIFY(file.open(QIODevice::ReadOnly));
        QString error;
        const auto r =
            EvaluationReport::fromJson(QJsonDocument::fromJson(file.readAll()).object(), &error);
        QVERIFY2(r, qPrintable(name + u": "_s + error));
        review.setReport(++version, *r);
        honesty.setReport(version, *r);
        metrics.addReport(version, *r);
        QVERIFY2(review.plainText().contains(r->message.left(20)), qPrintable(name));
        const auto checks = honesty.checks();
        const bool anyFailed = std::any_of(checks.begin(), checks.end(), [](const auto& c) {
            return c.result == HonestyView::Result::Fail;
        });
        const auto status = r->status;
        if (status == EvaluationReport::Status::Incorrect ||
            status == EvaluationReport::Status::RuleViolation)
            QVERIFY2(anyFailed, qPrintable(name));
        if (status == EvaluationReport::Status::Ok)
            QVERIFY2(!anyFailed, qPrintable(name));
        if (r->timed)
            QVERIFY2(review.plainText().contains(u"CI95"_s), qPrintable(name));
    }
    QVERIFY(metrics.points().size() >= 5);
}

QTEST_MAIN(PanelsTest)
#include "tst_panels.moc"
