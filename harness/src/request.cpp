// serve's request reader: one line in, a request or an error event naming the problem out.
#include "serve.h"

#include "files.h"
#include "kevolve/harness_version.h"
#include "metrics.h"
#include "nvml.h"

#include <cuda_runtime_api.h>
#include <filesystem>
#include <new>
#include <sstream>
#include <stdexcept>
#include <system_error>

namespace kev {

namespace fs = std::filesystem;

namespace {

// A value as it appears in a message: whole when short, cut when a hostile request made it long.
std::string brief(const json::Value& v) {
    std::string s = v.dump();
    if (s.size() > 80)
        s = s.substr(0, 77) + "...";
    return s;
}

// A key or name as it appears in a message.
std::string shortName(const std::string& s) {
    return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

double readPositive(const json::Value& v, const std::string& path, double max) {
    if (!v.isNumber())
        throw std::invalid_argument(path + ": expected a number, got " + brief(v));
    const double d = v.asDouble();
    if (!(d > 0) || d > max) {
        std::ostringstream s;
        s << path << ": " << brief(v) << " must be greater than 0 and at most " << max;
        throw std::invalid_argument(s.str());
    }
    return d;
}

bool readBool(const json::Value& v, const std::string& path) {
    if (!v.isBool())
        throw std::invalid_argument(path + ": expected true or false, got " + brief(v));
    return v.asBool();
}

struct BadRequest {
    const char* code;
    std::string message;
};

EvalRequest parseEvalRequest(const json::Value& req, const std::string& id, int defaultDevice) {
    EvalRequest r;
    r.id = id;
    for (const auto& [key, value] : req.members()) {
        if (key != "v" && key != "id" && key != "op" && key != "task" && key != "task_path" &&
            key != "kernel" && key != "options")
            throw BadRequest{"bad_request", shortName(key) + ": unknown field of an eval request"};
    }
    const json::Value* task = req.find("task");
    const json::Value* taskPath = req.find("task_path");
    if ((task == nullptr) == (taskPath == nullptr))
        throw BadRequest{"bad_request", "eval needs exactly one of task and task_path"};
    try {
        if (task) {
            r.task = parseTask(*task);
        } else {
            if (!taskPath->isString())
                throw BadRequest{"bad_request", "task_path: expected a string"};
            r.task = loadTaskFile(taskPath->asString());
        }
    } catch (const TaskError& e) {
        throw BadRequest{"bad_task", e.what()};
    }
    if (r.task.reference.kind == Reference::Kind::File) {
        const std::string& file = r.task.reference.file;
        std::error_code ec;
        if (fs::path(file).is_relative() || !fs::is_regular_file(file, ec))
            throw BadRequest{"bad_task", "task.reference.file: " + file +
                                             " is not an absolute path to a file on the server"};
        const auto size = fs::file_size(file, ec);
        if (ec || size > files::kMaxSourceBytes)
            throw BadRequest{"bad_task", "task.reference.file: " + file + " is larger than " +
                                             files::formatBytes(files::kMaxSourceBytes)};
    }

    const json::Value* kernel = req.find("kernel");
    if (!kernel || !kernel->isObject())
        throw BadRequest{"bad_request", "kernel: expected an object with source or path"};
    for (const auto& [key, value] : kernel->members()) {
        if (key != "language" && key != "source" && key != "path" && key != "name")
            throw BadRequest{"bad_request", "kernel." + shortName(key) + ": unknown field"};
        if (!value.isString())
            throw BadRequest{"bad_request", "kernel." + shortName(key) + ": expected a string"};
    }
    if (const json::Value* lang = kernel->find("language")) {
        if (lang->asString() != "cuda")
            throw BadRequest{"bad_request",
                             "kernel.language: " + brief(*lang) +
                                 " is not supported (this harness compiles \"cuda\")"};
    }
    const json::Value* source = kernel->find("source");
    const json::Value* path = kernel->find("path");
    if ((source == nullptr) == (path == nullptr))
        throw BadRequest{"bad_request", "kernel: needs exactly one of source and path"};
    if (source) {
        if (source->asString().size() > files::kMaxSourceBytes)
            throw BadRequest{"bad_request",
                             "kernel.source: " + files::formatBytes(source->asString().size()) +
                                 ", more than the limit of " +
                                 files::formatBytes(files::kMaxSourceBytes)};
        r.kernelSource = source->asString();
    } else {
        std::string reason;
        auto text = files::readRegularFile(path->asString(), files::kMaxSourceBytes, &reason);
        if (!text)
            throw BadRequest{"bad_request", "kernel.path: " + path->asString() + ": " + reason};
        r.kernelSource = std::move(*text);
        r.kernelName = fs::path(path->asString()).filename().string();
    }
    if (const json::Value* name = kernel->find("name")) {
        if (name->asString().empty() || name->asString().size() > 255)
            throw BadRequest{"bad_request", "kernel.name: expected 1 to 255 characters"};
        r.kernelName = name->asString();
    }
    try {
        r.options = parseEvalOptions(req.contains("options") ? *req.find("options") : json::Value(),
                                     defaultDevice);
    } catch (const std::invalid_argument& e) {
        throw BadRequest{"bad_request", e.what()};
    }
    return r;
}

void readRequest(ServeRequest& out, std::string_view line, int defaultDevice) {
    if (!line.empty() && line.back() == '\r')
        line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos)
        return;
    if (line.size() > kMaxRequestLine)
        throw BadRequest{"bad_request", "line longer than 64 MiB refused"};
    std::string parseError;
    const auto req = json::tryParse(line, &parseError, json::requestLimits());
    if (!req)
        throw BadRequest{"bad_request", "not JSON: " + parseError};
    if (!req->isObject())
        throw BadRequest{"bad_request", "a request must be a JSON object, got " +
                                            std::string(json::typeName(req->type()))};
    if (const json::Value* i = req->find("id")) {
        if (!i->isString())
            throw BadRequest{"bad_request", "id: expected a string, got " + brief(*i)};
        if (i->asString().size() > kMaxRequestId)
            throw BadRequest{"bad_request",
                             "id: longer than " + std::to_string(kMaxRequestId) + " bytes"};
        out.id = *i;
    }
    const json::Value* version = req->find("v");
    if (!version || version->toInt() != std::optional<int64_t>(1)) {
        throw BadRequest{"unsupported_version",
                         std::string(version ? "v: " + brief(*version) + " is not"
                                             : "missing \"v\": this server speaks") +
                             " protocol version 1"};
    }
    const json::Value* op = req->find("op");
    if (!op || !op->isString())
        throw BadRequest{"bad_request", op ? "op: expected a string, got " + brief(*op)
                                           : std::string("missing \"op\"")};
    const std::string& name = op->asString();
    if (name == "hello") {
        out.op = ServeRequest::Op::Hello;
    } else if (name == "probe") {
        out.op = ServeRequest::Op::Probe;
    } else if (name == "eval") {
        if (out.id.isNull())
            throw BadRequest{"bad_request", "eval needs an id"};
        out.eval = parseEvalRequest(*req, out.id.asString(), defaultDevice);
        out.op = ServeRequest::Op::Eval;
    } else if (name == "cancel") {
        const json::Value* target = req->find("target");
        if (!target || !target->isString())
            throw BadRequest{"bad_request", "cancel needs a target id"};
        out.target = target->asString();
        out.op = ServeRequest::Op::Cancel;
    } else if (name == "shutdown") {
        out.op = ServeRequest::Op::Shutdown;
    } else {
        throw BadRequest{"bad_request", "unknown op " + brief(*op)};
    }
}

} // namespace

json::Value EvalOptions::toJson() const {
    json::Value v = json::Value::object();
    v["device"] = device;
    v["self_check"] = selfCheck;
    v["lint"] = lint;
    v["compile_timeout_s"] = compileTimeoutS;
    v["run_timeout_s"] = runTimeoutS;
    if (timeBudgetS)
        v["time_budget_s"] = *timeBudgetS;
    if (kernelTimeoutS)
        v["kernel_timeout_s"] = *kernelTimeoutS;
    v["keep_dir"] = keepDir;
    for (const auto& [key, value] : profiling.members())
        v[key] = value;
    return v;
}

EvalOptions parseEvalOptions(const json::Value& options, int defaultDevice) {
    EvalOptions o;
    o.device = defaultDevice;
    if (options.isNull())
        return o;
    if (!options.isObject())
        throw std::invalid_argument("options: expected an object, got " + brief(options));
    for (const auto& [key, value] : options.members()) {
        const std::string path = "options." + shortName(key);
        if (key == "device") {
            const std::optional<int64_t> device = value.toInt();
            if (!device || *device < 0 || *device > 1024)
                throw std::invalid_argument(path + ": expected a device index (0 to 1024), got " +
                                            brief(value));
            o.device = static_cast<int>(*device);
        } else if (key == "self_check") {
            o.selfCheck = readBool(value, path);
        } else if (key == "lint") {
            o.lint = readBool(value, path);
        } else if (key == "keep_dir") {
            o.keepDir = readBool(value, path);
        } else if (key == "compile_timeout_s") {
            o.compileTimeoutS = readPositive(value, path, 3600);
        } else if (key == "run_timeout_s") {
            o.runTimeoutS = readPositive(value, path, 3600);
        } else if (key == "time_budget_s") {
            o.timeBudgetS = readPositive(value, path, 600);
        } else if (key == "kernel_timeout_s") {
            o.kernelTimeoutS = readPositive(value, path, 3600);
        } else if (key == "profile" || key == "profile_best_speedup" || key == "metrics") {
            o.profiling[key] = value;
        } else {
            throw std::invalid_argument(path + ": unknown option");
        }
    }
    try {
        metrics::parseOptions(&o.profiling);
    } catch (const std::exception& e) {
        throw std::invalid_argument(e.what());
    }
    return o;
}

json::Value probeJson() {
    json::Value v = json::Value::object();
    std::string why;
    json::Value devices = json::Value::array();
    const bool ok = nvml::available(&why);
    std::string error;
    for (const auto& d : nvml::devices(&error))
        devices.push(nvml::toJson(d));
    v["devices"] = std::move(devices);
    v["driver_version"] = ok ? json::Value(nvml::driverVersion()) : json::Value();
    const int cudaDriver = nvml::cudaDriverVersion();
    v["cuda_driver_version"] = cudaDriver > 0 ? json::Value(cudaDriver) : json::Value();
    // The runtime this harness was built with (and that candidates share); SM count and L2 size
    // need CUDA, which the supervisor never initialises: the GPU child reports them.
    v["cuda_runtime_version"] = CUDART_VERSION;
    v["nvml"] = ok;
    if (!ok)
        v["reason"] = why;
    else if (!error.empty())
        v["reason"] = error;
    return v;
}

json::Value errorEvent(const json::Value& id, const char* code, const std::string& message) {
    json::Value v = json::Value::object();
    v["v"] = 1;
    v["event"] = "error";
    v["id"] = id;
    v["code"] = code;
    v["message"] = message;
    return v;
}

ServeRequest parseRequestLine(std::string_view line, int defaultDevice) {
    ServeRequest out;
    const auto refuse = [&](const char* code, const std::string& message) {
        out.op = ServeRequest::Op::None;
        out.eval.reset();
        out.error = errorEvent(out.id, code, message);
    };
    try {
        readRequest(out, line, defaultDevice);
    } catch (const BadRequest& b) {
        refuse(b.code, b.message);
    } catch (const std::bad_alloc&) {
        refuse("bad_request", "the request needs more memory than this server has");
    } catch (const std::exception& e) {
        // A reader that throws is a bug of this server; the request is still answered.
        refuse("internal", std::string("cannot read the request: ") + e.what());
    }
    return out;
}

} // namespace kev
