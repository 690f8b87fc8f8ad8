// The JSON-lines face of kevolve-cli: every answer and every event is one compact object per line.
#include "cliio.h"
#include "printer.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace kev::cli {

namespace {

void printJson(const QJsonObject& object) {
    out() << QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact)) << '\n';
    out().flush();
}

QJsonObject familyJson(const FamilyDetail& d) {
    QJsonArray parameters;
    QJsonObject values;
    for (const ParameterSpec& spec : d.parameters) {
        parameters.append(QJsonObject{{QStringLiteral("name"), spec.name},
                                      {QStringLiteral("values"), spec.values},
                                      {QStringLiteral("description"), spec.description}});
        values.insert(spec.name, parameterValue(spec, d.start));
    }
    return QJsonObject{
        {QStringLiteral("id"), d.family->id()},
        {QStringLiteral("description"), d.family->description()},
        {QStringLiteral("prior"), d.prior},
        {QStringLiteral("parameters"), parameters},
        {QStringLiteral("default"),
         QJsonObject{{QStringLiteral("key"), configurationKey(*d.family, d.start)},
                     {QStringLiteral("values"), values},
                     {QStringLiteral("rationale"), d.start.rationale},
                     {QStringLiteral("strategy"), d.start.toJson()},
                     {QStringLiteral("feasible"), d.problems.isEmpty()},
                     {QStringLiteral("problems"), QJsonArray::fromStringList(d.problems)}}}};
}

class JsonLinesPrinter final : public Printer {
public:
    void tasks(const QVector<Task>& library, const QStringList& problems) override {
        QJsonArray list;
        for (const auto& t : library)
            list.append(QJsonObject{{QStringLiteral("name"), t.name},
                                    {QStringLiteral("summary"), t.summary()},
                                    {QStringLiteral("description"), t.description},
                                    {QStringLiteral("source"), t.sourcePath}});
        printJson({{QStringLiteral("tasks"), list},
                   {QStringLiteral("problems"), QJsonArray::fromStringList(problems)}});
    }

    void families(const QVector<const KernelFamily*>& all) override {
        QJsonArray list;
        for (const KernelFamily* family : all)
            list.append(QJsonObject{{QStringLiteral("id"), family->id()},
                                    {QStringLiteral("description"), family->description()}});
        printJson({{QStringLiteral("families"), list}});
    }

    void familiesFor(const Task& task, const DeviceInfo& device,
                     const QVector<FamilyDetail>& supporting) override {
        QJsonArray list;
        for (const FamilyDetail& d : supporting)
            list.append(familyJson(d));
        printJson({{QStringLiteral("task"), task.name},
                   {QStringLiteral("device"), device.toJson()},
                   {QStringLiteral("families"), list}});
    }

    void session(const SessionStore& store) override {
        const std::optional<int> best = store.bestVersion();
        QJsonArray steps;
        for (const auto& s : store.steps())
            steps.append(s.toJson());
        printJson({{QStringLiteral("session"), store.info().toJson()},
                   {QStringLiteral("best"), best ? QJsonValue(*best) : QJsonValue()},
                   {QStringLiteral("steps"), steps},
                   {QStringLiteral("damage"), QJsonArray::fromStringList(store.damageReport())}});
    }

    void timeline(const SessionStore& store, const Timeline& t) override {
        QJsonArray rows;
        for (const TimelineRow& r : t.rows) {
            QJsonObject o{{QStringLiteral("version"), r.version},
                          {QStringLiteral("iteration"), r.iteration},
                          {QStringLiteral("beam"), r.beam},
                          {QStringLiteral("stage"), r.span.stage},
                          {QStringLiteral("start"), r.span.start.toString(Qt::ISODateWithMs)},
                          {QStringLiteral("offset_s"), r.offsetS},
                          {QStringLiteral("seconds"), r.span.seconds}};
            if (!r.span.detail.isEmpty())
                o.insert(QStringLiteral("detail"), r.span.detail);
            rows.append(o);
        }
        printJson({{QStringLiteral("session"), store.info().id},
                   {QStringLiteral("timeline"), rows},
                   {QStringLiteral("evaluated"), t.evaluated},
                   {QStringLiteral("wall_s"), t.wallS},
                   {QStringLiteral("evaluate_s"), t.evaluateS},
                   {QStringLiteral("per_minute"), t.perMinute()},
                   {QStringLiteral("unreadable"), QJsonArray::fromStringList(t.unreadable)},
                   {QStringLiteral("damage"), QJsonArray::fromStringList(store.damageReport())}});
    }

    void exported(const QString& outDir, const QStringList& files) override {
        printJson({{QStringLiteral("out"), QDir(outDir).absolutePath()},
                   {QStringLiteral("files"), QJsonArray::fromStringList(files)}});
    }

    void knowledgeStats(const KnowledgeStats& s) override {
        const auto counts = [](const QMap<QString, qint64>& m) {
            QJsonObject o;
            for (auto it = m.cbegin(); it != m.cend(); ++it)
                o.insert(it.key(), double(it.value()));
            return o;
        };
        printJson({{QStringLiteral("store"), s.path},
                   {QStringLiteral("schema_version"), s.schemaVersion},
                   {QStringLiteral("records"), double(s.records)},
                   {QStringLiteral("trustworthy"), double(s.trustworthy)},
                   {QStringLiteral("tasks"), double(s.tasks)},
                   {QStringLiteral("sessions"), double(s.sessions)},
                   {QStringLiteral("ops"), counts(s.byOp)},
                   {QStringLiteral("devices"), counts(s.byDevice)},
                   {QStringLiteral("decisions"), counts(s.byDecision)}});
    }

