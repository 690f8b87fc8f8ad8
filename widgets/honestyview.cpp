#include "honestyview.h"

#include "statusstyle.h"

#include <QHeaderView>
#include <QJsonArray>
#include <QJsonObject>
#include <QLabel>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace kev {

using namespace Qt::StringLiterals;

namespace {

QString resultText(HonestyView::Result result) {
    switch (result) {
    case HonestyView::Result::Pass:
        return u"pass"_s;
    case HonestyView::Result::Fail:
        return u"FAIL"_s;
    case HonestyView::Result::Warn:
        return u"flag"_s;
    case HonestyView::Result::NotRun:
        return u"not run"_s;
    }
    return {};
}

QColor resultColor(HonestyView::Result result) {
    switch (result) {
    case HonestyView::Result::Pass:
        return StatusStyle::color(u"ok"_s);
    case HonestyView::Result::Fail:
        return StatusStyle::color(u"incorrect"_s);
    case HonestyView::Result::Warn:
        return QColor(0xe8, 0xb0, 0x4a);
    case HonestyView::Result::NotRun:
        return QColor(0x90, 0x90, 0x90);
    }
    return {};
}

HonestyView::Result passFail(bool ok) {
    return ok ? HonestyView::Result::Pass : HonestyView::Result::Fail;
}

} // namespace

QVector<HonestyView::Check> HonestyView::checksOf(const EvaluationReport& report,
                                                  const QString& referenceName) {
    QVector<Check> checks;

    const QVector<RuleCheck>& ruleChecks = report.ruleChecks;
    bool sawLaunchAudit = false;
    for (const auto& c : ruleChecks) {
        sawLaunchAudit |= c.name == u"launch_audit";
        checks.append({u"rules: "_s + c.name, passFail(c.ok), c.evidence});
    }
    const bool aCheckFailed = std::any_of(checks.begin(), checks.end(),
                                          [](const Check& c) { return c.result == Result::Fail; });
    if (!report.rulesOk && !aCheckFailed)
        checks.append({u"rules: violations"_s, Result::Fail,
                       report.violations.isEmpty() ? u"rules.ok is false"_s
                                                   : report.violations.join(u"; "_s)});
    else if (ruleChecks.isEmpty())
        checks.append({u"rules"_s, Result::NotRun,
                       report.compileOk ? u"no rule checks in the report"_s
                                        : u"the kernel did not compile"_s});
    if (!report.lintEnabled)
        checks.append({u"rules: lint"_s, Result::Warn,
                       u"static lint switched off for this run (options.lint = false)"_s});
    if (!sawLaunchAudit && !ruleChecks.isEmpty())
        checks.append({u"rules: launch_audit"_s, Result::NotRun, u"no launch audit recorded"_s});

    if (!report.errorMessage.isEmpty()) {
        const QString& signal = report.errorSignal;
        checks.append(
            {u"child process"_s, Result::Fail,
             u"%1 stage: %2%3"_s.arg(report.errorStage, report.errorMessage,
                                     signal.isEmpty() ? QString() : u" ("_s + signal + u')')});
    }

    const QVector<Trial>& trials = report.correctness.trialResults;
    if (trials.isEmpty()) {
        checks.append({u"poisoning"_s, Result::NotRun, u"no correctness trials ran"_s});
        checks.append({u"completeness"_s, Result::NotRun, u"no correctness trials ran"_s});
    } else {
        qint64 nans = 0, infs = 0;
        int incomplete = 0, pre = 0, prePassed = 0, post = 0, postPassed = 0;
        QStringList worst;
        for (const auto& t : trials) {
            const qint64 n = t.nanCount;
            const qint64 i = t.infCount;
            nans += n;
            infs += i;
            if (n + i > 0) {
                ++incomplete;
                worst << u"%1×%2×%3: %4 NaN"_s.arg(t.dim(u"M"_s))
                             .arg(t.dim(u"N"_s))
                             .arg(t.dim(u"K"_s))
                             .arg(n);
            }
            if (t.phase == u"post") {
                ++post;
                postPassed += t.pass ? 1 : 0;
            } else {
                ++pre;
                prePassed += t.pass ? 1 : 0;
            }
        }
        checks.append({u"poisoning"_s, Result::Pass,
                       u"outputs filled with NaN before each of %1 trials, so unwritten elements "
                       "show up"_s.arg(trials.size())});
        checks.append({u"completeness"_s, passFail(nans + infs == 0),
                       nans + infs == 0 ? u"0 NaN and 0 Inf in %1 outputs"_s.arg(trials.size())
                                        : u"%1 NaN, %2 Inf in %3 of %4 outputs (%5)"_s.arg(nans)
                                              .arg(infs)
                                              .arg(incomplete)
                                              .arg(trials.size())
                                              .arg(worst.join(u"; "_s))});
        checks.append(
            {u"correctness (before timing)"_s, passFail(prePassed == pre),
             u"%1 of %2 trials passed; worst margin %3 (< 1 passes)"_s.arg(prePassed).arg(pre).arg(
                 report.correctness.worstMargin, 0, 'g', 3)});
        if (post > 0)
            checks.append(
                {u"post-timing re-check"_s, passFail(postPassed == post),
                 u"%1 of %2 fresh-input trials after timing passed"_s.arg(postPassed).arg(post)});
        else
            checks.append({u"post-timing re-check"_s, Result::NotRun,
                           report.timed ? u"no post-timing trial in the report"_s
                                        : u"not timed, so nothing to re-check"_s});
    }

    if (report.timingPresent) {
        const TimingDetails& timing = report.timing;
        const double spread = timing.roundSpread;
        const double limit = report.maxRoundSpread.value_or(0.15);
        QStringList rounds;
        for (const double median : timing.roundMedians)
            rounds << QString::number(median, 'f', 3);
        const bool stable = report.status != EvaluationReport::Status::Unstable && spread <= limit;
        checks.append(
            {u"stability"_s, passFail(stable),
             u"round medians %1: spread %2 % (limit %3 %), %4 re-runs"_s.arg(rounds.join(u", "_s))
                 .arg(spread * 100, 0, 'f', 1)
                 .arg(limit * 100, 0, 'f', 0)
                 .arg(timing.reruns)});
        double worstCheck = 0;
        for (const auto& s : report.samples)
            worstCheck = std::max(worstCheck, s.outputCheck);
        checks.append({u"timed outputs checked"_s, Result::Pass,
                       u"%1 pairing, L2 flush %2 MiB, blocking kernel %3, %4 input sets; worst "
                       "per-sample output check %5"_s.arg(timing.pairing)
                           .arg(timing.l2FlushBytes / 1048576.0, 0, 'f', 0)
                           .arg(timing.blockingKernel ? u"on"_s : u"off"_s)
                           .arg(timing.inputSets)
                           .arg(worstCheck, 0, 'g', 3)});
    } else {
        checks.append({u"stability"_s, Result::NotRun, u"not timed (only correct kernels are)"_s});
    }

    // The harness's own reference kernels are untuned, so for them the referee flags a candidate
    // above 110 % of the DRAM floor instead of a speed-up above 1.10x (PROTOCOL.md).
    if (referenceName == u"harness reference" && report.percentOfFloor) {
        const QString floor = QString::number(*report.percentOfFloor, 'f', 1) + u" %"_s;
        checks.append(
            {u"suspicious"_s, report.suspicious ? Result::Warn : Result::Pass,
             report.suspicious
                 ? u"%1 of the DRAM roofline floor is above 110 %, impossible without skipping "
                   "work: a person must confirm it; it never becomes the best automatically"_s.arg(
                       floor)
                 : u"not flagged (%1 of the DRAM roofline floor ≤ 110 %; %2 %3)"_s.arg(
                       floor, StatusStyle::speedup(report.speedup), referenceName)});
    } else if (report.suspicious)
        checks.append({u"suspicious"_s, Result::Warn,
                       u"%1 %2 is more than 10 % faster than the reference: a person must "
                       "confirm it; it never becomes the best automatically"_s.arg(
                           StatusStyle::speedup(report.speedup), referenceName)});
    else
        checks.append({u"suspicious"_s, Result::Pass,
                       report.timed ? u"not flagged (%1 %2 ≤ 1.10×)"_s.arg(
                                          StatusStyle::speedup(report.speedup), referenceName)
                                    : u"not flagged"_s});
    return checks;
}

