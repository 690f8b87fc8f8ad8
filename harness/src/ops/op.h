#pragma once
// One interface per op kind, one file per op (ops/gemm.cpp, ops/softmax.cpp, ..., ops/custom.cpp),
// as CUTLASS's profiler has one file per operation kind: the op's tensors and their shapes, its
// inputs and edge cases, its fp64 truth and the hooks of the correctness rule. The generic code
// (ops.cpp, generate.cpp, truth.cpp, rule.cpp) dispatches through opFor() and knows no op by name.
// The task side of an op (dimensions, dtypes, params, validation, counts) is its OpSpec in
// task_registry.cpp; opTable() and opRegistry() list the same ops (tests/harness/tst_ops.cpp checks
// it). docs/adding-an-op.md lists every step of adding one.
#include "ops/ops.h"

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kev::ops {

// The componentwise scale of every output element, and the denominators of the normwise measure
// (empty: the truth itself).
struct Scales {
    std::vector<std::vector<double>> componentwise;
    std::vector<std::vector<double>> normwise;
    double conditioning = 1.0; // multiplies the accumulation term of the normwise floor
};

class Op {
public:
    virtual ~Op() = default;
    // The OpSpec name ("gemm", ..., "custom").
    virtual const char* name() const = 0;

    // Tensor names and shapes (outermost first) at `shape`: inputs then outputs, in the op's
    // order (abi.h "Per-op conventions"). Each name is one of the task's tensors.
    virtual std::vector<std::pair<std::string, std::vector<int64_t>>>
    tensorShapes(const Task& task, const Shape& shape) const = 0;

    // The distributions every validation shape runs (default: normal, shifted and large).
    virtual std::vector<Distribution> distributions() const;
    // The mean of the shifted distribution (1; softmax, being shift-invariant, a larger one).
    virtual double shiftedMean() const { return 1.0; }
    // Fills the already sized `inputs` (default: every input N(mean, stddev) from its own stream).
    virtual void fillInputs(const Task& task, Distribution distribution, uint64_t seed,
                            std::vector<HostTensor>& inputs) const;
    // The op's edge-case input sets, run after the distributions (default: none).
    virtual std::vector<EdgeCase> edgeCases(const Task& task, const Shape& shape) const;

    // False for ops judged against their reference's output (custom); then truth() and scales()
    // are never called.
    virtual bool hasHostTruth() const { return true; }
    virtual Truth truth(const Task& task, const Shape& shape,
                        const std::vector<HostTensor>& inputs) const;
    // The componentwise (and normwise) magnitude scales; `tiny` is added to every scale.
    virtual Scales scales(const Task& task, const Shape& shape,
                          const std::vector<HostTensor>& inputs, const Truth& truth,
                          double tiny) const;
    // The length of the fp32 accumulation behind one output element (the floors grow with it).
    virtual int64_t accumulationLength(const Task&, const Shape&) const { return 1; }
    // What the normwise error is relative to, for the rule's sentence ("t": the truth).
    virtual const char* normwiseDenominator(const Task&) const { return "t"; }

    // Whether the timed samples are refreshed by rotating input 0 (GEMM is compute-bound and
    // custom ops' outputs need not follow an input), and whether along its columns.
    virtual bool rotatesSamples() const { return true; }
    virtual bool rotatesColumns(const Task&) const { return false; }
    // KevolveArgs::scalars (default: the params in declaration order, ops.h scalars()).
    virtual std::array<double, 4> scalars(const Task& task) const;
};

// Every op, in opRegistry()'s order.
const std::vector<const Op*>& opTable();
// The op of `task`; std::logic_error naming the op when the table has none.
const Op& opFor(const Task& task);

// The op files' instances (ops/<op>.cpp), listed by opTable() in op_table.cpp.
const Op& gemmOp();
const Op& gemvOp();
const Op& softmaxOp();
const Op& layernormOp();
const Op& reduceOp();
const Op& elementwiseOp();
const Op& rmsnormOp();
const Op& customOp();

} // namespace kev::ops
