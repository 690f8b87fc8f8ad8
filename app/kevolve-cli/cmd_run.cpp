// kevolve-cli run and resume: start a session on a task, or continue a session folder.
#include "cliio.h"
#include "commands.h"
#include "knowledgestore.h"
#include "driver.h"
#include "runoptions.h"

#include <QDateTime>
#include <QDir>

namespace kev::cli {

namespace {

// A run/resume option problem: a usage error, or an agent failure (exit 5) without the hint.
int optionProblem(int code, const QString& problem) {
    return code == ExitUsage ? usageError(problem) : failure(problem, code);
}

// --check asks the endpoints instead of running: exit 0 when every one is usable, else 5.
int checkOnly(const CommandContext& c, const EngineSettings& settings) {
    const QVector<EndpointCheck> checks = checkEndpoints(settings);
    if (checks.isEmpty())
        return failure(optionName(c.options.check) +
                           QStringLiteral(": no role is played by the llm backend (add --backend "
                                          "llm)"),
                       ExitAgent);
    bool allOk = true;
    for (const EndpointCheck& check : checks) {
        c.printer.endpointCheck(check);
        allOk = allOk && check.ok;
    }
    return allOk ? ExitOk : ExitAgent;
}

// The live line of each agent call, unless --quiet.
void showProgressUnlessQuiet(Driver& driver, const CommandContext& c) {
    if (!c.parser.isSet(c.options.quiet))
        driver.showProgress();
}

} // namespace

int commandRun(const CommandContext& c) {
    const QCommandLineParser& p = c.parser;
    const CliOptions& o = c.options;
    if (p.positionalArguments().size() != 1)
        return usageError(QStringLiteral("run takes no positional arguments"));
    if (!p.isSet(o.task))
        return usageError(
            QStringLiteral("run needs --task T (a library name or a task .json file)"));
    QString error;
    const auto task = TaskLibrary(p.values(o.tasksDir)).resolve(p.value(o.task), &error);
    if (!task)
        return usageError(error);
    EngineSettings settings;
    if (const int code = applyRunOptions(p, o, &settings, &error); code != ExitOk)
        return optionProblem(code, error);
    if (const QString why = builtinCannotServe(*task, settings); !why.isEmpty())
        return failure(why, ExitAgent);
    const QString dir = p.isSet(o.session) ? p.value(o.session)
                                           : QDir(QStringLiteral("kevolve-sessions"))
                                                 .filePath(task->name + u'-' +
                                                           QDateTime::currentDateTime().toString(
                                                               QStringLiteral("yyyyMMdd-HHmmss")));
    // Task names are identifiers (the task rules refuse paths); the folder is checked anyway so
    // that no name can ever place a session outside kevolve-sessions/.
    if (!p.isSet(o.session) &&
        !QDir::cleanPath(dir).startsWith(QStringLiteral("kevolve-sessions/")))
        return usageError(QStringLiteral("task name \"") + task->name +
                          QStringLiteral("\" would place the session outside kevolve-sessions/"));
    if (p.isSet(o.check))
        return checkOnly(c, settings);
    if (SessionStore::isSession(dir))
        return usageError(
            dir + QStringLiteral(" already holds a session; use kevolve-cli resume ") + dir);
    Driver driver(c.printer, settings.stepMode);
    showProgressUnlessQuiet(driver, c);
    driver.engine().setKnowledgePath(KnowledgeStore::resolvePath(p.value(c.options.knowledge)));
    driver.engine().start(*task, settings, dir);
    return driver.exec();
}

int commandResume(const CommandContext& c) {
    const QCommandLineParser& p = c.parser;
    if (p.positionalArguments().size() != 2)
        return usageError(QStringLiteral("resume needs one SESSION folder"));
    const QString dir = p.positionalArguments().at(1);
    QString error;
    const auto store = SessionStore::open(dir, &error);
    if (!store)
        return failure(error);
    EngineSettings settings = store->settings();
    if (const int code = applyRunOptions(p, c.options, &settings, &error); code != ExitOk)
        return optionProblem(code, error);
    if (const QString why = builtinCannotServe(store->task(), settings); !why.isEmpty())
        return failure(why, ExitAgent);
    if (p.isSet(c.options.check))
        return checkOnly(c, settings);
    Driver driver(c.printer, settings.stepMode);
    showProgressUnlessQuiet(driver, c);
    driver.engine().setKnowledgePath(KnowledgeStore::resolvePath(p.value(c.options.knowledge)));
    driver.engine().resume(dir, settings);
    return driver.exec();
}

} // namespace kev::cli
