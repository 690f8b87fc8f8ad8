// Profiler metrics across the session: occupancy, bank conflicts and DRAM / SM / tensor-pipe
// utilisation per version (from each report's profile), and a roofline chart with every timed
// candidate placed on it.
#pragma once

#include "core/evaluationreport.h"

#include <QMap>
#include <QWidget>

class QChart;
class QChartView;
class QLabel;
class QLineSeries;
class QLogValueAxis;
class QScatterSeries;
class QTableWidget;

namespace kev {

class MetricsView : public QWidget {
    Q_OBJECT
public:
    struct Point {
        int version = 0;
        // FLOPs per DRAM byte: measured (flops / dram_bytes) when profiled, else the task's.
        double intensity = 0;
        double tflops = 0;
        bool measuredIntensity = false;
    };

    explicit MetricsView(QWidget* parent = nullptr);

    // FLOPs and minimum bytes of the task (the roofline's x when no DRAM bytes were measured).
    void setTaskCounts(double flops, double minBytes);
    // Device peaks: FLOP/s of the task's math and DRAM bytes/s. Defaults: an H200 (dense fp16
    // tensor cores 989 TFLOP/s, HBM3e 4.8 TB/s). A report's roofline.peak_* replaces them.
    void setPeaks(double flopsPerSecond, double bytesPerSecond);
    void addReport(int version, const kev::EvaluationReport& report);
    void selectVersion(int version);
    void clear();

    int rowCount() const;
    QVector<Point> points() const;
    QTableWidget* table() const { return m_table; }
    QScatterSeries* candidateSeries() const { return m_points; }
    QLineSeries* roofSeries() const { return m_roof; }

signals:
    void versionSelected(int version);

private:
    struct Entry {
        QVector<std::pair<QString, double>> metrics;
        std::optional<Point> point;
    };
    void rebuildTable();
    void fillRow(int row, int version, const Entry& entry);
    void rebuildChart();

    QTableWidget* m_table;
    QChart* m_chart;
    QChartView* m_view;
    QLineSeries* m_roof;
    QScatterSeries* m_points;
    QScatterSeries* m_selected;
    QLogValueAxis* m_axisX;
    QLogValueAxis* m_axisY;
    QLabel* m_note;
    QMap<int, Entry> m_entries;
    double m_flops = 0;
    double m_minBytes = 0;
    double m_peakFlops = 989.4e12;
    double m_peakBytes = 4.8e12;
    int m_selectedVersion = 0;
};

} // namespace kev
