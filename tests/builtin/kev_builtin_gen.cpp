// kev-builtin-gen: writes the built-in families' kernels for tasks and parameter points into a
// folder, one .cu per point, each starting with "// expect: ok" and "// task: <task>.json" so that
// they can be evaluated with kevolve-harness on a GPU host. Not installed; a tool for checking the
// families on real hardware.
#include "builtin/kernelfamily.h"
#include "deviceinfo.h"
#include "strategy.h"
#include "task.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QSaveFile>
#include <QTextStream>

#include <cstdio>

using namespace Qt::StringLiterals;

namespace {

QTextStream& err() {
    static QTextStream stream(stderr);
    return stream;
}

// The parameter points of a family for a task: its default strategy, and with `sample` also the
// first feasible single-parameter moves of layout, pipeline depth and warp tile, so that the
// variants the planner reaches first are checked as well.
QVector<kev::Strategy> pointsFor(const kev::KernelFamily& family, const kev::Task& task,
                                 const kev::DeviceInfo& device, const QString& mode,
                                 int maxPoints) {
    const kev::Strategy first = family.defaultStrategy(task, device);
    QVector<kev::Strategy> points{first};
    if (mode != u"sample")
        return points;
    QStringList seen{kev::configurationKey(family, first)};
    // GEMM knobs, then the memory-bound families' (statistics, W/B and row prefetching, rows in
    // flight, register cache, grid, split).
    const QStringList preferred{u"smemLayout"_s,    u"stages"_s,
                                u"warpN"_s,         u"blockK"_s,
                                u"splitK"_s,        u"raster"_s,
                                u"blockM"_s,        u"tile"_s,
                                u"thread_tile_n"_s, u"stats"_s,
                                u"weights"_s,       u"pipeline"_s,
                                u"depth"_s,         u"vectors_per_thread"_s,
                                u"ctas_per_sm"_s,   u"split_m"_s,
                                u"mapping"_s,       u"vectorWidth"_s,
                                u"warps"_s};
    const auto moves = family.neighbours(first);
    for (const QString& knob : preferred) {
        for (const kev::Strategy& move : moves) {
            if (points.size() >= maxPoints)
                return points;
            if (!move.rationale.startsWith(knob + u' '))
                continue;
            const QString key = kev::configurationKey(family, move);
            if (seen.contains(key) || !family.constraints(move, task, device).isEmpty())
                continue;
            seen << key;
            points << move;
            break;
        }
    }
    return points;
}

bool writeKernel(const QString& path, const QString& text) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return false;
    file.write(text.toUtf8());
    return file.commit();
}

} // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(u"kev-builtin-gen"_s);

    QCommandLineParser parser;
    parser.setApplicationDescription(
        u"Writes the built-in backend's generated kernels, one .cu per task, family and "
        "parameter point, for evaluation with kevolve-harness."_s);
    parser.addHelpOption();
    const QCommandLineOption outOption(u"out"_s, u"Output folder (created)."_s, u"DIR"_s);
    const QCommandLineOption taskOption(
        u"task"_s, u"Task name or file; repeatable (default: every built-in task)."_s, u"TASK"_s);
    const QCommandLineOption familyOption(
        u"family"_s, u"Family id; repeatable (default: every family supporting the task)."_s,
        u"ID"_s);
    const QCommandLineOption pointsOption(
        u"points"_s, u"\"default\" (one point per family) or \"sample\" (default plus moves)."_s,
        u"MODE"_s, u"sample"_s);
    const QCommandLineOption maxOption(
        u"max-points"_s, u"Points per family and task with --points sample."_s, u"N"_s, u"3"_s);
    const QCommandLineOption strategyOption(
        u"strategy"_s, u"A strategy file (JSON or text form) to generate instead of points."_s,
        u"FILE"_s);
    parser.addOptions(
        {outOption, taskOption, familyOption, pointsOption, maxOption, strategyOption});
    parser.process(app);

    if (!parser.isSet(outOption)) {
        err() << "kev-builtin-gen: --out DIR is required\n";
        return 2;
    }
    const QString mode = parser.value(pointsOption);
    if (mode != u"default" && mode != u"sample") {
        err() << "kev-builtin-gen: --points must be \"default\" or \"sample\", not \"" << mode
              << "\"\n";
        return 2;
    }
    bool maxOk = false;
    const int maxPoints = parser.value(maxOption).toInt(&maxOk);
    if (!maxOk || maxPoints < 1) {
        err() << "kev-builtin-gen: --max-points must be a positive integer\n";
        return 2;
    }

    const kev::TaskLibrary library;
    QVector<kev::Task> tasks;
    if (parser.isSet(taskOption)) {
        const QStringList names = parser.values(taskOption);
        for (const QString& name : names) {
            QString error;
            auto task = library.resolve(name, &error);
            if (!task) {
                err() << "kev-builtin-gen: task " << name << ": " << error << '\n';
                return 2;
            }
            tasks << *task;
        }
    } else {
        tasks = library.tasks();
    }

    std::optional<kev::Strategy> fixed;
    if (parser.isSet(strategyOption)) {
        QFile file(parser.value(strategyOption));
        if (!file.open(QIODevice::ReadOnly)) {
            err() << "kev-builtin-gen: cannot read " << file.fileName() << '\n';
            return 2;
        }
        QString error;
        fixed = kev::Strategy::fromText(QString::fromUtf8(file.readAll()), &error);
        if (!fixed) {
            err() << "kev-builtin-gen: " << file.fileName() << ": " << error << '\n';
            return 2;
        }
    }

    const QStringList familyIds = parser.values(familyOption);
    const auto& registry = kev::FamilyRegistry::instance();
    for (const QString& id : familyIds) {
        if (!registry.find(id)) {
            err() << "kev-builtin-gen: unknown family " << id << '\n';
            return 2;
        }
    }

    const QDir out(parser.value(outOption));
    if (!out.mkpath(u"."_s)) {
        err() << "kev-builtin-gen: cannot create " << out.path() << '\n';
        return 2;
    }
    const kev::DeviceInfo device = kev::DeviceInfo::h200();
    QString index;
    int written = 0;
    int refused = 0;
    for (const kev::Task& task : tasks) {
        const auto families = registry.supporting(task, device);
        for (const kev::KernelFamily* family : families) {
            if (!familyIds.isEmpty() && !familyIds.contains(family->id()))
                continue;
            if (fixed && fixed->family != family->id())
                continue;
            const QVector<kev::Strategy> points =
                fixed ? QVector<kev::Strategy>{*fixed}
                      : pointsFor(*family, task, device, mode, maxPoints);
            for (qsizetype i = 0; i < points.size(); ++i) {
                const kev::Strategy& point = points.at(i);
                const QStringList problems = family->constraints(point, task, device);
                if (!problems.isEmpty()) {
                    err() << "refused " << task.name << ' ' << family->id() << ": "
                          << problems.join(u"; "_s) << '\n';
                    ++refused;
                    continue;
                }
                const QString fileName = u"%1__%2__%3.cu"_s.arg(task.name, family->id()).arg(i);
                // A family that writes the corpus header itself (wgmma_tma) must not get it twice.
                const QString code = family->generate(point, task);
                const QString text =
                    code.startsWith(u"// expect:"_s)
                        ? code
                        : u"// expect: ok\n// task: %1.json\n"_s.arg(task.name) + code;
                if (!writeKernel(out.filePath(fileName), text)) {
                    err() << "kev-builtin-gen: cannot write " << out.filePath(fileName) << '\n';
                    return 3;
                }
                index += fileName + u'\t' + task.name + u".json\t" +
                         kev::configurationKey(*family, point) + u'\n';
                ++written;
            }
        }
    }
    if (!writeKernel(out.filePath(u"index.tsv"_s), index)) {
        err() << "kev-builtin-gen: cannot write the index\n";
        return 3;
    }
    QTextStream(stdout) << written << " kernels written to " << out.path() << " (" << refused
                        << " points refused by constraints)\n";
    return refused > 0 && fixed ? 1 : 0;
}
