// kevolve-cli show: a table of a session's iterations, or (--timeline) where each step's wall time
// went.
#include "cliio.h"
#include "commands.h"

#include <algorithm>

namespace kev::cli {

namespace {

Timeline readTimeline(const SessionStore& store) {
    Timeline t;
    QDateTime first, last;
    for (const auto& s : store.steps()) {
        QString error;
        const std::optional<Candidate> c = store.loadCandidate(s.version, &error);
        if (!c) {
            t.unreadable << error;
            continue;
        }
        bool evaluated = false;
        for (const StageSpan& span : c->timeline) {
            TimelineRow row;
            row.version = c->version;
            row.iteration = c->iteration;
            row.beam = c->beamIndex;
            row.span = span;
            t.rows.append(row);
            const QDateTime end = span.start.addMSecs(qRound64(span.seconds * 1000.0));
            if (!first.isValid() || span.start < first)
                first = span.start;
            if (!last.isValid() || end > last)
                last = end;
            if (span.stage == QLatin1String("evaluate")) {
                evaluated = true;
                t.evaluateS += span.seconds;
            }
        }
        t.evaluated += evaluated ? 1 : 0;
    }
    std::stable_sort(t.rows.begin(), t.rows.end(), [](const TimelineRow& a, const TimelineRow& b) {
        return a.span.start < b.span.start;
    });
    for (TimelineRow& row : t.rows)
        row.offsetS = static_cast<double>(first.msecsTo(row.span.start)) / 1000.0;
    if (first.isValid())
        t.wallS = static_cast<double>(first.msecsTo(last)) / 1000.0;
    return t;
}

} // namespace

int commandShow(const CommandContext& c) {
    if (c.parser.positionalArguments().size() != 2)
        return usageError(QStringLiteral("show needs one SESSION folder"));
    QString error;
    const auto store = SessionStore::open(c.parser.positionalArguments().at(1), &error);
    if (!store)
        return failure(error);
    if (c.parser.isSet(c.options.timeline))
        c.printer.timeline(*store, readTimeline(*store));
    else
        c.printer.session(*store);
    return ExitOk;
}

} // namespace kev::cli
