// kevolve-cli: run, resume, inspect and export Kevolve sessions from a terminal. This file only
// dispatches: each command lives in its own cmd_*.cpp, its output behind the Printer that --json
// chooses once (printer.h).
#include "cliio.h"
#include "commands.h"
#include "llm/llmsettings.h"
#include "metatypes.h"

#include <QCoreApplication>

#include <algorithm>

using namespace kev;
using namespace kev::cli;

namespace {

struct Command {
    QString name;
    // The options the command takes besides --json and --tasks-dir.
    QList<QCommandLineOption> options;
    int (*run)(const CommandContext&);
};

QList<Command> commands(const CliOptions& o) {
    const QList<QCommandLineOption> runOptions = {
        o.backend, o.planner, o.coder, o.reviewer, o.agentOptions, o.provider, o.baseUrl, o.model,
        o.iterations, o.target, o.targetFloor, o.beam, o.session, o.step, o.harness, o.timeBudget,
        o.timingBudget, o.plateau, o.task, o.knowledge,
        // the llm backend's flags
        o.quiet, o.check, o.tokenBudget, o.costBudget, o.connectTimeout, o.firstTokenTimeout,
        o.stallTimeout, o.totalTimeout, o.maxRetries, o.maxTokens, o.contextTokens, o.temperature,
        o.fallbackModel, o.numCtx, o.keepAlive};
    return {{QStringLiteral("tasks"), {}, commandTasks},
            {QStringLiteral("families"), {o.task, o.device}, commandFamilies},
            {QStringLiteral("run"), runOptions, commandRun},
            {QStringLiteral("resume"), runOptions, commandResume},
            {QStringLiteral("show"), {o.timeline}, commandShow},
            {QStringLiteral("export"), {o.outDir, o.version}, commandExport},
            {QStringLiteral("knowledge"), {o.knowledge}, commandKnowledge}};
}

} // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("kevolve-cli"));
    registerMetaTypes();

    const QStringList args = QCoreApplication::arguments();
    if (args.size() < 2 || args.contains(QStringLiteral("--help")) ||
        args.contains(QStringLiteral("-h"))) {
        (args.size() < 2 ? err() : out()) << kUsage << '\n'
                                          << kLlmUsage << LlmSettings::optionHelp() << '\n';
        return args.size() < 2 ? ExitUsage : ExitOk;
    }
    const CliOptions o;
    const QList<Command> known = commands(o);
    const auto command = std::find_if(known.begin(), known.end(),
                                      [&](const Command& c) { return c.name == args.at(1); });
    if (command == known.end())
        return usageError(QStringLiteral("unknown command \"") + args.at(1) + u'"');
    QCommandLineParser p;
    p.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    p.addOptions({o.json, o.tasksDir});
    p.addOptions(command->options);
    if (!p.parse(args))
        return usageError(p.errorText());
    const auto printer = Printer::create(p.isSet(o.json));
    return command->run({p, o, *printer});
}
