// kevolve-cli: run, resume, inspect and export Kevolve sessions from a terminal.
#include "builtin/kernelfamily.h"
#include "builtin/knowledgebase.h"
#include "engine.h"
#include "enginesettings.h"
#include "exporter.h"
#include "jsonschema.h"
#include "keystore.h"
#include "metatypes.h"
#include "sessionstore.h"
#include "task.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QRegularExpression>
#include <QSocketNotifier>
#include <QTemporaryDir>
#include <QTextStream>
#include <QTimer>

#include <csignal>
#include <cstdio>
#include <sys/socket.h>
#include <unistd.h>

using namespace kev;

namespace {

enum ExitCode {
    ExitOk = 0,
    ExitFailure = 1,
    ExitUsage = 2,
    ExitHarnessMissing = 3,
    ExitNoDevice = 4,
    ExitAgent = 5,
    ExitInterrupted = 130
};

const char* const kUsage = R"(Usage: kevolve-cli COMMAND [OPTIONS]

Commands:
  tasks [--json]                      list the task library (built-in tasks and --tasks-dir)
  families [--task T] [--device D] [--json]
                                      the builtin backend's kernel families; with --task, those
                                      that support T on the device (default h200, or a device
                                      .json file as the harness probe describes one), each with
                                      its parameters, its default plan and whether that plan
                                      fits, and its prior
  run --task T [OPTIONS]              start a new session on task T (a library name or a .json file)
  resume SESSION [OPTIONS]            continue a session folder
  show SESSION [--json]               a table of the session's iterations
  export SESSION --out DIR [--version N]
                                      the best (or version N) kernel with its task, reports
                                      (Markdown, HTML with the chart), raw samples, environment
                                      and a one-line re-verify command

Options of run and resume:
  --backend B                 agent backend for all roles: builtin (default), llm, scripted
  --planner B, --coder B, --reviewer B
                              the backend of one role (roles can mix)
  --agent-options FILE        JSON options for the agents: one object for every role, or
                              {"planner": {...}, "coder": {...}, "reviewer": {...}}
                              (e.g. llm: base_url, model, preset; never put keys here: keys come
                              from KEVOLVE_API_KEY or <PRESET>_API_KEY)
  --provider P                llm: a preset that fills in defaults: openai, vllm, ollama,
                              llamacpp, openrouter, deepseek, custom (the default)
  --base-url URL              llm: the OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1
  --model M                   llm: the model's name on that server
  --iterations N              iterations to run (default 10)
  --target R                  stop when a correct, non-suspicious kernel reaches R x the
                              reference's speed (default 1.0; 0 = never)
  --target-floor P            memory-bound tasks: the target also needs P% of the DRAM roofline
                              floor (default 90; 0 = the speedup alone decides)
  --beam N                    candidates per iteration, evaluated in parallel (default 1)
  --session DIR               the session folder (run; default kevolve-sessions/TASK-TIME)
  --step                      step mode: approve, edit or reject every iteration here
  --harness CMD               the worker launcher, e.g. "kevolve-harness serve",
                              "ssh gpu1 kevolve-harness serve"; repeat for several GPU hosts
                              (default: $KEVOLVE_HARNESS, else kevolve-harness next to kevolve-cli,
                              else on PATH)
  --time-budget S             stop after S seconds
  --plateau N                 stop when N iterations bring no gain of 1% (default 4; 0 = never)
  --json                      machine-readable output: one JSON object per line

Common options:
  --tasks-dir DIR             also read task files from DIR
  -h, --help                  this text

Exit codes:
  0    finished (target, iteration limit, budget, plateau or stop)
  1    other failure (session folder unreadable or unwritable, harness protocol error)
  2    usage error or bad task (the message names the field)
  3    the harness could not be started (see --harness)
  4    no CUDA device: the harness found no GPU (the session folder is valid and can be resumed
       on a GPU host)
  5    agent failure (an unavailable backend, a backend that cannot serve the task, e.g.
       builtin for a custom op, or an agent that could not answer)
  130  interrupted (Ctrl-C): completed steps are saved; resume continues the session
)";

QTextStream& out() {
    static QTextStream stream(stdout);
    return stream;
}

QTextStream& err() {
    static QTextStream stream(stderr);
    return stream;
}

int usageError(const QString& message) {
    err() << "kevolve-cli: " << message << "\nRun kevolve-cli --help for usage.\n";
    err().flush();
    return ExitUsage;
}

void printJson(const QJsonObject& object) {
    out() << QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact)) << '\n';
    out().flush();
}

QString fmt(const std::optional<double>& value, int decimals = 3) {
    return value ? QString::number(*value, 'f', decimals) : QStringLiteral("-");
}

int sigintPipe[2] = {-1, -1};

void onSigint(int) {
    const char byte = 1;
    [[maybe_unused]] const auto ignored = ::write(sigintPipe[1], &byte, 1);
}

