// Jumps from the measured counters (issue 18): when the review names a bottleneck with a number,
// the configuration that would remove it is computed and proposed as one move of several steps,
// instead of one step per iteration (the layernorm that climbed 4 -> 5 -> 6 -> 8 blocks per SM
// from 38.6% to 56.9% of the floor, one block at a time).
#ifndef KEV_BUILTIN_COUNTERJUMPS_H
#define KEV_BUILTIN_COUNTERJUMPS_H

#include "core/deviceinfo.h"
#include "core/strategy.h"
#include "core/task.h"

#include <QJsonObject>
#include <QString>

#include <optional>

namespace kev {

class KernelFamily;

// A move of `step` positions along the ordered values of `param`, with its reasoning.
struct CounterJump {
    QString param;
    int step = 0;
    QString why;
    QJsonObject evidence; // from, to, factor, the measured figure it came from
};

// The share of the DRAM floor a memory-bound kernel aims at; the jump sizes bytes in flight for
// it.
inline constexpr double kJumpTargetPercent = 90.0;

// A memory-bound kernel below the floor with too few bytes in flight: by Little's law the
// throughput of a latency-bound memory system grows with the bytes in flight, so reaching
// kJumpTargetPercent from `achievedPercent` needs kJumpTargetPercent / achievedPercent times
// the bytes in flight. Scales the first knob that multiplies them (resident blocks per SM, warps
// per block, vectors per thread, ring depth) by that factor, to the largest value at or below
// the target that the family accepts for the task on the device. nullopt when the factor is
// small (under 1.15) or no knob can move by more than one step.
std::optional<CounterJump> bytesInFlightJump(const KernelFamily& family, const Strategy& strategy,
                                             const Task& task, const DeviceInfo& device,
                                             double achievedPercent);

// A row-wise kernel that moves more DRAM bytes than the task's minimum (`trafficFactor` =
// measured / minimum over 1.1) reads its rows more than once because they are not cached on
// chip: the vectors per thread whose registers hold the whole row (row threads x vector width x
// vectors per thread >= the row length), the smallest such listed value the family accepts.
// nullopt for other families, or when no cached configuration is feasible or it is one step.
std::optional<CounterJump> cacheRowJump(const KernelFamily& family, const Strategy& strategy,
                                        const Task& task, const DeviceInfo& device,
                                        double trafficFactor);

} // namespace kev

#endif // KEV_BUILTIN_COUNTERJUMPS_H
