// kevolve-cli show: a table of a session's iterations.
#include "cliio.h"
#include "commands.h"

namespace kev::cli {

int commandShow(const CommandContext& c) {
    if (c.parser.positionalArguments().size() != 2)
        return usageError(QStringLiteral("show needs one SESSION folder"));
    QString error;
    const auto store = SessionStore::open(c.parser.positionalArguments().at(1), &error);
    if (!store)
        return failure(error);
    c.printer.session(*store);
    return ExitOk;
}

} // namespace kev::cli