struct RunOptions {
    QCommandLineOption backend{QStringLiteral("backend"), QStringLiteral("backend for all roles"),
                               QStringLiteral("B")};
    QCommandLineOption planner{QStringLiteral("planner"), QStringLiteral("planner backend"),
                               QStringLiteral("B")};
    QCommandLineOption coder{QStringLiteral("coder"), QStringLiteral("coder backend"),
                             QStringLiteral("B")};
    QCommandLineOption reviewer{QStringLiteral("reviewer"), QStringLiteral("reviewer backend"),
                                QStringLiteral("B")};
    QCommandLineOption agentOptions{QStringLiteral("agent-options"),
                                    QStringLiteral("agent options"), QStringLiteral("FILE")};
    QCommandLineOption provider{QStringLiteral("provider"), QStringLiteral("llm preset"),
                                QStringLiteral("P")};
    QCommandLineOption baseUrl{QStringLiteral("base-url"), QStringLiteral("llm endpoint"),
                               QStringLiteral("URL")};
    QCommandLineOption model{QStringLiteral("model"), QStringLiteral("llm model"),
                             QStringLiteral("M")};
    QCommandLineOption iterations{QStringLiteral("iterations"), QStringLiteral("iterations"),
                                  QStringLiteral("N")};
    QCommandLineOption target{QStringLiteral("target"), QStringLiteral("target speedup"),
                              QStringLiteral("R")};
    QCommandLineOption targetFloor{QStringLiteral("target-floor"),
                                   QStringLiteral("target percent of the DRAM floor"),
                                   QStringLiteral("P")};
    QCommandLineOption beam{QStringLiteral("beam"), QStringLiteral("beam width"),
                            QStringLiteral("N")};
    QCommandLineOption session{QStringLiteral("session"), QStringLiteral("session folder"),
                               QStringLiteral("DIR")};
    QCommandLineOption step{QStringLiteral("step"), QStringLiteral("step mode")};
    QCommandLineOption harness{QStringLiteral("harness"), QStringLiteral("harness command"),
                               QStringLiteral("CMD")};
    QCommandLineOption timeBudget{QStringLiteral("time-budget"), QStringLiteral("seconds"),
                                  QStringLiteral("S")};
    QCommandLineOption plateau{QStringLiteral("plateau"), QStringLiteral("iterations"),
                               QStringLiteral("N")};
    QCommandLineOption task{QStringLiteral("task"), QStringLiteral("task"), QStringLiteral("T")};
    QCommandLineOption json{QStringLiteral("json"), QStringLiteral("JSON lines")};
    QCommandLineOption tasksDir{QStringLiteral("tasks-dir"), QStringLiteral("task folder"),
                                QStringLiteral("DIR")};
    QCommandLineOption outDir{QStringLiteral("out"), QStringLiteral("export folder"),
                              QStringLiteral("DIR")};
    QCommandLineOption version{QStringLiteral("version"), QStringLiteral("version to export"),
                               QStringLiteral("N")};
    QCommandLineOption device{QStringLiteral("device"), QStringLiteral("device"),
                              QStringLiteral("D")};
};

// Applies run/resume options to settings; returns an error message, or empty.
QString applyRunOptions(const QCommandLineParser& p, const RunOptions& o, EngineSettings* s) {
    if (p.isSet(o.backend))
        s->plannerBackend = s->coderBackend = s->reviewerBackend = p.value(o.backend);
    if (p.isSet(o.planner))
        s->plannerBackend = p.value(o.planner);
    if (p.isSet(o.coder))
        s->coderBackend = p.value(o.coder);
    if (p.isSet(o.reviewer))
        s->reviewerBackend = p.value(o.reviewer);
    if (p.isSet(o.agentOptions)) {
        QString error;
        const auto json = readJsonObjectFile(p.value(o.agentOptions), &error);
        if (!json)
            return QStringLiteral("--agent-options: ") + error;
        const bool perRole = json->contains(QLatin1String("planner")) ||
                             json->contains(QLatin1String("coder")) ||
                             json->contains(QLatin1String("reviewer"));
        s->plannerOptions = perRole ? json->value(QLatin1String("planner")).toObject() : *json;
        s->coderOptions = perRole ? json->value(QLatin1String("coder")).toObject() : *json;
        s->reviewerOptions = perRole ? json->value(QLatin1String("reviewer")).toObject() : *json;
    }
    // --provider, --base-url and --model fill in the options of every role played by "llm".
    const QList<std::pair<const QCommandLineOption*, QString>> llmOptions = {
        {&o.provider, QStringLiteral("preset")},
        {&o.baseUrl, QStringLiteral("base_url")},
        {&o.model, QStringLiteral("model")}};
    for (const auto& [option, key] : llmOptions) {
        if (!p.isSet(*option))
            continue;
        bool used = false;
        for (auto [backend, options] : {std::pair{s->plannerBackend, &s->plannerOptions},
                                        std::pair{s->coderBackend, &s->coderOptions},
                                        std::pair{s->reviewerBackend, &s->reviewerOptions}}) {
            if (backend != QLatin1String("llm"))
                continue;
            options->insert(key, p.value(*option));
            used = true;
        }
        if (!used)
            return QStringLiteral("--") + option->names().constFirst() +
                   QStringLiteral(": no role is played by the llm backend (add --backend llm)");
    }
    bool ok = true;
    if (p.isSet(o.iterations)) {
        s->maxIterations = p.value(o.iterations).toInt(&ok);
        if (!ok || s->maxIterations < 1)
            return QStringLiteral("--iterations: expected a positive integer, got \"") +
                   p.value(o.iterations) + u'"';
    }
    if (p.isSet(o.target)) {
        s->targetSpeedup = p.value(o.target).toDouble(&ok);
        if (!ok || s->targetSpeedup < 0)
            return QStringLiteral("--target: expected a non-negative number, got \"") +
                   p.value(o.target) + u'"';
    }
    if (p.isSet(o.targetFloor)) {
        s->targetFloorPercent = p.value(o.targetFloor).toDouble(&ok);
        if (!ok || !(s->targetFloorPercent >= 0 && s->targetFloorPercent <= 110))
            return QStringLiteral("--target-floor: expected a percentage of the DRAM floor from 0 "
                                  "(off) to 110, got \"") +
                   p.value(o.targetFloor) + u'"';
    }
    if (p.isSet(o.beam)) {
        s->beamWidth = p.value(o.beam).toInt(&ok);
        if (!ok || s->beamWidth < 1 || s->beamWidth > 16)
            return QStringLiteral("--beam: expected 1 to 16, got \"") + p.value(o.beam) + u'"';
    }
    if (p.isSet(o.timeBudget)) {
        s->timeBudgetS = p.value(o.timeBudget).toDouble(&ok);
        if (!ok || s->timeBudgetS < 0)
            return QStringLiteral("--time-budget: expected seconds, got \"") +
                   p.value(o.timeBudget) + u'"';
    }
    if (p.isSet(o.plateau)) {
        s->plateauIterations = p.value(o.plateau).toInt(&ok);
        if (!ok || s->plateauIterations < 0)
            return QStringLiteral("--plateau: expected a non-negative integer, got \"") +
                   p.value(o.plateau) + u'"';
    }
    if (p.isSet(o.step))
        s->stepMode = true;
    if (p.isSet(o.harness))
        s->harnessCommands = p.values(o.harness);
    for (const auto& backend : {s->plannerBackend, s->coderBackend, s->reviewerBackend}) {
        if (!AgentFactory::hasBackend(backend)) {
            QStringList known = AgentFactory::backends();
            return QStringLiteral("agent backend \"") + backend +
                   QStringLiteral("\" is not available in this build (available: ") +
                   (known.isEmpty() ? QStringLiteral("none") : known.join(QStringLiteral(", "))) +
                   u')';
        }
    }
    return {};
}

