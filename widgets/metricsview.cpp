#include "metricsview.h"

#include "reportmetrics.h"

#include "core/task.h"

#include <QChart>
#include <QChartView>
#include <QHeaderView>
#include <QJsonObject>
#include <QLabel>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace kev {

using namespace Qt::StringLiterals;

namespace {
// The columns of the per-version table: the metrics a person compares across versions.
const QStringList& columnKeys() {
    // Bank conflicts as the share of wavefronts they add: a raw count grows with the problem.
    static const QStringList keys = {
        u"achieved_occupancy"_s,  u"smem_conflict_share"_s, u"smem_wavefronts_per_request"_s,
        u"dram_throughput_pct"_s, u"sm_throughput_pct"_s,   u"tensor_pipe_pct"_s,
        u"fma_pipe_pct"_s,        u"l2_hit_rate_pct"_s};
    return keys;
}
} // namespace

MetricsView::MetricsView(QWidget* parent)
    : QWidget(parent)
    , m_table(new QTableWidget(this))
    , m_chart(new QChart)
    , m_view(new QChartView(m_chart, this))
    , m_roof(new QLineSeries)
    , m_points(new QScatterSeries)
    , m_selected(new QScatterSeries)
    , m_axisX(new QLogValueAxis)
    , m_axisY(new QLogValueAxis)
    , m_note(new QLabel(this)) {
    QStringList headers{u"version"_s, u"TFLOP/s"_s};
    for (const auto& key : columnKeys())
        headers << ReportMetrics::label(key);
    m_table->setColumnCount(int(headers.size()));
    m_table->setHorizontalHeaderLabels(headers);
    m_table->horizontalHeaderItem(0)->setToolTip(
        u"<b>version</b>: the step. Select a row to show it in the panels."_s);
    m_table->horizontalHeaderItem(1)->setToolTip(
        u"<b>TFLOP/s</b>: the task's FLOPs divided by the median time the harness measured (a "
        "timing, not a counter). The H200's dense FP16 tensor-core peak is 989 TFLOP/s; "
        "cuBLAS reaches about 600–700 at 4096³."_s);
    for (int i = 0; i < columnKeys().size(); ++i)
        m_table->horizontalHeaderItem(i + 2)->setToolTip(
            ReportMetrics::description(columnKeys()[i]));
    // Headers wrap to two lines instead of clipping a long metric name.
    m_table->horizontalHeader()->setDefaultAlignment(
        Qt::Alignment::fromInt(int(Qt::AlignCenter) | int(Qt::TextWordWrap)));
    m_table->horizontalHeader()->setMinimumHeight(4 * fontMetrics().height() + 8);
    m_table->verticalHeader()->hide();
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    // Narrow columns with wrapped headers: eight metrics fit beside the roofline at 1600 px.
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    const int digits = fontMetrics().horizontalAdvance(u"0000.0 %"_s);
    m_table->horizontalHeader()->setDefaultSectionSize(digits +
                                                       2 * fontMetrics().averageCharWidth());
    m_table->setColumnWidth(0, fontMetrics().horizontalAdvance(u"v1000"_s) + 12);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setObjectName(u"metricsTable"_s);

    m_roof->setName(u"roofline"_s);
    QPen roofPen(QColor(0x40, 0x40, 0x40));
    roofPen.setWidth(2);
    m_roof->setPen(roofPen);
    m_points->setName(u"candidates"_s);
    m_points->setMarkerSize(9);
    m_points->setColor(QColor(0x3f, 0xa3, 0x4d));
    m_selected->setName(u"selected"_s);
    m_selected->setMarkerSize(14);
    m_selected->setColor(Qt::transparent);
    m_selected->setBorderColor(QColor(0x1f, 0x6f, 0x8b));
    m_chart->addSeries(m_roof);
    m_chart->addSeries(m_points);
    m_chart->addSeries(m_selected);
    m_axisX->setTitleText(u"FLOPs per DRAM byte"_s);
    m_axisX->setLabelFormat(u"%g"_s);
    m_axisX->setBase(10);
    m_axisY->setTitleText(u"TFLOP/s"_s);
    m_axisY->setLabelFormat(u"%g"_s);
    m_axisY->setBase(10);
    m_chart->addAxis(m_axisX, Qt::AlignBottom);
    m_chart->addAxis(m_axisY, Qt::AlignLeft);
    for (QAbstractSeries* s : m_chart->series()) {
        s->attachAxis(m_axisX);
        s->attachAxis(m_axisY);
    }
    m_chart->setTitle(u"Roofline"_s);
    m_chart->legend()->setAlignment(Qt::AlignBottom);
    m_chart->setAnimationOptions(QChart::NoAnimation);
    m_view->setRenderHint(QPainter::Antialiasing);
    m_note->setWordWrap(true);

    auto* splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(m_table);
    splitter->addWidget(m_view);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    m_view->setMinimumWidth(340);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(splitter);
    layout->addWidget(m_note);

    connect(m_table, &QTableWidget::currentCellChanged, this, [this](int row) {
        if (row < 0)
            return;
        const auto* item = m_table->item(row, 0);
        if (item && item->data(Qt::UserRole).toInt() != m_selectedVersion)
            emit versionSelected(item->data(Qt::UserRole).toInt());
    });
    connect(m_points, &QScatterSeries::clicked, this, [this](const QPointF& p) {
        for (const auto& point : points()) {
            if (std::abs(point.intensity - p.x()) < 1e-9 * std::max(1.0, p.x()) &&
                std::abs(point.tflops - p.y()) < 1e-9 * std::max(1.0, p.y())) {
                emit versionSelected(point.version);
                return;
            }
        }
    });
    rebuildChart();
}

