#include "serve.h"

#include "files.h"
#include "kevolve/harness_version.h"
#include "metrics.h"
#include "nvml.h"

#include <cerrno>
#include <csignal>
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <optional>
#include <poll.h>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

namespace kev {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxLine = 64u << 20;

json::Value event(const char* name, const std::string& id) {
    json::Value v = json::Value::object();
    v["v"] = 1;
    v["event"] = name;
    v["id"] = id;
    return v;
}

double readPositive(const json::Value& v, const std::string& path, double max) {
    if (!v.isNumber())
        throw std::invalid_argument(path + ": expected a number, got " + v.dump());
    const double d = v.asDouble();
    if (!(d > 0) || d > max) {
        std::ostringstream s;
        s << path << ": " << v.dump() << " must be greater than 0 and at most " << max;
        throw std::invalid_argument(s.str());
    }
    return d;
}

bool readBool(const json::Value& v, const std::string& path) {
    if (!v.isBool())
        throw std::invalid_argument(path + ": expected true or false, got " + v.dump());
    return v.asBool();
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
        throw std::invalid_argument("options: expected an object, got " + options.dump());
    for (const auto& [key, value] : options.members()) {
        const std::string path = "options." + key;
        if (key == "device") {
            if (!value.isInt() || value.asInt() < 0 || value.asInt() > 1024)
                throw std::invalid_argument(path + ": expected a device index, got " +
                                            value.dump());
            o.device = static_cast<int>(value.asInt());
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

namespace {

// Writes one protocol line; stdout carries nothing else.
class Writer {
public:
    bool write(json::Value v) {
        if (!v.contains("v")) {
            json::Value withVersion = json::Value::object();
            withVersion["v"] = 1;
            for (const auto& [key, value] : v.members())
                withVersion[key] = value;
            v = std::move(withVersion);
        }
        std::string line = v.dump();
        line += '\n';
        size_t done = 0;
        while (done < line.size()) {
            const ssize_t n = ::write(STDOUT_FILENO, line.data() + done, line.size() - done);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && errno == EAGAIN) {
                pollfd p{STDOUT_FILENO, POLLOUT, 0};
                ::poll(&p, 1, 1000);
                continue;
            }
            if (n <= 0) {
                m_broken = true;
                return false;
            }
            done += static_cast<size_t>(n);
        }
        return true;
    }
    bool broken() const { return m_broken; }

private:
    bool m_broken = false;
};

json::Value errorEvent(const json::Value& id, const char* code, const std::string& message) {
    json::Value v = json::Value::object();
    v["v"] = 1;
    v["event"] = "error";
    v["id"] = id;
    v["code"] = code;
    v["message"] = message;
    return v;
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
            throw BadRequest{"bad_request", key + ": unknown field of an eval request"};
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
    if (r.task.reference.kind == Reference::Kind::File &&
        (fs::path(r.task.reference.file).is_relative() ||
         !fs::is_regular_file(r.task.reference.file)))
        throw BadRequest{"bad_task", "task.reference.file: " + r.task.reference.file +
                                         " is not an absolute path to a file on the server"};

    const json::Value* kernel = req.find("kernel");
    if (!kernel || !kernel->isObject())
        throw BadRequest{"bad_request", "kernel: expected an object with source or path"};
    for (const auto& [key, value] : kernel->members()) {
        if (key != "language" && key != "source" && key != "path" && key != "name")
            throw BadRequest{"bad_request", "kernel." + key + ": unknown field"};
        if (!value.isString())
            throw BadRequest{"bad_request", "kernel." + key + ": expected a string"};
    }
    if (const json::Value* lang = kernel->find("language")) {
        if (lang->asString() != "cuda")
            throw BadRequest{"bad_request",
                             "kernel.language: \"" + lang->asString() +
                                 "\" is not supported (this harness compiles \"cuda\")"};
    }
    const json::Value* source = kernel->find("source");
    const json::Value* path = kernel->find("path");
    if ((source == nullptr) == (path == nullptr))
        throw BadRequest{"bad_request", "kernel: needs exactly one of source and path"};
    if (source) {
        r.kernelSource = source->asString();
    } else {
        std::string error;
        auto text = files::readFile(path->asString(), &error);
        if (!text)
            throw BadRequest{"bad_request", "kernel.path: " + error};
        r.kernelSource = std::move(*text);
        r.kernelName = fs::path(path->asString()).filename().string();
    }
    if (const json::Value* name = kernel->find("name"))
        r.kernelName = name->asString();
    try {
        r.options = parseEvalOptions(req.contains("options") ? *req.find("options") : json::Value(),
                                     defaultDevice);
    } catch (const std::invalid_argument& e) {
        throw BadRequest{"bad_request", e.what()};
    }
    return r;
}

} // namespace

int serve(int defaultDevice, const std::string& archOverride) {
    std::signal(SIGPIPE, SIG_IGN);
    Writer writer;
    SupervisorConfig config;
    config.archOverride = archOverride;
    Supervisor supervisor(config, [&](json::Value e) { writer.write(std::move(e)); });

    ::fcntl(STDIN_FILENO, F_SETFL, ::fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK);
    std::string buffer;
    bool skipping = false; // inside an overlong line, dropping bytes up to its end
    bool inputOpen = true;
    json::Value byeId;
    bool shutdown = false;

    const auto handleLine = [&](const std::string& rawLine) {
        std::string line = rawLine;
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        if (line.find_first_not_of(" \t") == std::string::npos)
            return;
        std::string parseError;
        const auto req = json::tryParse(line, &parseError);
        if (!req) {
            writer.write(errorEvent(json::Value(), "bad_request", "not JSON: " + parseError));
            return;
        }
        if (!req->isObject()) {
            writer.write(errorEvent(json::Value(), "bad_request",
                                    "a request must be a JSON object, got " +
                                        std::string(json::typeName(req->type()))));
            return;
        }
        json::Value id;
        if (const json::Value* i = req->find("id")) {
            if (!i->isString()) {
                writer.write(errorEvent(json::Value(), "bad_request", "id: expected a string"));
                return;
            }
            id = *i;
        }
        const json::Value* version = req->find("v");
        if (!version || !version->isInt() || version->asInt() != 1) {
            writer.write(errorEvent(id, "unsupported_version",
                                    std::string(version ? "v: " + version->dump() + " is not"
                                                        : "missing \"v\": this server speaks") +
                                        " protocol version 1"));
            return;
        }
        const json::Value* op = req->find("op");
        if (!op || !op->isString()) {
            writer.write(errorEvent(id, "bad_request", "missing \"op\""));
            return;
        }
        const std::string& name = op->asString();
        if (name == "hello") {
            json::Value e = event("hello", id.isNull() ? std::string() : id.asString());
            e["id"] = id;
            e["protocol"] = 1;
            e["harness_version"] = KEVOLVE_HARNESS_VERSION;
            e["devices"] = *probeJson().find("devices");
            writer.write(std::move(e));
        } else if (name == "probe") {
            json::Value e = event("probe", std::string());
            e["id"] = id;
            for (const auto& [key, value] : probeJson().members())
                e[key] = value;
            writer.write(std::move(e));
        } else if (name == "eval") {
            if (id.isNull()) {
                writer.write(errorEvent(id, "bad_request", "eval needs an id"));
                return;
            }
            try {
                EvalRequest r = parseEvalRequest(*req, id.asString(), defaultDevice);
                if (!supervisor.submit(std::move(r)))
                    writer.write(errorEvent(id, "bad_request",
                                            "id \"" + id.asString() + "\" is already in flight"));
            } catch (const BadRequest& b) {
                writer.write(errorEvent(id, b.code, b.message));
            }
        } else if (name == "cancel") {
            const json::Value* target = req->find("target");
            if (!target || !target->isString()) {
                writer.write(errorEvent(id, "bad_request", "cancel needs a target id"));
                return;
            }
            if (!supervisor.cancel(target->asString()))
                writer.write(errorEvent(id, "unknown_id",
                                        "no evaluation \"" + target->asString() + "\" in flight"));
        } else if (name == "shutdown") {
            byeId = id;
            shutdown = true;
        } else {
            writer.write(errorEvent(id, "bad_request", "unknown op \"" + name + "\""));
        }
    };

    while (!shutdown && !writer.broken() && (inputOpen || supervisor.busy())) {
        std::vector<pollfd> fds;
        if (inputOpen)
            fds.push_back({STDIN_FILENO, POLLIN, 0});
        supervisor.addPollFds(fds);
        ::poll(fds.data(), fds.size(), supervisor.pollTimeoutMs());
        if (inputOpen) {
            char chunk[65536];
            for (;;) {
                const ssize_t n = ::read(STDIN_FILENO, chunk, sizeof chunk);
                if (n < 0 && errno == EINTR)
                    continue;
                if (n < 0)
                    break; // EAGAIN: nothing more for now
                if (n == 0) {
                    inputOpen = false;
                    break;
                }
                size_t start = 0;
                const auto len = static_cast<size_t>(n);
                for (size_t i = 0; i < len && !shutdown; ++i) {
                    if (chunk[i] != '\n')
                        continue;
                    if (!skipping && buffer.size() + (i - start) > kMaxLine) {
                        writer.write(errorEvent(json::Value(), "bad_request",
                                                "line longer than 64 MiB refused"));
                    } else if (!skipping) {
                        buffer.append(chunk + start, i - start);
                        handleLine(buffer);
                    }
                    buffer.clear();
                    skipping = false;
                    start = i + 1;
                }
                if (shutdown)
                    break;
                if (!skipping)
                    buffer.append(chunk + start, len - start);
                if (buffer.size() > kMaxLine) {
                    buffer.clear();
                    skipping = true;
                    writer.write(errorEvent(json::Value(), "bad_request",
                                            "line longer than 64 MiB refused"));
                }
            }
            if (!inputOpen && !skipping && !shutdown && !buffer.empty()) {
                handleLine(buffer); // a last request without its newline
                buffer.clear();
            }
        }
        supervisor.service();
    }
    // End of input (or shutdown) ends the session; evaluations still running are killed.
    supervisor.cancelAll();
    if (!writer.broken()) {
        json::Value bye = event("bye", std::string());
        bye["id"] = byeId;
        writer.write(std::move(bye));
    }
    return 0;
}

int evalOnce(const EvalCommand& command) {
    std::signal(SIGPIPE, SIG_IGN);
    EvalRequest r;
    try {
        r.task = loadTaskFile(command.taskPath);
    } catch (const TaskError& e) {
        std::cerr << "kevolve-harness eval: " << e.what() << "\n";
        return 2;
    }
    std::string error;
    auto source = files::readFile(command.kernelPath, &error);
    if (!source) {
        std::cerr << "kevolve-harness eval: --kernel: " << error << "\n";
        return 2;
    }
    r.id = "eval";
    r.kernelSource = std::move(*source);
    r.kernelName = fs::path(command.kernelPath).filename().string();
    r.options = command.options;

    std::optional<json::Value> report;
    std::string internal;
    SupervisorConfig config;
    config.archOverride = command.archOverride;
    Supervisor supervisor(config, [&](json::Value e) {
        const std::string kind = e.find("event")->asString();
        if (kind == "result")
            report = *e.find("report");
        else if (kind == "error")
            internal = e.find("message")->asString();
        else if (kind == "progress" && ::isatty(STDERR_FILENO))
            std::cerr << "[" << e.find("stage")->asString() << "] " << e.find("message")->asString()
                      << "\n";
    });
    supervisor.submit(std::move(r));
    while (supervisor.busy()) {
        supervisor.service();
        std::vector<pollfd> fds;
        supervisor.addPollFds(fds);
        const int timeout = supervisor.pollTimeoutMs();
        if (timeout >= 0)
            ::poll(fds.data(), fds.size(), timeout);
    }
    if (!report) {
        std::cerr << "kevolve-harness eval: "
                  << (internal.empty() ? std::string("no report") : internal) << "\n";
        return 3;
    }
    const std::string text = report->dump(2) + "\n";
    if (command.outPath.empty()) {
        std::cout << text << std::flush;
        return std::cout ? 0 : 3;
    }
    if (!files::writeFile(command.outPath, text)) {
        std::cerr << "kevolve-harness eval: cannot write " << command.outPath << "\n";
        return 3;
    }
    return 0;
}

} // namespace kev
