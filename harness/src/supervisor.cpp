#include "supervisor.h"
#include "supervisor_eval.h"

#include "compile.h"
#include "device_select.h"
#include "elf_lint.h"
#include "gpu_lock.h"
#include "files.h"
#include "kevolve/harness_version.h"
#include "metrics.h"
#include "nvml.h"
#include "process.h"
#include "reference_cache.h"
#include "report.h"
#include "result_channel.h"
#include "roofline.h"
#include "verdict.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <random>
#include <set>
#include <stdexcept>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kev {

namespace fs = std::filesystem;
using namespace supervisor_detail;

namespace {

std::string selfExePath() {
    std::error_code ec;
    const auto p = fs::read_symlink("/proc/self/exe", ec);
    return ec ? std::string("/proc/self/exe") : p.string();
}

std::string hostName() {
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0)
        return {};
    return buf;
}

int coreCount() {
    const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? static_cast<int>(n) : 1;
}

// A file name for the candidate's source that keeps compiler messages readable.
std::string sourceFileName(const std::string& kernelName) {
    std::string base = fs::path(kernelName).filename().string();
    const bool safe = !base.empty() && base.size() <= 128 && base.front() != '.' &&
                      base.front() != '-' && std::all_of(base.begin(), base.end(), [](char c) {
                          return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                                 (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
                      });
    if (!safe)
        return "cand.cu";
    if (base.size() < 4 || base.substr(base.size() - 3) != ".cu")
        base += ".cu";
    return base;
}

json::Value event(const char* name, const std::string& id) {
    json::Value v = json::Value::object();
    v["v"] = 1;
    v["event"] = name;
    v["id"] = id;
    return v;
}

} // namespace