HonestyView::HonestyView(QWidget* parent)
    : QWidget(parent)
    , m_tree(new QTreeWidget(this))
    , m_header(new QLabel(this)) {
    m_tree->setColumnCount(3);
    m_tree->setHeaderLabels({u"Check"_s, u"Result"_s, u"Evidence"_s});
    m_tree->setRootIsDecorated(false);
    m_tree->setWordWrap(true);
    m_tree->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_tree->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    m_tree->setObjectName(u"honestyTree"_s);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(m_header);
    layout->addWidget(m_tree);
    clear();
}

void HonestyView::setReport(int version, const EvaluationReport& report) {
    m_checks = checksOf(report, m_referenceName);
    m_tree->clear();
    int failed = 0;
    for (const auto& c : m_checks) {
        auto* item = new QTreeWidgetItem(m_tree, {c.name, resultText(c.result), c.evidence});
        item->setForeground(1, resultColor(c.result));
        item->setToolTip(2, c.evidence);
        failed += c.result == Result::Fail ? 1 : 0;
    }
    m_header->setText(u"<b>Referee checks</b> v%1 — %2 checks, %3 failed"_s.arg(version)
                          .arg(m_checks.size())
                          .arg(failed));
}

void HonestyView::clear() {
    m_checks.clear();
    m_tree->clear();
    m_header->setText(u"<b>Referee checks</b>"_s);
}

} // namespace kev
