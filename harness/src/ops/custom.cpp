// Custom ops: tensors, dimensions and distributions declared by the task, judged against the
// reference's output (no host truth): the op of ops/op.h.
#include "ops/op_util.h"

#include <string>

namespace kev::ops {

namespace {

using namespace detail;

void generateCustom(const Task& task, uint64_t seed, std::vector<HostTensor>& inputs) {
    for (size_t i = 0; i < inputs.size(); ++i) {
        HostTensor& t = inputs[i];
        const std::string& d = task.tensor(t.layout.name).distribution;
        const uint64_t stream = mix(seed, i + 1);
        if (d == "uniform")
            fill(t, stream, [](Rng& rng, int64_t, int64_t) { return rng.uniform(-1.0, 1.0); });
        else if (d == "positive")
            fill(t, stream, [](Rng& rng, int64_t, int64_t) { return rng.uniform(0.5, 2.0); });
        else if (d == "shifted")
            fill(t, stream, [](Rng& rng, int64_t, int64_t) { return rng.normal(1.0, 1.0); });
        else if (d == "large")
            fill(t, stream, [](Rng& rng, int64_t, int64_t) { return rng.normal(0.0, 16.0); });
        else
            fill(t, stream, [](Rng& rng, int64_t, int64_t) { return rng.normal(); });
    }
}

class CustomOp final : public Op {
public:
    const char* name() const override { return "custom"; }
    std::vector<std::pair<std::string, std::vector<int64_t>>>
    tensorShapes(const Task& task, const Shape& shape) const override {
        std::vector<std::pair<std::string, std::vector<int64_t>>> out;
        for (const auto& t : task.tensors) {
            std::vector<int64_t> dims;
            for (const auto& d : t.dims)
                dims.push_back(shape.dim(d));
            out.emplace_back(t.name, std::move(dims));
        }
        return out;
    }
    // Each tensor is drawn from its declared distribution, so one pass ("as declared").
    std::vector<Distribution> distributions() const override { return {Distribution::Normal}; }
    void fillInputs(const Task& task, Distribution, uint64_t seed,
                    std::vector<HostTensor>& inputs) const override {
        generateCustom(task, seed, inputs);
    }
    bool hasHostTruth() const override { return false; }
    // The outputs need not follow any input row by row.
    bool rotatesSamples() const override { return false; }
};

} // namespace

const Op& customOp() {
    static const CustomOp op;
    return op;
}

} // namespace kev::ops
