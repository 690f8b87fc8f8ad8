#pragma once
// Compiling a candidate: one exec'd nvcc per source, with a time limit, the log kept verbatim for
// the Coding agent, and the per-kernel resources ptxas reports.
#include "json.h"
#include "process.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kev::compile {

struct KernelResources {
    std::string name; // the mangled entry name
    int registers = 0;
    int64_t stackBytes = 0;
    int64_t spillStoreBytes = 0;
    int64_t spillLoadBytes = 0;
    int64_t sharedStaticBytes = 0;
    int barriers = 0;
};

struct Options {
    std::string source;     // the .cu file
    std::string output;     // the .so to write
    std::string arch;       // "90a", "86", ...; see archFor()
    std::string nvcc;       // empty: findNvcc()
    std::string includeDir; // empty: findIncludeDir()
    std::string guardExe;   // when set, nvcc runs under `guardExe exec-guard --`
    double timeoutS = 60;
};

struct Result {
    bool ok = false;
    bool timedOut = false;
    double seconds = 0;
    std::vector<std::string> command;
    std::string log; // stdout and stderr in order, trimmed to kMaxLog keeping head and tail
    std::vector<KernelResources> kernels;
    std::string error; // why nvcc could not run or failed, when it did not say so itself
};

constexpr size_t kMaxLog = 64u << 10;

// $KEVOLVE_NVCC, PATH, KEVOLVE_CUDA_BIN_DIR (build time), /usr/local/cuda/bin. Empty when none is
// found; `searched` lists where it looked.
std::string findNvcc(std::string* searched = nullptr);
// $KEVOLVE_HARNESS_INCLUDE, <exe dir>/../include, KEVOLVE_HARNESS_INCLUDE_DIR (build time): the
// first that holds kevolve/abi.h. Empty when none does.
std::string findIncludeDir();
// The directory of the running executable.
std::string selfExeDir();

// "sm_90a", "compute_86", "90a" and "86" all normalise to the bare form; empty for garbage.
std::string normaliseArch(const std::string& arch);
// The arch to compile for: `override` (--arch), else $KEVOLVE_ARCH, else the device's (cc 9.0 ->
// 90a, X.Y -> XY), else 90a when there is no device. Throws std::invalid_argument for a malformed
// override.
std::string archFor(int ccMajor, int ccMinor, const std::string& override);

// The nvcc argv.
std::vector<std::string> command(const Options& options);
// What to spawn: the nvcc argv, under exec-guard when options.guardExe is set.
process::Spec spec(const Options& options);
// The compile result from nvcc's finished process.
Result finish(const Options& options, const process::Result& run);
// spec + run + finish, blocking.
Result compile(Options options);

std::vector<KernelResources> parsePtxasLog(const std::string& log);

// "13.0.88" from `nvcc --version`, or empty.
std::string nvccVersion(const std::string& nvcc);

json::Value toJson(const Result& result);

} // namespace kev::compile
