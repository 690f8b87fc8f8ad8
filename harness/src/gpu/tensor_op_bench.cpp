#include "tensor_op_bench.h"

#include "op_references.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

namespace kev::gpu {

namespace {
// ||y - t|| / ||t|| from truthDiff's sums; infinite when a NaN or Inf is out of place.
double relativeError(const std::array<double, 3>& sums) {
    if (sums[2] > 0) {
        return INFINITY;
    }
    return sums[1] > 0 ? std::sqrt(sums[0] / sums[1]) : std::sqrt(sums[0]);
}

// Guards catch kernels that read past a tensor's end (a missing tail check): 256 rows, at least
// 1 MiB, at most 64 MiB (a vector of 2^26 elements is one row).
size_t guardBytes(const ops::TensorLayout& l) {
    const size_t rows256 = static_cast<size_t>(256 * l.ld * dtypeBytes(l.dtype));
    return std::clamp<size_t>(rows256, 1u << 20, 64u << 20);
}
} // namespace

TensorOpBench::TensorOpBench(const Task& task, cudaStream_t stream, cublasHandle_t cublas,
                             const KevolveDevice& device)
    : m_task(task)
    , m_stream(stream)
    , m_cublas(cublas)
    , m_device(device) {}

void TensorOpBench::setShape(const Shape& shape, uint64_t workspaceBytes) {
    // The same shape again (run-one sizes the workspace first, and returns to the timed shape after
    // the others): the tensors stay, since every fill rewrites all inputs of its set and outputs
    // are poisoned before every launch; allocating and NaN-filling 2^28-element host inputs again
    // would cost seconds. The timed samples' state starts over.
    if (shape == m_shape && !m_inputLayouts.empty()) {
        for (int s = 0; s < kInputSets; ++s) {
            m_truths[s].clear();
            m_pristine[s] = DeviceBuffer();
            m_shift[s] = 0;
            m_samples[s] = 0;
        }
        m_workspace = DeviceBuffer(workspaceBytes, 0);
        return;
    }
    m_shape = shape;
    m_inputLayouts.clear();
    m_outputLayouts.clear();
    for (ops::TensorLayout& l : ops::tensorLayouts(m_task, shape)) {
        (l.output ? m_outputLayouts : m_inputLayouts).push_back(std::move(l));
    }
    m_edgeCases = ops::edgeCases(m_task, shape);
    m_rotation = ops::sampleRotation(m_task, shape);
    m_hostInputs.clear();
    for (int s = 0; s < kInputSets; ++s) {
        m_inputs[s].clear();
        m_truths[s].clear();
        m_pristine[s] = DeviceBuffer();
        m_shift[s] = 0;
        m_samples[s] = 0;
    }
    m_candidateOutputs.clear();
    m_referenceOutputs.clear();
    m_downloaded[0].clear();
    m_downloaded[1].clear();
    for (const ops::TensorLayout& l : m_inputLayouts) {
        m_hostInputs.emplace_back(l);
        for (int s = 0; s < kInputSets; ++s) {
            m_inputs[s].emplace_back(static_cast<size_t>(l.bytes()), guardBytes(l));
        }
    }
    for (const ops::TensorLayout& l : m_outputLayouts) {
        m_candidateOutputs.emplace_back(static_cast<size_t>(l.bytes()), 1u << 20);
        m_referenceOutputs.emplace_back(static_cast<size_t>(l.bytes()), 1u << 20);
    }
    m_workspace = DeviceBuffer(workspaceBytes, 0);
    m_acc = DeviceBuffer(3 * sizeof(double));
}

std::vector<InputCase> TensorOpBench::validationCases() const {
    std::vector<InputCase> cases;
    for (ops::Distribution d : ops::distributions(m_task)) {
        cases.push_back({static_cast<Distribution>(d), -1, ops::distributionName(d)});
    }
    for (size_t i = 0; i < m_edgeCases.size(); ++i) {
        cases.push_back({Distribution::Normal, static_cast<int>(i), m_edgeCases[i].name});
    }
    return cases;
}

void TensorOpBench::fill(int set, const InputCase& inputCase, uint64_t seed) {
    m_filled = inputCase;
    if (inputCase.edgeCase >= 0) {
        m_edgeCases.at(static_cast<size_t>(inputCase.edgeCase)).generate(seed, m_hostInputs);
    } else {
        ops::generate(m_task, m_shape, static_cast<ops::Distribution>(inputCase.distribution), seed,
                      m_hostInputs);
    }
    upload(set);
}

void TensorOpBench::upload(int set) {
    for (size_t i = 0; i < m_inputLayouts.size(); ++i) {
        const ops::HostTensor& h = m_hostInputs.at(i);
        if (h.bytes.size() != static_cast<size_t>(m_inputLayouts[i].bytes())) {
            throw std::logic_error("input " + m_inputLayouts[i].name + ": " +
                                   std::to_string(h.bytes.size()) + " host bytes for a layout of " +
                                   std::to_string(m_inputLayouts[i].bytes()));
        }
        KEV_CUDA(cudaMemcpyAsync(m_inputs[set][i].data(), h.data(), h.bytes.size(),
                                 cudaMemcpyHostToDevice, m_stream));
    }
    // The host copies are rewritten by the next fill.
    KEV_CUDA(cudaStreamSynchronize(m_stream));
}

KevolveArgs TensorOpBench::shapeArgs() const {
    KevolveArgs a = ops::shapeArgs(m_task, m_shape);
    a.device = m_device;
    a.services = services();
    return a;
}

KevolveArgs TensorOpBench::argsFor(int set, Side side) {
    KevolveArgs a = shapeArgs();
    for (size_t i = 0; i < m_inputs[set].size(); ++i) {
        a.inputs[i].data = m_inputs[set][i].data();
    }
    const std::vector<DeviceBuffer>& outputs =
        side == Side::Candidate ? m_candidateOutputs : m_referenceOutputs;
    for (size_t i = 0; i < outputs.size(); ++i) {
        a.outputs[i].data = outputs[i].data();
    }
    return a;
}

const KevolveArgs& TensorOpBench::args(int set) {
    m_args = argsFor(set, Side::Candidate);
    m_args.workspace = m_workspace.bytes() ? m_workspace.data() : nullptr;
    m_args.workspace_bytes = m_workspace.bytes();
    return m_args;
}

std::vector<const DeviceBuffer*> TensorOpBench::inputBuffers(int set) const {
    std::vector<const DeviceBuffer*> v;
    for (const DeviceBuffer& b : m_inputs[set]) {
        v.push_back(&b);
    }
    return v;
}

std::vector<const DeviceBuffer*> TensorOpBench::candidateOutputBuffers() const {
    std::vector<const DeviceBuffer*> v;
    for (const DeviceBuffer& b : m_candidateOutputs) {
        v.push_back(&b);
    }
    return v;
}

void TensorOpBench::poison(Side side) {
    for (const DeviceBuffer& b :
         side == Side::Candidate ? m_candidateOutputs : m_referenceOutputs) {
        b.poison(m_stream);
    }
}

void TensorOpBench::setReferenceLibrary(LaunchFn launch, WorkspaceFn workspaceBytes) {
    m_refLaunch = launch;
    m_refWorkspaceBytes = workspaceBytes;
}

void TensorOpBench::launchReference(int set, bool intoCandidateOutput) {
    KevolveArgs a = argsFor(set, intoCandidateOutput ? Side::Candidate : Side::Reference);
    if (!m_refLaunch) {
        launchOpReference(a, m_cublas, m_stream);
        return;
    }
    if (m_refWorkspaceBytes) {
        const KevolveArgs shapeOnly = shapeArgs();
        const uint64_t bytes = m_refWorkspaceBytes(&shapeOnly);
        if (bytes != m_refWorkspace.bytes()) {
            m_refWorkspace = DeviceBuffer(bytes);
        }
    }
    a.workspace = m_refWorkspace.bytes() ? m_refWorkspace.data() : nullptr;
    a.workspace_bytes = m_refWorkspace.bytes();
    const int rc = m_refLaunch(&a, m_stream);
    if (rc != 0) {
        throw std::runtime_error("the task's reference library returned " + std::to_string(rc));
    }
    KEV_CUDA(cudaGetLastError());
}

// Into host buffers kept for the shape: allocating (and NaN-filling) 2^26-element outputs twice a
// trial would cost more than comparing them.
const std::vector<ops::HostTensor>& TensorOpBench::download(Side side) {
    std::vector<ops::HostTensor>& out = m_downloaded[side == Side::Candidate ? 0 : 1];
    if (out.empty()) {
        out = ops::allocateOutputs(m_task, m_shape);
    }
    const std::vector<DeviceBuffer>& buffers =
        side == Side::Candidate ? m_candidateOutputs : m_referenceOutputs;
    for (size_t i = 0; i < out.size(); ++i) {
        KEV_CUDA(cudaMemcpyAsync(out[i].data(), buffers.at(i).data(), out[i].bytes.size(),
                                 cudaMemcpyDeviceToHost, m_stream));
    }
    KEV_CUDA(cudaStreamSynchronize(m_stream));
    return out;
}

// `multiple` is the task's, which ops::compare reads from the task itself.
TrialCheck TensorOpBench::judge(double) {
    const std::vector<ops::HostTensor>& candidate = download(Side::Candidate);
    const std::vector<ops::HostTensor>& reference = download(Side::Reference);
    ops::Truth truth = ops::hasHostTruth(m_task) ? ops::computeTruth(m_task, m_shape, m_hostInputs)
                                                 : ops::truthFromOutputs(reference);
    const ops::Check c = ops::compare(m_task, m_shape, m_hostInputs, truth, candidate, reference);
    // The timed shape's normal inputs become timed set 0: their truth is not computed twice.
    if (!m_samplesPrepared && ops::hasHostTruth(m_task) && m_shape == m_task.shape &&
        m_filled.edgeCase < 0 && m_filled.distribution == Distribution::Normal) {
        m_validated.inputs = m_hostInputs;
        m_validated.truth = std::move(truth);
    }
    // The verdict's reason already names the first misplaced NaN/Inf or the worst element.
    TrialCheck t;
    t.candidate = c.candidate;
    t.reference = c.reference;
    t.verdict = c.verdict;
    return t;
}

json::Value TensorOpBench::ruleJson(double multiple) const {
    const tolerance::Bounds floor = ops::floors(m_task, m_task.shape);
    json::Value rule = json::Value::object();
    rule["text"] = ops::describeRule(m_task, m_task.shape);
    rule["multiple"] = multiple;
    rule["floor_rel_fro"] = floor.relFro;
    rule["floor_max_scaled"] = floor.maxScaled;
    if (m_task.elementwiseTolerance) {
        rule["atol"] = m_task.elementwiseTolerance->atol;
        rule["rtol"] = m_task.elementwiseTolerance->rtol;
    }
    return rule;
}

MatrixView TensorOpBench::view(size_t output, Side side) const {
    const ops::TensorLayout& l = m_outputLayouts.at(output);
    const DeviceBuffer& b =
        (side == Side::Candidate ? m_candidateOutputs : m_referenceOutputs).at(output);
    return {b.data(), static_cast<int>(l.dtype), l.rows, l.cols, l.ld};
}

double TensorOpBench::prepareSamples(const TrialCheck& timedNormal, double multiple,
                                     uint64_t seed) {
    m_samplesPrepared = true;
    for (int set = 0; set < kInputSets; ++set) {
        const bool reuse = set == 0 && !m_validated.truth.empty() && m_shape == m_task.shape;
        if (reuse) {
            m_hostInputs = std::move(m_validated.inputs);
        } else {
            ops::generate(m_task, m_shape, ops::Distribution::Normal,
                          seed + static_cast<uint64_t>(set), m_hostInputs);
        }
        upload(set);
        if (m_rotation.extent > 1) {
            const DeviceBuffer& main = m_inputs[set].at(static_cast<size_t>(m_rotation.input));
            m_pristine[set] = DeviceBuffer(main.bytes());
            KEV_CUDA(cudaMemcpyAsync(m_pristine[set].data(), main.data(), main.bytes(),
                                     cudaMemcpyDeviceToDevice, m_stream));
        }
        m_shift[set] = 0;
        m_samples[set] = 0;
        m_truths[set].clear();
        if (ops::hasHostTruth(m_task)) {
            const ops::Truth truth = reuse ? std::move(m_validated.truth)
                                           : ops::computeTruth(m_task, m_shape, m_hostInputs);
            m_validated = Validated();
            for (const std::vector<double>& t : truth) {
                m_truths[set].emplace_back(t.size() * sizeof(double));
                KEV_CUDA(cudaMemcpyAsync(m_truths[set].back().data(), t.data(),
                                         t.size() * sizeof(double), cudaMemcpyHostToDevice,
                                         m_stream));
            }
            KEV_CUDA(cudaStreamSynchronize(m_stream));
        } else {
            // Custom ops: the reference's output is the truth.
            poison(Side::Reference);
            launchReference(set, false);
            for (size_t i = 0; i < m_outputLayouts.size(); ++i) {
                const MatrixView v = view(i, Side::Reference);
                m_truths[set].emplace_back(static_cast<size_t>(v.rows * v.cols) * sizeof(double));
                KEV_CUDA(upcast(v, m_truths[set].back().as<double>(), false, m_stream));
            }
        }
    }
    m_stride = ops::rotationStride(seed, m_rotation.extent);
    // A correct output errs by about what the reference errs on the same inputs; the floor keeps
    // an exact reference (reduce max, custom) from demanding exactness. The rule's normwise
    // measure may divide by more than ||t|| (reduce sum: || sum |x| ||), so its floor is carried
    // over at the ratio of the reference's errors in the two measures, never tightened.
    double reference = 0;
    double truthSq = 0;
    for (int set = 0; set < kInputSets; ++set) {
        poison(Side::Reference);
        launchReference(set, false);
        const std::array<double, 3> sums = checkSums(set, Side::Reference);
        reference = std::max(reference, relativeError(sums));
        truthSq = std::max(truthSq, sums[1]);
    }
    poison(Side::Reference);
    const double measures = timedNormal.reference.relFro > 0 && reference > 0
                                ? reference / timedNormal.reference.relFro
                                : 1.0;
    double floor = ops::floors(m_task, m_shape).relFro * std::max(1.0, measures);
    if (m_task.elementwiseTolerance) {
        // Custom ops: the normwise size of |y - ref| <= atol + rtol |ref|.
        double elements = 0;
        for (const ops::TensorLayout& l : m_outputLayouts) {
            elements += static_cast<double>(l.elements());
        }
        const double rms = std::sqrt(truthSq / std::max(elements, 1.0));
        const ElementTolerance& e = *m_task.elementwiseTolerance;
        floor = e.rtol + (rms > 0 ? e.atol / rms : e.atol);
    }
    return 4.0 * std::max(multiple * reference, floor);
}

std::array<double, 3> TensorOpBench::checkSums(int set, Side side) {
    double* sums = m_acc.as<double>();
    KEV_CUDA(cudaMemsetAsync(sums, 0, 3 * sizeof(double), m_stream));
    for (size_t i = 0; i < m_outputLayouts.size(); ++i) {
        const bool alongRows = m_outputLayouts[i].rank() > 1;
        KEV_CUDA(truthDiff(view(i, side), m_truths[set].at(i).as<double>(),
                           alongRows ? m_shift[set] : 0, alongRows ? 0 : m_shift[set], sums,
                           m_stream));
    }
    std::array<double, 3> host{};
    KEV_CUDA(cudaMemcpyAsync(host.data(), sums, sizeof(double) * host.size(),
                             cudaMemcpyDeviceToHost, m_stream));
    KEV_CUDA(cudaStreamSynchronize(m_stream));
    return host;
}

void TensorOpBench::refresh(int set, uint64_t) {
    if (m_rotation.extent <= 1) {
        return;
    }
    if (!m_pristine[set].bytes()) {
        throw std::logic_error("TensorOpBench::refresh before prepareSamples");
    }
    rotate(set, ops::rotationShift(++m_samples[set], m_stride, m_rotation.extent));
}

// Main input element (r, c) := pristine ((r + shift) mod rows, c) (rows) or (r, (c + shift) mod
// cols) (columns), so the output's row or element j is the truth's (j + shift) mod extent. Two
// copies outside any timed window; padding columns keep their NaN.
void TensorOpBench::rotate(int set, int64_t shift) {
    const ops::TensorLayout& l = m_inputLayouts.at(static_cast<size_t>(m_rotation.input));
    char* dst = static_cast<char*>(m_inputs[set].at(static_cast<size_t>(m_rotation.input)).data());
    const char* src = static_cast<const char*>(m_pristine[set].data());
    const size_t element = static_cast<size_t>(dtypeBytes(l.dtype));
    const size_t pitch = static_cast<size_t>(l.ld) * element;
    const size_t e = static_cast<size_t>(m_rotation.extent);
    const size_t k = static_cast<size_t>(shift);
    if (m_rotation.columns && l.rows > 1) {
        const size_t rows = static_cast<size_t>(l.rows);
        KEV_CUDA(cudaMemcpy2DAsync(dst, pitch, src + k * element, pitch, (e - k) * element, rows,
                                   cudaMemcpyDeviceToDevice, m_stream));
        if (k > 0) {
            KEV_CUDA(cudaMemcpy2DAsync(dst + (e - k) * element, pitch, src, pitch, k * element,
                                       rows, cudaMemcpyDeviceToDevice, m_stream));
        }
    } else {
        // Whole rows, or the elements of a single row (a vector): contiguous either way.
        const size_t unit = m_rotation.columns ? element : pitch;
        KEV_CUDA(cudaMemcpyAsync(dst, src + k * unit, (e - k) * unit, cudaMemcpyDeviceToDevice,
                                 m_stream));
        if (k > 0) {
            KEV_CUDA(cudaMemcpyAsync(dst + (e - k) * unit, src, k * unit, cudaMemcpyDeviceToDevice,
                                     m_stream));
        }
    }
    m_shift[set] = shift;
}

double TensorOpBench::outputCheck(int set, Side side, uint64_t) {
    return relativeError(checkSums(set, side));
}

} // namespace kev::gpu
