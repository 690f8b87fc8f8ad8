// The live chart: speed-up against the task's reference (or TFLOP/s, or % of the DRAM roofline
// floor) per version, the reference's line, the best trustworthy result so far, and failed,
// rejected and suspicious versions drawn apart. New steps are queued and drawn at most once per
// refresh interval, so a fast loop never floods the GUI.
#pragma once

#include "core/iterationsummary.h"
#include "core/task.h"

#include <QTimer>
#include <QVector>
#include <QWidget>

class QChart;
class QChartView;
class QComboBox;
class QLineSeries;
class QScatterSeries;
class QValueAxis;

namespace kev {

class PerformanceChart : public QWidget {
    Q_OBJECT
public:
    enum class Mode { Speedup, Tflops, PercentOfFloor };

    explicit PerformanceChart(QWidget* parent = nullptr);

    // FLOPs of the task, for TFLOP/s (0 = TFLOP/s unavailable).
    void setTaskFlops(double flops);
    // The task's FLOPs and reference name; the default mode becomes % of the roofline floor for a
    // memory-bound task: the roofline's bound ("memory"/"compute") when a report gave it,
    // otherwise every op but GEMM.
    void setTask(const kev::Task& task, const QString& bound = {});
    QString referenceName() const { return m_referenceName; }
    // A report's roofline bound: switches the default mode when it contradicts the op's guess,
    // unless the person already picked a mode for this task.
    void setRooflineBound(const QString& bound);
    void setMode(Mode mode);
    // A mode the person chose before (restored from the settings): it wins over the default.
    void setChosenMode(Mode mode);
    Mode mode() const { return m_mode; }

    void setSteps(const QVector<kev::IterationSummary>& steps);
    void addStep(const kev::IterationSummary& step);
    void clear();
    // Draws what is queued now (the refresh timer does this otherwise).
    void refresh();

    int refreshCount() const { return m_refreshCount; }
    static constexpr int kRefreshIntervalMs = 250;

    QLineSeries* speedupSeries() const { return m_line; }
    QLineSeries* bestSeries() const { return m_best; }
    QLineSeries* referenceSeries() const { return m_reference; }
    QScatterSeries* correctSeries() const { return m_correct; }
    QScatterSeries* failedSeries() const { return m_failed; }
    QScatterSeries* rejectedSeries() const { return m_rejected; }
    QScatterSeries* suspiciousSeries() const { return m_suspicious; }
    QChartView* chartView() const { return m_view; }

    // The text a point's tooltip shows: version, status, plan and what was measured.
    QString pointToolTip(int version) const;
    // A round axis top at or above value: whole steps of niceUnit(value), at most six.
    static double niceCeiling(double value);
    static double niceUnit(double value);

signals:
    void versionClicked(int version);
    // The person picked a mode in the chart's box (the window remembers it).
    void modeChosen(kev::PerformanceChart::Mode mode);

private:
    std::optional<double> valueOf(const IterationSummary& step) const;
    QString axisTitle() const;
    void scheduleRefresh();

    QChart* m_chart;
    QChartView* m_view;
    QComboBox* m_modeBox;
    QLineSeries* m_line;
    QLineSeries* m_best;
    QLineSeries* m_reference;
    QScatterSeries* m_correct;
    QScatterSeries* m_failed;
    QScatterSeries* m_rejected;
    QScatterSeries* m_suspicious;
    QValueAxis* m_axisX;
    QValueAxis* m_axisY;
    QTimer m_refreshTimer;
    QVector<IterationSummary> m_steps;
    double m_flops = 0;
    Mode m_mode = Mode::Speedup;
    QString m_referenceName = QStringLiteral("cuBLAS");
    QString m_bound;
    bool m_modeChosen = false;
    int m_refreshCount = 0;
    double m_yTop = 0;
};

} // namespace kev
