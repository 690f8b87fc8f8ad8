#pragma once
// What the GPU child needs from an op, whatever the op: buffers for a shape (inputs with NaN guard
// regions, poisoned outputs), input generation, the candidate's arguments, the reference, the
// judgement of one validation trial against an fp64 truth, and the cheap check of every timed
// output. The timer, the validation, the profiler and the audit see only this interface.
#include "candidate.h"
#include "cuda_util.h"
#include "device_kernels.h"
#include "json.h"
#include "task.h"
#include "tolerance.h"

#include <kevolve/abi.h>

#include <string>
#include <vector>

namespace kev::gpu {

// One kind of validation input: a distribution (edgeCase < 0) or the op's edge case number
// edgeCase, named for the report.
struct InputCase {
    Distribution distribution = Distribution::Normal;
    int edgeCase = -1;
    std::string name = "normal";
};

// Which output buffer: the candidate's (also the A/A self-check's) or the reference's.
enum class Side { Candidate, Reference };

// The outcome of one validation trial: error statistics of both outputs and the verdict.
struct TrialCheck {
    tolerance::ErrorStats candidate;
    tolerance::ErrorStats reference;
    tolerance::Verdict verdict;
};

class OpBench {
public:
    // Timed samples alternate between two input sets, so pointers change from sample to sample.
    static constexpr int kInputSets = 2;

    virtual ~OpBench() = default;

    // (Re)allocates every buffer for `shape`.
    virtual void setShape(const Shape& shape, uint64_t workspaceBytes) = 0;
    virtual const Shape& shape() const = 0;

    // The cases every validation shape runs: the distributions, then the op's edge cases.
    virtual std::vector<InputCase> validationCases() const = 0;
    virtual void fill(int set, const InputCase& inputCase, uint64_t seed) = 0;
    // Inputs for a timed sample on input set `set`, before the output is poisoned.
    virtual void refresh(int set, uint64_t seed) = 0;
    // Whether refresh() gives new contents (else the set's validated contents are reused).
    virtual bool refreshesContents() const = 0;

    // Arguments for the candidate on input set `set`, writing the candidate's outputs.
    virtual const KevolveArgs& args(int set) = 0;
    // The arguments with null data pointers, for kevolve_workspace_bytes.
    virtual KevolveArgs shapeArgs() const = 0;
    virtual const DeviceBuffer& workspace() const = 0;
    // The buffers the candidate's arguments on input set `set` point into: inputs, then outputs.
    // The verifier exports exactly these (and the workspace) to the runner, and checks after
    // every call that the inputs are bit for bit what it put there.
    virtual std::vector<const DeviceBuffer*> inputBuffers(int set) const = 0;
    virtual std::vector<const DeviceBuffer*> candidateOutputBuffers() const = 0;
    // Fills the outputs of `side` with NaN (0xFF bytes).
    virtual void poison(Side side) = 0;

    // The reference on input set `set` into the reference's outputs, or into the candidate's for
    // the A/A self-check.
    virtual void launchReference(int set, bool intoCandidateOutput) = 0;
    // A user reference implementing the candidate ABI (task.reference = {"file": ...}).
    virtual void setReferenceLibrary(LaunchFn launch, WorkspaceFn workspaceBytes) = 0;

    // Judges both outputs, computed on input set 0 filled for this trial, against the truth.
    virtual TrialCheck judge(double multiple) = 0;
    // The correctness rule of the report for the timed shape.
    virtual json::Value ruleJson(double multiple) const = 0;

    // Readies the timed shape (current) for refresh() and outputCheck(); returns the largest
    // outputCheck() a correct output may give, from the timed shape's normal trial.
    virtual double prepareSamples(const TrialCheck& timedNormal, double multiple,
                                  uint64_t seed) = 0;
    // A relative error of the outputs of `side` on input set `set`, cheap enough for every timed
    // sample; infinite when an output is NaN or Inf where it should not be.
    virtual double outputCheck(int set, Side side, uint64_t seed) = 0;

    virtual double flops() const = 0;
};

} // namespace kev::gpu
