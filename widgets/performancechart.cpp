#include "performancechart.h"

#include "statusstyle.h"

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineSeries>
#include <QScatterSeries>
#include <QToolTip>
#include <QValueAxis>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace kev {

using namespace Qt::StringLiterals;

namespace {

QScatterSeries* scatter(const QString& name, const QColor& color, double size,
                        QScatterSeries::MarkerShape shape, bool hollow = false) {
    auto* series = new QScatterSeries;
    series->setName(name);
    series->setMarkerShape(shape);
    series->setMarkerSize(size);
    series->setColor(hollow ? QColor(Qt::white) : color);
    series->setBorderColor(color);
    return series;
}

} // namespace

PerformanceChart::PerformanceChart(QWidget* parent)
    : QWidget(parent)
    , m_chart(new QChart)
    , m_view(new QChartView(m_chart, this))
    , m_modeBox(new QComboBox(this))
    , m_line(new QLineSeries)
    , m_best(new QLineSeries)
    , m_reference(new QLineSeries)
    , m_correct(
          scatter(u"correct"_s, StatusStyle::color(u"ok"_s), 9, QScatterSeries::MarkerShapeCircle))
    , m_failed(scatter(u"failed (incorrect, compile, rules, runtime)"_s,
                       StatusStyle::color(u"incorrect"_s), 8, QScatterSeries::MarkerShapeRectangle))
    , m_rejected(scatter(u"rejected"_s, QColor(0x70, 0x70, 0x70), 10,
                         QScatterSeries::MarkerShapeCircle, true))
    , m_suspicious(scatter(u"suspicious (not best until confirmed)"_s, QColor(0xe8, 0xb0, 0x4a), 12,
                           QScatterSeries::MarkerShapeCircle, true))
    , m_axisX(new QValueAxis)
    , m_axisY(new QValueAxis) {
    m_line->setName(u"speed-up"_s);
    m_line->setColor(StatusStyle::color(u"ok"_s).lighter(130));
    m_best->setName(u"best so far"_s);
    QPen bestPen(QColor(0x1f, 0x6f, 0x8b));
    bestPen.setWidth(3);
    m_best->setPen(bestPen);
    m_reference->setName(m_referenceName);
    QPen refPen(QColor(0xe8, 0x8b, 0x1a));
    refPen.setStyle(Qt::DashLine);
    refPen.setWidth(2);
    m_reference->setPen(refPen);

    m_chart->addSeries(m_reference);
    m_chart->addSeries(m_line);
    m_chart->addSeries(m_best);
    m_chart->addSeries(m_failed);
    m_chart->addSeries(m_rejected);
    m_chart->addSeries(m_correct);
    m_chart->addSeries(m_suspicious);
    m_axisX->setTitleText(u"version"_s);
    m_axisX->setLabelFormat(u"%d"_s);
    m_axisY->setTitleText(axisTitle());
    m_chart->addAxis(m_axisX, Qt::AlignBottom);
    m_chart->addAxis(m_axisY, Qt::AlignLeft);
    for (QAbstractSeries* s : m_chart->series()) {
        s->attachAxis(m_axisX);
        s->attachAxis(m_axisY);
    }
    m_chart->legend()->setAlignment(Qt::AlignBottom);
    m_chart->setMargins(QMargins(4, 4, 4, 4));
    // Animations would redraw for hundreds of milliseconds per update during a run.
    m_chart->setAnimationOptions(QChart::NoAnimation);
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->setObjectName(u"performanceChartView"_s);

    m_modeBox->addItem(u"Speed-up vs "_s + m_referenceName);
    m_modeBox->addItem(u"TFLOP/s"_s);
    m_modeBox->addItem(u"% of roofline floor"_s);
    m_modeBox->setObjectName(u"chartMode"_s);
    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(u"<b>Performance</b>"_s, this));
    top->addStretch();
    top->addWidget(m_modeBox);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addLayout(top);
    layout->addWidget(m_view);

    connect(m_modeBox, &QComboBox::currentIndexChanged, this,
            [this](int index) { setMode(static_cast<Mode>(index)); });
    connect(m_modeBox, &QComboBox::activated, this, [this] { m_modeChosen = true; });
    connect(m_modeBox, &QComboBox::activated, this,
            [this](int index) { emit modeChosen(static_cast<Mode>(index)); });
    for (QScatterSeries* s : {m_correct, m_failed, m_rejected, m_suspicious}) {
        connect(s, &QScatterSeries::clicked, this,
                [this](const QPointF& point) { emit versionClicked(int(std::lround(point.x()))); });
        connect(s, &QScatterSeries::hovered, this, [this](const QPointF& point, bool state) {
            if (!state) {
                QToolTip::hideText();
                return;
            }
            QToolTip::showText(QCursor::pos(), pointToolTip(int(std::lround(point.x()))), m_view);
        });
    }

    m_refreshTimer.setSingleShot(true);
    m_refreshTimer.setInterval(kRefreshIntervalMs);
    connect(&m_refreshTimer, &QTimer::timeout, this, &PerformanceChart::refresh);
    refresh();
}

