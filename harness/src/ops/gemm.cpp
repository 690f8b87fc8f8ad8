// GEMM, C = A B (row-major A M x K, B K x N, C M x N): the op of ops/op.h.
#include "ops/op_util.h"

#include <algorithm>
#include <cmath>

namespace kev::ops {

namespace {

using namespace detail;

Truth gemm(const Shape& shape, const std::vector<HostTensor>& in) {
    const HostTensor& a = truthInput(in, "A");
    const HostTensor& b = truthInput(in, "B");
    const int64_t m = shape.dim("M");
    const int64_t n = shape.dim("N");
    const int64_t k = shape.dim("K");
    std::vector<double> c(static_cast<size_t>(m * n), 0.0);
    for (int64_t i = 0; i < m; ++i) {
        for (int64_t p = 0; p < k; ++p) {
            const double av = a.at(i, p);
            for (int64_t j = 0; j < n; ++j)
                c[static_cast<size_t>(i * n + j)] += av * b.at(p, j);
        }
    }
    return {std::move(c)};
}

Scales gemmScales(const Shape& shape, const std::vector<HostTensor>& in, double tiny) {
    const HostTensor& a = ruleInput(in, "A");
    const HostTensor& b = ruleInput(in, "B");
    const int64_t m = shape.dim("M");
    const int64_t n = shape.dim("N");
    const int64_t k = shape.dim("K");
    std::vector<double> s(static_cast<size_t>(m * n), tiny);
    for (int64_t i = 0; i < m; ++i) {
        for (int64_t p = 0; p < k; ++p) {
            const double av = std::fabs(a.at(i, p));
            for (int64_t j = 0; j < n; ++j)
                s[static_cast<size_t>(i * n + j)] += av * std::fabs(b.at(p, j));
        }
    }
    Scales sc;
    sc.componentwise.push_back(std::move(s));
    return sc;
}

class GemmOp final : public Op {
public:
    const char* name() const override { return "gemm"; }
    std::vector<std::pair<std::string, std::vector<int64_t>>>
    tensorShapes(const Task&, const Shape& shape) const override {
        const int64_t m = shape.dim("M");
        const int64_t n = shape.dim("N");
        const int64_t k = shape.dim("K");
        return {{"A", {m, k}}, {"B", {k, n}}, {"C", {m, n}}};
    }
    Truth truth(const Task&, const Shape& shape,
                const std::vector<HostTensor>& inputs) const override {
        return gemm(shape, inputs);
    }
    Scales scales(const Task&, const Shape& shape, const std::vector<HostTensor>& inputs,
                  const Truth&, double tiny) const override {
        return gemmScales(shape, inputs, tiny);
    }
    int64_t accumulationLength(const Task&, const Shape& shape) const override {
        return shape.dim("K");
    }
    // Compute-bound: the timed samples reuse one input set.
    bool rotatesSamples() const override { return false; }
    // alpha 1, beta 0.
    std::array<double, 4> scalars(const Task&) const override { return {1.0, 0.0, 0.0, 0.0}; }
};

} // namespace

const Op& gemmOp() {
    static const GemmOp op;
    return op;
}

} // namespace kev::ops
