#include "reviewpanel.h"

#include "agenttextview.h"
#include "reportmetrics.h"
#include "statusstyle.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QLabel>
#include <QTabWidget>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <algorithm>

namespace kev {

using namespace Qt::StringLiterals;

namespace {

QString esc(const QString& text) {
    return text.toHtmlEscaped();
}

QString num(double value, int precision = 4) {
    return QString::number(value, 'g', precision);
}

QString shapeText(const Trial& trial) {
    const auto has = [&trial](const QString& name) {
        return std::any_of(trial.shape.begin(), trial.shape.end(),
                           [&name](const auto& dim) { return dim.first == name; });
    };
    if (has(u"M"_s) && has(u"N"_s) && has(u"K"_s))
        return u"%1×%2×%3"_s.arg(trial.dim(u"M"_s)).arg(trial.dim(u"N"_s)).arg(trial.dim(u"K"_s));
    // Other ops name their dimensions (rows, cols, n, ...): keep the names.
    QStringList parts;
    for (const auto& [name, extent] : trial.shape)
        parts << name + u' ' + QString::number(extent);
    return parts.join(u" × "_s);
}

// nowrap: a table of short figures (shapes, errors) whose cells must not break inside a number
// when the panel is narrow; the browser scrolls sideways instead.
QString row(const QStringList& cells, bool header = false, bool nowrap = false) {
    const QString tag = header ? u"th"_s : u"td"_s;
    const QString style = nowrap ? u" style='white-space:nowrap'"_s : QString();
    QString html = u"<tr>"_s;
    for (const auto& cell : cells)
        html += u"<%1%3>%2</%1>"_s.arg(tag, cell, style);
    return html + u"</tr>"_s;
}

QString section(const QString& title) {
    return u"<h3 style='margin-bottom:2px'>"_s + esc(title) + u"</h3>"_s;
}

QString correctnessHtml(const CorrectnessSummary& correctness) {
    QString html = section(u"Correctness"_s);
    if (!correctness.rule.isEmpty())
        html += u"<p><i>"_s + esc(correctness.rule) + u"</i></p>"_s;
    html += u"<table border='0' cellspacing='0' cellpadding='2'>"_s;
    html += row(
        {u"phase"_s, u"shape"_s, u"inputs"_s, u"error / bound"_s, u"margin"_s, u"NaN"_s, QString()},
        true, true);
    for (const Trial& t : correctness.trialResults) {
        const bool pass = t.pass;
        const qint64 nans = t.nanCount;
        html += row({esc(t.phase), shapeText(t), esc(t.distribution),
                     num(t.relFro, 2) + u" / "_s + num(t.boundRelFro, 2), num(t.margin, 2),
                     nans > 0 ? u"<b style='color:#d03b3b'>%1</b>"_s.arg(nans) : u"0"_s,
                     pass ? u"<span style='color:#3fa34d'>pass</span>"_s
                          : u"<b style='color:#d03b3b'>FAIL</b>"_s},
                    false, true);
    }
    return html + u"</table>"_s;
}

QString timingHtml(const EvaluationReport& r, const QString& reference) {
    QString html = section(u"Timing (ABBA pairs against %1)"_s.arg(esc(reference)));
    html += u"<table cellpadding='2'>"_s;
    html += row({u"candidate median"_s,
                 u"%1 ms (%2 TFLOP/s)"_s.arg(num(r.medianMs)).arg(num(r.tflops, 4))});
    html += row({u"reference median"_s,
                 u"%1 ms (%2 TFLOP/s)"_s.arg(num(r.referenceMs)).arg(num(r.referenceTflops, 4))});
    html += row({u"speed-up vs reference"_s,
                 u"<b>%1</b> &nbsp; CI95 [%2, %3]"_s.arg(StatusStyle::speedup(r.speedup))
                     .arg(r.ciLow, 0, 'f', 3)
                     .arg(r.ciHigh, 0, 'f', 3)});
    QStringList rounds;
    for (const double median : r.timing.roundMedians)
        rounds << QString::number(median, 'f', 3);
    if (!rounds.isEmpty())
        html += row({u"round medians"_s, u"%1 (spread %2 %, %3 re-runs)"_s.arg(rounds.join(u", "_s))
                                             .arg(r.timing.roundSpread * 100.0, 0, 'f', 1)
                                             .arg(r.timing.reruns)});
    html += row({u"samples"_s,
                 u"%1 quads, %2 discarded"_s.arg(r.samples.size()).arg(r.timing.discardedPairs)});
    return html + u"</table>"_s;
}

QString resourcesHtml(const EvaluationReport& r, const QString& reference) {
    QString html = section(u"Hardware"_s);
    html += u"<table cellpadding='2'>"_s;
    for (const auto& k : r.kernels) {
        html += row({u"registers / thread"_s, QString::number(k.registers)});
        html += row({u"static shared memory"_s, u"%1 B"_s.arg(k.sharedStaticBytes)});
        html += row({u"spills (store / load)"_s,
                     u"%1 B / %2 B"_s.arg(k.spillStoreBytes).arg(k.spillLoadBytes)});
    }
    const ReportMetrics metrics = ReportMetrics::fromReport(r);
    for (const auto& m : metrics.candidate) {
        QString value = ReportMetrics::format(m.key, m.value);
        if (const auto ref = metrics.referenceValue(m.key))
            value += u" <span style='color:gray'>(%1 %2)</span>"_s.arg(
                esc(reference), ReportMetrics::format(m.key, *ref));
        html += row({esc(ReportMetrics::label(m.key)), value});
    }
    if (metrics.isEmpty())
        html += row({u"profiler metrics"_s, u"<i>not profiled</i>"_s});
    return html + u"</table>"_s;
}

} // namespace

ReviewPanel::ReviewPanel(QWidget* parent)
    : QWidget(parent)
    , m_tabs(new QTabWidget(this))
    , m_browser(new QTextBrowser(this))
    , m_header(new QLabel(this))
    , m_agent(new AgentTextView(this)) {
    m_browser->setObjectName(u"reviewBrowser"_s);
    m_browser->setOpenLinks(false);
    m_tabs->addTab(m_browser, u"Review"_s);
    m_tabs->addTab(m_agent, u"Reviewer"_s);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(m_header);
    layout->addWidget(m_tabs);
    render();
}

void ReviewPanel::setReport(int version, const EvaluationReport& report) {
    if (version != m_version)
        m_review.reset();
    m_version = version;
    m_report = report;
    m_progress.clear();
    render();
}

void ReviewPanel::setReview(int version, const ReviewFeedback& review) {
    if (version != m_version)
        m_report.reset();
    m_version = version;
    m_review = review;
    m_progress.clear();
    render();
}

void ReviewPanel::setProgress(int version, const QString& stage, const QString& message,
                              double fraction) {
    if (version != m_version) {
        m_report.reset();
        m_review.reset();
        m_version = version;
    }
    m_progress = fraction >= 0 ? u"%1 (%2 %): %3"_s.arg(stage).arg(int(fraction * 100)).arg(message)
                               : u"%1: %2"_s.arg(stage, message);
    render();
}

void ReviewPanel::clearProgress() {
    if (m_progress.isEmpty())
        return;
    m_progress.clear();
    render();
}

void ReviewPanel::clear() {
    m_version = 0;
    m_report.reset();
    m_review.reset();
    m_progress.clear();
    render();
}

QString ReviewPanel::plainText() const {
    return m_browser->toPlainText();
}

void ReviewPanel::render() {
    QString header = u"<b>Review</b>"_s;
    if (m_version > 0)
        header += u" v%1"_s.arg(m_version);
    if (m_report) {
        const QString status = EvaluationReport::statusToString(m_report->status);
        header += u" — <span style='color:%1'><b>%2</b></span>"_s.arg(
            StatusStyle::color(status).name(), esc(StatusStyle::label(status)));
        if (m_report->timed)
            header +=
                u" %1 %2"_s.arg(StatusStyle::speedup(m_report->speedup), esc(m_referenceName));
        if (m_report->suspicious)
            header += u" <b style='color:#b07a00'>⚠ suspicious</b>"_s;
    }
    m_header->setText(header);

    QString html;
    // Progress describes work in flight: once a report is in, it is history.
    if (!m_progress.isEmpty() && !m_report)
        html += u"<p><i>harness: "_s + esc(m_progress) + u"</i></p>"_s;
    if (m_review) {
        const ReviewFeedback& f = *m_review;
        html += section(u"Bottleneck"_s);
        html += u"<p><b>%1</b>: %2</p>"_s.arg(esc(f.bottleneckId), esc(f.bottleneckText));
        if (!f.suggestions.isEmpty()) {
            html += section(u"Suggestions"_s) + u"<ol>"_s;
            for (const auto& s : f.suggestions)
                html += u"<li>"_s + esc(s) + u"</li>"_s;
            html += u"</ol>"_s;
        }
        html += u"<p>Blame: <b>%1</b></p>"_s.arg(esc(f.blame));
    }
    if (m_report) {
        const EvaluationReport& r = *m_report;
        html += section(u"Verdict"_s);
        html += u"<p>"_s + esc(r.message) + u"</p>"_s;
        if (r.suspicious)
            html += u"<p style='color:#b07a00'><b>Suspicious:</b> more than 10 % faster than the "
                    "reference. A person must confirm it before it can be the best.</p>"_s;
        if (!r.errorMessage.isEmpty())
            html += u"<p style='color:#d03b3b'>%1 failed: %2</p>"_s.arg(esc(r.errorStage),
                                                                        esc(r.errorMessage));
        if (!r.violations.isEmpty())
            html += u"<p style='color:#8e44ad'>Rule violations: "_s +
                    esc(r.violations.join(u"; "_s)) + u"</p>"_s;
        if (r.correctness.present)
            html += correctnessHtml(r.correctness);
        if (r.timed)
            html += timingHtml(r, m_referenceName);
        if (r.floorMs || r.percentOfFloor) {
            html += section(u"Roofline"_s);
            html +=
                u"<p>floor %1 ms; the candidate runs at <b>%2 %</b> of the floor's speed (%3-bound)</p>"_s
                    .arg(num(r.floorMs.value_or(0)))
                    .arg(r.percentOfFloor.value_or(0), 0, 'f', 1)
                    .arg(esc(r.bound.isEmpty() ? u"?"_s : r.bound));
        }
        if (r.compileOk)
            html += resourcesHtml(r, m_referenceName);
    }
    if (html.isEmpty())
        html = u"<p style='color:gray'>No report yet.</p>"_s;
    m_browser->setHtml(html);
}

} // namespace kev