void MetricsView::setTaskCounts(double flops, double minBytes) {
    m_flops = flops;
    m_minBytes = minBytes;
    rebuildChart();
}

void MetricsView::setPeaks(double flopsPerSecond, double bytesPerSecond) {
    m_peakFlops = flopsPerSecond;
    m_peakBytes = bytesPerSecond;
    rebuildChart();
}

void MetricsView::addReport(int version, const EvaluationReport& report) {
    Entry entry;
    const ReportMetrics metrics = ReportMetrics::fromReport(report);
    for (const auto& m : metrics.candidate)
        entry.metrics.append({m.key, m.value});
    if (report.peakFlops && report.peakBytesPerSecond) {
        m_peakFlops = *report.peakFlops;
        m_peakBytes = *report.peakBytesPerSecond;
    }
    if (report.timed && report.medianMs > 0) {
        Point p;
        p.version = version;
        // The report's own task when it carries one (the harness normalises it), else the
        // session's.
        double flops = m_flops > 0 ? m_flops : report.roofFlops.value_or(0.0);
        double minBytes = m_minBytes;
        QString taskError;
        if (const auto task = Task::fromJson(report.harnessTask, &taskError)) {
            flops = task->flops();
            minBytes = task->minBytes();
        }
        p.tflops = report.tflops > 0 ? report.tflops : flops / (report.medianMs * 1e-3) / 1e12;
        if (const auto dram = metrics.value(u"dram_bytes"_s); dram && *dram > 0 && flops > 0) {
            p.intensity = flops / *dram;
            p.measuredIntensity = true;
        } else if (minBytes > 0 && flops > 0) {
            p.intensity = flops / minBytes;
        } else if (report.intensity) {
            p.intensity = *report.intensity;
        }
        if (p.intensity > 0 && p.tflops > 0)
            entry.point = p;
    }
    if (entry.metrics.isEmpty() && !entry.point)
        return;
    // Versions arrive in order (a run, a session opening): one new row, not the whole table again,
    // so a 1,000-step session costs the same per report at its end as at its start.
    const bool appended = m_entries.isEmpty() || version > m_entries.lastKey();
    m_entries.insert(version, entry);
    if (appended) {
        const QSignalBlocker block(m_table);
        const int row = m_table->rowCount();
        m_table->setRowCount(row + 1);
        fillRow(row, version, entry);
    } else {
        rebuildTable();
    }
    rebuildChart();
}

void MetricsView::selectVersion(int version) {
    m_selectedVersion = version;
    int row = 0;
    for (auto it = m_entries.cbegin(); it != m_entries.cend(); ++it, ++row) {
        if (it.key() == version) {
            const QSignalBlocker block(m_table);
            m_table->selectRow(row);
            break;
        }
    }
    rebuildChart();
}

void MetricsView::clear() {
    m_entries.clear();
    m_selectedVersion = 0;
    rebuildTable();
    rebuildChart();
}

int MetricsView::rowCount() const {
    return m_table->rowCount();
}

