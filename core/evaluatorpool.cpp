#include "evaluatorpool.h"

#include "jsonschema.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QStandardPaths>
#include <QTimer>

#include <csignal>
#include <sys/types.h>
#include <unistd.h>

namespace kev {

namespace {

// PROTOCOL.md refuses longer lines; anything longer without a newline is not protocol.
constexpr qsizetype kMaxLineBytes = 64 * 1024 * 1024 + 1024;
constexpr int kShutdownGraceMs = 3000;
// How long a worker's process group has between SIGTERM and SIGKILL: srun forwards the signal to
// its job step and cancels the job in that time (Slurm's KillWait is usually longer, but srun
// itself leaves as soon as the step's tasks are gone).
constexpr int kTerminateGraceMs = 3000;

QString quote(const QString& command) {
    return u'"' + command + u'"';
}

} // namespace

struct EvaluatorPool::Worker {
    int index = 0;
    QString command;
    QProcess* process = nullptr;
    QTimer* helloTimer = nullptr;
    QByteArray buffer;
    QByteArray stderrBuffer;
    QVector<QByteArray> outbox;
    QVector<DeviceInfo> devices;
    // The GPU this worker measures on: the hello's device_uuid (empty without a GPU).
    QString servedUuid;
    // The last non-empty stderr line: what a launcher says when it cannot reach the harness.
    QString lastStderr;
    QString givenUpWhy;
    bool running = false;
    bool greeted = false;
    bool givenUp = false;
    // The launcher said it waits for resources (a pending Slurm job) and has not started since.
    bool waitingAllocation = false;
    int restarts = 0;
};

struct EvaluatorPool::Request {
    QString id;
    QJsonObject message;
    Worker* worker = nullptr;
    int attempts = 0;
    std::unique_ptr<QTimer> timer;
};

EvaluatorPool::EvaluatorPool(QObject* parent)
    : QObject(parent) {}

EvaluatorPool::~EvaluatorPool() {
    killAll();
}

QString EvaluatorPool::defaultCommand() {
    const QString fromEnvironment = qEnvironmentVariable("KEVOLVE_HARNESS");
    if (!fromEnvironment.isEmpty())
        return fromEnvironment.contains(u' ') ? fromEnvironment
                                              : fromEnvironment + QStringLiteral(" serve");
    // Installed side by side, or both still in a build tree (app/ and harness/).
    const QDir here(QCoreApplication::applicationDirPath());
    for (const QString& candidate : {here.filePath(QStringLiteral("kevolve-harness")),
                                     here.filePath(QStringLiteral("../harness/kevolve-harness"))}) {
        if (QFileInfo(candidate).isExecutable())
            return quote(QFileInfo(candidate).canonicalFilePath()) + QStringLiteral(" serve");
    }
    const QString onPath = QStandardPaths::findExecutable(QStringLiteral("kevolve-harness"));
    if (!onPath.isEmpty())
        return quote(onPath) + QStringLiteral(" serve");
    return QStringLiteral("kevolve-harness serve");
}

std::optional<QStringList> EvaluatorPool::parseLaunchers(const QString& text, QString* error) {
    QStringList commands;
    QString current;
    bool quoted = false;
    const auto take = [&]() -> bool {
        const QString command = current.trimmed();
        current.clear();
        if (command.isEmpty())
            return true;
        const QStringList words = QProcess::splitCommand(command);
        if (words.isEmpty() || words.first().trimmed().isEmpty()) {
            if (error)
                *error = QStringLiteral("launcher ") + QString::number(commands.size() + 1) +
                         QStringLiteral(" (") + command + QStringLiteral(") has no program");
            return false;
        }
        commands << command;
        return true;
    };
    for (const QChar c : text) {
        if (c == u'"')
            quoted = !quoted;
        if (!quoted && (c == u';' || c == u'\n')) {
            if (!take())
                return std::nullopt;
            continue;
        }
        current += c;
    }
    if (quoted) {
        if (error)
            *error = QStringLiteral("launcher ") + QString::number(commands.size() + 1) +
                     QStringLiteral(" (") + current.trimmed() +
                     QStringLiteral(") has an unbalanced double quote");
        return std::nullopt;
    }
    if (!take())
        return std::nullopt;
    if (commands.isEmpty()) {
        if (error)
            *error = QStringLiteral("no launcher command (e.g. \"kevolve-harness serve\")");
        return std::nullopt;
    }
    return commands;
}

QString EvaluatorPool::formatLaunchers(const QStringList& commands) {
    return commands.join(QStringLiteral("; "));
}

void EvaluatorPool::setCommands(const QStringList& commands) {
    m_commands = commands;
}

QStringList EvaluatorPool::commands() const {
    if (!m_commands.isEmpty())
        return m_commands;
    // $KEVOLVE_HARNESS may name several workers, as the workbench's setting does.
    const QString fromEnvironment = qEnvironmentVariable("KEVOLVE_HARNESS");
    if (fromEnvironment.contains(u';') || fromEnvironment.contains(u'\n')) {
        if (const auto list = parseLaunchers(fromEnvironment, nullptr))
            return *list;
    }
    return {defaultCommand()};
}

QVector<DeviceInfo> EvaluatorPool::devices() const {
    // Workers on one host list the same GPUs: each GPU once.
    QVector<DeviceInfo> all;
    QSet<QString> seen;
    for (const auto& worker : m_workers) {
        if (worker->givenUp)
            continue;
        for (const auto& device : worker->devices) {
            if (!device.uuid.isEmpty() && seen.contains(device.uuid))
                continue;
            seen.insert(device.uuid);
            all.append(device);
        }
    }
    return all;
}

void EvaluatorPool::start() {
    if (m_started)
        return;
    m_started = true;
    const QStringList list = commands();
    for (qsizetype i = 0; i < list.size(); ++i) {
        auto worker = std::make_unique<Worker>();
        worker->index = static_cast<int>(i);
        worker->command = list.at(i);
        m_workers.push_back(std::move(worker));
    }
    for (auto& worker : m_workers)
        spawn(worker.get());
}

void EvaluatorPool::spawn(Worker* worker) {
    QStringList args = QProcess::splitCommand(worker->command);
    if (args.isEmpty()) {
        onStartFailed(worker, QStringLiteral("the harness command is empty"));
        return;
    }
    const QString program = args.takeFirst();
    auto* process = new QProcess(this);
    worker->process = process;
    worker->buffer.clear();
    worker->stderrBuffer.clear();
    worker->running = false;
    worker->greeted = false;
    worker->waitingAllocation = false;
    worker->servedUuid.clear();
    worker->lastStderr.clear();
    process->setProgram(program);
    process->setArguments(args);
    // Its own process group, so that killing the worker also kills the harness's children.
    process->setChildProcessModifier([] { ::setpgid(0, 0); });
    connect(process, &QProcess::started, this, [this, worker, process] {
        if (worker->process == process)
            onStarted(worker);
    });
    connect(process, &QProcess::readyReadStandardOutput, this, [this, worker, process] {
        if (worker->process == process)
            onOutput(worker);
    });
    connect(process, &QProcess::readyReadStandardError, this, [this, worker, process] {
        if (worker->process != process)
            return;
        worker->stderrBuffer += process->readAllStandardError();
        qsizetype end;
        while ((end = worker->stderrBuffer.indexOf('\n')) >= 0) {
            const QString line = QString::fromUtf8(worker->stderrBuffer.left(end)).trimmed();
            worker->stderrBuffer.remove(0, end + 1);
            if (!line.isEmpty())
                onStderrLine(worker, line);
            if (worker->process != process)
                return;
        }
        if (worker->stderrBuffer.size() > 65536)
            worker->stderrBuffer.clear();
    });
    connect(process, &QProcess::errorOccurred, this,
            [this, worker, process](QProcess::ProcessError error) {
                if (worker->process == process && error == QProcess::FailedToStart)
                    onStartFailed(worker, process->errorString());
            });
    connect(process, &QProcess::finished, this,
            [this, worker, process](int code, QProcess::ExitStatus status) {
                if (worker->process != process)
                    return;
                onExit(worker, status == QProcess::CrashExit
                                   ? QStringLiteral("crashed")
                                   : QStringLiteral("exited with code ") + QString::number(code));
            });

    worker->outbox.prepend(
        QJsonDocument(QJsonObject{{QStringLiteral("v"), 1},
                                  {QStringLiteral("id"), QString(QStringLiteral("hello-") +
                                                                 QString::number(worker->index))},
                                  {QStringLiteral("op"), QStringLiteral("hello")}})
            .toJson(QJsonDocument::Compact) +
        '\n');
    if (!worker->helloTimer) {
        worker->helloTimer = new QTimer(this);
        worker->helloTimer->setSingleShot(true);
        connect(worker->helloTimer, &QTimer::timeout, this, [this, worker] {
            emit workerMessageAvailable(worker->index,
                                        QStringLiteral("no hello from ") + quote(worker->command) +
                                            QStringLiteral(" in time; restarting it"));
            killWorker(worker);
        });
    }
    worker->helloTimer->start(m_helloTimeoutMs);
    process->start();
}

void EvaluatorPool::onStarted(Worker* worker) {
    worker->running = true;
    for (const auto& line : std::as_const(worker->outbox))
        worker->process->write(line);
    worker->outbox.clear();
}

void EvaluatorPool::send(Worker* worker, const QJsonObject& message) {
    const QByteArray line = QJsonDocument(message).toJson(QJsonDocument::Compact) + '\n';
    if (worker->running && worker->process)
        worker->process->write(line);
    else
        worker->outbox.append(line);
}

void EvaluatorPool::onOutput(Worker* worker) {
    worker->buffer += worker->process->readAllStandardOutput();
    qsizetype end;
    while ((end = worker->buffer.indexOf('\n')) >= 0) {
        const QByteArray line = worker->buffer.left(end);
        worker->buffer.remove(0, end + 1);
        onLine(worker, line);
        // A handler may have killed and replaced the process.
        if (!worker->process)
            return;
    }
    if (worker->buffer.size() > kMaxLineBytes) {
        ++m_garbageLines;
        worker->buffer.clear();
        emit workerMessageAvailable(worker->index,
                                    QStringLiteral("skipped an over-long line without a newline"));
    }
}

void EvaluatorPool::onLine(Worker* worker, const QByteArray& line) {
    if (line.trimmed().isEmpty())
        return;
    QString parseError;
    const auto message = parseJsonObject(line, &parseError);
    if (!message || !message->value(QLatin1String("event")).isString() ||
        (message->contains(QLatin1String("v")) &&
         message->value(QLatin1String("v")).toInt() != 1)) {
        ++m_garbageLines;
        emit workerMessageAvailable(worker->index,
                                    QStringLiteral("skipped a line that is not protocol: ") +
                                        QString::fromUtf8(line.left(200)));
        return;
    }
    const QString event = message->value(QLatin1String("event")).toString();
    const QString id = message->value(QLatin1String("id")).toString();

    if (event == QLatin1String("hello")) {
        onHello(worker, *message);
        return;
    }
    const auto it = m_requests.find(id);
    if (it == m_requests.end()) {
        if (event == QLatin1String("error"))
            emit workerMessageAvailable(worker->index,
                                        QStringLiteral("harness error: ") +
                                            message->value(QLatin1String("message")).toString());
        return;
    }
    Request* request = it->second.get();
    if (request->worker != worker)
        return;
    if (event == QLatin1String("accepted")) {
        emit progressAvailable(
            id, QStringLiteral("queued"),
            QStringLiteral("queue position ") +
                QString::number(message->value(QLatin1String("queue_position")).toInt()),
            0.0);
    } else if (event == QLatin1String("progress")) {
        emit progressAvailable(id, message->value(QLatin1String("stage")).toString(),
                               message->value(QLatin1String("message")).toString(),
                               message->value(QLatin1String("fraction")).toDouble(-1));
    } else if (event == QLatin1String("result")) {
        QString reportError;
        auto report = EvaluationReport::fromJson(message->value(QLatin1String("report")).toObject(),
                                                 &reportError);
        if (!report) {
            failRequest(id, {Failure::Protocol,
                             HarnessErrorCode::None,
                             {},
                             QStringLiteral("the harness sent an invalid report: ") + reportError});
            return;
        }
        worker->restarts = 0;
        report->measuredBy = measuredBy(worker, message->value(QLatin1String("report")).toObject());
        finishRequest(id);
        emit resultAvailable(id, *report);
    } else if (event == QLatin1String("cancelled")) {
        finishRequest(id);
    } else if (event == QLatin1String("error")) {
        failRequest(
            id, EvaluationFailure::refused(message->value(QLatin1String("code")).toString(),
                                           message->value(QLatin1String("message")).toString()));
    }
}

void EvaluatorPool::onHello(Worker* worker, const QJsonObject& message) {
    worker->greeted = true;
    worker->helloTimer->stop();
    if (worker->waitingAllocation) {
        worker->waitingAllocation = false;
        emit allocationChanged(worker->index, false, QString());
    }
    worker->devices.clear();
    for (const auto& d : message.value(QLatin1String("devices")).toArray())
        worker->devices.append(DeviceInfo::fromJson(d.toObject()));
    worker->servedUuid = message.value(QLatin1String("device_uuid")).toString();
    if (!worker->servedUuid.isEmpty()) {
        for (const auto& other : m_workers) {
            if (other.get() == worker || other->givenUp || !other->greeted ||
                other->servedUuid != worker->servedUuid)
                continue;
            giveUp(worker, QStringLiteral("refused: it measures on GPU ") + worker->servedUuid +
                               QStringLiteral(", which worker ") + QString::number(other->index) +
                               u' ' + quote(other->command) +
                               QStringLiteral(" already measures on (two workers timing on one "
                                              "GPU slow each other's samples; give each worker "
                                              "its own GPU, e.g. serve --device N)"));
            return;
        }
    }
    m_harnessVersion = message.value(QLatin1String("harness_version")).toString();
    emit devicesAvailable(devices(), m_harnessVersion);
    // Requests sent while the worker was starting (or queued for an allocation) are timed from now.
    for (const auto& [id, request] : m_requests) {
        if (request->worker == worker && !request->timer->isActive())
            request->timer->start(m_requestTimeoutMs);
    }
}

void EvaluatorPool::onStderrLine(Worker* worker, const QString& line) {
    worker->lastStderr = line;
    // srun: "job 12 queued and waiting for resources" ... "job 12 has been allocated resources";
    // salloc and sbatch --wait say "Pending job allocation 12" ... "Granted job allocation 12".
    static const QRegularExpression pending(
        QStringLiteral("queued and waiting for resources|Pending job allocation"),
        QRegularExpression::CaseInsensitiveOption);
    static const QRegularExpression granted(
        QStringLiteral("has been allocated resources|Granted job allocation"),
        QRegularExpression::CaseInsensitiveOption);
    if (!worker->greeted && !worker->waitingAllocation && pending.match(line).hasMatch()) {
        worker->waitingAllocation = true;
        // A queue wait is not a hung harness: no hello time-out until the job starts.
        worker->helloTimer->stop();
        emit workerMessageAvailable(worker->index,
                                    QStringLiteral("waiting for an allocation (") + line + u')');
        emit allocationChanged(worker->index, true, line);
        // Its requests go to a worker that is up, if there is one; they were never started here.
        bool otherReady = false;
        for (const auto& other : m_workers) {
            if (other.get() != worker && !other->givenUp && !other->waitingAllocation)
                otherReady = true;
        }
        if (otherReady)
            redispatchFrom(worker, false, QStringLiteral("waiting for an allocation"));
        return;
    }
    if (worker->waitingAllocation && granted.match(line).hasMatch()) {
        worker->waitingAllocation = false;
        worker->helloTimer->start(m_helloTimeoutMs);
        emit workerMessageAvailable(worker->index,
                                    QStringLiteral("allocation granted (") + line + u')');
        emit allocationChanged(worker->index, false, line);
        return;
    }
    emit workerMessageAvailable(worker->index, line);
}

QJsonObject EvaluatorPool::measuredBy(const Worker* worker, const QJsonObject& report) const {
    QJsonObject by{{QStringLiteral("worker"), worker->index},
                   {QStringLiteral("launcher"), worker->command}};
    const QJsonObject environment = report.value(QLatin1String("environment")).toObject();
    const QString host = environment.value(QLatin1String("host")).toString();
    if (!host.isEmpty())
        by.insert(QStringLiteral("host"), host);
    const QJsonObject gpu = environment.value(QLatin1String("gpu")).toObject();
    if (!gpu.isEmpty()) {
        for (const auto& [from, to] :
             {std::pair{"name", "gpu"}, std::pair{"uuid", "gpu_uuid"},
              std::pair{"pci_bus_id", "pci_bus_id"}, std::pair{"index", "device"}}) {
            const QJsonValue value = gpu.value(QLatin1String(from));
            if (!value.isUndefined() && !value.isNull())
                by.insert(QLatin1String(to), value);
        }
    } else if (!worker->servedUuid.isEmpty()) {
        by.insert(QStringLiteral("gpu_uuid"), worker->servedUuid);
    }
    return by;
}

EvaluatorPool::Worker* EvaluatorPool::pickWorker() {
    // The least loaded worker that is not waiting for an allocation; a waiting one only when
    // every worker waits (its job may start any moment).
    Worker* best = nullptr;
    int bestLoad = 0;
    bool bestWaiting = true;
    for (auto& worker : m_workers) {
        if (worker->givenUp)
            continue;
        int load = 0;
        for (const auto& [id, request] : m_requests) {
            if (request->worker == worker.get())
                ++load;
        }
        const bool waiting = worker->waitingAllocation;
        if (!best || (bestWaiting && !waiting) || (waiting == bestWaiting && load < bestLoad)) {
            best = worker.get();
            bestLoad = load;
            bestWaiting = waiting;
        }
    }
    return best;
}

QString EvaluatorPool::evaluate(const Task& task, const QString& source, const QString& kernelName,
                                const QJsonObject& options) {
    start();
    auto request = std::make_unique<Request>();
    request->id = QStringLiteral("e") + QString::number(m_nextId++);
    QJsonObject message{
        {QStringLiteral("v"), 1},
        {QStringLiteral("id"), request->id},
        {QStringLiteral("op"), QStringLiteral("eval")},
        {QStringLiteral("task"), task.toJson()},
        {QStringLiteral("kernel"), QJsonObject{{QStringLiteral("language"), QStringLiteral("cuda")},
                                               {QStringLiteral("source"), source},
                                               {QStringLiteral("name"), kernelName}}},
    };
    if (!options.isEmpty())
        message.insert(QStringLiteral("options"), options);
    request->message = message;
    request->timer = std::make_unique<QTimer>();
    request->timer->setSingleShot(true);
    const QString id = request->id;
    connect(request->timer.get(), &QTimer::timeout, this, [this, id] { onRequestTimeout(id); });
    m_requests.emplace(id, std::move(request));
    // Signals go out from the event loop, never from inside this call.
    QTimer::singleShot(0, this, [this, id] {
        const auto it = m_requests.find(id);
        if (it != m_requests.end())
            dispatch(it->second.get());
    });
    return id;
}

void EvaluatorPool::dispatch(Request* request) {
    Worker* worker = pickWorker();
    if (!worker) {
        failRequest(request->id,
                    {Failure::HarnessMissing, HarnessErrorCode::None, {}, noWorkerLeft()});
        return;
    }
    request->worker = worker;
    ++request->attempts;
    // A worker still starting (or queued for an allocation) times the request from its hello.
    if (worker->greeted)
        request->timer->start(m_requestTimeoutMs);
    send(worker, request->message);
}

QString EvaluatorPool::noWorkerLeft() const {
    QStringList reasons;
    for (const auto& worker : m_workers) {
        if (worker->givenUp && !worker->givenUpWhy.isEmpty())
            reasons << worker->givenUpWhy;
    }
    if (reasons.size() == 1)
        return reasons.first();
    return QStringLiteral("no harness worker is left") +
           (reasons.isEmpty() ? QString()
                              : QStringLiteral(": ") + reasons.join(QStringLiteral("; ")));
}

void EvaluatorPool::giveUp(Worker* worker, const QString& why, bool receivedByHarness) {
    worker->givenUp = true;
    worker->givenUpWhy = QStringLiteral("worker ") + QString::number(worker->index) + u' ' +
                         quote(worker->command) + QStringLiteral(": ") + why;
    worker->devices.clear();
    if (worker->helloTimer)
        worker->helloTimer->stop();
    emit workerMessageAvailable(worker->index, QStringLiteral("giving up on ") +
                                                   quote(worker->command) + QStringLiteral(": ") +
                                                   why);
    killWorker(worker);
    redispatchFrom(worker, receivedByHarness, why);
}

void EvaluatorPool::redispatchFrom(Worker* worker, bool receivedByHarness, const QString& why) {
    QStringList affected;
    for (const auto& [id, request] : m_requests) {
        if (request->worker == worker)
            affected << id;
    }
    for (const auto& id : affected) {
        const auto it = m_requests.find(id);
        if (it == m_requests.end())
            continue;
        Request* request = it->second.get();
        request->timer->stop();
        request->worker = nullptr;
        if (!receivedByHarness) {
            // No harness began it: a move, not a retry. A live worker is told to drop it.
            --request->attempts;
            if (worker->process && worker->running && !worker->givenUp)
                send(worker, QJsonObject{{QStringLiteral("v"), 1},
                                         {QStringLiteral("id"), QString(QStringLiteral("x-") + id)},
                                         {QStringLiteral("op"), QStringLiteral("cancel")},
                                         {QStringLiteral("target"), id}});
        }
        if (request->attempts >= 2)
            failRequest(id, {Failure::WorkerDied,
                             HarnessErrorCode::None,
                             {},
                             QStringLiteral("the harness worker died twice during this request (") +
                                 why + u')'});
        else
            dispatch(request);
    }
}

void EvaluatorPool::finishRequest(const QString& id) {
    m_requests.erase(id);
}

void EvaluatorPool::failRequest(QString id, const EvaluationFailure& failure) {
    // By value: the caller's id may live in the request erased here.
    if (m_requests.erase(id) == 0)
        return;
    emit evaluationFailed(id, failure);
}

void EvaluatorPool::onRequestTimeout(const QString& id) {
    const auto it = m_requests.find(id);
    if (it == m_requests.end())
        return;
    Worker* worker = it->second->worker;
    failRequest(id, {Failure::Timeout,
                     HarnessErrorCode::None,
                     {},
                     QStringLiteral("no result within ") +
                         QString::number(m_requestTimeoutMs / 1000.0) +
                         QStringLiteral(" s; the worker was restarted")});
    if (worker) {
        emit workerMessageAvailable(worker->index,
                                    QStringLiteral("request ") + id +
                                        QStringLiteral(" timed out; restarting the worker"));
        killWorker(worker);
    }
}

void EvaluatorPool::cancel(const QString& requestId) {
    const auto it = m_requests.find(requestId);
    if (it == m_requests.end())
        return;
    Worker* worker = it->second->worker;
    m_requests.erase(it);
    if (worker)
        send(worker, QJsonObject{{QStringLiteral("v"), 1},
                                 {QStringLiteral("id"), QString(QStringLiteral("x-") + requestId)},
                                 {QStringLiteral("op"), QStringLiteral("cancel")},
                                 {QStringLiteral("target"), requestId}});
}

void EvaluatorPool::killWorker(Worker* worker) {
    QProcess* process = worker->process;
    if (!process)
        return;
    const qint64 pid = process->processId();
    if (pid <= 0) {
        process->kill();
        return;
    }
    ::kill(static_cast<pid_t>(-pid), SIGTERM);
    QTimer::singleShot(kTerminateGraceMs, process, [process, pid] {
        if (process->state() != QProcess::NotRunning)
            ::kill(static_cast<pid_t>(-pid), SIGKILL);
    });
}

void EvaluatorPool::onStartFailed(Worker* worker, const QString& why) {
    worker->running = false;
    if (worker->process) {
        worker->process->deleteLater();
        worker->process = nullptr;
    }
    giveUp(worker, QStringLiteral("cannot start it (") + why +
                       QStringLiteral("): is the launcher's program installed and on PATH?"));
}

void EvaluatorPool::onExit(Worker* worker, const QString& why) {
    const bool wasGreeted = worker->greeted;
    worker->running = false;
    worker->greeted = false;
    if (worker->process) {
        worker->process->deleteLater();
        worker->process = nullptr;
    }
    if (worker->waitingAllocation) {
        worker->waitingAllocation = false;
        emit allocationChanged(worker->index, false, QString());
    }
    if (m_shuttingDown || worker->givenUp)
        return;
    // What the launcher said last is the reason a person needs: ssh's "Connection refused",
    // srun's "Job allocation 12 has been revoked".
    const QString detail =
        why + (worker->lastStderr.isEmpty() ? QString()
                                            : QStringLiteral(" (") + worker->lastStderr + u')');
    ++worker->restarts;
    worker->outbox.clear();
    if (worker->restarts <= m_maxRestarts) {
        emit workerMessageAvailable(worker->index, QStringLiteral("the harness ") +
                                                       quote(worker->command) + u' ' + detail +
                                                       QStringLiteral("; restarting it"));
        spawn(worker);
        redispatchFrom(worker, wasGreeted, why);
        return;
    }
    giveUp(worker,
           (wasGreeted ? QString() : QStringLiteral("it never answered: ")) + detail +
               QStringLiteral(", ") + QString::number(worker->restarts) +
               QStringLiteral(" times in a row"),
           wasGreeted);
}

void EvaluatorPool::killAll() {
    m_shuttingDown = true;
    m_requests.clear();
    // SIGTERM to every worker first, so that their jobs and sessions end in parallel.
    QVector<std::pair<QProcess*, qint64>> ending;
    for (auto& worker : m_workers) {
        if (worker->helloTimer)
            worker->helloTimer->stop();
        QProcess* process = worker->process;
        if (!process)
            continue;
        worker->process = nullptr;
        const qint64 pid = process->processId();
        if (pid > 0)
            ::kill(static_cast<pid_t>(-pid), SIGTERM);
        else
            process->kill();
        ending.append({process, pid});
    }
    QElapsedTimer clock;
    clock.start();
    for (const auto& [process, pid] : ending) {
        const int left = std::max(0, kTerminateGraceMs - static_cast<int>(clock.elapsed()));
        if (!process->waitForFinished(left) && pid > 0) {
            ::kill(static_cast<pid_t>(-pid), SIGKILL);
            process->waitForFinished(1000);
        }
        delete process;
    }
}

void EvaluatorPool::shutdown() {
    m_requests.clear();
    m_shuttingDown = true;
    for (auto& worker : m_workers) {
        if (worker->helloTimer)
            worker->helloTimer->stop();
        if (!worker->process)
            continue;
        if (worker->running) {
            worker->process->write(
                QJsonDocument(QJsonObject{{QStringLiteral("v"), 1},
                                          {QStringLiteral("id"), QStringLiteral("bye")},
                                          {QStringLiteral("op"), QStringLiteral("shutdown")}})
                    .toJson(QJsonDocument::Compact) +
                '\n');
            worker->process->closeWriteChannel();
        }
        QProcess* process = worker->process;
        QTimer::singleShot(kShutdownGraceMs, process, [process] {
            const qint64 pid = process->processId();
            if (pid > 0)
                ::kill(static_cast<pid_t>(-pid), SIGKILL);
        });
    }
}

} // namespace kev
