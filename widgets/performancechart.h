// The live chart: speed-up against cuBLAS (or TFLOP/s) per version, the cuBLAS line, the best
// trustworthy result so far, and failed, rejected and suspicious versions drawn apart. New steps
// are queued and drawn at most once per refresh interval, so a fast loop never floods the GUI.
#pragma once

#include "core/iterationsummary.h"

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
    enum class Mode { Speedup, Tflops };

    explicit PerformanceChart(QWidget* parent = nullptr);

    // FLOPs of the task, for TFLOP/s (0 = TFLOP/s unavailable).
    void setTaskFlops(double flops);
    void setMode(Mode mode);
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

signals:
    void versionClicked(int version);

private:
    std::optional<double> valueOf(const IterationSummary& step) const;
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
    int m_refreshCount = 0;
};

} // namespace kev
