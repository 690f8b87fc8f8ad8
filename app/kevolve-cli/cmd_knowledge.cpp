// kevolve-cli knowledge stats | export FILE | import FILE: the per-user knowledge store
// (docs/knowledge.md), summarised, written as JSON lines, or merged from another machine's export.
#include "cliio.h"
#include "commands.h"
#include "knowledgestore.h"

#include <QFile>
#include <QSaveFile>

#include <cstdio>

namespace kev::cli {

int commandKnowledge(const CommandContext& c) {
    const QStringList args = c.parser.positionalArguments();
    const QString action = args.value(1);
    const bool withFile = action == QLatin1String("export") || action == QLatin1String("import");
    if (!(action == QLatin1String("stats") && args.size() == 2) && !(withFile && args.size() == 3))
        return usageError(
            QStringLiteral("knowledge needs one of: stats, export FILE, import FILE"));
    const QString path = KnowledgeStore::resolvePath(c.parser.value(c.options.knowledge));
    if (path.isEmpty())
        return usageError(QStringLiteral("the knowledge store is off (--knowledge or "
                                         "KEVOLVE_KNOWLEDGE is \"off\"); name a store with "
                                         "--knowledge PATH"));
    QString error;
    const auto store = KnowledgeStore::open(path, &error);
    if (!store)
        return failure(error);

    if (action == QLatin1String("stats")) {
        const auto stats = store->stats(&error);
        if (!stats)
            return failure(error);
        c.printer.knowledgeStats(*stats);
        return ExitOk;
    }
    const QString file = args.at(2);
    if (action == QLatin1String("export")) {
        // "-" is standard output; a file is replaced whole or not at all.
        if (file == QLatin1String("-")) {
            QFile stdoutFile;
            if (!stdoutFile.open(stdout, QIODevice::WriteOnly))
                return failure(QStringLiteral("cannot write to standard output"));
            const auto count = store->exportTo(stdoutFile, &error);
            return count ? ExitOk : failure(error);
        }
        QSaveFile target(file);
        if (!target.open(QIODevice::WriteOnly))
            return failure(file + QStringLiteral(": cannot write: ") + target.errorString());
        const auto count = store->exportTo(target, &error);
        if (!count)
            return failure(file + QStringLiteral(": ") + error);
        if (!target.commit())
            return failure(file + QStringLiteral(": cannot write: ") + target.errorString());
        c.printer.knowledgeExported(store->path(), file, *count);
        return ExitOk;
    }
    QFile source;
    bool opened = false;
    if (file == QLatin1String("-")) {
        opened = source.open(stdin, QIODevice::ReadOnly);
    } else {
        source.setFileName(file);
        opened = source.open(QIODevice::ReadOnly);
    }
    if (!opened)
        return failure(file + QStringLiteral(": cannot read: ") + source.errorString());
    const auto result = store->importFrom(source, &error);
    if (!result)
        return failure(file + QStringLiteral(": ") + error +
                           QStringLiteral(" (nothing was imported)"),
                       ExitUsage);
    c.printer.knowledgeImported(store->path(), file, *result);
    return ExitOk;
}

} // namespace kev::cli