void PerformanceChart::setTaskFlops(double flops) {
    m_flops = flops;
    m_modeBox->setItemData(1, flops > 0 ? QVariant() : QVariant(0), Qt::UserRole - 1);
    if (flops <= 0 && m_mode == Mode::Tflops)
        setMode(Mode::Speedup);
    else
        scheduleRefresh();
}

void PerformanceChart::setTask(const Task& task, const QString& bound) {
    m_referenceName = kev::referenceName(task);
    m_reference->setName(m_referenceName);
    m_modeBox->setItemText(0, u"Speed-up vs "_s + m_referenceName);
    m_flops = task.flops();
    m_modeBox->setItemData(1, m_flops > 0 ? QVariant() : QVariant(0), Qt::UserRole - 1);
    m_bound = bound;
    m_modeChosen = false;
    const bool memoryBound = bound.isEmpty() ? !task.isGemm() : bound == u"memory";
    setMode(memoryBound ? Mode::PercentOfFloor : Mode::Speedup);
}

void PerformanceChart::setRooflineBound(const QString& bound) {
    if (bound.isEmpty() || bound == m_bound)
        return;
    m_bound = bound;
    if (!m_modeChosen)
        setMode(bound == u"memory" ? Mode::PercentOfFloor : Mode::Speedup);
}

QString PerformanceChart::axisTitle() const {
    switch (m_mode) {
    case Mode::Tflops:
        return u"TFLOP/s"_s;
    case Mode::PercentOfFloor:
        return u"% of roofline floor"_s;
    case Mode::Speedup:
        break;
    }
    return u"speed-up vs "_s + m_referenceName;
}

void PerformanceChart::setMode(Mode mode) {
    if (mode == Mode::Tflops && m_flops <= 0)
        mode = Mode::Speedup;
    m_mode = mode;
    m_yTop = 0;
    m_modeBox->setCurrentIndex(static_cast<int>(mode));
    m_axisY->setTitleText(axisTitle());
    m_line->setName(mode == Mode::Tflops           ? u"TFLOP/s"_s
                    : mode == Mode::PercentOfFloor ? u"% of floor"_s
                                                   : u"speed-up"_s);
    refresh();
}

void PerformanceChart::setChosenMode(Mode mode) {
    setMode(mode);
    m_modeChosen = true;
}

void PerformanceChart::setSteps(const QVector<IterationSummary>& steps) {
    m_steps = steps;
    m_yTop = 0;
    refresh();
}

void PerformanceChart::addStep(const IterationSummary& step) {
    auto it = std::find_if(m_steps.begin(), m_steps.end(),
                           [&](const IterationSummary& s) { return s.version == step.version; });
    if (it != m_steps.end())
        *it = step;
    else
        m_steps.append(step);
    scheduleRefresh();
}

void PerformanceChart::clear() {
    m_steps.clear();
    m_yTop = 0;
    refresh();
}

void PerformanceChart::scheduleRefresh() {
    if (!m_refreshTimer.isActive())
        m_refreshTimer.start();
}

QString PerformanceChart::pointToolTip(int version) const {
    const auto it = std::find_if(m_steps.begin(), m_steps.end(),
                                 [&](const IterationSummary& s) { return s.version == version; });
    if (it == m_steps.end())
        return u"v%1"_s.arg(version);
    const IterationSummary& step = *it;
    QString text = u"<b>v%1</b> — %2"_s.arg(version).arg(StatusStyle::label(step.status));
    if (!step.plan.isEmpty())
        text += u"<br>"_s + step.plan.toHtmlEscaped();
    if (step.speedup)
        text += u"<br>%1 %2"_s.arg(StatusStyle::speedup(*step.speedup), m_referenceName);
    if (step.medianMs)
        text += u", %1 ms"_s.arg(*step.medianMs, 0, 'f', 4);
    if (step.percentOfFloor)
        text += u", %1 % of the DRAM floor"_s.arg(*step.percentOfFloor, 0, 'f', 1);
    if (step.suspicious)
        text += u"<br>⚠ suspicious: not best until confirmed"_s;
    if (step.decision == u"pending")
        text += u"<br><i>awaiting your decision</i>"_s;
    else if (step.decision == u"rejected")
        text += u"<br>rejected: "_s + step.decisionReason.toHtmlEscaped();
    text += u"<br><small>click to show this version</small>"_s;
    return text;
}

