#include "compile.h"

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

namespace kev::compile {

namespace {

bool isExecutable(const std::string& path) {
    return !path.empty() && std::filesystem::is_regular_file(path) &&
           ::access(path.c_str(), X_OK) == 0;
}

bool hasAbiHeader(const std::string& dir) {
    return !dir.empty() && std::filesystem::is_regular_file(dir + "/kevolve/abi.h");
}

std::string envOr(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

// The integer just before `unit` in `line` (40 in "Used 40 registers"), or -1.
int64_t numberBefore(const std::string& line, const std::string& unit) {
    const size_t at = line.find(unit);
    if (at == std::string::npos || at == 0)
        return -1;
    size_t end = at;
    while (end > 0 && line[end - 1] == ' ')
        --end;
    size_t start = end;
    while (start > 0 && line[start - 1] >= '0' && line[start - 1] <= '9')
        --start;
    if (start == end)
        return -1;
    return std::stoll(line.substr(start, end - start));
}

} // namespace

std::string findNvcc(std::string* searched) {
    std::vector<std::string> tried;
    const std::string fromEnv = envOr("KEVOLVE_NVCC");
    if (!fromEnv.empty()) {
        tried.push_back("$KEVOLVE_NVCC=" + fromEnv);
        const std::string found = process::findInPath(fromEnv);
        if (isExecutable(found))
            return found;
    }
    tried.emplace_back("PATH");
    const std::string inPath = process::findInPath("nvcc");
    if (isExecutable(inPath))
        return inPath;
#ifdef KEVOLVE_CUDA_BIN_DIR
    tried.emplace_back(KEVOLVE_CUDA_BIN_DIR);
    if (isExecutable(std::string(KEVOLVE_CUDA_BIN_DIR) + "/nvcc"))
        return std::string(KEVOLVE_CUDA_BIN_DIR) + "/nvcc";
#endif
    tried.emplace_back("/usr/local/cuda/bin");
    if (isExecutable("/usr/local/cuda/bin/nvcc"))
        return "/usr/local/cuda/bin/nvcc";
    if (searched) {
        std::string list;
        for (const auto& t : tried)
            list += (list.empty() ? "" : ", ") + t;
        *searched = list;
    }
    return {};
}

std::string selfExeDir() {
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string() : exe.parent_path().string();
}

std::string findIncludeDir() {
    const std::string fromEnv = envOr("KEVOLVE_HARNESS_INCLUDE");
    if (hasAbiHeader(fromEnv))
        return fromEnv;
    const std::string exeDir = selfExeDir();
    if (!exeDir.empty()) {
        const std::string installed =
            std::filesystem::path(exeDir + "/../include").lexically_normal().string();
        if (hasAbiHeader(installed))
            return installed;
    }
#ifdef KEVOLVE_HARNESS_INCLUDE_DIR
    if (hasAbiHeader(KEVOLVE_HARNESS_INCLUDE_DIR))
        return KEVOLVE_HARNESS_INCLUDE_DIR;
#endif
    return {};
}

std::string normaliseArch(const std::string& arch) {
    std::string a = arch;
    for (const char* prefix : {"sm_", "compute_"}) {
        const std::string p = prefix;
        if (a.compare(0, p.size(), p) == 0) {
            a = a.substr(p.size());
            break;
        }
    }
    size_t digits = 0;
    while (digits < a.size() && a[digits] >= '0' && a[digits] <= '9')
        ++digits;
    if (digits < 2 || digits > 3)
        return {};
    const std::string suffix = a.substr(digits);
    if (!suffix.empty() && suffix != "a" && suffix != "f")
        return {};
    return a;
}

std::string archFor(int ccMajor, int ccMinor, const std::string& override) {
    for (const auto& [value, origin] :
         {std::pair<std::string, const char*>{override, "--arch"},
          std::pair<std::string, const char*>{envOr("KEVOLVE_ARCH"), "KEVOLVE_ARCH"}}) {
        if (value.empty())
            continue;
        const std::string arch = normaliseArch(value);
        if (arch.empty())
            throw std::invalid_argument(std::string(origin) + ": \"" + value +
                                        "\" is not a CUDA arch (e.g. 90a, sm_86)");
        return arch;
    }
    if (ccMajor <= 0)
        return "90a";
    // Hopper's wgmma and setmaxnreg exist only in the arch-specific 90a target.
    if (ccMajor == 9 && ccMinor == 0)
        return "90a";
    return std::to_string(ccMajor) + std::to_string(ccMinor);
}

std::vector<std::string> command(const Options& options) {
    const std::string nvcc = options.nvcc.empty() ? findNvcc() : options.nvcc;
    const std::string include = options.includeDir.empty() ? findIncludeDir() : options.includeDir;
    const std::string arch = options.arch.empty() ? std::string("90a") : options.arch;
    return {nvcc.empty() ? std::string("nvcc") : nvcc,
            "-shared",
            "-cudart",
            "shared",
            "-Xcompiler",
            "-fPIC",
            "-Xcompiler",
            "-fvisibility=hidden",
            "-O3",
            "-std=c++17",
            "-lineinfo",
            "-Xptxas",
            "-v",
            "-gencode=arch=compute_" + arch + ",code=sm_" + arch,
            "-I" + include,
            "-o",
            options.output,
            options.source};
}

process::Spec spec(const Options& options) {
    process::Spec s;
    s.argv = command(options);
    if (!options.guardExe.empty()) {
        s.argv.insert(s.argv.begin(), {options.guardExe, "exec-guard", "--"});
        // exec-guard compares its parent with this to notice a supervisor that died before it
        // could arm PR_SET_PDEATHSIG (comparing with 1 fails when the supervisor is PID 1).
        s.env.emplace_back("KEVOLVE_PARENT_PID", std::to_string(::getpid()));
    }
    s.timeoutS = options.timeoutS;
    s.mergeStderr = true;
    const std::string dir = std::filesystem::path(options.output).parent_path().string();
    if (!dir.empty()) {
        s.cwd = dir;
        // nvcc's intermediate files go next to the output, inside the evaluation's work dir.
        s.env.emplace_back("TMPDIR", dir);
    }
    return s;
}

Result finish(const Options& options, const process::Result& run) {
    Result r;
    r.command = command(options);
    r.seconds = run.seconds;
    r.log = process::trimMiddle(run.out, kMaxLog);
    r.kernels = parsePtxasLog(run.out);
    r.timedOut = run.timedOut;
    if (!run.started) {
        r.error = "could not start nvcc: " + run.spawnError;
    } else if (run.timedOut) {
        std::ostringstream msg;
        msg << "nvcc did not finish within " << options.timeoutS << " s";
        r.error = msg.str();
    } else if (run.cancelled) {
        r.error = "compile cancelled";
    } else if (!run.exited) {
        r.error = "nvcc was killed by " + process::signalName(run.signal);
    } else if (run.exitCode != 0) {
        r.error = "nvcc exited with code " + std::to_string(run.exitCode);
    } else if (!std::filesystem::is_regular_file(options.output)) {
        r.error = "nvcc succeeded but wrote no " + options.output;
    } else {
        r.ok = true;
    }
    return r;
}

Result compile(Options options) {
    if (options.nvcc.empty()) {
        std::string searched;
        options.nvcc = findNvcc(&searched);
        if (options.nvcc.empty()) {
            Result r;
            r.command = command(options);
            r.error = "nvcc not found (looked in " + searched + ")";
            return r;
        }
    }
    if (options.includeDir.empty())
        options.includeDir = findIncludeDir();
    return finish(options, process::run(spec(options)));
}

std::vector<KernelResources> parsePtxasLog(const std::string& log) {
    std::vector<KernelResources> kernels;
    std::string current;    // the entry whose "Used ..." line comes next
    std::string properties; // the function whose stack/spill line comes next
    const auto entry = [&](const std::string& name) -> KernelResources* {
        for (auto& k : kernels) {
            if (k.name == name)
                return &k;
        }
        return nullptr;
    };
    std::istringstream in(log);
    std::string line;
    while (std::getline(in, line)) {
        const std::string compiling = "Compiling entry function '";
        const std::string props = "Function properties for ";
        size_t at = line.find(compiling);
        if (at != std::string::npos) {
            const size_t start = at + compiling.size();
            const size_t end = line.find('\'', start);
            current = line.substr(start, end == std::string::npos ? end : end - start);
            if (!entry(current))
                kernels.push_back(KernelResources{current, 0, 0, 0, 0, 0, 0});
            continue;
        }
        at = line.find(props);
        if (at != std::string::npos) {
            properties = line.substr(at + props.size());
            while (!properties.empty() && (properties.back() == ' ' || properties.back() == '\r'))
                properties.pop_back();
            continue;
        }
        if (line.find("bytes stack frame") != std::string::npos) {
            if (KernelResources* k = entry(properties)) {
                k->stackBytes = std::max<int64_t>(0, numberBefore(line, "bytes stack frame"));
                k->spillStoreBytes = std::max<int64_t>(0, numberBefore(line, "bytes spill stores"));
                k->spillLoadBytes = std::max<int64_t>(0, numberBefore(line, "bytes spill loads"));
            }
            continue;
        }
        if (line.find("ptxas info") != std::string::npos &&
            line.find("registers") != std::string::npos) {
            if (KernelResources* k = entry(current)) {
                k->registers =
                    static_cast<int>(std::max<int64_t>(0, numberBefore(line, "registers")));
                k->barriers =
                    static_cast<int>(std::max<int64_t>(0, numberBefore(line, "barriers")));
                k->sharedStaticBytes = std::max<int64_t>(0, numberBefore(line, "bytes smem"));
            }
        }
    }
    return kernels;
}

std::string nvccVersion(const std::string& nvcc) {
    process::Spec s;
    s.argv = {nvcc, "--version"};
    s.timeoutS = 20;
    s.mergeStderr = true;
    const process::Result r = process::run(s);
    const std::string& out = r.out;
    // "Cuda compilation tools, release 13.0, V13.0.88"
    const size_t at = out.find(", V");
    if (at == std::string::npos)
        return {};
    size_t end = at + 3;
    while (end < out.size() && ((out[end] >= '0' && out[end] <= '9') || out[end] == '.'))
        ++end;
    return out.substr(at + 3, end - at - 3);
}

json::Value toJson(const Result& result) {
    json::Value v = json::Value::object();
    v["ok"] = result.ok;
    v["seconds"] = result.seconds;
    json::Value& cmd = v["command"];
    cmd = json::Value::array();
    for (const auto& arg : result.command)
        cmd.push(arg);
    v["log"] = result.log;
    if (!result.error.empty())
        v["error"] = result.error;
    if (result.timedOut)
        v["timed_out"] = true;
    json::Value& kernels = v["kernels"];
    kernels = json::Value::array();
    for (const auto& k : result.kernels) {
        json::Value kv = json::Value::object();
        kv["name"] = k.name;
        kv["registers"] = k.registers;
        kv["shared_static_bytes"] = k.sharedStaticBytes;
        kv["stack_bytes"] = k.stackBytes;
        kv["spill_store_bytes"] = k.spillStoreBytes;
        kv["spill_load_bytes"] = k.spillLoadBytes;
        kv["barriers"] = k.barriers;
        kernels.push(std::move(kv));
    }
    return v;
}

} // namespace kev::compile