// The builtin backend has kernel families for the registry's ops only; a custom op would get as
// far as the first plan and fail there, after the workers started. Say so before anything runs.
QString builtinCannotServe(const Task& task, const EngineSettings& s) {
    if (task.op != QLatin1String("custom"))
        return {};
    QStringList roles;
    for (const auto& [role, backend] : {std::pair{QStringLiteral("planner"), s.plannerBackend},
                                        std::pair{QStringLiteral("coder"), s.coderBackend}}) {
        if (backend == QLatin1String("builtin"))
            roles << role;
    }
    if (roles.isEmpty())
        return {};
    return QStringLiteral("task ") + task.name +
           QStringLiteral(" is a custom op, and the builtin backend (") +
           roles.join(QStringLiteral(", ")) +
           QStringLiteral(") has no kernel family for custom ops. Let a model write the kernels "
                          "(--backend llm, with --provider/--base-url/--model), or evaluate your "
                          "own kernel with: kevolve-harness eval --task TASK.json --kernel "
                          "KERNEL.cu (docs/custom-ops.md)");
}

// Drives one Engine run from the terminal and turns its end into an exit code.
class Driver : public QObject {
public:
    Driver(bool json, bool step)
        : m_json(json)
        , m_step(step) {
        m_engine.setKeyStore(std::make_shared<EnvironmentKeyStore>());
        connect(&m_engine, &Engine::sessionOpened, this,
                [this](const QString& dir, const SessionInfo& info,
                       const QVector<IterationSummary>& steps) {
                    m_dir = dir;
                    for (const auto& earlier : steps) {
                        m_sessionTokens += earlier.tokens;
                        m_sessionCost += earlier.costUsd;
                    }
                    if (m_json)
                        printJson({{QStringLiteral("event"), QStringLiteral("session")},
                                   {QStringLiteral("dir"), dir},
                                   {QStringLiteral("task"), info.task.name},
                                   {QStringLiteral("steps"), static_cast<int>(steps.size())}});
                    else
                        out() << "session " << dir << " (" << info.task.summary() << ", "
                              << steps.size() << " steps so far)" << Qt::endl;
                });
        connect(&m_engine, &Engine::devicesAvailable, this,
                [this](const QVector<DeviceInfo>& devices, const QString& version) {
                    QJsonArray names;
                    for (const auto& d : devices)
                        names.append(d.name);
                    if (m_json)
                        printJson({{QStringLiteral("event"), QStringLiteral("devices")},
                                   {QStringLiteral("harness_version"), version},
                                   {QStringLiteral("devices"), names}});
                    else
                        out() << "harness " << version << ": "
                              << (devices.isEmpty()
                                      ? QStringLiteral("no CUDA device")
                                      : QString::number(devices.size()) +
                                            QStringLiteral(" device(s), ") + devices.first().name)
                              << Qt::endl;
                });
        connect(&m_engine, &Engine::stateChanged, this,
                [this](Engine::State state, const QString& detail) {
                    if (state == Engine::State::Finished || state == Engine::State::Failed)
                        return;
                    if (m_json)
                        printJson({{QStringLiteral("event"), QStringLiteral("state")},
                                   {QStringLiteral("state"), Engine::stateName(state)},
                                   {QStringLiteral("detail"), detail}});
                    else
                        out() << "  " << detail << ": " << Engine::stateName(state).toLower()
                              << Qt::endl;
                });
        connect(&m_engine, &Engine::reportAvailable, this,
                [this](int version, const EvaluationReport& r) {
                    if (m_json)
                        printJson(
                            {{QStringLiteral("event"), QStringLiteral("report")},
                             {QStringLiteral("version"), version},
                             {QStringLiteral("status"), EvaluationReport::statusToString(r.status)},
                             {QStringLiteral("suspicious"), r.suspicious},
                             {QStringLiteral("speedup"),
                              r.timed ? QJsonValue(r.speedup) : QJsonValue()},
                             {QStringLiteral("message"), r.message}});
                    else
                        out() << "  v" << version << ": "
                              << EvaluationReport::statusToString(r.status)
                              << (r.suspicious ? " (suspicious)" : "") << " - " << r.message
                              << Qt::endl;
                });
        connect(&m_engine, &Engine::stepAvailable, this, [this](const IterationSummary& s) {
            m_sessionTokens += s.tokens;
            m_sessionCost += s.costUsd;
            if (m_json)
                printJson({{QStringLiteral("event"), QStringLiteral("step")},
                           {QStringLiteral("step"), s.toJson()}});
            else if (s.tokens > 0)
                out() << "  v" << s.version << ": " << s.tokens << " tokens, $"
                      << QString::number(s.costUsd, 'f', 4) << " (session: " << m_sessionTokens
                      << " tokens, $" << QString::number(m_sessionCost, 'f', 4) << ")" << Qt::endl;
        });
        connect(&m_engine, &Engine::iterationFinished, this,
                [this](int iteration, int parent, int best) {
                    if (m_json)
                        printJson({{QStringLiteral("event"), QStringLiteral("iteration")},
                                   {QStringLiteral("iteration"), iteration},
                                   {QStringLiteral("parent"), parent},
                                   {QStringLiteral("best"), best}});
                    else
                        out() << "iteration " << iteration << " done; best v" << best << Qt::endl;
                });
        connect(&m_engine, &Engine::progressAvailable, this,
                [this](int version, const QString& stage, const QString& message, double) {
                    if (m_json || version != 0)
                        return;
                    err() << "  [" << stage << "] " << message << Qt::endl;
                });
        connect(&m_engine, &Engine::gateRequested, this, &Driver::onGate);
        connect(&m_engine, &Engine::finished, this, &Driver::onFinished);
        connect(&m_engine, &Engine::failed, this, &Driver::onFailed);
    }

