#include "builtin/refit.h"

#include "search/seenset.h"

#include <QQueue>
#include <QSet>

namespace kev {

std::optional<Strategy> refitToTask(const KernelFamily& family, const Strategy& prior,
                                    const Task& task, const DeviceInfo& device,
                                    const std::function<bool(const Strategy&)>& acceptable,
                                    int* moves, int maxMoves, int maxPoints) {
    Strategy start = prior;
    start.family = family.id();
    family.normalize(start);
    QQueue<std::pair<Strategy, int>> queue;
    QSet<QString> visited;
    queue.enqueue({start, 0});
    visited.insert(canonicalPlanKey(start, task, device));
    while (!queue.isEmpty() && visited.size() <= maxPoints) {
        const auto [point, depth] = queue.dequeue();
        if (family.constraints(point, task, device).isEmpty() && acceptable(point)) {
            *moves = depth;
            return point;
        }
        if (depth >= maxMoves)
            continue;
        const auto next = family.neighbours(point);
        for (Strategy n : next) {
            family.normalize(n);
            const QString key = canonicalPlanKey(n, task, device);
            if (visited.contains(key))
                continue;
            visited.insert(key);
            queue.enqueue({n, depth + 1});
        }
    }
    return std::nullopt;
}

} // namespace kev
