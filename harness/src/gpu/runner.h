#pragma once
// The untrusted half of an evaluation (`kevolve-harness run-one`): it loads the candidate (after
// the sandbox is in place), opens the device buffers the verifier exports, and on the verifier's
// commands calls the candidate on them or times one call. It knows no seed, truth or tolerance;
// what it reports is checked by the verifier (THREAT_MODEL.md, "The runner").
#include "json.h"

#include <string>

namespace kev::gpu {

struct RunnerOptions {
    int peerIn = -1;  // the verifier's commands
    int peerOut = -1; // replies to the verifier
    int resultFd = 3; // the runner's own result line to the supervisor
    std::string token;
    bool noCupti = false;
};

// Runs the command loop until `end` or the end of the verifier's commands; never returns.
[[noreturn]] void runRunner(const json::Value& job, const RunnerOptions& options);

} // namespace kev::gpu