    Engine& engine() { return m_engine; }

    void interrupt() {
        if (m_interrupted) {
            err() << "kevolve-cli: interrupted twice, leaving now" << Qt::endl;
            ::_exit(ExitInterrupted);
        }
        m_interrupted = true;
        err() << "kevolve-cli: interrupted; saving completed steps (Ctrl-C again to leave at once)"
              << Qt::endl;
        m_engine.cancel();
    }

private:
    void onGate(const GateRequest& request) {
        if (!m_step) {
            m_engine.approve(request.suggestedVersion);
            return;
        }
        m_gate = request;
        out() << "\n--- gate: " << (request.kind == GateRequest::Kind::Plan ? "plan" : "result")
              << " of iteration " << request.iteration << " ---" << Qt::endl;
        for (const auto& c : request.candidates) {
            out() << "v" << c.version << " (parent v" << c.parentVersion << ", " << c.origin
                  << "): " << c.strategy.summary();
            if (c.report)
                out() << " -> " << EvaluationReport::statusToString(c.report->status) << ", "
                      << (c.report->timed ? QString::number(c.report->speedup, 'f', 3) + u'x'
                                          : QStringLiteral("not timed"))
                      << (c.report->suspicious ? " SUSPICIOUS" : "");
            if (c.review)
                out() << "\n    review: " << c.review->bottleneckId << " (blame " << c.review->blame
                      << ") " << c.review->suggestions.join(QStringLiteral("; "));
            out() << Qt::endl;
        }
        prompt();
    }

    void prompt() {
        const int v = m_gate.suggestedVersion > 0 ? m_gate.suggestedVersion
                                                  : m_gate.candidates.first().version;
        out() << "[a]pprove v" << v
              << ", a N (approve vN), [e]dit code [N], [p]lan edit [N], [r]eject [N] REASON, "
                 "[s]top > "
              << Qt::flush;
        if (!m_stdin) {
            m_stdin = new QSocketNotifier(STDIN_FILENO, QSocketNotifier::Read, this);
            connect(m_stdin, &QSocketNotifier::activated, this, &Driver::onInput);
        }
        m_stdin->setEnabled(true);
        // Answers typed ahead (or piped in) wait in the buffer for their gate.
        if (m_input.contains('\n') || m_inputClosed)
            QTimer::singleShot(0, this, &Driver::answer);
    }

    void onInput() {
        char chunk[4096];
        const ssize_t n = ::read(STDIN_FILENO, chunk, sizeof chunk);
        if (n <= 0)
            m_inputClosed = true;
        else
            m_input.append(chunk, n);
        answer();
    }

    void answer() {
        if (!m_stdin || !m_stdin->isEnabled())
            return;
        const qsizetype end = m_input.indexOf('\n');
        if (end < 0 && !m_inputClosed)
            return;
        m_stdin->setEnabled(false);
        if (end < 0) {
            // End of input at a gate: stop, keeping the iteration as pending.
            m_engine.stop();
            return;
        }
        const QString line = QString::fromUtf8(m_input.left(end)).trimmed();
        m_input.remove(0, end + 1);
        const QString command = line.section(u' ', 0, 0);
        QString argument = line.section(u' ', 1).trimmed();
        int version = m_gate.suggestedVersion > 0 ? m_gate.suggestedVersion
                                                  : m_gate.candidates.first().version;
        bool numeric = false;
        const int given = argument.section(u' ', 0, 0).toInt(&numeric);
        if (numeric) {
            version = given;
            argument = argument.section(u' ', 1).trimmed();
        }
        if (command == QLatin1String("a")) {
            m_engine.approve(version);
        } else if (command == QLatin1String("r")) {
            m_engine.reject(version, argument.isEmpty()
                                         ? QStringLiteral("rejected without a reason")
                                         : argument);
        } else if (command == QLatin1String("s")) {
            m_engine.stop();
        } else if (command == QLatin1String("e") || command == QLatin1String("p")) {
            edit(command == QLatin1String("p"), version);
        } else {
            out() << "unknown answer \"" << line << "\"" << Qt::endl;
            prompt();
        }
    }

