// kevolve-cli run/resume: the options that shape a run, applied to the engine's settings.
#pragma once

#include "enginesettings.h"
#include "options.h"
#include "task.h"

namespace kev::cli {

// Applies run/resume options to settings, each option read and checked once. Returns ExitOk, or
// the exit code of the first problem (ExitUsage for a bad option, ExitAgent for a backend this
// build lacks) with *error naming it.
int applyRunOptions(const QCommandLineParser& p, const CliOptions& o, EngineSettings* s,
                    QString* error);

// Why the builtin backend cannot serve this task with these settings, or empty if it can.
QString builtinCannotServe(const Task& task, const EngineSettings& s);

} // namespace kev::cli
