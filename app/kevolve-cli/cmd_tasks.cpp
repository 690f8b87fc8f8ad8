// kevolve-cli tasks: the task library (built-in tasks and --tasks-dir).
#include "cliio.h"
#include "commands.h"

namespace kev::cli {

int commandTasks(const CommandContext& c) {
    QStringList problems;
    const auto tasks = TaskLibrary(c.parser.values(c.options.tasksDir)).tasks(&problems);
    c.printer.tasks(tasks, problems);
    return ExitOk;
}

} // namespace kev::cli
