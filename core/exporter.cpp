#include "exporter.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>

#include <algorithm>
#include <cmath>

namespace kev {

namespace {

QString number(double value, int decimals = 3) {
    return QString::number(value, 'f', decimals);
}

QString optionalNumber(const std::optional<double>& value, int decimals = 3) {
    return value ? number(*value, decimals) : QStringLiteral("–");
}

QString escapeHtml(const QString& text) {
    return text.toHtmlEscaped();
}

QString escapeMarkdownCell(QString text) {
    return text.replace(u'|', QStringLiteral("\\|")).replace(u'\n', u' ');
}

struct Headline {
    QString status;
    QString speedup;
    QString ci;
    QString medianMs;
    QString referenceMs;
    QString tflops;
    QString correctness;
    QString resources;
};

Headline headline(const Candidate& c) {
    Headline h;
    if (!c.report) {
        h.status = QStringLiteral("not evaluated");
        return h;
    }
    const EvaluationReport& r = *c.report;
    h.status = EvaluationReport::statusToString(r.status) +
               (r.suspicious ? QStringLiteral(" (suspicious)") : QString());
    if (r.timed) {
        h.speedup = number(r.speedup) + QStringLiteral("x the reference");
        h.ci = u'[' + number(r.ciLow) + QStringLiteral(", ") + number(r.ciHigh) + u']';
        h.medianMs = number(r.medianMs, 4) + QStringLiteral(" ms");
        h.referenceMs = number(r.referenceMs, 4) + QStringLiteral(" ms");
        h.tflops = number(r.tflops, 1) + QStringLiteral(" (reference ") +
                   number(r.referenceTflops, 1) + u')';
    }
    if (r.correctness.present)
        h.correctness =
            QString::number(r.correctness.passed) + u'/' + QString::number(r.correctness.trials) +
            QStringLiteral(" trials passed, worst margin ") + number(r.correctness.worstMargin, 4);
    if (!r.kernels.isEmpty())
        h.resources = QString::number(r.maxRegisters()) + QStringLiteral(" registers, ") +
                      QString::number(r.totalSpillBytes()) + QStringLiteral(" spill bytes");
    return h;
}

bool write(const QString& dir, const QString& name, const QByteArray& data, QStringList* written,
           QString* error) {
    if (!writeFileAtomically(QDir(dir).filePath(name), data, error))
        return false;
    if (written)
        written->append(name);
    return true;
}

} // namespace

QString Exporter::referenceFileName() {
    return QStringLiteral("ref.cu");
}

QString Exporter::reverifyCommand() {
    return QStringLiteral("kevolve-harness eval --task task.json --kernel kernel.cu");
}

QString Exporter::chartSvg(const QVector<IterationSummary>& steps, int highlight) {
    const double width = 720;
    const double height = 320;
    const double left = 56;
    const double right = 16;
    const double top = 24;
    const double bottom = 40;
    double maxY = 1.2;
    for (const auto& s : steps) {
        if (s.speedup && std::isfinite(*s.speedup))
            maxY = std::max(maxY, *s.speedup * 1.1);
    }
    // The index reader refuses speed-ups beyond this; a caller's own values are clamped to it.
    maxY = std::min(maxY, IterationSummary::kMaxSpeedup * 1.1);
    // About eight grid lines whatever the range (a quarter for small speed-ups, then 1, 2 or 5
    // times a power of ten), so the chart's size never grows with the best speed-up.
    double gridStep = 0.25;
    if (maxY > 3) {
        const double raw = maxY / 8;
        const double power = std::pow(10.0, std::floor(std::log10(raw)));
        gridStep = power * 10;
        for (const double m : {1.0, 2.0, 5.0}) {
            if (m * power >= raw) {
                gridStep = m * power;
                break;
            }
        }
        gridStep = std::max(1.0, gridStep);
    }
    const int count = std::max(1, static_cast<int>(steps.size()));
    const auto x = [&](int i) {
        return left + (count == 1 ? 0.5 : i / double(count - 1)) * (width - left - right);
    };
    const auto y = [&](double v) { return top + (1.0 - v / maxY) * (height - top - bottom); };

    QString svg;
    svg += QStringLiteral("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"") + number(width, 0) +
           QStringLiteral("\" height=\"") + number(height, 0) +
           QStringLiteral("\" viewBox=\"0 0 ") + number(width, 0) + u' ' + number(height, 0) +
           QStringLiteral("\" font-family=\"sans-serif\" font-size=\"11\">\n");
    svg += QStringLiteral("<title>Speedup over the reference per version</title>\n");
    svg += QStringLiteral("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
    for (int line = 0; line * gridStep <= maxY + 1e-9; ++line) {
        const double tick = line * gridStep;
        svg += QStringLiteral("<line x1=\"") + number(left, 1) + QStringLiteral("\" x2=\"") +
               number(width - right, 1) + QStringLiteral("\" y1=\"") + number(y(tick), 1) +
               QStringLiteral("\" y2=\"") + number(y(tick), 1) +
               QStringLiteral("\" stroke=\"#e5e5e5\"/>\n");
        svg += QStringLiteral("<text x=\"") + number(left - 6, 1) + QStringLiteral("\" y=\"") +
               number(y(tick) + 4, 1) + QStringLiteral("\" text-anchor=\"end\">") +
               number(tick, 2) + QStringLiteral("x</text>\n");
    }
    svg += QStringLiteral("<line x1=\"") + number(left, 1) + QStringLiteral("\" x2=\"") +
           number(width - right, 1) + QStringLiteral("\" y1=\"") + number(y(1.0), 1) +
           QStringLiteral("\" y2=\"") + number(y(1.0), 1) +
           QStringLiteral("\" stroke=\"#555\" stroke-dasharray=\"6 4\"/>\n");
    svg += QStringLiteral("<text x=\"") + number(width - right, 1) + QStringLiteral("\" y=\"") +
           number(y(1.0) - 4, 1) +
           QStringLiteral("\" text-anchor=\"end\" fill=\"#555\">reference</text>\n");

    QString bestLine;
    double best = 0;
    for (int i = 0; i < steps.size(); ++i) {
        const auto& s = steps[i];
        if (s.isTrustworthy() && s.decision != QLatin1String("rejected"))
            best = std::max(best, *s.speedup);
        if (best > 0)
            bestLine += (bestLine.isEmpty() ? QString() : QStringLiteral(" ")) + number(x(i), 1) +
                        u',' + number(y(best), 1);
    }
    if (!bestLine.isEmpty())
        svg += QStringLiteral("<polyline class=\"best\" fill=\"none\" stroke=\"#2b6cb0\" "
                              "stroke-width=\"2\" points=\"") +
               bestLine + QStringLiteral("\"/>\n");

    for (int i = 0; i < steps.size(); ++i) {
        const auto& s = steps[i];
        const bool timed = s.speedup.has_value();
        const QString colour = !timed         ? QStringLiteral("#c53030")
                               : s.suspicious ? QStringLiteral("#dd6b20")
                                              : QStringLiteral("#2f855a");
        const double value = timed ? *s.speedup : 0.0;
        svg += QStringLiteral("<circle class=\"version\" cx=\"") + number(x(i), 1) +
               QStringLiteral("\" cy=\"") + number(y(value), 1) + QStringLiteral("\" r=\"") +
               (s.version == highlight ? QStringLiteral("6") : QStringLiteral("4")) +
               QStringLiteral("\" fill=\"") + colour + u'"' +
               (s.version == highlight ? QStringLiteral(" stroke=\"black\" stroke-width=\"2\"")
                                       : QString()) +
               QStringLiteral("><title>v") + QString::number(s.version) + QStringLiteral(": ") +
               escapeHtml(s.status) +
               (timed ? QStringLiteral(", ") + number(*s.speedup) + u'x' : QString()) +
               QStringLiteral("</title></circle>\n");
        if (count <= 30 || i % (count / 30 + 1) == 0)
            svg += QStringLiteral("<text x=\"") + number(x(i), 1) + QStringLiteral("\" y=\"") +
                   number(height - bottom + 16, 1) + QStringLiteral("\" text-anchor=\"middle\">v") +
                   QString::number(s.version) + QStringLiteral("</text>\n");
    }
    svg += QStringLiteral("<text x=\"") + number(width / 2, 1) + QStringLiteral("\" y=\"") +
           number(height - 6, 1) +
           QStringLiteral("\" text-anchor=\"middle\">version (green: correct, orange: suspicious, "
                          "red: not timed; "
                          "blue: best so far)</text>\n");
    svg += QStringLiteral("</svg>\n");
    return svg;
}

QString Exporter::samplesCsv(const EvaluationReport& report) {
    QString csv = QStringLiteral(
        "round,pair,ratio,candidate_ms_1,candidate_ms_2,reference_ms_1,reference_ms_2,"
        "input_set,sm_mhz,mem_mhz,throttle,discarded,output_check\n");
    const auto at = [](const QVector<double>& v, int i) {
        return i < v.size() ? QString::number(v[i], 'g', 9) : QString();
    };
    for (const auto& s : report.samples) {
        csv += QString::number(s.round) + u',' + QString::number(s.pair) + u',' +
               QString::number(s.ratio, 'g', 9) + u',' + at(s.candidateMs, 0) + u',' +
               at(s.candidateMs, 1) + u',' + at(s.referenceMs, 0) + u',' + at(s.referenceMs, 1) +
               u',' + QString::number(s.inputSet) + u',' + QString::number(s.smMhz) + u',' +
               QString::number(s.memMhz) + u',' + s.throttle.join(u';') + u',' +
               (s.discarded ? QStringLiteral("true") : QStringLiteral("false")) + u',' +
               QString::number(s.outputCheck, 'g', 6) + u'\n';
    }
    return csv;
}

QString Exporter::markdownReport(const SessionStore& store, const Candidate& c) {
    const Task& task = store.task();
    const Headline h = headline(c);
    QString md;
    md += QStringLiteral("# Kevolve report: ") + task.name + QStringLiteral(", kernel v") +
          QString::number(c.version) + QStringLiteral("\n\n");
    md += QStringLiteral("Task: ") + task.summary() + QStringLiteral(" (") + task.description +
          QStringLiteral(")  \n");
    md += QStringLiteral("Session: `") + store.info().id + QStringLiteral("`, ") +
          QString::number(store.steps().size()) + QStringLiteral(" steps  \n");
    md += QStringLiteral("Plan: ") + c.strategy.summary() + QStringLiteral(" — ") +
          c.strategy.rationale + QStringLiteral("\n\n");
    md += QStringLiteral("| measure | value |\n|---|---|\n");
    md += QStringLiteral("| status | ") + h.status + QStringLiteral(" |\n");
    if (!h.speedup.isEmpty()) {
        md += QStringLiteral("| speedup | ") + h.speedup + QStringLiteral(" |\n");
        md += QStringLiteral("| 95% CI | ") + h.ci + QStringLiteral(" |\n");
        md += QStringLiteral("| median time | ") + h.medianMs + QStringLiteral(" |\n");
        md += QStringLiteral("| reference time | ") + h.referenceMs + QStringLiteral(" |\n");
        md += QStringLiteral("| TFLOP/s | ") + h.tflops + QStringLiteral(" |\n");
    }
    if (!h.correctness.isEmpty())
        md += QStringLiteral("| correctness | ") + h.correctness + QStringLiteral(" |\n");
    if (!h.resources.isEmpty())
        md += QStringLiteral("| resources | ") + h.resources + QStringLiteral(" |\n");
    if (c.report)
        md += QStringLiteral("| harness says | ") + escapeMarkdownCell(c.report->message) +
              QStringLiteral(" |\n");
    md += QStringLiteral("\n![speedup per version](chart.svg)\n\n");
    md += QStringLiteral(
        "## Iterations\n\n| v | parent | iteration | plan | status | speedup | CI | decision |\n"
        "|---|---|---|---|---|---|---|---|\n");
    for (const auto& s : store.steps()) {
        md += QStringLiteral("| ") + QString::number(s.version) + QStringLiteral(" | ") +
              QString::number(s.parentVersion) + QStringLiteral(" | ") +
              QString::number(s.iteration) + QStringLiteral(" | ") + escapeMarkdownCell(s.plan) +
              QStringLiteral(" | ") + s.status +
              (s.suspicious ? QStringLiteral(" (suspicious)") : QString()) + QStringLiteral(" | ") +
              optionalNumber(s.speedup) + QStringLiteral(" | ") +
              (s.ciLow ? u'[' + number(*s.ciLow) + QStringLiteral(", ") + number(*s.ciHigh) + u']'
                       : QStringLiteral("–")) +
              QStringLiteral(" | ") + s.decision + QStringLiteral(" |\n");
    }
    md += QStringLiteral("\n## Re-verify\n\n```sh\n") + reverifyCommand() +
          QStringLiteral("\n```\n\n");
    md += QStringLiteral("Files: `kernel.cu`, `task.json`, ") +
          (task.reference == QLatin1String("file")
               ? QStringLiteral("`") + referenceFileName() +
                     QStringLiteral("` (the task's reference kernel), ")
               : QString()) +
          QStringLiteral("`report.json` (the harness report), `samples.csv`, "
                         "`environment.json`, `chart.svg`, `report.html`.\n");
    return md;
}

QString Exporter::htmlReport(const SessionStore& store, const Candidate& c) {
    const Task& task = store.task();
    const Headline h = headline(c);
    const auto row = [](const QString& name, const QString& value) {
        return value.isEmpty() ? QString()
                               : QStringLiteral("<tr><th>") + name + QStringLiteral("</th><td>") +
                                     escapeHtml(value) + QStringLiteral("</td></tr>\n");
    };
    QString html;
    html += QStringLiteral("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
                           "charset=\"utf-8\">\n<title>Kevolve report: ") +
            escapeHtml(task.name) + QStringLiteral(" v") + QString::number(c.version) +
            QStringLiteral("</title>\n");
    html += QStringLiteral(
        "<style>body{font-family:sans-serif;max-width:960px;margin:2em auto;color:#222}"
        "table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:3px "
        "8px;text-align:left}"
        "pre{background:#f6f6f6;padding:1em;overflow:auto;font-size:12px}</style>\n</"
        "head>\n<body>\n");
    html += QStringLiteral("<h1>") + escapeHtml(task.name) + QStringLiteral(": kernel v") +
            QString::number(c.version) + QStringLiteral("</h1>\n<p>") + escapeHtml(task.summary()) +
            QStringLiteral(" — ") + escapeHtml(task.description) + QStringLiteral("</p>\n");
    html += QStringLiteral("<p>Plan: ") + escapeHtml(c.strategy.summary()) + QStringLiteral(" — ") +
            escapeHtml(c.strategy.rationale) + QStringLiteral("</p>\n<table>\n");
    html += row(QStringLiteral("status"), h.status) + row(QStringLiteral("speedup"), h.speedup) +
            row(QStringLiteral("95% CI"), h.ci) + row(QStringLiteral("median time"), h.medianMs) +
            row(QStringLiteral("reference time"), h.referenceMs) +
            row(QStringLiteral("TFLOP/s"), h.tflops) +
            row(QStringLiteral("correctness"), h.correctness) +
            row(QStringLiteral("resources"), h.resources) +
            row(QStringLiteral("harness says"), c.report ? c.report->message : QString());
    html += QStringLiteral("</table>\n<h2>Performance</h2>\n");
    html += chartSvg(store.steps(), c.version);
    html += QStringLiteral(
        "<h2>Iterations</h2>\n<table>\n<tr><th>v</th><th>parent</th><th>iteration</th><th>plan</th>"
        "<th>status</th><th>speedup</th><th>decision</th></tr>\n");
    for (const auto& s : store.steps()) {
        html +=
            QStringLiteral("<tr><td>") + QString::number(s.version) + QStringLiteral("</td><td>") +
            QString::number(s.parentVersion) + QStringLiteral("</td><td>") +
            QString::number(s.iteration) + QStringLiteral("</td><td>") + escapeHtml(s.plan) +
            QStringLiteral("</td><td>") + escapeHtml(s.status) +
            (s.suspicious ? QStringLiteral(" (suspicious)") : QString()) +
            QStringLiteral("</td><td>") + optionalNumber(s.speedup) + QStringLiteral("</td><td>") +
            escapeHtml(s.decision) + QStringLiteral("</td></tr>\n");
    }
    html += QStringLiteral("</table>\n<h2>Kernel</h2>\n<pre>") + escapeHtml(c.source) +
            QStringLiteral("</pre>\n");
    html += QStringLiteral("<h2>Re-verify</h2>\n<pre>") + escapeHtml(reverifyCommand()) +
            QStringLiteral("</pre>\n");
    html += QStringLiteral("</body>\n</html>\n");
    return html;
}

bool Exporter::exportSession(const SessionStore& store, const QString& outDir,
                             std::optional<int> version, QStringList* written, QString* error) {
    if (store.steps().isEmpty()) {
        if (error)
            *error = store.dir() + QStringLiteral(": the session has no steps to export");
        return false;
    }
    const int chosen =
        version ? *version : store.bestVersion().value_or(store.steps().last().version);
    const auto candidate = store.loadCandidate(chosen, error);
    if (!candidate)
        return false;
    // The session's task names its reference by an absolute path on this host; the export carries
    // a copy and names it relative to task.json, which the harness resolves against the task
    // file's folder, so the folder re-verifies wherever it is copied.
    Task task = store.task();
    QByteArray referenceSource;
    const bool hasReference = task.reference == QLatin1String("file");
    if (hasReference) {
        QFile file(task.referenceFile);
        if (!file.open(QIODevice::ReadOnly)) {
            if (error)
                *error = QStringLiteral("task.reference.file: cannot read ") + task.referenceFile +
                         QStringLiteral(" (") + file.errorString() +
                         QStringLiteral("); the export needs the reference kernel to re-verify");
            return false;
        }
        referenceSource = file.readAll();
        task.referenceFile = referenceFileName();
        if (!task.document.isEmpty())
            task.document.insert(QStringLiteral("reference"),
                                 QJsonObject{{QStringLiteral("file"), referenceFileName()}});
    }
    if (!QDir().mkpath(outDir)) {
        if (error)
            *error = outDir + QStringLiteral(": cannot create the folder");
        return false;
    }
    const QJsonObject report = candidate->report ? candidate->report->toJson() : QJsonObject();
    QJsonObject environment = report.value(QLatin1String("environment")).toObject();
    environment.insert(QStringLiteral("exported_version"), chosen);
    environment.insert(QStringLiteral("session_id"), store.info().id);
    if (store.info().device)
        environment.insert(QStringLiteral("session_device"), store.info().device->toJson());
    const QByteArray script =
        "#!/bin/sh\n# Re-verifies this kernel with the referee on a GPU host.\n"
        "cd \"$(dirname \"$0\")\" && " +
        reverifyCommand().toUtf8() + "\n";
    const bool ok =
        write(outDir, QStringLiteral("kernel.cu"), candidate->source.toUtf8(), written, error) &&
        write(outDir, QStringLiteral("task.json"), QJsonDocument(task.toJson()).toJson(), written,
              error) &&
        (!hasReference || write(outDir, referenceFileName(), referenceSource, written, error)) &&
        write(outDir, QStringLiteral("report.json"), QJsonDocument(report).toJson(), written,
              error) &&
        write(outDir, QStringLiteral("report.md"), markdownReport(store, *candidate).toUtf8(),
              written, error) &&
        write(outDir, QStringLiteral("report.html"), htmlReport(store, *candidate).toUtf8(),
              written, error) &&
        write(outDir, QStringLiteral("chart.svg"), chartSvg(store.steps(), chosen).toUtf8(),
              written, error) &&
        write(outDir, QStringLiteral("samples.csv"),
              (candidate->report ? samplesCsv(*candidate->report) : samplesCsv(EvaluationReport()))
                  .toUtf8(),
              written, error) &&
        write(outDir, QStringLiteral("environment.json"), QJsonDocument(environment).toJson(),
              written, error) &&
        write(outDir, QStringLiteral("reverify.sh"), script, written, error);
    if (!ok)
        return false;
    QFile::setPermissions(QDir(outDir).filePath(QStringLiteral("reverify.sh")),
                          QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner |
                              QFile::ReadGroup | QFile::ExeGroup | QFile::ReadOther |
                              QFile::ExeOther);
    return true;
}

} // namespace kev
