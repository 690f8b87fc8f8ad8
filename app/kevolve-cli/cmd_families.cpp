// kevolve-cli families: the builtin backend's kernel families; with --task, those that support
// the task on a device, each with its parameters, its default plan, whether that fits, its prior.
#include "builtin/knowledgebase.h"
#include "cliio.h"
#include "commands.h"
#include "jsonschema.h"

namespace kev::cli {

namespace {

// The devices --device names. Only descriptions that need no GPU to build: the answer is about
// what the backend would search, before anything runs.
QList<std::pair<QString, DeviceInfo>> namedDevices() {
    return {{QStringLiteral("h200"), DeviceInfo::h200()}};
}

// A device name, or a .json file holding one device as the harness describes it.
std::optional<DeviceInfo> resolveDevice(const QString& nameOrFile, QString* error) {
    if (nameOrFile.endsWith(QLatin1String(".json"))) {
        const auto json = readJsonObjectFile(nameOrFile, error);
        if (!json) {
            *error = QStringLiteral("--device: ") + *error;
            return std::nullopt;
        }
        DeviceInfo device = DeviceInfo::fromJson(*json);
        if (!device.isValid()) {
            *error = QStringLiteral("--device ") + nameOrFile +
                     QStringLiteral(": a device needs \"name\" and \"cc\" (or \"cc_major\")");
            return std::nullopt;
        }
        return device;
    }
    QStringList known;
    for (const auto& [name, device] : namedDevices()) {
        if (name.compare(nameOrFile, Qt::CaseInsensitive) == 0)
            return device;
        known << name;
    }
    *error = QStringLiteral("--device: unknown device \"") + nameOrFile +
             QStringLiteral("\" (known: ") + known.join(QStringLiteral(", ")) +
             QStringLiteral(", or a device .json file)");
    return std::nullopt;
}

} // namespace

int commandFamilies(const CommandContext& c) {
    const QCommandLineParser& p = c.parser;
    if (p.positionalArguments().size() != 1)
        return usageError(QStringLiteral("families takes no positional arguments"));
    QString error;
    const auto device = resolveDevice(p.isSet(c.options.device) ? p.value(c.options.device)
                                                                : namedDevices().constFirst().first,
                                      &error);
    if (!device)
        return usageError(error);
    const auto& registry = FamilyRegistry::instance();
    if (!p.isSet(c.options.task)) {
        c.printer.families(registry.families());
        return ExitOk;
    }

    const auto task =
        TaskLibrary(p.values(c.options.tasksDir)).resolve(p.value(c.options.task), &error);
    if (!task)
        return usageError(error);
    QVector<FamilyDetail> details;
    for (const KernelFamily* family : registry.supporting(*task, *device)) {
        FamilyDetail d;
        d.family = family;
        d.parameters = family->parameters();
        d.start = family->defaultStrategy(*task, *device);
        d.problems = family->constraints(d.start, *task, *device);
        d.prior = knowledge::familyPrior(family->id(), *task);
        details.append(d);
    }
    c.printer.familiesFor(*task, *device, details);
    return ExitOk;
}

} // namespace kev::cli