    void edit(bool plan, int version) {
        const Candidate* candidate = nullptr;
        for (const auto& c : m_gate.candidates) {
            if (c.version == version)
                candidate = &c;
        }
        if (!candidate) {
            out() << "v" << version << " is not at this gate" << Qt::endl;
            prompt();
            return;
        }
        QTemporaryDir dir;
        const QString path = dir.filePath(
            plan ? QStringLiteral("plan.yaml")
                 : QStringLiteral("kernel_v") + QString::number(version) + QStringLiteral(".cu"));
        QFile file(path);
        if (!file.open(QIODevice::WriteOnly)) {
            out() << "cannot write " << path << Qt::endl;
            prompt();
            return;
        }
        file.write((plan ? candidate->strategy.toText() : candidate->source).toUtf8());
        file.close();
        QString editor = qEnvironmentVariable("VISUAL", qEnvironmentVariable("EDITOR"));
        if (editor.isEmpty())
            editor = QStringLiteral("vi");
        QStringList args = QProcess::splitCommand(editor);
        const QString program = args.takeFirst();
        // The person is editing: the engine waits at its gate, so blocking here holds nothing up.
        if (QProcess::execute(program, args << path) != 0) {
            out() << "the editor failed; nothing changed" << Qt::endl;
            prompt();
            return;
        }
        if (!file.open(QIODevice::ReadOnly)) {
            prompt();
            return;
        }
        const QString text = QString::fromUtf8(file.readAll());
        if (plan) {
            QString error;
            const auto strategy = Strategy::fromText(text, &error);
            if (!strategy) {
                out() << "the plan is invalid:\n" << error << Qt::endl;
                prompt();
                return;
            }
            m_engine.submitPlan(version, *strategy);
        } else {
            m_engine.submitCode(version, text);
        }
    }

    void onFinished(Engine::StopReason reason, const QString& message) {
        int code = ExitOk;
        if (reason == Engine::StopReason::NoDevice)
            code = ExitNoDevice;
        else if (reason == Engine::StopReason::Cancelled && m_interrupted)
            code = ExitInterrupted;
        QString error;
        const auto store = SessionStore::open(m_dir, &error);
        const int best = store ? store->bestVersion().value_or(0) : 0;
        if (m_json) {
            printJson({{QStringLiteral("event"), QStringLiteral("finished")},
                       {QStringLiteral("reason"), Engine::stopReasonName(reason)},
                       {QStringLiteral("message"), message},
                       {QStringLiteral("session"), m_dir},
                       {QStringLiteral("best"), best > 0 ? QJsonValue(best) : QJsonValue()},
                       {QStringLiteral("exit_code"), code}});
        } else {
            if (reason == Engine::StopReason::NoDevice)
                err() << "kevolve-cli: " << message << Qt::endl;
            out() << "finished: " << message << Qt::endl;
            if (best > 0) {
                const auto step = store->step(best);
                out() << "best: v" << best << ", " << fmt(step ? step->speedup : std::nullopt)
                      << "x the reference" << Qt::endl;
            }
            out() << "session: " << m_dir << "\nexport with: kevolve-cli export " << m_dir
                  << " --out DIR" << Qt::endl;
        }
        QCoreApplication::exit(code);
    }

    void onFailed(Engine::Failure failure, const QString& message) {
        int code = ExitFailure;
        QString hint;
        switch (failure) {
        case Engine::Failure::HarnessMissing:
            code = ExitHarnessMissing;
            hint = QStringLiteral(
                "\n(install kevolve-harness, or give --harness CMD or $KEVOLVE_HARNESS)");
            break;
        case Engine::Failure::BadTask:
            code = ExitUsage;
            break;
        case Engine::Failure::Agent:
            code = ExitAgent;
            break;
        case Engine::Failure::Session:
        case Engine::Failure::Harness:
            break;
        }
        if (m_json)
            printJson({{QStringLiteral("event"), QStringLiteral("failed")},
                       {QStringLiteral("failure"), Engine::failureName(failure)},
                       {QStringLiteral("message"), message},
                       {QStringLiteral("session"), m_dir},
                       {QStringLiteral("exit_code"), code}});
        err() << "kevolve-cli: " << message << hint << Qt::endl;
        QCoreApplication::exit(code);
    }

    Engine m_engine;
    bool m_json = false;
    bool m_step = false;
    bool m_interrupted = false;
    QString m_dir;
    // What the agents' model calls cost so far, this run and the steps before it.
    qint64 m_sessionTokens = 0;
    double m_sessionCost = 0;
    GateRequest m_gate;
    QSocketNotifier* m_stdin = nullptr;
    QByteArray m_input;
    bool m_inputClosed = false;
};