std::optional<double> PerformanceChart::valueOf(const IterationSummary& step) const {
    if (!step.speedup)
        return std::nullopt;
    if (m_mode == Mode::Speedup)
        return *step.speedup;
    if (m_mode == Mode::PercentOfFloor)
        return step.percentOfFloor;
    if (!step.medianMs || *step.medianMs <= 0)
        return std::nullopt;
    return m_flops / (*step.medianMs * 1e-3) / 1e12;
}

void PerformanceChart::refresh() {
    m_refreshTimer.stop();
    ++m_refreshCount;
    QList<QPointF> line, best, correct, failed, rejected, suspicious;
    double bestValue = 0;
    // The floor itself (100 %) stays in view: it is the ceiling a memory-bound kernel aims at.
    double maxY = m_mode == Mode::Speedup ? 1.2 : m_mode == Mode::PercentOfFloor ? 100 : 0;
    double referenceSum = 0;
    int referenceCount = 0;
    // The reference's own % of the floor: the candidate's, scaled by how much slower it ran.
    double referenceFloorSum = 0;
    int referenceFloorCount = 0;
    for (const auto& step : m_steps) {
        const double x = step.version;
        const auto y = valueOf(step);
        if (step.referenceMs && *step.referenceMs > 0) {
            referenceSum += *step.referenceMs;
            ++referenceCount;
            if (step.percentOfFloor && step.medianMs && *step.medianMs > 0) {
                referenceFloorSum += *step.percentOfFloor * *step.medianMs / *step.referenceMs;
                ++referenceFloorCount;
            }
        }
        if (step.decision == u"rejected") {
            rejected.append({x, y.value_or(0)});
        } else if (!y || step.status != u"ok") {
            failed.append({x, y.value_or(0)});
        } else if (step.suspicious) {
            suspicious.append({x, *y});
        } else {
            correct.append({x, *y});
        }
        if (y && step.status == u"ok")
            line.append({x, *y});
        // A result still waiting at the gate is drawn, but is nobody's best yet.
        if (y && step.isTrustworthy() && step.decision != u"rejected" &&
            step.decision != u"pending")
            bestValue = std::max(bestValue, *y);
        if (bestValue > 0)
            best.append({x, bestValue});
        if (y)
            maxY = std::max(maxY, *y);
    }
    const double lastX = m_steps.isEmpty() ? 1.0 : double(m_steps.last().version);
    double referenceY = 1.0;
    if (m_mode == Mode::Tflops)
        referenceY =
            referenceCount > 0 ? m_flops / (referenceSum / referenceCount * 1e-3) / 1e12 : 0;
    else if (m_mode == Mode::PercentOfFloor)
        referenceY = referenceFloorCount > 0 ? referenceFloorSum / referenceFloorCount : 0;
    maxY = std::max(maxY, referenceY);
    m_reference->replace(QList<QPointF>{{0.5, referenceY}, {lastX + 0.5, referenceY}});
    m_reference->setVisible(referenceY > 0);
    m_line->replace(line);
    m_best->replace(best);
    m_correct->replace(correct);
    m_failed->replace(failed);
    m_rejected->replace(rejected);
    m_suspicious->replace(suspicious);
    // Integer ticks at a round interval, about ten of them whatever the session's length. The
    // interval is set before the range: the other order lays out one label per version first.
    double interval = 1;
    for (double decade = 1; lastX / interval > 10; decade *= 10) {
        for (const double step : {1.0, 2.0, 5.0}) {
            interval = step * decade;
            if (lastX / interval <= 10)
                break;
        }
    }
    m_axisX->setTickType(QValueAxis::TicksDynamic);
    m_axisX->setTickAnchor(0);
    if (m_axisX->tickInterval() < interval) {
        m_axisX->setTickInterval(interval);
        m_axisX->setRange(0.5, lastX + 0.5);
    } else {
        m_axisX->setRange(0.5, lastX + 0.5);
        m_axisX->setTickInterval(interval);
    }
    // A round top that only grows while the mode and session stay the same: the axis does not
    // jump back and forth as points arrive.
    const double top = niceCeiling(maxY * 1.05);
    m_yTop = std::max(m_yTop, top);
    m_axisY->setRange(0, m_yTop);
    m_axisY->setTickCount(int(std::lround(m_yTop / niceUnit(m_yTop))) + 1);
}

double PerformanceChart::niceUnit(double value) {
    // The smallest round interval (1, 2, 2.5 or 5 times a power of ten) that covers value in at
    // most six steps.
    const double raw = value / 6;
    const double decade = std::pow(10.0, std::floor(std::log10(raw)));
    for (const double step : {1.0, 2.0, 2.5, 5.0}) {
        if (step * decade >= raw - 1e-12 * decade)
            return step * decade;
    }
    return 10 * decade;
}

double PerformanceChart::niceCeiling(double value) {
    if (!(value > 0))
        return 1;
    const double unit = niceUnit(value);
    return std::ceil(value / unit - 1e-9) * unit;
}

} // namespace kev
