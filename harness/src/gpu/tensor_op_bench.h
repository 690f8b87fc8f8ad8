#pragma once
// Every op beyond GEMM on the GPU (gemv, softmax, layernorm, reduce, elementwise, custom), driven
// by the host side in ops/ops.h: tensors as ops::tensorLayouts() lays them out, inputs drawn on the
// host in their storage format and copied into buffers with NaN guard regions, validation on the
// host against the fp64 truth (ops::compare). Timed samples use two input sets drawn once per
// evaluation (set 0: the timed shape's validated normal inputs, whose truth is reused), whose
// truths stay on the device, so every timed output is checked by one reduction. Before every timed
// sample the registry ops' main input is rotated on the device (rows, or columns where the output
// follows the columns) by a shift no earlier sample of the set used, and the check reads the truth
// rotated alike: an output cached from an earlier call is wrong (PROTOCOL.md, "Ops").
#include "op_bench.h"
#include "ops/ops.h"

#include <cublas_v2.h>

#include <array>
#include <vector>

namespace kev::gpu {

class TensorOpBench final : public OpBench {
public:
    TensorOpBench(const Task& task, cudaStream_t stream, cublasHandle_t cublas,
                  const KevolveDevice& device);

    void setShape(const Shape& shape, uint64_t workspaceBytes) override;
    const Shape& shape() const override { return m_shape; }

    // The op's distributions, then its edge cases for the current shape.
    std::vector<InputCase> validationCases() const override;
    void fill(int set, const InputCase& inputCase, uint64_t seed) override;
    // The next rotation of the set's main input (a device copy from its pristine contents).
    void refresh(int set, uint64_t seed) override;
    // Registry ops whose rotation extent is above 1; custom ops' tensors have no known rotation.
    bool refreshesContents() const override { return m_rotation.extent > 1; }

    const KevolveArgs& args(int set) override;
    KevolveArgs shapeArgs() const override;
    const DeviceBuffer& workspace() const override { return m_workspace; }
    std::vector<const DeviceBuffer*> inputBuffers(int set) const override;
    std::vector<const DeviceBuffer*> candidateOutputBuffers() const override;
    void poison(Side side) override;

    // The harness's reference (op_references.h), or the task's reference library when one is set.
    void launchReference(int set, bool intoCandidateOutput) override;
    void setReferenceLibrary(LaunchFn launch, WorkspaceFn workspaceBytes) override;

    // Copies both outputs to the host and applies ops::compare on input set 0's host inputs.
    TrialCheck judge(double multiple) override;
    json::Value ruleJson(double multiple) const override;

    // Draws both sets (normal inputs), keeps their truths on the device (custom ops: the
    // reference's output) and measures the reference's own outputCheck().
    double prepareSamples(const TrialCheck& timedNormal, double multiple, uint64_t seed) override;
    // ||y - t|| / ||t|| over every output against the set's device truth; seed unused (the check
    // covers every element).
    double outputCheck(int set, Side side, uint64_t seed) override;

    double flops() const override { return m_task.flops(m_shape); }

private:
    // The timed shape's normal validation trial: its inputs and truth, set 0 of the samples.
    struct Validated {
        std::vector<ops::HostTensor> inputs;
        ops::Truth truth;
    };

    void rotate(int set, int64_t shift);
    void upload(int set);
    const std::vector<ops::HostTensor>& download(Side side);
    MatrixView view(size_t output, Side side) const;
    // truthDiff's three sums over every output of `side` against set `set`'s device truth.
    std::array<double, 3> checkSums(int set, Side side);
    KevolveArgs argsFor(int set, Side side);

    const Task& m_task;
    cudaStream_t m_stream;
    cublasHandle_t m_cublas;
    KevolveDevice m_device;
    Shape m_shape;
    std::vector<ops::TensorLayout> m_inputLayouts, m_outputLayouts;
    std::vector<ops::EdgeCase> m_edgeCases;
    // Input set 0's host contents, what judge() compares against.
    std::vector<ops::HostTensor> m_hostInputs;
    std::vector<DeviceBuffer> m_inputs[kInputSets];
    std::vector<DeviceBuffer> m_candidateOutputs, m_referenceOutputs;
    // The outputs as copied back for judge(): candidate, reference.
    std::vector<ops::HostTensor> m_downloaded[2];
    // Per set, per output: the dense fp64 truth of the timed samples.
    std::vector<DeviceBuffer> m_truths[kInputSets];
    DeviceBuffer m_workspace, m_refWorkspace, m_acc;
    LaunchFn m_refLaunch = nullptr;
    WorkspaceFn m_refWorkspaceBytes = nullptr;
    KevolveArgs m_args{};
    ops::SampleRotation m_rotation;
    // Per set: the main input as drawn, the current shift, the samples so far and the stride
    // (coprime with the extent, so extent - 1 samples in a row never repeat a shift).
    DeviceBuffer m_pristine[kInputSets];
    int64_t m_shift[kInputSets] = {};
    int64_t m_samples[kInputSets] = {};
    int64_t m_stride = 1;
    // What fill() last drew, so that judge() knows the timed shape's normal trial.
    InputCase m_filled;
    Validated m_validated;
    bool m_samplesPrepared = false; // later normal trials (the re-check) are not kept
};

} // namespace kev::gpu
