#include "remote_candidate.h"

#include "device_kernels.h"

#include <cstring>

namespace kev::gpu {

void ExportedBuffers::unmapAll() {
    link::LinkFailure failure;
    if (!m_link.call("unmap", link::Reply::Kind::Unmapped, m_timeoutS, &failure)) {
        throw RunnerFailure(failure);
    }
    m_entries.clear();
}

void ExportedBuffers::exportOne(const DeviceBuffer& buffer) {
    if (!buffer.base() || buffer.bytes() == 0) {
        return;
    }
    for (const Entry& e : m_entries) {
        if (e.data == buffer.data()) {
            return;
        }
    }
    cudaIpcMemHandle_t handle{};
    KEV_CUDA(cudaIpcGetMemHandle(&handle, buffer.base()));
    const uint64_t id = m_nextId++;
    const std::string command =
        "map " + std::to_string(id) + " " + link::toHex(&handle, sizeof handle) + " " +
        std::to_string(buffer.offset()) + " " + std::to_string(buffer.bytes());
    link::LinkFailure failure;
    const std::optional<link::Reply> r =
        m_link.call(command, link::Reply::Kind::Mapped, m_timeoutS, &failure);
    if (!r) {
        throw RunnerFailure(failure);
    }
    if (r->count != id) {
        throw RunnerFailure("rule_violation", "the runner acknowledged buffer " +
                                                  std::to_string(r->count) + " when buffer " +
                                                  std::to_string(id) + " was mapped");
    }
    m_entries.push_back({buffer.data(), buffer.bytes(), id});
}

void ExportedBuffers::exportFor(const OpBench& bench) {
    for (int set = 0; set < OpBench::kInputSets; ++set) {
        for (const DeviceBuffer* b : bench.inputBuffers(set)) {
            exportOne(*b);
        }
    }
    for (const DeviceBuffer* b : bench.candidateOutputBuffers()) {
        exportOne(*b);
    }
    exportOne(bench.workspace());
}

uint64_t ExportedBuffers::idOf(const void* data, const char* what) const {
    if (!data) {
        return 0;
    }
    for (const Entry& e : m_entries) {
        if (e.data == data) {
            return e.id;
        }
    }
    throw std::logic_error(std::string("the verifier has not exported the buffer of ") + what);
}

std::string ExportedBuffers::encode(const KevolveArgs& args) const {
    KevolveArgs a = args;
    for (int i = 0; i < KEVOLVE_MAX_TENSORS; ++i) {
        const uint64_t in = idOf(args.inputs[i].data, "an input");
        const uint64_t out = idOf(args.outputs[i].data, "an output");
        std::memcpy(&a.inputs[i].data, &in, sizeof in);
        std::memcpy(&a.outputs[i].data, &out, sizeof out);
    }
    const uint64_t ws = idOf(args.workspace, "the workspace");
    std::memcpy(&a.workspace, &ws, sizeof ws);
    a.services = nullptr;
    return link::toHex(&a, sizeof a);
}

InputGuard::InputGuard(cudaStream_t stream)
    : m_stream(stream) {
    void* p = nullptr;
    KEV_CUDA(cudaMalloc(&p, sizeof(unsigned long long)));
    m_differ = static_cast<unsigned long long*>(p);
}

InputGuard::~InputGuard() {
    cudaFree(m_differ);
}

void InputGuard::snapshot(const OpBench& bench, int set) {
    const std::vector<const DeviceBuffer*> inputs = bench.inputBuffers(set);
    if (m_copies.size() != inputs.size()) {
        m_copies.resize(inputs.size());
    }
    // The whole allocation, guards included: the candidate may read past an input's end (and
    // meet NaN there), never write.
    for (size_t i = 0; i < inputs.size(); ++i) {
        const size_t bytes = inputs[i]->allocationBytes();
        if (m_copies[i].bytes() != bytes) {
            m_copies[i] = DeviceBuffer(bytes);
        }
        if (bytes) {
            KEV_CUDA(cudaMemcpyAsync(m_copies[i].data(), inputs[i]->base(), bytes,
                                     cudaMemcpyDeviceToDevice, m_stream));
        }
    }
}

void InputGuard::verify(const OpBench& bench, int set, const std::string& when) {
    const std::vector<const DeviceBuffer*> inputs = bench.inputBuffers(set);
    ++m_checks;
    for (size_t i = 0; i < inputs.size() && i < m_copies.size(); ++i) {
        KEV_CUDA(cudaMemsetAsync(m_differ, 0, sizeof *m_differ, m_stream));
        KEV_CUDA(compareBytes(inputs[i]->base(), m_copies[i].data(), inputs[i]->allocationBytes(),
                              m_differ, m_stream));
        unsigned long long differ = 0;
        KEV_CUDA(
            cudaMemcpyAsync(&differ, m_differ, sizeof differ, cudaMemcpyDeviceToHost, m_stream));
        KEV_CUDA(cudaStreamSynchronize(m_stream));
        if (differ) {
            throw InputsChanged(
                "the candidate changed its inputs: input " + std::to_string(i) +
                " (or its guard region) differs from the verifier's pristine copy in " +
                std::to_string(differ) + " 8-byte word(s) after " + when);
        }
    }
}

} // namespace kev::gpu
