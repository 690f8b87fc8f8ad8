#include "builtin/counterjumps.h"

#include "builtin/kernelfamily.h"
#include "builtin/rowwiseconfig.h"

#include <QJsonArray>

#include <cmath>

using namespace Qt::StringLiterals;

namespace kev {

namespace {

// Below this factor one ordinary step is as good as a jump.
constexpr double kMinJumpFactor = 1.15;

// The knobs that multiply the bytes a kernel keeps in flight, in the order a jump prefers them:
// resident blocks cost nothing per thread; the blocks a row is split over (few rows) multiply the
// SMs that read it; warps and vectors change the per-row work; the ring depth only matters with
// the async pipeline. A strategy without a knob (split before it existed) skips it.
const char16_t* const kInFlightKnobs[] = {u"ctas_per_sm", u"split", u"warps", u"vectors_per_thread",
                                          u"depth"};

} // namespace

std::optional<CounterJump> bytesInFlightJump(const KernelFamily& family, const Strategy& strategy,
                                             const Task& task, const DeviceInfo& device,
                                             double achievedPercent) {
    if (!(achievedPercent > 0) || achievedPercent >= kJumpTargetPercent)
        return std::nullopt;
    const double factor = kJumpTargetPercent / achievedPercent;
    if (factor < kMinJumpFactor)
        return std::nullopt;
    const auto specs = family.parameters();
    for (const char16_t* name : kInFlightKnobs) {
        const QString knob = QString::fromUtf16(name);
        for (const ParameterSpec& spec : specs) {
            if (spec.name != knob)
                continue;
            const QJsonValue current = parameterValue(spec, strategy);
            // From a listed value or one between them (a default's 7 blocks per SM): a jump
            // moves at least two positions up from there.
            const std::optional<qsizetype> origin = stepOrigin(spec, current);
            if (!current.isDouble() || !origin)
                continue;
            const qsizetype at = *origin;
            // ctas_per_sm=0 is the non-persistent grid: its blocks per SM are what the resources
            // allow, so the persistent grid that multiplies them starts from that count.
            double base = current.toDouble();
            if (knob == u"ctas_per_sm" && base <= 0)
                base = std::max(1, family.resources(strategy, task, device).blocksPerSm);
            const double target = std::ceil(base * factor);
            // The largest listed value at or below the target that the family accepts.
            for (qsizetype to = spec.values.size() - 1; to > at + 1; --to) {
                const double value = spec.values.at(to).toDouble();
                if (value > target)
                    continue;
                auto moved = stepParameter(spec, strategy, int(to - at));
                if (!moved)
                    continue;
                family.normalize(*moved);
                if (!family.constraints(*moved, task, device).isEmpty())
                    continue;
                CounterJump jump;
                jump.param = knob;
                jump.step = int(to - at);
                jump.why =
                    u"jump: at %1% of the floor, %2x the bytes in flight reach %3% (Little's law: "
                    "bytes in flight = bandwidth x latency), so %4 %5 -> %6 (target %7, the "
                    "largest value the device accepts at or below it)"_s
                        .arg(achievedPercent, 0, 'f', 1)
                        .arg(factor, 0, 'f', 2)
                        .arg(kJumpTargetPercent, 0, 'f', 0)
                        .arg(knob)
                        .arg(current.toDouble())
                        .arg(value)
                        .arg(target);
                jump.evidence = QJsonObject{{u"param"_s, knob},
                                            {u"from"_s, current.toDouble()},
                                            {u"to"_s, value},
                                            {u"base"_s, base},
                                            {u"factor"_s, factor},
                                            {u"target"_s, target},
                                            {u"achieved_percent"_s, achievedPercent}};
                return jump;
            }
        }
    }
    return std::nullopt;
}

std::optional<CounterJump> cacheRowJump(const KernelFamily& family, const Strategy& strategy,
                                        const Task& task, const DeviceInfo& device,
                                        double trafficFactor) {
    if (family.id() != u"rowwise" || !(trafficFactor > 1.1) || task.n <= 0)
        return std::nullopt;
    const auto specs = family.parameters();
    for (const ParameterSpec& spec : specs) {
        if (spec.name != u"vectors_per_thread")
            continue;
        const QJsonValue current = parameterValue(spec, strategy);
        const std::optional<qsizetype> origin = stepOrigin(spec, current);
        if (!current.isDouble() || !origin)
            return std::nullopt;
        const qsizetype at = *origin;
        for (qsizetype to = at + 2; to < spec.values.size(); ++to) {
            auto moved = stepParameter(spec, strategy, int(to - at));
            if (!moved)
                continue;
            family.normalize(*moved);
            const rowwise::RowwiseConfig c = rowwise::RowwiseConfig::fromStrategy(*moved);
            if (c.chunkElements() < task.n || !family.constraints(*moved, task, device).isEmpty())
                continue;
            CounterJump jump;
            jump.param = spec.name;
            jump.step = int(to - at);
            jump.why = u"jump: the kernel moves %1x the minimum DRAM bytes, so rows are read more "
                       "than once; %2 threads x %3 elements x %4 vectors cover the row of %5, so "
                       "vectors_per_thread %6 -> %4 caches it in registers (one read per row)"_s
                           .arg(trafficFactor, 0, 'f', 2)
                           .arg(c.rowThreads())
                           .arg(c.vectorWidth)
                           .arg(c.vectorsPerThread)
                           .arg(task.n)
                           .arg(current.toDouble());
            jump.evidence = QJsonObject{{u"param"_s, spec.name},
                                        {u"from"_s, current.toDouble()},
                                        {u"to"_s, double(c.vectorsPerThread)},
                                        {u"traffic_factor"_s, trafficFactor},
                                        {u"row_elements"_s, double(task.n)}};
            return jump;
        }
    }
    return std::nullopt;
}

} // namespace kev
