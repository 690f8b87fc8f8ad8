#pragma once
// The protocol front ends of the supervisor (PROTOCOL.md): `serve` reads JSON-lines requests on
// stdin and writes events on stdout; `eval` runs one evaluation from files.
#include "json.h"
#include "supervisor.h"

#include <string>

namespace kev {

// The `options` object of an eval request; throws std::invalid_argument naming the field
// ("options.run_timeout_s: ...").
EvalOptions parseEvalOptions(const json::Value& options, int defaultDevice);

// {"devices": [...], "driver_version": ..., "nvml": true|false, "reason": ...}
json::Value probeJson();

// `kevolve-harness serve`: the protocol on stdin/stdout until shutdown or end of input.
int serve(int defaultDevice, const std::string& archOverride);

struct EvalCommand {
    std::string taskPath;
    std::string kernelPath;
    std::string outPath;
    std::string archOverride;
    EvalOptions options;
};

// `kevolve-harness eval`: returns the exit code of PROTOCOL.md.
int evalOnce(const EvalCommand& command);

} // namespace kev
