#pragma once
// The protocol front ends of the supervisor (PROTOCOL.md): `serve` reads JSON-lines requests on
// stdin and writes events on stdout; `eval` runs one evaluation from files. The request reader
// (request.cpp) is apart from the loop so that tests and fuzzers drive it without a process.
#include "json.h"
#include "supervisor.h"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kev {

// A request line longer than this is refused without being parsed (PROTOCOL.md, "Framing").
inline constexpr size_t kMaxRequestLine = size_t{64} << 20;
// Ids are echoed in every event about a request.
inline constexpr size_t kMaxRequestId = 1024;

// The `options` object of an eval request; throws std::invalid_argument naming the field
// ("options.run_timeout_s: ...").
EvalOptions parseEvalOptions(const json::Value& options, int defaultDevice);

// {"devices": [...], "driver_version": ..., "nvml": true|false, "reason": ...}
json::Value probeJson();

// One request line, read.
struct ServeRequest {
    enum class Op { None, Hello, Probe, Eval, Cancel, Shutdown };
    Op op = Op::None;   // None: a blank line, or a refused one (`error` is set then)
    json::Value id;     // a string, or null when the request had none
    std::string target; // cancel
    std::optional<EvalRequest> eval;
    // The `error` event answering a malformed request: its code and a message naming the field.
    std::optional<json::Value> error;
};

// Reads one line (without its '\n') as a request. Never throws: whatever the bytes, the result is a
// request or an error event naming the problem. Reads the files `task_path` and `kernel.path` name
// (regular files below a size limit only).
ServeRequest parseRequestLine(std::string_view line, int defaultDevice);

// An `error` event.
json::Value errorEvent(const json::Value& id, const char* code, const std::string& message);

// `kevolve-harness serve`: the protocol on stdin/stdout until shutdown or end of input; then every
// evaluation still in flight is killed (answered `cancelled`) and `bye` is the last line.
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
