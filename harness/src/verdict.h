#pragma once
// How the supervisor turns its two GPU children into one verdict (THREAT_MODEL.md, "The
// verifier"): the trusted verifier's result line decides; the untrusted runner's line and exit can
// only make it worse (a violation the runner saw of itself, a sandbox kill, a forged or extra
// line on its channel), never better. No CUDA: unit-tested without a GPU.
#include "json.h"
#include "process.h"

#include <string>

namespace kev::verdict {

// What one child said on its result channel, as the supervisor counted it.
struct ChildLines {
    json::Value result; // the one result line carrying the child's token (null if none)
    int results = 0;    // result lines with the child's token
    int forged = 0;     // result lines without it
};

struct Outcome {
    std::string status;
    std::string message;
    json::Value child; // the report's child part (the verifier's result, amended)
};

// `verifier`/`runner`: their lines; the process results for failures without a result line.
Outcome combine(const ChildLines& verifier, const process::Result& verifierRun,
                const ChildLines& runner, const process::Result& runnerRun, double timeoutS);

// A pipe whose ends are close-on-exec; false with `error` on failure.
bool makePipe(int fds[2], std::string* error);
// Clears or sets FD_CLOEXEC: the supervisor lets exactly the child it spawns next inherit a pipe
// end, then takes the flag back (the supervisor is single-threaded, so no other spawn sees it).
bool setInheritable(int fd, bool inheritable);

} // namespace kev::verdict
