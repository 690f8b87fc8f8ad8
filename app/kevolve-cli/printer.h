// kevolve-cli: what the commands say, behind one interface with two faces chosen once per run
// (as nvbench's printers are): text for a person, and JSON lines (one object per line) for a
// program. Commands compute; printers only format. Diagnostics stay on stderr in both faces.
#pragma once

#include "builtin/kernelfamily.h"
#include "engine.h"
#include "knowledgestore.h"
#include "llmcalls.h"
#include "sessionstore.h"
#include "task.h"

#include <QString>
#include <QStringList>
#include <QVector>

#include <memory>
#include <optional>

namespace kev::cli {

// One stage of one step, for `show --timeline`.
struct TimelineRow {
    int version = 0;
    int iteration = 0;
    int beam = 0; // 0-based
    StageSpan span;
    double offsetS = 0; // from the session's first recorded stage
};

// `show --timeline`: the rows in start order and what they add up to.
struct Timeline {
    QVector<TimelineRow> rows;
    int evaluated = 0;      // steps with an evaluate stage
    double wallS = 0;       // first start to last end
    double evaluateS = 0;   // the evaluate stages' total (they overlap with a beam)
    QStringList unreadable; // steps whose log could not be read, with why
    double perMinute() const { return wallS > 0 ? 60.0 * evaluated / wallS : 0; }
};

// One family that supports the task, as `families --task` describes it.
struct FamilyDetail {
    const KernelFamily* family = nullptr;
    QVector<ParameterSpec> parameters;
    Strategy start;       // the family's default plan for the task and device
    QStringList problems; // the constraints that plan fails (none: it fits)
    double prior = 0;
};

class Printer {
public:
    virtual ~Printer() = default;

    static std::unique_ptr<Printer> create(bool json);

    // tasks: the library, and the files it skipped.
    virtual void tasks(const QVector<Task>& library, const QStringList& problems) = 0;
    // families: every family, or those that support a task on a device.
    virtual void families(const QVector<const KernelFamily*>& all) = 0;
    virtual void familiesFor(const Task& task, const DeviceInfo& device,
                             const QVector<FamilyDetail>& supporting) = 0;
    // show: the session's iterations.
    virtual void session(const SessionStore& store) = 0;
    // show --timeline.
    virtual void timeline(const SessionStore& store, const Timeline& timeline) = 0;
    // export: where the files went.
    virtual void exported(const QString& outDir, const QStringList& files) = 0;
    // knowledge stats | export | import.
    virtual void knowledgeStats(const KnowledgeStats& stats) = 0;
    virtual void knowledgeExported(const QString& store, const QString& file, qint64 records) = 0;
    virtual void knowledgeImported(const QString& store, const QString& file,
                                   const KnowledgeImportResult& result) = 0;

    // run and resume: the engine's events as they come.
    virtual void sessionOpened(const QString& dir, const SessionInfo& info, int steps) = 0;
    virtual void devices(const QVector<DeviceInfo>& found, const QString& harnessVersion) = 0;
    virtual void state(Engine::State value, const QString& detail) = 0;
    virtual void report(int version, const EvaluationReport& report) = 0;
    // sessionTokens and sessionCost include this step.
    virtual void step(const IterationSummary& summary, qint64 sessionTokens,
                      double sessionCost) = 0;
    virtual void iteration(int number, int parent, int best) = 0;
    virtual void progress(int version, const QString& stage, const QString& message) = 0;
    // The live state of one agent's model call (not with --quiet).
    virtual void agentProgress(const AgentProgress& progress) = 0;
    // best: the session's best version, 0 if none; bestStep its summary where it could be read;
    // spend: what the session's model calls cost (spendLine), empty if it made none.
    virtual void finished(Engine::StopReason reason, const QString& message, const QString& dir,
                          int best, const std::optional<IterationSummary>& bestStep,
                          const QString& spend, int exitCode) = 0;
    // The event only: the caller has written the diagnostic to stderr in both faces.
    virtual void failed(Engine::Failure failure, const QString& message, const QString& dir,
                        const QString& spend, int exitCode) = 0;
    // run/resume --check: one endpoint's answer.
    virtual void endpointCheck(const EndpointCheck& check) = 0;
};

std::unique_ptr<Printer> makeTextPrinter();
std::unique_ptr<Printer> makeJsonLinesPrinter();

inline std::unique_ptr<Printer> Printer::create(bool json) {
    return json ? makeJsonLinesPrinter() : makeTextPrinter();
}

} // namespace kev::cli
