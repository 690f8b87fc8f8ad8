#pragma once
// The verifier's side of a candidate that runs in another process (the runner): the device
// buffers it exports through CUDA IPC, the candidate's arguments rewritten so that every data
// pointer names an exported buffer instead of an address, and the pristine copies that prove
// after every call that the candidate left its inputs alone. THREAT_MODEL.md, "The verifier".
#include "cuda_util.h"
#include "op_bench.h"
#include "runner_link.h"

#include <kevolve/abi.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace kev::gpu {

// The runner said something the verifier does not accept, or reported its own failure: the
// evaluation ends with `status` (never ok).
struct RunnerFailure : std::runtime_error {
    explicit RunnerFailure(const link::LinkFailure& f)
        : std::runtime_error(f.message)
        , status(f.status)
        , linkIntact(f.reported) {}
    RunnerFailure(std::string s, const std::string& message)
        : std::runtime_error(message)
        , status(std::move(s)) {}
    std::string status;
    bool linkIntact = false; // the runner reported the failure itself and still answers
};

// The candidate wrote into an input buffer: the evaluation is `incorrect`.
struct InputsChanged : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// In the arguments sent to the runner, a tensor's (or the workspace's) data pointer holds the id
// of an exported buffer (ids start at 1; 0 stays null). The runner maps ids to its own addresses.
class ExportedBuffers {
public:
    explicit ExportedBuffers(link::RunnerLink& link, double timeoutS)
        : m_link(link)
        , m_timeoutS(timeoutS) {}
    // The runner closes every mapping; call before the bench frees or reallocates its buffers.
    void unmapAll();
    // Exports every buffer the candidate may touch for the bench's current shape.
    void exportFor(const OpBench& bench);
    // The arguments with ids for pointers, as the hex text the runner decodes.
    std::string encode(const KevolveArgs& args) const;

private:
    uint64_t idOf(const void* data, const char* what) const;
    void exportOne(const DeviceBuffer& buffer);

    struct Entry {
        const void* data;
        size_t bytes;
        uint64_t id;
    };
    link::RunnerLink& m_link;
    double m_timeoutS;
    std::vector<Entry> m_entries;
    uint64_t m_nextId = 1;
};

// Pristine copies of one input set, taken right before a call and compared bit for bit right
// after it, on the device.
class InputGuard {
public:
    explicit InputGuard(cudaStream_t stream);
    ~InputGuard();
    InputGuard(const InputGuard&) = delete;
    InputGuard& operator=(const InputGuard&) = delete;
    void snapshot(const OpBench& bench, int set);
    // Throws InputsChanged naming the input (by the op's order) and `when`.
    void verify(const OpBench& bench, int set, const std::string& when);
    int checks() const { return m_checks; }

private:
    cudaStream_t m_stream;
    std::vector<DeviceBuffer> m_copies;
    unsigned long long* m_differ = nullptr;
    int m_checks = 0;
};

} // namespace kev::gpu
