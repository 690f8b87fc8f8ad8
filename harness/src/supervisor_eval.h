// The supervisor's record of one evaluation and the helpers its files share (supervisor.cpp:
// requests, compiles and the GPU children; supervisor_profile.cpp: the profiling child).
#pragma once

#include "supervisor.h"

#include "compile.h"
#include "elf_lint.h"
#include "gpu_lock.h"
#include "json.h"
#include "nvml.h"
#include "process.h"
#include "verdict.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace kev {

namespace supervisor_detail {

using Clock = std::chrono::steady_clock;

// What the profiling child says on its channel (PROTOCOL.md): reference_metrics comes before the
// candidate is loaded.
inline const std::set<std::string> kProfileLineTypes = {"progress", "ready", "reference_metrics"};

inline double secondsSince(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

// 128 random bits in hex: the token the GPU child echoes in its result line.
inline std::string resultToken() {
    std::random_device rd;
    char buf[33];
    std::snprintf(buf, sizeof buf, "%08x%08x%08x%08x", rd(), rd(), rd(), rd());
    return buf;
}

} // namespace supervisor_detail

using supervisor_detail::Clock;

struct Supervisor::Eval {
    enum class State { Queued, Compiling, CompilingReference, WaitingGpu, Running, Profiling };
    EvalRequest req;
    State state = State::Queued;
    Clock::time_point start = Clock::now();
    std::string workDir;
    std::string sourcePath;
    std::string soPath;
    std::string referenceSoPath; // set when the task's reference is a .cu file
    std::string arch;
    std::optional<nvml::DeviceInfo> gpu;
    compile::Options compileOptions;
    std::unique_ptr<process::Process> proc; // the verifier while the evaluation runs
    // The untrusted runner next to the verifier, its result line counted apart; after the
    // verifier ends it gets a short grace to finish its own line, then it is killed.
    std::unique_ptr<process::Process> runner;
    std::string runnerToken;
    std::optional<channel::ResultProtocol> runnerProtocol;
    verdict::ChildLines runnerLines;
    std::optional<process::Result> verifierRun;
    Clock::time_point verifierEnd;
    std::optional<compile::Result> compiled;
    std::optional<lint::LintResult> linted;
    double lintS = 0;
    double gpuS = 0;
    json::Value childResult;
    std::string token; // handed to the child in its environment, echoed in its result
    // What the evaluation's child and the profiling child may say on their result channels:
    // anything else refuses the channel (result_channel.h).
    std::optional<channel::ResultProtocol> protocol;
    std::optional<channel::ResultProtocol> profileProtocol;
    // The reference's counters from the profiling child's first reference_metrics line, written
    // before it loaded the candidate: the only counters the reference cache takes.
    json::Value trustedReference;
    // The evaluation's verdict while the profiling child (run-one --profile) runs.
    std::string status, message;
    json::Value profileResult;
    double profileS = 0;       // from "go" to the profiling child's end: what profiling adds
    double profileHiddenS = 0; // its CUDA start-up, run while the evaluation ran
    // The profiling child is started next to the evaluation's child and waits for "go" on stdin
    // (run-one --profile --wait-go), so its start-up overlaps the evaluation.
    std::unique_ptr<process::Process> profileProc;
    std::string profileToken;
    // The evaluation's child holds its timing (run-one --hold-timing) until the profiling child
    // is ready or gone, so that no CUDA start-up overlaps a timed sample.
    bool timingHeld = false;
    std::chrono::steady_clock::time_point profileGo;
    // The reference's counters depend only on the device, the libraries, the task and the metric
    // list: cached under a key of all of them, they are profiled once, not per candidate.
    std::string referenceCacheKey, referenceCachePath;
    json::Value cachedReference;
    // Held from the GPU child's start to the evaluation's end (gpu_lock.h).
    GpuLock gpuLock;
    bool gpuWaitReported = false;
    bool done = false;
};

} // namespace kev
