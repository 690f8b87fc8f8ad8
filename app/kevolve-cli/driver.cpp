#include "driver.h"

#include "cliio.h"
#include "keystore.h"
#include "llmcalls.h"
#include "sessionstore.h"

#include <QCoreApplication>
#include <QFile>
#include <QProcess>
#include <QSocketNotifier>
#include <QTemporaryDir>
#include <QTimer>

#include <csignal>
#include <sys/socket.h>
#include <unistd.h>

namespace kev::cli {

namespace {

// The signal handler only writes a byte; the event loop reads it and interrupts in its own time.
int sigintPipe[2] = {-1, -1};

void onSigint(int) {
    const char byte = 1;
    [[maybe_unused]] const auto ignored = ::write(sigintPipe[1], &byte, 1);
}

} // namespace

Driver::Driver(Printer& printer, bool step)
    : m_printer(printer)
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
                m_printer.sessionOpened(dir, info, static_cast<int>(steps.size()));
            });
    connect(&m_engine, &Engine::devicesAvailable, this,
            [this](const QVector<DeviceInfo>& devices, const QString& version) {
                m_printer.devices(devices, version);
            });
    connect(&m_engine, &Engine::stateChanged, this,
            [this](Engine::State state, const QString& detail) {
                // The end is told by finished or failed.
                if (state == Engine::State::Finished || state == Engine::State::Failed)
                    return;
                m_printer.state(state, detail);
            });
    connect(&m_engine, &Engine::reportAvailable, this,
            [this](int version, const EvaluationReport& r) { m_printer.report(version, r); });
    connect(&m_engine, &Engine::stepAvailable, this, [this](const IterationSummary& s) {
        m_sessionTokens += s.tokens;
        m_sessionCost += s.costUsd;
        m_printer.step(s, m_sessionTokens, m_sessionCost);
    });
    connect(&m_engine, &Engine::iterationFinished, this,
            [this](int iteration, int parent, int best) {
                m_printer.iteration(iteration, parent, best);
            });
    connect(&m_engine, &Engine::progressAvailable, this,
            [this](int version, const QString& stage, const QString& message, double) {
                m_printer.progress(version, stage, message);
            });
    connect(&m_engine, &Engine::gateRequested, this, &Driver::onGate);
    connect(&m_engine, &Engine::finished, this, &Driver::onFinished);
    connect(&m_engine, &Engine::failed, this, &Driver::onFailed);
}

void Driver::showProgress() {
    connect(&m_engine, &Engine::agentProgressAvailable, this,
            [this](const AgentProgress& progress) { m_printer.agentProgress(progress); });
}

void Driver::interrupt() {
    if (m_interrupted) {
        err() << "kevolve-cli: interrupted twice, leaving now" << Qt::endl;
        ::_exit(ExitInterrupted);
    }
    m_interrupted = true;
    err() << "kevolve-cli: interrupted; saving completed steps (Ctrl-C again to leave at once)"
          << Qt::endl;
    m_engine.cancel();
}

int Driver::exec() {
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, sigintPipe) == 0) {
        auto* notifier = new QSocketNotifier(sigintPipe[0], QSocketNotifier::Read, this);
        connect(notifier, &QSocketNotifier::activated, this, [this] {
            char byte;
            [[maybe_unused]] const auto ignored = ::read(sigintPipe[0], &byte, 1);
            interrupt();
        });
        struct sigaction action = {};
        action.sa_handler = onSigint;
        sigemptyset(&action.sa_mask);
        action.sa_flags = SA_RESTART;
        ::sigaction(SIGINT, &action, nullptr);
        ::sigaction(SIGTERM, &action, nullptr);
    }
    return QCoreApplication::exec();
}

// The gates are a conversation with the person at the terminal: they are text in both faces.
void Driver::onGate(const GateRequest& request) {
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

void Driver::prompt() {
    const int v =
        m_gate.suggestedVersion > 0 ? m_gate.suggestedVersion : m_gate.candidates.first().version;
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

void Driver::onInput() {
    char chunk[4096];
    const ssize_t n = ::read(STDIN_FILENO, chunk, sizeof chunk);
    if (n <= 0)
        m_inputClosed = true;
    else
        m_input.append(chunk, n);
    answer();
}

void Driver::answer() {
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
    int version =
        m_gate.suggestedVersion > 0 ? m_gate.suggestedVersion : m_gate.candidates.first().version;
    bool numeric = false;
    const int given = argument.section(u' ', 0, 0).toInt(&numeric);
    if (numeric) {
        version = given;
        argument = argument.section(u' ', 1).trimmed();
    }
    if (command == QLatin1String("a")) {
        m_engine.approve(version);
    } else if (command == QLatin1String("r")) {
        m_engine.reject(version, argument.isEmpty() ? QStringLiteral("rejected without a reason")
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

void Driver::edit(bool plan, int version) {
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
    const QString path = dir.filePath(plan ? QStringLiteral("plan.yaml")
                                           : QStringLiteral("kernel_v") + QString::number(version) +
                                                 QStringLiteral(".cu"));
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

void Driver::onFinished(Engine::StopReason reason, const QString& message) {
    int code = ExitOk;
    if (reason == Engine::StopReason::NoDevice)
        code = ExitNoDevice;
    else if (reason == Engine::StopReason::Cancelled && m_interrupted)
        code = ExitInterrupted;
    QString error;
    const auto store = SessionStore::open(m_dir, &error);
    const int best = store ? store->bestVersion().value_or(0) : 0;
    const std::optional<IterationSummary> bestStep =
        best > 0 ? store->step(best) : std::optional<IterationSummary>();
    m_printer.finished(reason, message, m_dir, best, bestStep, spendLine(m_dir), code);
    QCoreApplication::exit(code);
}

void Driver::onFailed(Engine::Failure failure, const QString& message) {
    int code = ExitFailure;
    QString hint;
    switch (failure) {
    case Engine::Failure::HarnessMissing:
        code = ExitHarnessMissing;
        // A launcher that ran but never reached a harness (ssh, srun) needs another remedy.
        hint = message.contains(QLatin1String("never answered"))
                   ? QStringLiteral("\n(the launcher ran, but no harness answered through it: "
                                    "check the host or the job, and that kevolve-harness is "
                                    "on the remote PATH; docs/cluster.md)")
                   : QStringLiteral("\n(install kevolve-harness, or give --harness CMD or "
                                    "$KEVOLVE_HARNESS)");
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
    err() << "kevolve-cli: " << message << hint << Qt::endl;
    m_printer.failed(failure, message, m_dir, spendLine(m_dir), code);
    QCoreApplication::exit(code);
}

} // namespace kev::cli
