#pragma once
// The report of PROTOCOL.md ("Report"): the only source of numbers for agents, the GUI and
// exports. The supervisor gathers the parts (compile, lint, the GPU child's result) and this file
// puts them together in one fixed order.
#include "compile.h"
#include "elf_lint.h"
#include "json.h"
#include "process.h"

#include <optional>
#include <string>
#include <string_view>

namespace kev::report {

constexpr int kSchemaVersion = 1;

// The statuses, exactly as PROTOCOL.md lists them.
bool isStatus(std::string_view status);

// Lower-case hex SHA-256 of `bytes` (FIPS 180-4).
std::string sha256Hex(std::string_view bytes);

struct Parts {
    std::string id;
    std::string status;
    std::string message;
    bool suspicious = false;
    json::Value task;        // the normalised task
    json::Value kernel;      // kernelJson()
    json::Value options;     // every evaluation option, as applied
    json::Value environment; // the supervisor's view; the child's fields override it
    std::optional<compile::Result> compile;
    bool lintEnabled = true;
    std::optional<lint::LintResult> lint;
    json::Value child; // the child's result line, or null when no GPU step ran
    json::Value stages;
    json::Value error;
    std::string reverify;
};

json::Value kernelJson(const std::string& name, std::string_view source,
                       const std::string& language);

// rules: lint checks then the child's checks; violations from both.
json::Value rulesJson(const Parts& parts);

// Objects merge key by key (overrides win); anything else is replaced by the override.
json::Value mergeObjects(json::Value base, const json::Value& overrides);

std::string reverifyCommand(const std::string& taskName, const std::string& kernelName,
                            bool selfCheck, bool lint);

json::Value assemble(const Parts& parts);

// The first line of an nvcc log that reports an error, for the report's message.
std::string firstErrorLine(const std::string& log);

// What a GPU child that ended without a result line means: status, message, and the error object.
struct ChildFailure {
    std::string status;
    std::string message;
    json::Value error;
    std::string violation; // set for a sandbox kill
};
ChildFailure childFailure(const process::Result& run, double timeoutS);

} // namespace kev::report
