// The text face of kevolve-cli: tables and lines for a person at a terminal.
#include "cliio.h"
#include "printer.h"

#include <algorithm>

#include <QJsonArray>
#include <QRegularExpression>

namespace kev::cli {

namespace {

QString valueText(const QJsonValue& value) {
    return value.isUndefined() ? QStringLiteral("-") : value.toVariant().toString();
}

QString valuesText(const QJsonArray& values) {
    QStringList texts;
    for (const auto& value : values)
        texts << valueText(value);
    return texts.join(QStringLiteral(", "));
}

void printFamily(const FamilyDetail& d) {
    out() << '\n'
          << d.family->id() << "   prior " << QString::number(d.prior, 'f', 2) << "\n    "
          << d.family->description()
          << "\n  default: "
          // parameters the default leaves unset (depth without pipeline=async) are left out
          << configurationKey(*d.family, d.start)
                 .split(u' ')
                 .filter(QRegularExpression(QStringLiteral("[^=]$")))
                 .join(u' ')
          << (d.problems.isEmpty() ? QStringLiteral(" (passes constraints)")
                                   : QStringLiteral(" (FAILS constraints)"))
          << '\n';
    for (const auto& problem : d.problems)
        out() << "    - " << problem << '\n';
    if (!d.start.rationale.isEmpty())
        out() << "    why: " << d.start.rationale << '\n';
    out() << "  parameters:\n";
    for (const ParameterSpec& spec : d.parameters)
        out() << "    " << spec.name.leftJustified(20) << ' ' << valuesText(spec.values)
              << "\n        " << spec.description << '\n';
}

class TextPrinter final : public Printer {
public:
    void tasks(const QVector<Task>& library, const QStringList& problems) override {
        for (const auto& t : library)
            out() << t.name.leftJustified(28) << ' ' << t.summary() << "\n    " << t.description
                  << '\n';
        out().flush();
        for (const auto& problem : problems)
            err() << "kevolve-cli: skipped " << problem << '\n';
    }

    void families(const QVector<const KernelFamily*>& all) override {
        for (const KernelFamily* family : all)
            out() << family->id() << "\n    " << family->description() << '\n';
        out().flush();
    }

    void familiesFor(const Task& task, const DeviceInfo& device,
                     const QVector<FamilyDetail>& supporting) override {
        out() << task.name << " (" << task.summary() << ") on " << device.name << " ("
              << device.arch() << "): " << supporting.size()
              << (supporting.size() == 1 ? " family\n" : " families\n");
        for (const FamilyDetail& d : supporting)
            printFamily(d);
        if (supporting.isEmpty())
            out() << "no builtin family supports " << task.name << " on " << device.name
                  << "; an llm backend can still write its kernels\n";
        out().flush();
    }

