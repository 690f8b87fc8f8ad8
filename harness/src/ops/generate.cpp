// Input generation: sizing the inputs, the GEMM-like distributions and the dispatch to each op's
// fills and edge cases (ops/<op>.cpp; PROTOCOL.md, "Ops").
#include "ops/op_util.h"

#include <stdexcept>
#include <string>
#include <vector>

namespace kev::ops {

namespace detail {

void prepare(const Task& task, const Shape& shape, std::vector<HostTensor>& inputs) {
    std::vector<TensorLayout> layouts;
    for (auto& l : tensorLayouts(task, shape)) {
        if (!l.output)
            layouts.push_back(std::move(l));
    }
    bool same = inputs.size() == layouts.size();
    for (size_t i = 0; same && i < layouts.size(); ++i) {
        const TensorLayout& a = inputs[i].layout;
        same = a.name == layouts[i].name && a.dtype == layouts[i].dtype &&
               a.shape == layouts[i].shape && a.ld == layouts[i].ld;
    }
    if (same)
        return;
    inputs.clear();
    for (auto& l : layouts)
        inputs.emplace_back(std::move(l));
}

HostTensor& mutableInput(std::vector<HostTensor>& inputs, const char* name) {
    for (auto& t : inputs) {
        if (t.layout.name == name)
            return t;
    }
    throw std::logic_error(std::string("no input ") + name);
}

Moments moments(const Op& op, const Task& task, Distribution d) {
    Dtype out = Dtype::F32;
    for (const auto& t : task.tensors) {
        if (t.output)
            out = t.dtype;
    }
    switch (d) {
    case Distribution::Normal:
        return {0.0, 1.0};
    case Distribution::Shifted:
        return {op.shiftedMean(), 1.0};
    case Distribution::Large:
        return {0.0, out == Dtype::F16 ? 4.0 : 24.0};
    }
    return {0.0, 1.0};
}

} // namespace detail

using namespace detail;

std::vector<Distribution> Op::distributions() const {
    return {Distribution::Normal, Distribution::Shifted, Distribution::Large};
}

void Op::fillInputs(const Task& task, Distribution distribution, uint64_t seed,
                    std::vector<HostTensor>& inputs) const {
    const Moments m = moments(*this, task, distribution);
    for (size_t i = 0; i < inputs.size(); ++i)
        fillNormal(inputs[i], mix(seed, i + 1), m.mean, m.stddev);
}

std::vector<EdgeCase> Op::edgeCases(const Task&, const Shape&) const {
    return {};
}

const char* distributionName(Distribution d) {
    switch (d) {
    case Distribution::Normal:
        return "normal";
    case Distribution::Shifted:
        return "shifted";
    case Distribution::Large:
        return "large";
    }
    return "?";
}

std::vector<Distribution> distributions(const Task& task) {
    return opFor(task).distributions();
}

void generate(const Task& task, const Shape& shape, Distribution distribution, uint64_t seed,
              std::vector<HostTensor>& inputs) {
    prepare(task, shape, inputs);
    opFor(task).fillInputs(task, distribution, seed, inputs);
}

std::vector<EdgeCase> edgeCases(const Task& task, const Shape& shape) {
    return opFor(task).edgeCases(task, shape);
}

} // namespace kev::ops
