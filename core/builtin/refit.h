// Carrying a configuration from one task to another (issue 18, memory across tasks): the knowledge
// store's best point of a nearby task is made feasible for this one by the family's own rules.
#pragma once

#include "builtin/kernelfamily.h"

#include <functional>
#include <optional>

namespace kev {

// `prior` when the family accepts it for the task on the device and `acceptable` agrees;
// otherwise the nearest point that does, breadth first over the family's single moves (at most
// `maxMoves` moves away, `maxPoints` points visited). *moves is how many moves it took.
std::optional<Strategy> refitToTask(const KernelFamily& family, const Strategy& prior,
                                    const Task& task, const DeviceInfo& device,
                                    const std::function<bool(const Strategy&)>& acceptable,
                                    int* moves, int maxMoves = 3, int maxPoints = 4000);

} // namespace kev