QVector<MetricsView::Point> MetricsView::points() const {
    QVector<Point> result;
    for (const auto& e : m_entries) {
        if (e.point)
            result.append(*e.point);
    }
    return result;
}

void MetricsView::rebuildTable() {
    const QSignalBlocker block(m_table);
    m_table->setRowCount(int(m_entries.size()));
    int row = 0;
    for (auto it = m_entries.cbegin(); it != m_entries.cend(); ++it, ++row)
        fillRow(row, it.key(), *it);
}

void MetricsView::fillRow(int row, int versionNumber, const Entry& entry) {
    auto* version = new QTableWidgetItem(u"v%1"_s.arg(versionNumber));
    version->setData(Qt::UserRole, versionNumber);
    m_table->setItem(row, 0, version);
    m_table->setItem(
        row, 1,
        new QTableWidgetItem(entry.point ? QString::number(entry.point->tflops, 'f', 1) : u"—"_s));
    for (int c = 0; c < columnKeys().size(); ++c) {
        const QString& key = columnKeys()[c];
        QString text = u"—"_s;
        std::optional<double> conflictCount;
        for (const auto& [k, v] : entry.metrics) {
            if (k == key)
                text = ReportMetrics::format(k, v);
            if (k == u"smem_bank_conflicts")
                conflictCount = v;
        }
        // Reports in the founding design's profile shape (profile.candidate.metrics) carry only the
        // count: shown as such, never passed off as a share.
        if (key == u"smem_conflict_share" && text == u"—" && conflictCount)
            text = ReportMetrics::format(u"smem_bank_conflicts"_s, *conflictCount) + u" (count)"_s;
        auto* item = new QTableWidgetItem(text);
        item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        if (entry.metrics.isEmpty())
            item->setToolTip(u"Not profiled: this report carries no hardware counters"_s);
        m_table->setItem(row, c + 2, item);
    }
}

void MetricsView::rebuildChart() {
    const QVector<Point> pts = points();
    const double ridge = m_peakFlops / m_peakBytes;
    double minX = ridge / 100, maxX = ridge * 10;
    for (const auto& p : pts) {
        minX = std::min(minX, p.intensity / 2);
        maxX = std::max(maxX, p.intensity * 2);
    }
    QList<QPointF> roof;
    // The roof: memory-bound slope up to the ridge, then the compute ceiling.
    roof.append({minX, minX * m_peakBytes / 1e12});
    roof.append({ridge, m_peakFlops / 1e12});
    roof.append({maxX, m_peakFlops / 1e12});
    m_roof->replace(roof);
    QList<QPointF> candidates, selected;
    double minY = minX * m_peakBytes / 1e12;
    for (const auto& p : pts) {
        candidates.append({p.intensity, p.tflops});
        if (p.version == m_selectedVersion)
            selected.append({p.intensity, p.tflops});
        minY = std::min(minY, p.tflops / 2);
    }
    m_points->replace(candidates);
    m_selected->replace(selected);
    m_axisX->setRange(minX, maxX);
    m_axisY->setRange(std::max(minY, 1e-3), m_peakFlops / 1e12 * 2);

    const bool measured =
        std::any_of(pts.begin(), pts.end(), [](const Point& p) { return p.measuredIntensity; });
    const auto unprofiled = std::count_if(m_entries.cbegin(), m_entries.cend(),
                                          [](const Entry& e) { return e.metrics.isEmpty(); });
    const QString counters =
        unprofiled == 0 ? QString()
        : unprofiled == m_entries.size()
            ? u" No report carries hardware counters: the harness ran without Nsight Compute "
              "profiling (options.profile), so the counter columns show —."_s
            : u" %1 of %2 reports carry no hardware counters (not profiled): their counter "
              "columns show —."_s.arg(unprofiled)
                  .arg(m_entries.size());
    m_note->setText(
        u"Peaks: %1 TFLOP/s, %2 TB/s (ridge at %3 FLOP/B). %4"_s.arg(m_peakFlops / 1e12, 0, 'f', 0)
            .arg(m_peakBytes / 1e12, 0, 'f', 2)
            .arg(ridge, 0, 'f', 0)
            .arg(pts.isEmpty() ? u"No timed candidate yet."_s
                 : measured    ? u"Intensity from measured DRAM bytes where profiled."_s
                               : u"Intensity from the task's minimum bytes (not profiled)."_s) +
        counters);
}

} // namespace kev
