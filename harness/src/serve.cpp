#include "serve.h"

#include "files.h"
#include "kevolve/harness_version.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <optional>
#include <poll.h>
#include <set>
#include <unistd.h>
#include <vector>

namespace kev {

namespace fs = std::filesystem;

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

json::Value event(const char* name, const json::Value& id) {
    json::Value v = json::Value::object();
    v["v"] = 1;
    v["event"] = name;
    v["id"] = id;
    return v;
}

} // namespace

int serve(int defaultDevice, const std::string& archOverride) {
    std::signal(SIGPIPE, SIG_IGN);
    Writer writer;
    SupervisorConfig config;
    config.archOverride = archOverride;
    // The evaluations accepted and not yet answered, so that end of input can kill each one and
    // say so: every eval ends in exactly one result, cancelled or error (PROTOCOL.md).
    std::set<std::string> inFlight;
    Supervisor supervisor(config, [&](json::Value e) {
        const json::Value* name = e.find("event");
        const json::Value* id = e.find("id");
        if (name && name->isString() && id && id->isString() &&
            (name->asString() == "result" || name->asString() == "cancelled" ||
             name->asString() == "error"))
            inFlight.erase(id->asString());
        writer.write(std::move(e));
    });

    ::fcntl(STDIN_FILENO, F_SETFL, ::fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK);
    std::string buffer;
    bool skipping = false; // inside an overlong line, dropping bytes up to its end
    bool inputOpen = true;
    json::Value byeId;
    bool shutdown = false;

    const auto handleLine = [&](const std::string& line) {
        ServeRequest r = parseRequestLine(line, defaultDevice);
        if (r.error) {
            writer.write(std::move(*r.error));
            return;
        }
        switch (r.op) {
        case ServeRequest::Op::None:
            return;
        case ServeRequest::Op::Hello: {
            json::Value e = event("hello", r.id);
            e["protocol"] = 1;
            e["harness_version"] = KEVOLVE_HARNESS_VERSION;
            const json::Value probe = probeJson();
            e["devices"] = *probe.find("devices");
            writer.write(std::move(e));
            return;
        }
        case ServeRequest::Op::Probe: {
            json::Value e = event("probe", r.id);
            // Held in a variable: the loop must not walk the members of a destroyed temporary.
            const json::Value probe = probeJson();
            for (const auto& [key, value] : probe.members())
                e[key] = value;
            writer.write(std::move(e));
            return;
        }
        case ServeRequest::Op::Eval: {
            const std::string id = r.eval->id;
            if (inFlight.count(id) || !supervisor.submit(std::move(*r.eval))) {
                writer.write(
                    errorEvent(r.id, "bad_request", "id \"" + id + "\" is already in flight"));
                return;
            }
            inFlight.insert(id);
            return;
        }
        case ServeRequest::Op::Cancel:
            if (!supervisor.cancel(r.target))
                writer.write(
                    errorEvent(r.id, "unknown_id",
                               "no evaluation " + json::Value(r.target).dump() + " in flight"));
            return;
        case ServeRequest::Op::Shutdown:
            byeId = r.id;
            shutdown = true;
            return;
        }
    };

    while (!shutdown && !writer.broken() && inputOpen) {
        std::vector<pollfd> fds;
        fds.push_back({STDIN_FILENO, POLLIN, 0});
        supervisor.addPollFds(fds);
        ::poll(fds.data(), fds.size(), supervisor.pollTimeoutMs());
        char chunk[65536];
        for (;;) {
            const ssize_t n = ::read(STDIN_FILENO, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
                std::cerr << "kevolve-harness serve: reading stdin: " << std::strerror(errno)
                          << "\n";
                inputOpen = false;
                break;
            }
            if (n < 0)
                break; // nothing more for now
            if (n == 0) {
                inputOpen = false;
                break;
            }
            size_t start = 0;
            const auto len = static_cast<size_t>(n);
            for (size_t i = 0; i < len && !shutdown; ++i) {
                if (chunk[i] != '\n')
                    continue;
                if (!skipping && buffer.size() + (i - start) > kMaxRequestLine) {
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
            if (buffer.size() > kMaxRequestLine) {
                buffer.clear();
                buffer.shrink_to_fit();
                skipping = true;
                writer.write(
                    errorEvent(json::Value(), "bad_request", "line longer than 64 MiB refused"));
            }
        }
        if (!inputOpen && !skipping && !shutdown && !buffer.empty()) {
            handleLine(buffer); // a last request without its newline
            buffer.clear();
        }
        supervisor.service();
    }
    // End of input (or shutdown) ends the session: evaluations still running are killed, not
    // finished, and each is answered `cancelled`.
    for (const std::string& id : std::vector<std::string>(inFlight.begin(), inFlight.end()))
        supervisor.cancel(id);
    supervisor.cancelAll();
    if (!writer.broken()) {
        json::Value bye = event("bye", byeId);
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
    std::string reason;
    auto source = files::readRegularFile(command.kernelPath, files::kMaxSourceBytes, &reason);
    if (!source) {
        std::cerr << "kevolve-harness eval: --kernel: " << command.kernelPath << ": " << reason
                  << "\n";
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