    void knowledgeExported(const QString& store, const QString& file, qint64 records) override {
        printJson({{QStringLiteral("store"), store},
                   {QStringLiteral("exported"), file},
                   {QStringLiteral("records"), double(records)}});
    }

    void knowledgeImported(const QString& store, const QString& file,
                           const KnowledgeImportResult& r) override {
        printJson({{QStringLiteral("store"), store},
                   {QStringLiteral("imported"), file},
                   {QStringLiteral("added"), double(r.added)},
                   {QStringLiteral("updated"), double(r.updated)},
                   {QStringLiteral("unchanged"), double(r.unchanged)}});
    }

    void sessionOpened(const QString& dir, const SessionInfo& info, int steps) override {
        printJson({{QStringLiteral("event"), QStringLiteral("session")},
                   {QStringLiteral("dir"), dir},
                   {QStringLiteral("task"), info.task.name},
                   {QStringLiteral("steps"), steps}});
    }

    void devices(const QVector<DeviceInfo>& found, const QString& harnessVersion) override {
        QJsonArray names;
        for (const auto& d : found)
            names.append(d.name);
        printJson({{QStringLiteral("event"), QStringLiteral("devices")},
                   {QStringLiteral("harness_version"), harnessVersion},
                   {QStringLiteral("devices"), names}});
    }

    void state(Engine::State value, const QString& detail) override {
        printJson({{QStringLiteral("event"), QStringLiteral("state")},
                   {QStringLiteral("state"), Engine::stateName(value)},
                   {QStringLiteral("detail"), detail}});
    }

    void report(int version, const EvaluationReport& r) override {
        printJson({{QStringLiteral("event"), QStringLiteral("report")},
                   {QStringLiteral("version"), version},
                   {QStringLiteral("status"), EvaluationReport::statusToString(r.status)},
                   {QStringLiteral("suspicious"), r.suspicious},
                   {QStringLiteral("speedup"), r.timed ? QJsonValue(r.speedup) : QJsonValue()},
                   {QStringLiteral("message"), r.message}});
    }

    void step(const IterationSummary& s, qint64, double) override {
        printJson({{QStringLiteral("event"), QStringLiteral("step")},
                   {QStringLiteral("step"), s.toJson()}});
    }

    void iteration(int number, int parent, int best) override {
        printJson({{QStringLiteral("event"), QStringLiteral("iteration")},
                   {QStringLiteral("iteration"), number},
                   {QStringLiteral("parent"), parent},
                   {QStringLiteral("best"), best}});
    }

    // Progress is for a person watching; the program reading the lines has the events.
    void progress(int, const QString&, const QString&) override {}

    // One event per change of state or of call (the token count is in the next one); a program
    // has no use for the moment of sending.
    void agentProgress(const AgentProgress& progress) override {
        if (progress.state == AgentProgress::State::Sending)
            return;
        const QString key = progressKey(progress);
        if (progress.state == m_progressState && key == m_progressKey)
            return;
        m_progressState = progress.state;
        m_progressKey = key;
        printJson({{QStringLiteral("event"), QStringLiteral("agent_progress")},
                   {QStringLiteral("role"), progress.role},
                   {QStringLiteral("model"), progress.model},
                   {QStringLiteral("version"), progress.version},
                   {QStringLiteral("state"), AgentProgress::stateName(progress.state)},
                   {QStringLiteral("attempt"), progress.attempt},
                   {QStringLiteral("max_attempts"), progress.maxAttempts},
                   {QStringLiteral("tokens"), progress.tokens},
                   {QStringLiteral("tokens_estimated"), progress.tokensEstimated},
                   {QStringLiteral("elapsed_s"), static_cast<double>(progress.elapsedMs) / 1e3},
                   {QStringLiteral("wait_s"), static_cast<double>(progress.waitMs) / 1e3},
                   {QStringLiteral("detail"), progress.detail}});
    }

    void finished(Engine::StopReason reason, const QString& message, const QString& dir, int best,
                  const std::optional<IterationSummary>&, const QString&, int exitCode) override {
        printJson({{QStringLiteral("event"), QStringLiteral("finished")},
                   {QStringLiteral("reason"), Engine::stopReasonName(reason)},
                   {QStringLiteral("message"), message},
                   {QStringLiteral("session"), dir},
                   {QStringLiteral("best"), best > 0 ? QJsonValue(best) : QJsonValue()},
                   {QStringLiteral("exit_code"), exitCode}});
    }

    void failed(Engine::Failure failure, const QString& message, const QString& dir, const QString&,
                int exitCode) override {
        printJson({{QStringLiteral("event"), QStringLiteral("failed")},
                   {QStringLiteral("failure"), Engine::failureName(failure)},
                   {QStringLiteral("message"), message},
                   {QStringLiteral("session"), dir},
                   {QStringLiteral("exit_code"), exitCode}});
    }

    void endpointCheck(const EndpointCheck& c) override {
        printJson({{QStringLiteral("event"), QStringLiteral("check")},
                   {QStringLiteral("role"), c.role},
                   {QStringLiteral("ok"), c.ok},
                   {QStringLiteral("message"), c.message}});
    }

private:
    AgentProgress::State m_progressState = AgentProgress::State::Sending;
    QString m_progressKey;
};

} // namespace

std::unique_ptr<Printer> makeJsonLinesPrinter() {
    return std::make_unique<JsonLinesPrinter>();
}

} // namespace kev::cli