int runEngine(QCoreApplication& app, Driver& driver) {
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, sigintPipe) == 0) {
        auto* notifier = new QSocketNotifier(sigintPipe[0], QSocketNotifier::Read, &app);
        QObject::connect(notifier, &QSocketNotifier::activated, &app, [&driver] {
            char byte;
            [[maybe_unused]] const auto ignored = ::read(sigintPipe[0], &byte, 1);
            driver.interrupt();
        });
        struct sigaction action = {};
        action.sa_handler = onSigint;
        sigemptyset(&action.sa_mask);
        action.sa_flags = SA_RESTART;
        ::sigaction(SIGINT, &action, nullptr);
        ::sigaction(SIGTERM, &action, nullptr);
    }
    return app.exec();
}

int commandTasks(const QCommandLineParser& p, const RunOptions& o) {
    QStringList problems;
    const auto tasks = TaskLibrary(p.values(o.tasksDir)).tasks(&problems);
    if (p.isSet(o.json)) {
        QJsonArray list;
        for (const auto& t : tasks)
            list.append(QJsonObject{{QStringLiteral("name"), t.name},
                                    {QStringLiteral("summary"), t.summary()},
                                    {QStringLiteral("description"), t.description},
                                    {QStringLiteral("source"), t.sourcePath}});
        printJson({{QStringLiteral("tasks"), list},
                   {QStringLiteral("problems"), QJsonArray::fromStringList(problems)}});
    } else {
        for (const auto& t : tasks)
            out() << t.name.leftJustified(28) << ' ' << t.summary() << "\n    " << t.description
                  << '\n';
        out().flush();
        for (const auto& problem : problems)
            err() << "kevolve-cli: skipped " << problem << '\n';
    }
    return ExitOk;
}

// The devices --device names. Only descriptions that need no GPU to build: the answer is about
// what the backend would search, before anything runs.
QList<std::pair<QString, DeviceInfo>> namedDevices() {
    return {{QStringLiteral("h200"), DeviceInfo::h200()}};
}

// A device name, or a .json file holding one device as the harness describes it.
std::optional<DeviceInfo> resolveDevice(const QString& nameOrFile, QString* error) {
    if (nameOrFile.endsWith(QLatin1String(".json"))) {
        const auto json = readJsonObjectFile(nameOrFile, error);
        if (!json) {
            *error = QStringLiteral("--device: ") + *error;
            return std::nullopt;
        }
        DeviceInfo device = DeviceInfo::fromJson(*json);
        if (!device.isValid()) {
            *error = QStringLiteral("--device ") + nameOrFile +
                     QStringLiteral(": a device needs \"name\" and \"cc\" (or \"cc_major\")");
            return std::nullopt;
        }
        return device;
    }
    QStringList known;
    for (const auto& [name, device] : namedDevices()) {
        if (name.compare(nameOrFile, Qt::CaseInsensitive) == 0)
            return device;
        known << name;
    }
    *error = QStringLiteral("--device: unknown device \"") + nameOrFile +
             QStringLiteral("\" (known: ") + known.join(QStringLiteral(", ")) +
             QStringLiteral(", or a device .json file)");
    return std::nullopt;
}

QString valueText(const QJsonValue& value) {
    return value.isUndefined() ? QStringLiteral("-") : value.toVariant().toString();
}

QString valuesText(const QJsonArray& values) {
    QStringList texts;
    for (const auto& value : values)
        texts << valueText(value);
    return texts.join(QStringLiteral(", "));
}

int commandFamilies(const QCommandLineParser& p, const RunOptions& o) {
    if (p.positionalArguments().size() != 1)
        return usageError(QStringLiteral("families takes no positional arguments"));
    const bool json = p.isSet(o.json);
    QString error;
    const auto device = resolveDevice(
        p.isSet(o.device) ? p.value(o.device) : namedDevices().constFirst().first, &error);
    if (!device)
        return usageError(error);
    const auto& registry = FamilyRegistry::instance();
    if (!p.isSet(o.task)) {
        QJsonArray list;
        for (const KernelFamily* family : registry.families()) {
            if (json)
                list.append(QJsonObject{{QStringLiteral("id"), family->id()},
                                        {QStringLiteral("description"), family->description()}});
            else
                out() << family->id() << "\n    " << family->description() << '\n';
        }
        if (json)
            printJson({{QStringLiteral("families"), list}});
        out().flush();
        return ExitOk;
    }

    const auto task = TaskLibrary(p.values(o.tasksDir)).resolve(p.value(o.task), &error);
    if (!task)
        return usageError(error);
    const auto families = registry.supporting(*task, *device);
    QJsonArray list;
    if (!json)
        out() << task->name << " (" << task->summary() << ") on " << device->name << " ("
              << device->arch() << "): " << families.size()
              << (families.size() == 1 ? " family\n" : " families\n");
    for (const KernelFamily* family : families) {
        const auto specs = family->parameters();
        const Strategy start = family->defaultStrategy(*task, *device);
        const QStringList problems = family->constraints(start, *task, *device);
        const double prior = knowledge::familyPrior(family->id(), *task);
        if (json) {
            QJsonArray parameters;
            QJsonObject values;
            for (const ParameterSpec& spec : specs) {
                parameters.append(QJsonObject{{QStringLiteral("name"), spec.name},
                                              {QStringLiteral("values"), spec.values},
                                              {QStringLiteral("description"), spec.description}});
                values.insert(spec.name, parameterValue(spec, start));
            }
            list.append(QJsonObject{
                {QStringLiteral("id"), family->id()},
                {QStringLiteral("description"), family->description()},
                {QStringLiteral("prior"), prior},
                {QStringLiteral("parameters"), parameters},
                {QStringLiteral("default"),
                 QJsonObject{{QStringLiteral("key"), configurationKey(*family, start)},
                             {QStringLiteral("values"), values},
                             {QStringLiteral("rationale"), start.rationale},
                             {QStringLiteral("strategy"), start.toJson()},
                             {QStringLiteral("feasible"), problems.isEmpty()},
                             {QStringLiteral("problems"), QJsonArray::fromStringList(problems)}}}});
            continue;
        }
        out() << '\n'
              << family->id() << "   prior " << QString::number(prior, 'f', 2) << "\n    "
              << family->description()
              << "\n  default: "
              // parameters the default leaves unset (depth without pipeline=async) are left out
              << configurationKey(*family, start)
                     .split(u' ')
                     .filter(QRegularExpression(QStringLiteral("[^=]$")))
                     .join(u' ')
              << (problems.isEmpty() ? QStringLiteral(" (passes constraints)")
                                     : QStringLiteral(" (FAILS constraints)"))
              << '\n';
        for (const auto& problem : problems)
            out() << "    - " << problem << '\n';
        if (!start.rationale.isEmpty())
            out() << "    why: " << start.rationale << '\n';
        out() << "  parameters:\n";
        for (const ParameterSpec& spec : specs)
            out() << "    " << spec.name.leftJustified(20) << ' ' << valuesText(spec.values)
                  << "\n        " << spec.description << '\n';
    }
    if (json)
        printJson({{QStringLiteral("task"), task->name},
                   {QStringLiteral("device"), device->toJson()},
                   {QStringLiteral("families"), list}});
    else if (families.isEmpty())
        out() << "no builtin family supports " << task->name << " on " << device->name
              << "; an llm backend can still write its kernels\n";
    out().flush();
    return ExitOk;
}

