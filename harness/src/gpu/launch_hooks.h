#pragma once
// The launch audit. kevolve-harness exports the CUDA runtime's launch entry points (see
// launch_hooks.list), so a candidate's references bind to these hooks before libcudart; each hook
// records the launch and forwards it. Launch paths that bypass them (driver API, entry-point
// queries) are refused by the static lint.
#include <cuda_runtime.h>
#include <string>
#include <vector>

namespace kev::gpu::hooks {

struct LaunchRecord {
    std::string api;
    // The kernel: a host stub address or a cudaKernel_t, either of which cudaFuncGetAttributes and
    // the occupancy calculator accept.
    const void* func = nullptr;
    cudaStream_t stream = nullptr;
    dim3 grid;
    dim3 block;
    size_t sharedBytes = 0;
    bool harnessThread = true;
    bool accessPolicyWindow = false;
    unsigned clusterX = 1, clusterY = 1, clusterZ = 1;
    int error = 0;
};

// While armed, launches are recorded; the harness arms around each call of kevolve_launch.
void arm(cudaStream_t expectedStream);
std::vector<LaunchRecord> disarm();

// Launches seen while disarmed from a thread other than the harness thread (a candidate's thread
// or a launch after kevolve_launch returned).
std::vector<LaunchRecord> strayLaunches();

// Empty when every record is on the expected stream, from the harness thread, without an L2
// access-policy window; otherwise one line of evidence per offending launch.
std::vector<std::string> violations(const std::vector<LaunchRecord>& records,
                                    cudaStream_t expectedStream);

// Whether the hooks are live in this process (the executable exported them).
bool installed();

} // namespace kev::gpu::hooks
