// kevolve-cli's commands, one file each; main.cpp parses the command line and dispatches here.
// Adding a command: declare it below, write cmd_NAME.cpp (compute, then call the printer), add
// the printer's methods to printer.h with both faces (textprinter.cpp, jsonprinter.cpp), add a
// row to commands() in main.cpp with the options it takes (declared once in options.h), and list
// the file in app/CMakeLists.txt. Numeric options are read with readInt/readDouble (options.h).
#pragma once

#include "options.h"
#include "printer.h"

#include <QCommandLineParser>

namespace kev::cli {

// What a command gets: the parsed command line (positional argument 0 is the command's name),
// the options it may read, and the printer --json chose.
struct CommandContext {
    const QCommandLineParser& parser;
    const CliOptions& options;
    Printer& printer;
};

int commandTasks(const CommandContext& c);     // cmd_tasks.cpp
int commandFamilies(const CommandContext& c);  // cmd_families.cpp
int commandRun(const CommandContext& c);       // cmd_run.cpp (--check: llmcalls.h)
int commandResume(const CommandContext& c);    // cmd_run.cpp
int commandShow(const CommandContext& c);      // cmd_show.cpp
int commandExport(const CommandContext& c);    // cmd_export.cpp
int commandKnowledge(const CommandContext& c); // cmd_knowledge.cpp

// The usage text of --help (usage.cpp).
extern const char* const kUsage;
// The llm backend's flags of run and resume, before LlmSettings::optionHelp() (usage.cpp).
extern const char* const kLlmUsage;

} // namespace kev::cli