int commandShow(const QCommandLineParser& p, const RunOptions& o) {
    if (p.positionalArguments().size() != 2)
        return usageError(QStringLiteral("show needs one SESSION folder"));
    QString error;
    const auto store = SessionStore::open(p.positionalArguments().at(1), &error);
    if (!store) {
        err() << "kevolve-cli: " << error << Qt::endl;
        return ExitFailure;
    }
    const std::optional<int> best = store->bestVersion();
    if (p.isSet(o.json)) {
        QJsonArray steps;
        for (const auto& s : store->steps())
            steps.append(s.toJson());
        printJson({{QStringLiteral("session"), store->info().toJson()},
                   {QStringLiteral("best"), best ? QJsonValue(*best) : QJsonValue()},
                   {QStringLiteral("steps"), steps},
                   {QStringLiteral("damage"), QJsonArray::fromStringList(store->damageReport())}});
        return ExitOk;
    }
    // Damage first, where it is seen: a damaged index shows fewer steps than the session had.
    for (const QString& line : store->damageReport())
        err() << "kevolve-cli: warning: " << line << Qt::endl;
    out() << store->task().name << " (" << store->task().summary() << "), " << store->steps().size()
          << " steps, session " << store->info().id << '\n';
    // % floor: the candidate's share of the roofline floor (the headline of memory-bound ops).
    out() << QStringLiteral("%1 %2 %3 %4 %5 %6 %7 %8 %9\n")
                 .arg(QStringLiteral("  v"), 5)
                 .arg(QStringLiteral("iter"), 4)
                 .arg(QStringLiteral("parent"), 6)
                 .arg(QStringLiteral("plan"), -44)
                 .arg(QStringLiteral("status"), -14)
                 .arg(QStringLiteral("speedup"), 8)
                 .arg(QStringLiteral("95% CI"), -17)
                 .arg(QStringLiteral("% floor"), 7)
                 .arg(QStringLiteral("decision"));
    for (const auto& s : store->steps()) {
        const QString ci = s.ciLow
                               ? u'[' + fmt(s.ciLow) + QStringLiteral(", ") + fmt(s.ciHigh) + u']'
                               : QStringLiteral("-");
        const QString floor =
            s.percentOfFloor ? QString::number(*s.percentOfFloor, 'f', 1) : QStringLiteral("-");
        out() << QStringLiteral("%1 %2 %3 %4 %5 %6 %7 %8 %9\n")
                     .arg((best == s.version ? QStringLiteral("* v") : QStringLiteral("  v")) +
                              QString::number(s.version),
                          5)
                     .arg(s.iteration, 4)
                     .arg(s.parentVersion, 6)
                     .arg(s.plan.left(44), -44)
                     .arg(s.status + (s.suspicious ? QStringLiteral("!") : QString()), -14)
                     .arg(fmt(s.speedup), 8)
                     .arg(ci, -17)
                     .arg(floor, 7)
                     .arg(s.decision);
    }
    out() << (best ? QStringLiteral("* best: v") + QString::number(*best)
                   : QStringLiteral("no correct kernel yet"))
          << "   (! = suspicious)\n";
    out().flush();
    return ExitOk;
}

