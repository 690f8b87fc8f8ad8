// fp64 truths of the registry ops, on the stored (already rounded) inputs. Each follows the
// numerically careful algorithm (max-subtraction, two-pass variance, erfc for GELU's tail,
// compensated sums), so its own error is far below any output dtype's.
// Each op's truth is in its file (ops/<op>.cpp); this is the dispatch.
#include "ops/op.h"

#include <stdexcept>

namespace kev::ops {

Truth Op::truth(const Task& task, const Shape&, const std::vector<HostTensor>&) const {
    throw std::logic_error("no host truth for op " + task.op +
                           " (a custom op's truth is its reference's output)");
}

bool hasHostTruth(const Task& task) {
    return opFor(task).hasHostTruth();
}

Truth computeTruth(const Task& task, const Shape& shape, const std::vector<HostTensor>& inputs) {
    return opFor(task).truth(task, shape, inputs);
}

Truth truthFromOutputs(const std::vector<HostTensor>& outputs) {
    Truth truth;
    for (const auto& o : outputs) {
        std::vector<double> v(static_cast<size_t>(o.layout.elements()));
        for (int64_t r = 0; r < o.layout.rows; ++r)
            o.load(r, 0, o.layout.cols, v.data() + r * o.layout.cols);
        truth.push_back(std::move(v));
    }
    return truth;
}

} // namespace kev::ops
