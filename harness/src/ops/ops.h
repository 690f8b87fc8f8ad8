#pragma once
// The host side of every op the GPU child validates (PROTOCOL.md, "Ops"): which tensors an op has
// and how they are laid out, how inputs are drawn (distributions and the op's edge cases), the
// fp64 truth, and the correctness rule. Pure C++17, no CUDA runtime: the GPU child allocates what
// tensorLayouts() says, copies HostTensor::bytes to the device, runs the candidate and the
// reference, copies their outputs back into HostTensors and calls compare(). Nothing op-specific
// is left to the child but the reference kernel itself.
//
// Sizes: everything here is O(elements) (GEMV O(M N)) and runs on every core (ops/parallel.h,
// $KEVOLVE_HOST_THREADS), in blocks of a fixed size with one random stream per block, so inputs,
// truths and verdicts are bit-identical whatever the thread count.
#include "task.h"
#include "tolerance.h"

#include <kevolve/abi.h>

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kev::ops {

// Storage rounding, round to nearest even, as the device converts (__float2half_rn etc.).
uint16_t toF16(double value);
double fromF16(uint16_t bits);
uint16_t toBf16(double value);
double fromBf16(uint16_t bits);
// `value` as `dtype` stores it, back in fp64 (f32, f16, bf16, f64).
double roundTo(Dtype dtype, double value);

// One tensor of an op at one shape. Row-major; a rank-1 tensor has rows = 1 and ld = cols; a
// tensor of rank > 2 is stored as rows = product of its outer dimensions, each row ld elements.
// ld = cols rounded up to the task's leading_dim_multiple (rank >= 2), so ld > cols happens (e.g.
// N = 1 with a multiple of 8) and the padding is part of the allocation.
struct TensorLayout {
    std::string name;
    bool output = false;
    Dtype dtype = Dtype::F32;
    std::vector<int64_t> shape; // outermost first, rank = shape.size() (1..4)
    int64_t rows = 1;
    int64_t cols = 1;
    int64_t ld = 1;

    int rank() const { return static_cast<int>(shape.size()); }
    int64_t elements() const { return rows * cols; }     // logical elements
    int64_t storedElements() const { return rows * ld; } // padding included
    int64_t bytes() const { return storedElements() * dtypeBytes(dtype); }
    // The ABI view of this tensor (shape and stride in elements) over `data`.
    KevolveTensor abi(void* data) const;
};

// Inputs then outputs, in the op's order (abi.h "Per-op conventions"; custom: the task's order).
std::vector<TensorLayout> tensorLayouts(const Task& task, const Shape& shape);

// A tensor's values as they are stored: `bytes` holds storedElements() values of the layout's
// dtype, ready for cudaMemcpy to a buffer of layout.bytes(). Padding of inputs holds NaN, so a
// kernel that reads past a row's end is caught.
struct HostTensor {
    TensorLayout layout;
    std::vector<unsigned char> bytes;

    HostTensor() = default;
    explicit HostTensor(TensorLayout l); // padding and values all NaN
    double at(int64_t row, int64_t col) const;
    double at(int64_t i) const { return at(i / layout.cols, i % layout.cols); } // logical index
    // Stores `value` rounded to the dtype.
    void set(int64_t row, int64_t col, double value);
    // `count` values of row `row` from column `col` (the hot loops' way in and out: one dtype
    // dispatch per run of values, not per value).
    void load(int64_t row, int64_t col, int64_t count, double* out) const;
    void store(int64_t row, int64_t col, int64_t count, const double* values);
    void set(int64_t i, double value) { set(i / layout.cols, i % layout.cols, value); }
    void* data() { return bytes.data(); }
    const void* data() const { return bytes.data(); }
};

// The tensor of `inputs` named `name`; std::invalid_argument naming `who` (the caller) and the
// tensor when there is none.
const HostTensor& namedInput(const std::vector<HostTensor>& inputs, const char* name,
                             const char* who);

// Empty tensors (all NaN) for the outputs, e.g. to copy device outputs into.
std::vector<HostTensor> allocateOutputs(const Task& task, const Shape& shape);

// Input distributions as for GEMM (same order as gpu::Distribution).
enum class Distribution { Normal, Shifted, Large };
const char* distributionName(Distribution d);
// The distributions every validation shape runs: all three for registry ops; custom tasks draw
// each tensor from its declared distribution, so only Normal ("as declared").
std::vector<Distribution> distributions(const Task& task);

// Draws fresh inputs (`inputs` is resized and reused when it already has the right layouts).
// Deterministic in (task, shape, distribution, seed).
void generate(const Task& task, const Shape& shape, Distribution distribution, uint64_t seed,
              std::vector<HostTensor>& inputs);

// An op's edge-case input set (softmax rows of +-1e4, layernorm constant rows, ...), run on every
// validation shape after the distributions. A case keeps its own copy of the task and shape.
struct EdgeCase {
    std::string name; // for the report: "softmax_pm1e4", "layernorm_constant_rows", ...
    std::function<void(uint64_t seed, std::vector<HostTensor>& inputs)> generate;
};
std::vector<EdgeCase> edgeCases(const Task& task, const Shape& shape);

// fp64 truth, one dense rows x cols array per output (no padding).
using Truth = std::vector<std::vector<double>>;
// Throws std::logic_error for custom ops, whose truth is the reference's output
// (truthFromOutputs).
Truth computeTruth(const Task& task, const Shape& shape, const std::vector<HostTensor>& inputs);
bool hasHostTruth(const Task& task);
Truth truthFromOutputs(const std::vector<HostTensor>& outputs);

// The judgement of one trial.
struct Check {
    tolerance::ErrorStats candidate;
    tolerance::ErrorStats reference; // zero for custom ops (the reference is the truth)
    tolerance::Bounds floor;
    tolerance::Verdict verdict;    // pass, bound, margin, reason
    int64_t specialMismatches = 0; // NaN/Inf where the truth has none, or the reverse
    std::string evidence;          // the worst element: where, candidate, truth
};

// The rule (PROTOCOL.md, "Ops"):
// - NaN and Inf positions (and the sign of Inf) must match the truth exactly, in every output;
// - registry ops: for the finite elements, candidate error <= multiple x max(reference error,
//   floor), normwise (||y - t||_2 / ||t||_2; reduce sum: / || sum |x| ||_2) and componentwise
//   (max |y - t| / s, s the op's magnitude scale, e.g. |A||x| for GEMV);
// - custom ops: |y - ref| <= atol + rtol |ref| for every finite element, the reference's output
//   being the truth.
// `referenceOutputs` may be empty for custom ops.
Check compare(const Task& task, const Shape& shape, const std::vector<HostTensor>& inputs,
              const Truth& truth, const std::vector<HostTensor>& candidateOutputs,
              const std::vector<HostTensor>& referenceOutputs);

// The rule as one sentence for the report, and its floors for the task's timed shape.
std::string describeRule(const Task& task, const Shape& shape);
tolerance::Bounds floors(const Task& task, const Shape& shape);

// The refresh of the timed samples (PROTOCOL.md, "Ops", "Timed samples"): before each sample the
// GPU child rotates input `input` by a shift k along its rows, or its columns when `columns`
// (element (r, c) takes the drawn ((r + k) mod rows, c), resp. (r, (c + k) mod cols)); every output
// is then the truth rotated by k along its rows (rank 2) or its elements (rank 1). extent: the
// number of distinct shifts; below 2 (custom ops, or one row) there is no refresh.
struct SampleRotation {
    int input = -1;
    bool columns = false;
    int64_t extent = 0;
};
SampleRotation sampleRotation(const Task& task, const Shape& shape);
// A stride coprime with `extent` drawn from `seed`, so that rotationShift(j) for j = 1 ..
// extent - 1 are all different and non-zero.
int64_t rotationStride(uint64_t seed, int64_t extent);
inline int64_t rotationShift(int64_t sample, int64_t stride, int64_t extent) {
    // Both factors are below the extent (at most 2^31 rows or columns): no overflow.
    return (sample % extent) * stride % extent;
}

// KevolveArgs::scalars from the task's params (gemm: alpha 1, beta 0).
std::array<double, 4> scalars(const Task& task);

// The candidate's arguments for `shape` with null data pointers: op, dims, tensor shapes and
// strides, scalars. The child sets inputs[i].data, outputs[i].data, workspace and device.
KevolveArgs shapeArgs(const Task& task, const Shape& shape);

} // namespace kev::ops
