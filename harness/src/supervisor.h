#pragma once
// The supervisor: runs evaluations (compile -> lint -> GPU child) without ever initialising CUDA,
// many at once, by polling its children's pipes. `serve` and `eval` (serve.h) drive it.
#include "json.h"
#include "task.h"

#include <poll.h>

#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kev {

namespace process {
class Process;
struct Result;
} // namespace process

struct EvalOptions {
    int device = 0;
    bool selfCheck = false;
    bool lint = true;
    double compileTimeoutS = 60;
    double runTimeoutS = 120;
    std::optional<double> timeBudgetS;    // overrides task.timing.budget_s
    std::optional<double> kernelTimeoutS; // the GPU child's watchdog for one kernel
    bool keepDir = false;
    // "profile", "profile_best_speedup" and "metrics" as metrics::parseOptions reads them.
    json::Value profiling = json::Value::object();

    json::Value toJson() const;
};

struct EvalRequest {
    std::string id;
    Task task;
    std::string kernelName = "kernel.cu";
    std::string kernelSource;
    std::string language = "cuda";
    EvalOptions options;
};

struct SupervisorConfig {
    std::string archOverride; // --arch; $KEVOLVE_ARCH and the device's arch otherwise
    int maxCompiles = 0;      // 0: one per core
    std::string selfExe;      // empty: /proc/self/exe
};

class Supervisor {
public:
    // Receives every event (accepted, progress, result, cancelled, error) as a protocol object.
    using Sink = std::function<void(json::Value event)>;

    Supervisor(SupervisorConfig config, Sink sink);
    ~Supervisor(); // kills every child
    Supervisor(const Supervisor&) = delete;
    Supervisor& operator=(const Supervisor&) = delete;

    // Queues an evaluation and emits "accepted". False when an evaluation with this id is in
    // flight (nothing is emitted then).
    bool submit(EvalRequest request);
    // Kills the evaluation's children, drops it and emits "cancelled"; false for an unknown id.
    bool cancel(const std::string& id);
    void cancelAll();
    bool busy() const { return !m_evals.empty(); }

    void addPollFds(std::vector<pollfd>& fds) const;
    // How long the caller may sleep in poll(): -1 when idle.
    int pollTimeoutMs() const;
    // Advances every evaluation; emits events.
    void service();

private:
    struct Eval;
    void startCompile(Eval& e);
    void afterCompile(Eval& e);
    void afterReferenceCompile(Eval& e);
    // The per-GPU lock across harness processes; false while another one measures on the GPU.
    bool takeGpu(Eval& e);
    void startChild(Eval& e);
    void afterChild(Eval& e);
    void handleChildLine(Eval& e, const std::string& line);
    void handleRunnerLine(Eval& e, const std::string& line);
    // The trusted verifier and the untrusted runner, joined by two pipes that only they hold.
    bool startPair(Eval& e, const std::string& jobLine, bool holdTiming);
    // `moduleLoading`: CUDA_MODULE_LOADING for the child (EAGER where a candidate runs).
    std::unique_ptr<process::Process> spawnProcess(Eval& e, std::vector<std::string> args,
                                                   const std::string& token, bool stdinPipe,
                                                   double timeoutS,
                                                   const char* moduleLoading = "EAGER");
    std::unique_ptr<process::Process> spawnChild(Eval& e, const std::vector<std::string>& extraArgs,
                                                 const std::string& token, bool stdinPipe,
                                                 double timeoutS,
                                                 const char* moduleLoading = "EAGER");
    // The profiling child (run-one --profile): LAZY module loading, because it never times.
    std::unique_ptr<process::Process> spawnProfileChild(Eval& e,
                                                        const std::vector<std::string>& extraArgs,
                                                        const std::string& token, bool stdinPipe,
                                                        double timeoutS);
    void startProfiling(Eval& e);
    void releaseTiming(Eval& e);
    void handleProfileLine(Eval& e, process::Process& child, const std::string& line);
    void refuseChannel(Eval& e, const process::Result& run, const char* who);
    static process::Result withChannel(process::Process& child);
    void afterProfile(Eval& e);
    void finish(Eval& e, const std::string& status, const std::string& message);
    void fail(Eval& e, const std::string& message, const char* code = "internal");
    void progress(const Eval& e, const std::string& stage, const std::string& message,
                  double fraction);
    json::Value environment(const Eval& e);
    void cleanUp(Eval& e, bool keep);

    SupervisorConfig m_config;
    Sink m_sink;
    std::list<std::unique_ptr<Eval>> m_evals; // in arrival order
    std::string m_nvccVersion;
    bool m_nvccVersionKnown = false;
};

} // namespace kev
