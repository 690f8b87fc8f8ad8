// kevolve-cli: exit codes and the terminal streams every command writes to.
#pragma once

#include <QString>
#include <QTextStream>

#include <optional>

namespace kev::cli {

enum ExitCode {
    ExitOk = 0,
    ExitFailure = 1,
    ExitUsage = 2,
    ExitHarnessMissing = 3,
    ExitNoDevice = 4,
    ExitAgent = 5,
    ExitInterrupted = 130
};

QTextStream& out();
QTextStream& err();

// "kevolve-cli: MESSAGE" and the pointer to --help on stderr; returns ExitUsage.
int usageError(const QString& message);

// "kevolve-cli: MESSAGE" on stderr; returns code (a failure that is not the caller's usage).
int failure(const QString& message, int code = ExitFailure);

// A number with a fixed count of decimals, or "-" where there is none.
QString fmt(const std::optional<double>& value, int decimals = 3);

} // namespace kev::cli