    void session(const SessionStore& store) override {
        const std::optional<int> best = store.bestVersion();
        // Damage first, where it is seen: a damaged index shows fewer steps than the session had.
        for (const QString& line : store.damageReport())
            err() << "kevolve-cli: warning: " << line << Qt::endl;
        out() << store.task().name << " (" << store.task().summary() << "), "
              << store.steps().size() << " steps, session " << store.info().id << '\n';
        // The plan column is as wide as the longest plan: two plans that differ only at their end
        // (W and B in registers or not) must not print the same.
        qsizetype planWidth = 44;
        for (const auto& s : store.steps())
            planWidth = std::max(planWidth, s.plan.size());
        // % floor: the candidate's share of the roofline floor (the headline of memory-bound ops).
        out() << QStringLiteral("%1 %2 %3 %4 %5 %6 %7 %8 %9\n")
                     .arg(QStringLiteral("  v"), 5)
                     .arg(QStringLiteral("iter"), 4)
                     .arg(QStringLiteral("parent"), 6)
                     .arg(QStringLiteral("plan"), -int(planWidth))
                     .arg(QStringLiteral("status"), -14)
                     .arg(QStringLiteral("speedup"), 8)
                     .arg(QStringLiteral("95% CI"), -17)
                     .arg(QStringLiteral("% floor"), 7)
                     .arg(QStringLiteral("decision"));
        for (const auto& s : store.steps()) {
            const QString ci =
                s.ciLow ? u'[' + fmt(s.ciLow) + QStringLiteral(", ") + fmt(s.ciHigh) + u']'
                        : QStringLiteral("-");
            const QString floor =
                s.percentOfFloor ? QString::number(*s.percentOfFloor, 'f', 1) : QStringLiteral("-");
            out() << QStringLiteral("%1 %2 %3 %4 %5 %6 %7 %8 %9\n")
                         .arg((best == s.version ? QStringLiteral("* v") : QStringLiteral("  v")) +
                                  QString::number(s.version),
                              5)
                         .arg(s.iteration, 4)
                         .arg(s.parentVersion, 6)
                         .arg(s.plan, -int(planWidth))
                         .arg(s.status + (s.suspicious ? QStringLiteral("!") : QString()), -14)
                         .arg(fmt(s.speedup), 8)
                         .arg(ci, -17)
                         .arg(floor, 7)
                         .arg(s.decision);
        }
        out() << (best ? QStringLiteral("* best: v") + QString::number(*best)
                       : QStringLiteral("no correct kernel yet"))
              << "   (! = suspicious)\n";
        out().flush();
    }

    void timeline(const SessionStore& store, const Timeline& t) override {
        for (const QString& line : store.damageReport())
            err() << "kevolve-cli: warning: " << line << Qt::endl;
        for (const QString& line : t.unreadable)
            err() << "kevolve-cli: warning: " << line << Qt::endl;
        out() << store.task().name << ", " << store.steps().size() << " steps\n";
        if (t.rows.isEmpty()) {
            out() << "no stage timeline recorded (sessions before it was recorded have none)\n";
            out().flush();
            return;
        }
        out() << QStringLiteral("%1 %2 %3 %4 %5  %6\n")
                     .arg(QStringLiteral("v"), 5)
                     .arg(QStringLiteral("iter"), 4)
                     .arg(QStringLiteral("slot"), 4)
                     .arg(QStringLiteral("stage"), -9)
                     .arg(QStringLiteral("start s  seconds"), 17)
                     .arg(QStringLiteral("detail"));
        for (const TimelineRow& r : t.rows)
            out() << QStringLiteral("%1 %2 %3 %4 %5 %6  %7\n")
                         .arg(u'v' + QString::number(r.version), 5)
                         .arg(r.iteration, 4)
                         .arg(r.beam + 1, 4)
                         .arg(r.span.stage, -9)
                         .arg(QString::number(r.offsetS, 'f', 3), 8)
                         .arg(QString::number(r.span.seconds, 'f', 3), 8)
                         .arg(r.span.detail);
        out() << t.evaluated << " candidates evaluated in " << QString::number(t.wallS, 'f', 1)
              << " s of wall time (" << QString::number(t.perMinute(), 'f', 1)
              << " per minute); evaluations " << QString::number(t.evaluateS, 'f', 1)
              << " s in all\n";
        out().flush();
    }

    void exported(const QString& outDir, const QStringList& files) override {
        out() << "exported to " << outDir << ": " << files.join(QStringLiteral(", ")) << Qt::endl;
    }

    void knowledgeStats(const KnowledgeStats& s) override {
        out() << "knowledge store " << s.path << " (schema " << s.schemaVersion << ")" << Qt::endl
              << "  " << s.records << " measured configurations (" << s.trustworthy
              << " correct and timed) of " << s.tasks << " tasks in " << s.sessions << " sessions"
              << Qt::endl;
        const auto counts = [](const QMap<QString, qint64>& m) {
            QStringList parts;
            for (auto it = m.cbegin(); it != m.cend(); ++it)
                parts << it.key() + u' ' + QString::number(it.value());
            return parts.isEmpty() ? QStringLiteral("-") : parts.join(QStringLiteral(", "));
        };
        out() << "  ops: " << counts(s.byOp) << Qt::endl
              << "  devices: " << counts(s.byDevice) << Qt::endl
              << "  decisions: " << counts(s.byDecision) << Qt::endl;
    }

