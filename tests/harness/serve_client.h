#pragma once
// A test client for `kevolve-harness serve`: the real server process, spoken to over its stdin and
// stdout exactly as a GUI or an agent would.
#include "json.h"
#include "process.h"

#include <chrono>
#include <csignal>
#include <memory>
#include <optional>
#include <poll.h>
#include <string>
#include <utility>
#include <vector>

namespace kev::test {

class ServeClient {
public:
    explicit ServeClient(std::vector<std::pair<std::string, std::string>> env = {},
                         std::vector<std::string> args = {}) {
        std::signal(SIGPIPE, SIG_IGN);
        process::Spec spec;
        spec.argv = {KEVOLVE_HARNESS_EXE, "serve"};
        spec.argv.insert(spec.argv.end(), args.begin(), args.end());
        spec.env = std::move(env);
        spec.stdinPipe = true;
        spec.stdoutLines = true;
        spec.maxChannelLine = 256u << 20;
        m_process = std::make_unique<process::Process>(spec);
        m_process->start();
    }

    bool sendLine(const std::string& line) { return m_process->writeStdin(line + "\n"); }
    bool send(const json::Value& v) { return sendLine(v.dump()); }
    void closeInput() { m_process->closeStdin(); }

    // The next event not yet taken, in arrival order (a string value holding the raw line when it
    // is not JSON); nullopt on time-out or end of output.
    std::optional<json::Value> next(double timeoutS) {
        return take([](const json::Value&) { return true; }, timeoutS);
    }

    // The first event not yet taken named `event` about `id`, wherever it is in the stream;
    // events before it stay available to later calls.
    std::optional<json::Value> waitFor(const std::string& event, const json::Value& id,
                                       double timeoutS) {
        return take(
            [&](const json::Value& v) {
                const json::Value* name = v.find("event");
                const json::Value* vid = v.find("id");
                return name && name->isString() && name->asString() == event && vid && *vid == id;
            },
            timeoutS);
    }

    // Waits for the process to exit; its result.
    const process::Result& wait(double timeoutS) {
        const auto deadline = deadlineIn(timeoutS);
        while (!m_process->service()) {
            collect();
            if (std::chrono::steady_clock::now() >= deadline)
                m_process->cancel();
            pollOnce();
        }
        collect();
        return m_process->result();
    }

    // Every event so far, taken or not.
    const std::vector<json::Value>& history() const { return m_history; }
    // Every line the server wrote so far.
    const std::vector<std::string>& rawLines() const { return m_raw; }

private:
    static std::chrono::steady_clock::time_point deadlineIn(double seconds) {
        return std::chrono::steady_clock::now() +
               std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                   std::chrono::duration<double>(seconds));
    }

    void collect() {
        for (auto& line : m_process->takeStdoutLines()) {
            m_raw.push_back(line);
            auto v = json::tryParse(line, nullptr);
            m_history.push_back(v ? std::move(*v) : json::Value(line));
            m_taken.push_back(false);
        }
    }

    void pollOnce() {
        std::vector<pollfd> fds;
        for (int fd : m_process->openFds())
            fds.push_back({fd, POLLIN, 0});
        ::poll(fds.data(), fds.size(), 50);
        m_process->service();
    }

    template <typename Match> std::optional<json::Value> take(Match match, double timeoutS) {
        const auto deadline = deadlineIn(timeoutS);
        for (;;) {
            collect();
            for (size_t i = 0; i < m_history.size(); ++i) {
                if (!m_taken[i] && match(m_history[i])) {
                    m_taken[i] = true;
                    return m_history[i];
                }
            }
            if (m_process->finished() || std::chrono::steady_clock::now() >= deadline)
                return std::nullopt;
            pollOnce();
        }
    }

    std::unique_ptr<process::Process> m_process;
    std::vector<json::Value> m_history;
    std::vector<bool> m_taken;
    std::vector<std::string> m_raw;
};

inline json::Value request(const std::string& op, const std::string& id) {
    json::Value v = json::Value::object();
    v["v"] = 1;
    v["id"] = id;
    v["op"] = op;
    return v;
}

} // namespace kev::test