int commandExport(const QCommandLineParser& p, const RunOptions& o) {
    if (p.positionalArguments().size() != 2)
        return usageError(QStringLiteral("export needs one SESSION folder"));
    if (!p.isSet(o.outDir))
        return usageError(QStringLiteral("export needs --out DIR"));
    std::optional<int> version;
    if (p.isSet(o.version)) {
        bool ok = false;
        version = p.value(o.version).toInt(&ok);
        if (!ok || *version < 1)
            return usageError(QStringLiteral("--version: expected a version number, got \"") +
                              p.value(o.version) + u'"');
    }
    QString error;
    const auto store = SessionStore::open(p.positionalArguments().at(1), &error);
    if (!store) {
        err() << "kevolve-cli: " << error << Qt::endl;
        return ExitFailure;
    }
    if (version && !store->step(*version))
        return usageError(QStringLiteral("--version: the session has no v") +
                          QString::number(*version));
    QStringList written;
    if (!Exporter::exportSession(*store, p.value(o.outDir), version, &written, &error)) {
        err() << "kevolve-cli: " << error << Qt::endl;
        return ExitFailure;
    }
    if (p.isSet(o.json))
        printJson({{QStringLiteral("out"), QDir(p.value(o.outDir)).absolutePath()},
                   {QStringLiteral("files"), QJsonArray::fromStringList(written)}});
    else
        out() << "exported to " << p.value(o.outDir) << ": " << written.join(QStringLiteral(", "))
              << Qt::endl;
    return ExitOk;
}

} // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("kevolve-cli"));
    registerMetaTypes();

    QStringList args = QCoreApplication::arguments();
    if (args.size() < 2 || args.contains(QStringLiteral("--help")) ||
        args.contains(QStringLiteral("-h"))) {
        (args.size() < 2 ? err() : out()) << kUsage;
        return args.size() < 2 ? ExitUsage : ExitOk;
    }
    const QString command = args.at(1);
    RunOptions o;
    QCommandLineParser p;
    p.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    p.addOptions({o.json, o.tasksDir});
    if (command == QLatin1String("run") || command == QLatin1String("resume"))
        p.addOptions({o.backend, o.planner, o.coder, o.reviewer, o.agentOptions, o.provider,
                      o.baseUrl, o.model, o.iterations, o.target, o.targetFloor, o.beam, o.session,
                      o.step, o.harness, o.timeBudget, o.plateau, o.task});
    else if (command == QLatin1String("export"))
        p.addOptions({o.outDir, o.version});
    else if (command == QLatin1String("families"))
        p.addOptions({o.task, o.device});
    else if (command != QLatin1String("tasks") && command != QLatin1String("show"))
        return usageError(QStringLiteral("unknown command \"") + command + u'"');
    if (!p.parse(args))
        return usageError(p.errorText());

    if (command == QLatin1String("tasks"))
        return commandTasks(p, o);
    if (command == QLatin1String("show"))
        return commandShow(p, o);
    if (command == QLatin1String("families"))
        return commandFamilies(p, o);
    if (command == QLatin1String("export"))
        return commandExport(p, o);

    if (command == QLatin1String("run")) {
        if (p.positionalArguments().size() != 1)
            return usageError(QStringLiteral("run takes no positional arguments"));
        if (!p.isSet(o.task))
            return usageError(
                QStringLiteral("run needs --task T (a library name or a task .json file)"));
        QString error;
        const auto task = TaskLibrary(p.values(o.tasksDir)).resolve(p.value(o.task), &error);
        if (!task)
            return usageError(error);
        EngineSettings settings;
        const QString problem = applyRunOptions(p, o, &settings);
        if (!problem.isEmpty())
            return problem.startsWith(QLatin1String("agent backend"))
                       ? (err() << "kevolve-cli: " << problem << Qt::endl, ExitAgent)
                       : usageError(problem);
        if (const QString why = builtinCannotServe(*task, settings); !why.isEmpty()) {
            err() << "kevolve-cli: " << why << Qt::endl;
            return ExitAgent;
        }
        const QString dir = p.isSet(o.session)
                                ? p.value(o.session)
                                : QDir(QStringLiteral("kevolve-sessions"))
                                      .filePath(task->name + u'-' +
                                                QDateTime::currentDateTime().toString(
                                                    QStringLiteral("yyyyMMdd-HHmmss")));
        // Task names are identifiers (the task rules refuse paths); the folder is checked anyway so
        // that no name can ever place a session outside kevolve-sessions/.
        if (!p.isSet(o.session) &&
            !QDir::cleanPath(dir).startsWith(QStringLiteral("kevolve-sessions/")))
            return usageError(
                QStringLiteral("task name \"") + task->name +
                QStringLiteral("\" would place the session outside kevolve-sessions/"));
        if (SessionStore::isSession(dir))
            return usageError(
                dir + QStringLiteral(" already holds a session; use kevolve-cli resume ") + dir);
        Driver driver(p.isSet(o.json), settings.stepMode);
        driver.engine().start(*task, settings, dir);
        return runEngine(app, driver);
    }

    // resume
    if (p.positionalArguments().size() != 2)
        return usageError(QStringLiteral("resume needs one SESSION folder"));
    const QString dir = p.positionalArguments().at(1);
    QString error;
    const auto store = SessionStore::open(dir, &error);
    if (!store) {
        err() << "kevolve-cli: " << error << Qt::endl;
        return ExitFailure;
    }
    EngineSettings settings = store->settings();
    const QString problem = applyRunOptions(p, o, &settings);
    if (!problem.isEmpty())
        return problem.startsWith(QLatin1String("agent backend"))
                   ? (err() << "kevolve-cli: " << problem << Qt::endl, ExitAgent)
                   : usageError(problem);
    if (const QString why = builtinCannotServe(store->task(), settings); !why.isEmpty()) {
        err() << "kevolve-cli: " << why << Qt::endl;
        return ExitAgent;
    }
    Driver driver(p.isSet(o.json), settings.stepMode);
    driver.engine().resume(dir, settings);
    return runEngine(app, driver);
}