    void knowledgeExported(const QString& store, const QString& file, qint64 records) override {
        out() << "exported " << records << " records of " << store << " to " << file << Qt::endl;
    }

    void knowledgeImported(const QString& store, const QString& file,
                           const KnowledgeImportResult& r) override {
        out() << "imported " << file << " into " << store << ": " << r.added << " added, "
              << r.updated << " updated (a later decision), " << r.unchanged << " already there"
              << Qt::endl;
    }

    void sessionOpened(const QString& dir, const SessionInfo& info, int steps) override {
        out() << "session " << dir << " (" << info.task.summary() << ", " << steps
              << " steps so far)" << Qt::endl;
    }

    void devices(const QVector<DeviceInfo>& found, const QString& harnessVersion) override {
        out() << "harness " << harnessVersion << ": "
              << (found.isEmpty() ? QStringLiteral("no CUDA device")
                                  : QString::number(found.size()) + QStringLiteral(" device(s), ") +
                                        found.first().name)
              << Qt::endl;
    }

    void state(Engine::State value, const QString& detail) override {
        out() << "  " << detail << ": " << Engine::stateName(value).toLower() << Qt::endl;
    }

    void report(int version, const EvaluationReport& r) override {
        out() << "  v" << version << ": " << EvaluationReport::statusToString(r.status)
              << (r.suspicious ? " (suspicious)" : "") << " - " << r.message << Qt::endl;
    }

    void step(const IterationSummary& s, qint64 sessionTokens, double sessionCost) override {
        // Only steps whose agents called a model have a cost to tell.
        if (s.tokens <= 0)
            return;
        out() << "  v" << s.version << ": " << (s.tokensEstimated ? "~" : "") << s.tokens
              << (s.tokensEstimated ? " tokens (estimated), $" : " tokens, $")
              << QString::number(s.costUsd, 'f', 4) << " (session: " << sessionTokens
              << " tokens, $" << QString::number(sessionCost, 'f', 4) << ")" << Qt::endl;
    }

    void iteration(int number, int, int best) override {
        out() << "iteration " << number << " done; best v" << best << Qt::endl;
    }

    // Progress of the session as a whole (version 0) goes to stderr, away from the results.
    void progress(int version, const QString& stage, const QString& message) override {
        if (version != 0)
            return;
        err() << "  [" << stage << "] " << message << Qt::endl;
    }

    void agentProgress(const AgentProgress& progress) override { m_progress.show(progress); }

    void finished(Engine::StopReason reason, const QString& message, const QString& dir, int best,
                  const std::optional<IterationSummary>& bestStep, const QString& spend,
                  int) override {
        if (reason == Engine::StopReason::NoDevice)
            err() << "kevolve-cli: " << message << Qt::endl;
        out() << "finished: " << message << Qt::endl;
        if (best > 0)
            out() << "best: v" << best << ", " << fmt(bestStep ? bestStep->speedup : std::nullopt)
                  << "x the reference" << Qt::endl;
        if (!spend.isEmpty())
            out() << spend << Qt::endl;
        out() << "session: " << dir << "\nexport with: kevolve-cli export " << dir << " --out DIR"
              << Qt::endl;
    }

    void failed(Engine::Failure, const QString&, const QString&, const QString& spend,
                int) override {
        if (!spend.isEmpty())
            out() << spend << Qt::endl;
    }

    void endpointCheck(const EndpointCheck& c) override {
        out() << "check " << c.role << ": " << (c.ok ? "ok, " : "FAILED, ") << c.message
              << Qt::endl;
    }

private:
    ProgressLine m_progress;
};

} // namespace

std::unique_ptr<Printer> makeTextPrinter() {
    return std::make_unique<TextPrinter>();
}

} // namespace kev::cli
