// kevolve-cli export: the best (or one version's) kernel with its task, reports and samples.
#include "cliio.h"
#include "commands.h"
#include "exporter.h"

namespace kev::cli {

int commandExport(const CommandContext& c) {
    const QCommandLineParser& p = c.parser;
    if (p.positionalArguments().size() != 2)
        return usageError(QStringLiteral("export needs one SESSION folder"));
    if (!p.isSet(c.options.outDir))
        return usageError(QStringLiteral("export needs --out DIR"));
    QString error;
    int requested = 0;
    if (!readInt(p, c.options.version, 1, std::numeric_limits<int>::max(),
                 QStringLiteral("a version number"), &requested, &error))
        return usageError(error);
    const std::optional<int> version =
        p.isSet(c.options.version) ? std::optional<int>(requested) : std::nullopt;
    const auto store = SessionStore::open(p.positionalArguments().at(1), &error);
    if (!store)
        return failure(error);
    if (version && !store->step(*version))
        return usageError(optionName(c.options.version) + QStringLiteral(": the session has no v") +
                          QString::number(*version));
    const QString outDir = p.value(c.options.outDir);
    QStringList written;
    if (!Exporter::exportSession(*store, outDir, version, &written, &error))
        return failure(error);
    c.printer.exported(outDir, written);
    return ExitOk;
}

} // namespace kev::cli