Supervisor::Supervisor(SupervisorConfig config, Sink sink)
    : m_config(std::move(config))
    , m_sink(std::move(sink)) {
    if (m_config.maxCompiles <= 0)
        m_config.maxCompiles = coreCount();
    if (m_config.selfExe.empty())
        m_config.selfExe = selfExePath();
    // Not dumpable: a child of the same user (a candidate, its capabilities dropped) cannot open
    // this process's /proc/<pid>/environ or mem, even on a kernel without Landlock.
    ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

Supervisor::~Supervisor() {
    cancelAll();
}

bool Supervisor::submit(EvalRequest request) {
    for (const auto& e : m_evals) {
        if (e->req.id == request.id)
            return false;
    }
    auto e = std::make_unique<Eval>();
    e->req = std::move(request);
    json::Value accepted = event("accepted", e->req.id);
    int ahead = 0;
    for (const auto& other : m_evals) {
        if (other->req.options.device == e->req.options.device)
            ++ahead;
    }
    accepted["queue_position"] = ahead;
    m_evals.push_back(std::move(e));
    m_sink(std::move(accepted));
    return true;
}

void Supervisor::cleanUp(Eval& e, bool keep) {
    e.proc.reset(); // kills a child still running
    e.runner.reset();
    e.profileProc.reset();
    if (!keep && !e.workDir.empty()) {
        std::error_code ec;
        fs::remove_all(e.workDir, ec);
    }
}

bool Supervisor::cancel(const std::string& id) {
    for (auto it = m_evals.begin(); it != m_evals.end(); ++it) {
        if ((*it)->req.id != id)
            continue;
        cleanUp(**it, (*it)->req.options.keepDir);
        m_evals.erase(it);
        m_sink(event("cancelled", id));
        return true;
    }
    return false;
}

void Supervisor::cancelAll() {
    for (auto& e : m_evals)
        cleanUp(*e, e->req.options.keepDir);
    m_evals.clear();
}

void Supervisor::addPollFds(std::vector<pollfd>& fds) const {
    for (const auto& e : m_evals) {
        for (const auto* proc : {e->proc.get(), e->profileProc.get(), e->runner.get()}) {
            if (proc && proc->running()) {
                for (int fd : proc->openFds())
                    fds.push_back({fd, POLLIN, 0});
            }
        }
    }
}

int Supervisor::pollTimeoutMs() const {
    if (m_evals.empty())
        return -1;
    // Exits are noticed by polling the children, so wake up regularly while any run.
    int timeout = 50;
    for (const auto& e : m_evals) {
        if (e->proc) {
            const int ms = e->proc->msUntilDeadline();
            if (ms >= 0)
                timeout = std::min(timeout, ms);
        }
    }
    return timeout;
}

void Supervisor::progress(const Eval& e, const std::string& stage, const std::string& message,
                          double fraction) {
    json::Value p = event("progress", e.req.id);
    p["stage"] = stage;
    p["message"] = message;
    p["fraction"] = fraction;
    m_sink(std::move(p));
}

void Supervisor::service() {
    int compiling = 0;
    for (const auto& e : m_evals) {
        if (e->state == Eval::State::Compiling || e->state == Eval::State::CompilingReference)
            ++compiling;
    }
    for (auto& ep : m_evals) {
        Eval& e = *ep;
        if (e.done)
            continue;
        switch (e.state) {
        case Eval::State::Queued:
            if (compiling < m_config.maxCompiles) {
                startCompile(e);
                if (e.state == Eval::State::Compiling)
                    ++compiling;
            }
            break;
        case Eval::State::Compiling:
            if (e.proc->service()) {
                --compiling;
                afterCompile(e);
                if (e.state == Eval::State::CompilingReference)
                    ++compiling;
            }
            break;
        case Eval::State::CompilingReference:
            if (e.proc->service()) {
                --compiling;
                afterReferenceCompile(e);
            }
            break;
        case Eval::State::WaitingGpu: {
            bool deviceBusy = false;
            for (const auto& other : m_evals) {
                if (other.get() != &e && !other->done &&
                    (other->state == Eval::State::Running ||
                     other->state == Eval::State::Profiling) &&
                    other->req.options.device == e.req.options.device)
                    deviceBusy = true;
            }
            if (!deviceBusy && takeGpu(e))
                startChild(e);
            break;
        }
        case Eval::State::Running: {
            if (e.profileProc) {
                e.profileProc->service();
                for (const auto& line : e.profileProc->takeChannelLines())
                    handleProfileLine(e, *e.profileProc, line);
            }
            if (e.timingHeld && (!e.profileProc || !e.profileProc->running()))
                releaseTiming(e);
            if (e.runner) {
                e.runner->service();
                for (const auto& line : e.runner->takeChannelLines())
                    handleRunnerLine(e, line);
            }
            if (!e.verifierRun) {
                const bool finished = e.proc->service();
                for (const auto& line : e.proc->takeChannelLines())
                    handleChildLine(e, line);
                if (finished) {
                    e.verifierRun = withChannel(*e.proc);
                    e.verifierEnd = Clock::now();
                }
            }
            // The runner wrote its line before its last reply to the verifier: a short grace
            // is enough, and a runner that lingers is killed (its group with it).
            if (e.verifierRun &&
                (!e.runner || !e.runner->running() || secondsSince(e.verifierEnd) > 2.0)) {
                if (e.runner && e.runner->running())
                    e.runner->cancel();
                afterChild(e);
            }
            break;
        }
        case Eval::State::Profiling: {
            const bool finished = e.proc->service();
            for (const auto& line : e.proc->takeChannelLines())
                handleProfileLine(e, *e.proc, line);
            if (finished)
                afterProfile(e);
            break;
        }
        }
    }
    m_evals.remove_if([](const std::unique_ptr<Eval>& e) { return e->done; });
    // Children killed earlier that were stuck in the kernel: collected without blocking.
    process::reapStragglers();
}

void Supervisor::startCompile(Eval& e) {
    std::string tmp = "/tmp";
    if (const char* t = std::getenv("TMPDIR"); t && *t)
        tmp = t;
    std::string templ = tmp + "/kevolve-XXXXXX";
    if (!::mkdtemp(templ.data())) {
        fail(e, "cannot create a work directory under " + tmp + ": " + std::strerror(errno));
        return;
    }
    e.workDir = templ;
    e.sourcePath = e.workDir + "/" + sourceFileName(e.req.kernelName);
    e.soPath = e.workDir + "/cand.so";
    if (!files::writeFile(e.sourcePath, e.req.kernelSource)) {
        fail(e, "cannot write " + e.sourcePath);
        return;
    }

    std::optional<nvml::Device> device = nvml::Device::openByIndex(e.req.options.device);
    if (device)
        e.gpu = device->info();
    try {
        e.arch = compile::archFor(e.gpu ? e.gpu->ccMajor : 0, e.gpu ? e.gpu->ccMinor : 0,
                                  m_config.archOverride);
    } catch (const std::invalid_argument& ex) {
        fail(e, ex.what());
        return;
    }

    compile::Options& o = e.compileOptions;
    std::string searched;
    o.nvcc = compile::findNvcc(&searched);
    if (o.nvcc.empty()) {
        fail(e, "nvcc not found (looked in " + searched + ")");
        return;
    }
    o.includeDir = compile::findIncludeDir();
    if (o.includeDir.empty()) {
        fail(e, "the ABI header kevolve/abi.h was not found (set KEVOLVE_HARNESS_INCLUDE)");
        return;
    }
    o.source = e.sourcePath;
    o.output = e.soPath;
    o.arch = e.arch;
    o.guardExe = m_config.selfExe;
    o.timeoutS = e.req.options.compileTimeoutS;
    if (!m_nvccVersionKnown) {
        m_nvccVersion = compile::nvccVersion(o.nvcc);
        m_nvccVersionKnown = true;
    }
    e.proc = std::make_unique<process::Process>(compile::spec(o));
    e.proc->start();
    e.state = Eval::State::Compiling;
    progress(e, "compile", "nvcc for sm_" + e.arch, 0.0);
}

void Supervisor::afterCompile(Eval& e) {
    e.compiled = compile::finish(e.compileOptions, e.proc->result());
    e.proc.reset();
    if (!e.compiled->ok) {
        std::string first = report::firstErrorLine(e.compiled->log);
        std::string message = "compile failed";
        if (!e.compiled->error.empty() && (e.compiled->timedOut || first.empty()))
            message += ": " + e.compiled->error;
        if (!first.empty())
            message += ": " + first;
        finish(e, "compile_error", message);
        return;
    }
    if (e.req.options.lint) {
        progress(e, "lint", "checking the object's symbols", 0.0);
        const auto t0 = Clock::now();
        e.linted = lint::lintObject(e.soPath);
        e.lintS = secondsSince(t0);
        if (!e.linted->ok) {
            std::string message = "rule violation: ";
            for (size_t i = 0; i < e.linted->violations.size(); ++i)
                message += (i ? "; " : "") + e.linted->violations[i];
            finish(e, "rule_violation", message);
            return;
        }
    }
    if (!e.gpu) {
        std::string why;
        if (!nvml::available(&why))
            why = "NVML: " + why;
        else
            why = "NVML has no device " + std::to_string(e.req.options.device);
        finish(e, "no_device",
               "compiled" + std::string(e.req.options.lint ? " and passed the static rules" : "") +
                   "; no CUDA device here (" + why + "), so nothing was measured");
        return;
    }
    if (e.req.task.reference.kind == Reference::Kind::File) {
        // The reference implements the candidate ABI and is compiled the same way; it is the
        // task author's code, so it is not linted.
        compile::Options o = e.compileOptions;
        o.source = e.req.task.reference.file;
        o.output = e.workDir + "/ref.so";
        e.referenceSoPath = o.output;
        e.compileOptions = o;
        e.proc = std::make_unique<process::Process>(compile::spec(o));
        e.proc->start();
        e.state = Eval::State::CompilingReference;
        progress(e, "compile", "nvcc for the task's reference " + o.source, 0.5);
        return;
    }
    e.state = Eval::State::WaitingGpu;
}

void Supervisor::afterReferenceCompile(Eval& e) {
    const compile::Result r = compile::finish(e.compileOptions, e.proc->result());
    e.proc.reset();
    if (!r.ok) {
        const std::string first = report::firstErrorLine(r.log);
        fail(e,
             "task.reference.file: " + e.req.task.reference.file +
                 " did not compile: " + (first.empty() ? r.error : first),
             "bad_task");
        return;
    }
    e.state = Eval::State::WaitingGpu;
}

bool Supervisor::takeGpu(Eval& e) {
    const std::string key = !e.gpu->uuid.empty() ? e.gpu->uuid : e.gpu->pciBusId;
    int holder = 0;
    std::string error;
    if (key.empty() || e.gpuLock.tryAcquire(GpuLock::defaultDir(), key, &holder, &error))
        return true;
    const bool first = !e.gpuWaitReported;
    e.gpuWaitReported = true;
    if (!error.empty()) {
        // A lock that cannot be used must not stop the referee: measure, and say so.
        if (first)
            progress(e, "validate", "measuring without the per-GPU lock: " + error, 0.0);
        return true;
    }
    if (first)
        progress(e, "validate",
                 "waiting for GPU " + key + ": another kevolve-harness" +
                     (holder > 0 ? " (pid " + std::to_string(holder) + ")" : std::string()) +
                     " is measuring on it",
                 0.0);
    return false;
}

void Supervisor::startChild(Eval& e) {
    Task task = e.req.task;
    if (e.req.options.timeBudgetS)
        task.timing.budgetS = *e.req.options.timeBudgetS;
    json::Value job = json::Value::object();
    job["v"] = 1;
    job["id"] = e.req.id;
    job["task"] = toJson(task);
    job["library"] = e.soPath;
    if (!e.referenceSoPath.empty())
        job["reference_library"] = e.referenceSoPath;
    job["device"] = e.req.options.device;
    job["pci_bus_id"] = e.gpu->pciBusId;
    job["self_check"] = e.req.options.selfCheck;
    // No seed: the verifier draws its own from getrandom, and this file sits in the runner's
    // working directory (THREAT_MODEL.md, class 2).
    job["options"] = e.req.options.toJson();
    job["workdir"] = e.workDir;
    // The only folder the child may write to once the candidate is loaded (Landlock).
    const std::string scratch = e.workDir + "/scratch";
    if (::mkdir(scratch.c_str(), 0700) != 0 && errno != EEXIST) {
        fail(e, "cannot create " + scratch + ": " + std::strerror(errno));
        return;
    }
    job["scratch"] = scratch;
    job["lint"] = e.req.options.lint;
    e.token = resultToken();
    const std::string jobPath = e.workDir + "/job.json";
    if (!files::writeFile(jobPath, job.dump(2))) {
        fail(e, "cannot write " + jobPath);
        return;
    }

    const bool prewarm =
        !e.req.options.selfCheck &&
        metrics::parseOptions(&e.req.options.profiling).when != metrics::When::Never;
    e.timingHeld = prewarm;
    e.protocol.emplace(e.token);
    if (!startPair(e, job.dump(), prewarm))
        return;
    e.state = Eval::State::Running;
    if (prewarm) {
        e.profileToken = resultToken();
        e.profileProtocol.emplace(e.profileToken, kProfileLineTypes);
        // Its limit covers the wait for the evaluation as well as its own run.
        e.profileProc = spawnProfileChild(e, {"--profile", "--wait-go"}, e.profileToken, true,
                                          2 * e.req.options.runTimeoutS);
    }
    progress(e, "validate",
             "starting the GPU child on device " + std::to_string(e.req.options.device), 0.0);
}

std::unique_ptr<process::Process> Supervisor::spawnProcess(Eval& e, std::vector<std::string> args,
                                                           const std::string& token, bool stdinPipe,
                                                           double timeoutS,
                                                           const char* moduleLoading) {
    process::Spec spec;
    // Tests stand in for the GPU children with a script that speaks the same protocols.
    const char* stand = std::getenv("KEVOLVE_TEST_CHILD");
    spec.argv = {stand && *stand ? std::string(stand) : m_config.selfExe};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.channel = true;
    spec.stdinPipe = stdinPipe;
    spec.timeoutS = timeoutS;
    spec.cwd = e.workDir;
    spec.env = {{"TMPDIR", e.workDir + "/scratch"},
                {"CUDA_MODULE_LOADING", moduleLoading},
                {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"},
                {"KEVOLVE_PARENT_PID", std::to_string(::getpid())},
                {"KEVOLVE_RESULT_TOKEN", token}};
    auto proc = std::make_unique<process::Process>(spec);
    proc->start();
    return proc;
}

std::unique_ptr<process::Process>
Supervisor::spawnChild(Eval& e, const std::vector<std::string>& extraArgs, const std::string& token,
                       bool stdinPipe, double timeoutS, const char* moduleLoading) {
    std::vector<std::string> args = {"run-one", "--job", e.workDir + "/job.json", "--result-fd",
                                     "3"};
    args.insert(args.end(), extraArgs.begin(), extraArgs.end());
    return spawnProcess(e, std::move(args), token, stdinPipe, timeoutS, moduleLoading);
}

std::unique_ptr<process::Process>
Supervisor::spawnProfileChild(Eval& e, const std::vector<std::string>& extraArgs,
                              const std::string& token, bool stdinPipe, double timeoutS) {
    // EAGER loaded every module of the process (cuBLAS's above all) at context creation: 2.1-2.7 s
    // on the H200, and the evaluation's timing waits for this child to be ready. The profile times
    // nothing; run-one --profile launches each side once unprofiled before its profiled launch, so
    // no module load falls inside a profiled range.
    return spawnChild(e, extraArgs, token, stdinPipe, timeoutS, "LAZY");
}

bool Supervisor::startPair(Eval& e, const std::string& jobLine, bool holdTiming) {
    // toRunner: the verifier's commands; toVerifier: the runner's replies.
    int toRunner[2] = {-1, -1}, toVerifier[2] = {-1, -1};
    std::string error;
    if (!verdict::makePipe(toRunner, &error) || !verdict::makePipe(toVerifier, &error)) {
        for (int fd : {toRunner[0], toRunner[1]})
            if (fd >= 0)
                ::close(fd);
        fail(e, "cannot create the verifier's pipes: " + error);
        return false;
    }
    // Each child inherits exactly its two ends: the flag is cleared for one spawn and set again.
    std::vector<std::string> verify = {"verify",
                                       "--result-fd",
                                       "3",
                                       "--runner-in",
                                       std::to_string(toVerifier[0]),
                                       "--runner-out",
                                       std::to_string(toRunner[1])};
    if (holdTiming)
        verify.push_back("--hold-timing");
    verdict::setInheritable(toVerifier[0], true);
    verdict::setInheritable(toRunner[1], true);
    // The verifier loads its modules (cuBLAS above all) lazily: loading every one at start-up
    // cost it ~2 s on the H200, on the evaluation's critical path, and its first uses are
    // untimed (validation, warm-up quads). The runner keeps EAGER, as every candidate process.
    e.proc = spawnProcess(e, verify, e.token, true, e.req.options.runTimeoutS, "LAZY");
    verdict::setInheritable(toVerifier[0], false);
    verdict::setInheritable(toRunner[1], false);
    e.runnerToken = resultToken();
    e.runnerProtocol.emplace(e.runnerToken, std::set<std::string>{"result"});
    verdict::setInheritable(toRunner[0], true);
    verdict::setInheritable(toVerifier[1], true);
    e.runner = spawnChild(
        e, {"--peer-in", std::to_string(toRunner[0]), "--peer-out", std::to_string(toVerifier[1])},
        e.runnerToken, false, e.req.options.runTimeoutS);
    for (int fd : {toRunner[0], toRunner[1], toVerifier[0], toVerifier[1]})
        ::close(fd);
    // The job travels on the verifier's stdin: nothing on disk that the runner could rewrite.
    e.proc->writeStdin(jobLine + "\n");
    if (!holdTiming)
        e.proc->closeStdin();
    return true;
}

// The runner writes exactly one line, its result with its token: anything else on its channel
// (junk, a forged or second result, a flood) refuses the channel (result_channel.h).
void Supervisor::handleRunnerLine(Eval& e, const std::string& line) {
    const auto m = e.runnerProtocol->accept(e.runner->channelReader(), line);
    if (!m || m->type != "result")
        return;
    ++e.runnerLines.results;
    e.runnerLines.result = std::move(m->value);
}

void Supervisor::handleChildLine(Eval& e, const std::string& line) {
    // The child learns its token from its environment and scrubs it before the candidate is
    // loaded: a result without it, junk, or anything after the result was written by someone
    // else on the child's fd and refuses the channel (the child is then killed).
    const auto m = e.protocol->accept(e.proc->channelReader(), line);
    if (!m)
        return;
    if (m->type == "progress") {
        const json::Value* stage = m->value.find("stage");
        const json::Value* message = m->value.find("message");
        const json::Value* fraction = m->value.find("fraction");
        progress(e, stage && stage->isString() ? stage->asString() : std::string("run"),
                 message && message->isString() ? message->asString() : std::string(),
                 fraction && fraction->isNumber() ? fraction->asDouble() : 0.0);
    } else if (m->type == "result") {
        e.childResult = std::move(m->value);
    }
}

// The child's result with its channel's final state: the protocol may have refused the channel
// after the process ended (the lines are checked once they are taken).
process::Result Supervisor::withChannel(process::Process& child) {
    process::Result run = child.result();
    run.channelRefused = !child.channelReader().ok();
    run.channel = child.channelReader().toJson();
    return run;
}

void Supervisor::refuseChannel(Eval& e, const process::Result& run, const char* who) {
    const json::Value* v = run.channel.find("violation");
    const json::Value* m = v ? v->find("message") : nullptr;
    const json::Value* x = v ? v->find("excerpt") : nullptr;
    const std::string what = m && m->isString() ? m->asString() : std::string("broken framing");
    json::Value result = json::Value::object();
    json::Value violations = json::Value::array();
    violations.push(std::string(who) + "'s result channel was refused: " + what);
    result["violations"] = std::move(violations);
    json::Value check = json::Value::object();
    check["name"] = "result_channel";
    check["ok"] = false;
    check["evidence"] = what + (x && x->isString() ? "; excerpt: " + x->asString() : "") + " (" +
                        std::to_string(run.channel.find("bytes")->asInt()) + " bytes)";
    json::Value checks = json::Value::array();
    checks.push(std::move(check));
    result["checks"] = std::move(checks);
    json::Value error = json::Value::object();
    error["stage"] = "run";
    error["message"] = std::string(who) + "'s result channel: " + what;
    error["channel"] = run.channel;
    result["error"] = std::move(error);
    e.childResult = std::move(result);
    finish(e, "rule_violation",
           "rule violation: " + std::string(who) + "'s result channel: " + what);
}

void Supervisor::afterChild(Eval& e) {
    const process::Result verifierRun = e.verifierRun ? *e.verifierRun : withChannel(*e.proc);
    const process::Result runnerRun = e.runner ? withChannel(*e.runner) : process::Result();
    e.proc.reset();
    e.runner.reset();
    e.verifierRun.reset();
    e.gpuS = verifierRun.seconds;
    // Anything unexpected on the runner's channel is the candidate's doing; on the verifier's,
    // nothing it says can be trusted any more.
    if (runnerRun.channelRefused) {
        e.profileProc.reset();
        refuseChannel(e, runnerRun, "the runner");
        return;
    }
    if (verifierRun.channelRefused) {
        e.profileProc.reset();
        refuseChannel(e, verifierRun, "the verifier");
        return;
    }
    verdict::ChildLines verifierLines;
    verifierLines.result = e.childResult;
    verifierLines.results = e.childResult.isObject() ? 1 : 0;
    verdict::Outcome o = verdict::combine(verifierLines, verifierRun, e.runnerLines, runnerRun,
                                          e.req.options.runTimeoutS);
    e.childResult = std::move(o.child);
    e.status = o.status;
    e.message = o.message;
    if (e.childResult.isObject() && e.childResult.find("status")) {
        json::Value check = json::Value::object();
        check["name"] = "result_channel";
        check["ok"] = true;
        const auto count = [](const process::Result& r, const char* key) {
            const json::Value* v = r.channel.isObject() ? r.channel.find(key) : nullptr;
            return v && v->isInt() ? v->asInt() : 0;
        };
        check["evidence"] = "the verifier: " + std::to_string(count(verifierRun, "lines")) +
                            " lines (" + std::to_string(count(verifierRun, "bytes")) +
                            " bytes); the runner: " + std::to_string(count(runnerRun, "lines")) +
                            " lines (" + std::to_string(count(runnerRun, "bytes")) +
                            " bytes); one result each with its token, nothing after it";
        json::Value& checks = e.childResult["checks"];
        if (!checks.isArray())
            checks = json::Value::array();
        checks.push(std::move(check));
    }
    if (report::isStatus(e.status) && e.childResult.find("status")) {
        e.childResult["status"] = e.status;
        e.childResult["message"] = e.message;
        const json::Value* timing = e.childResult.find("timing");
        const json::Value* speedup = timing ? timing->find("speedup_vs_reference") : nullptr;
        if (!e.req.options.selfCheck &&
            metrics::shouldProfile(metrics::parseOptions(&e.req.options.profiling), e.status,
                                   speedup && speedup->isNumber() ? speedup->asDouble() : 0.0)) {
            startProfiling(e);
            return;
        }
    }
    e.profileProc.reset();
    finish(e, e.status, e.message);
}

json::Value Supervisor::environment(const Eval& e) {
    json::Value env = json::Value::object();
    env["host"] = hostName();
    env["harness_version"] = KEVOLVE_HARNESS_VERSION;
    env["nvcc"] = m_nvccVersion;
    env["arch"] = e.arch.empty() ? json::Value() : json::Value("sm_" + e.arch);
    if (e.gpu)
        env["gpu"] = nvml::toJson(*e.gpu);
    const std::string driver = nvml::driverVersion();
    if (!driver.empty())
        env["driver_version"] = driver;
    return env;
}

void Supervisor::fail(Eval& e, const std::string& message, const char* code) {
    json::Value err = event("error", e.req.id);
    err["code"] = code;
    err["message"] = message;
    cleanUp(e, e.req.options.keepDir);
    e.done = true;
    m_sink(std::move(err));
}

void Supervisor::finish(Eval& e, const std::string& status, const std::string& message) {
    report::Parts p;
    p.id = e.req.id;
    p.status = status;
    p.message = message;
    p.task = toJson(e.req.task);
    p.kernel = report::kernelJson(e.req.kernelName, e.req.kernelSource, e.req.language);
    p.options = e.req.options.toJson();
    if (e.req.options.keepDir && !e.workDir.empty())
        p.options["work_dir"] = e.workDir;
    p.environment = environment(e);
    p.compile = e.compiled;
    p.lintEnabled = e.req.options.lint;
    p.lint = e.linted;
    p.child = e.childResult;
    if (p.child.isObject()) {
        if (const json::Value* s = p.child.find("suspicious"); s && s->isBool())
            p.suspicious = s->asBool();
    }

    json::Value stages = json::Value::object();
    stages["compile_s"] = e.compiled ? e.compiled->seconds : 0.0;
    stages["lint_s"] = e.lintS;
    stages["gpu_s"] = e.gpuS;
    if (e.profileS > 0) {
        stages["profile_s"] = e.profileS;
        stages["profile_hidden_s"] = e.profileHiddenS;
    }
    if (p.child.isObject()) {
        if (const json::Value* s = p.child.find("stages"); s && s->isObject())
            stages = report::mergeObjects(stages, *s);
    }
    stages["total_s"] = secondsSince(e.start);
    p.stages = std::move(stages);

    if (p.child.isObject()) {
        if (const json::Value* err = p.child.find("error"); err && !err->isNull())
            p.error = *err;
    }
    if (p.error.isNull() && e.compiled && !e.compiled->ok && !e.compiled->error.empty()) {
        p.error = json::Value::object();
        p.error["stage"] = "compile";
        p.error["message"] = e.compiled->error;
    }
    p.reverify = report::reverifyCommand(e.req.task.name, e.req.kernelName, e.req.options.selfCheck,
                                         e.req.options.lint);

    json::Value result = event("result", e.req.id);
    result["report"] = report::assemble(p);
    cleanUp(e, e.req.options.keepDir);
    e.done = true;
    m_sink(std::move(result));
}

} // namespace kev
