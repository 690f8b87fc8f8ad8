#include "evaluatorpool.h"

#include "jsonschema.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
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
    bool running = false;
    bool greeted = false;
    bool givenUp = false;
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
    m_shuttingDown = true;
    m_requests.clear();
    for (auto& worker : m_workers)
        killWorker(worker.get());
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

void EvaluatorPool::setCommands(const QStringList& commands) {
    m_commands = commands;
}

QStringList EvaluatorPool::commands() const {
    return m_commands.isEmpty() ? QStringList{defaultCommand()} : m_commands;
}

QVector<DeviceInfo> EvaluatorPool::devices() const {
    QVector<DeviceInfo> all;
    for (const auto& worker : m_workers)
        all += worker->devices;
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
                emit workerMessageAvailable(worker->index, line);
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
        worker->greeted = true;
        worker->helloTimer->stop();
        worker->devices.clear();
        for (const auto& d : message->value(QLatin1String("devices")).toArray())
            worker->devices.append(DeviceInfo::fromJson(d.toObject()));
        m_harnessVersion = message->value(QLatin1String("harness_version")).toString();
        emit devicesAvailable(devices(), m_harnessVersion);
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
            failRequest(id, Failure::Protocol,
                        QStringLiteral("the harness sent an invalid report: ") + reportError);
            return;
        }
        worker->restarts = 0;
        finishRequest(id);
        emit resultAvailable(id, *report);
    } else if (event == QLatin1String("cancelled")) {
        finishRequest(id);
    } else if (event == QLatin1String("error")) {
        failRequest(id, Failure::Refused,
                    message->value(QLatin1String("code")).toString() + QStringLiteral(": ") +
                        message->value(QLatin1String("message")).toString());
    }
}

EvaluatorPool::Worker* EvaluatorPool::pickWorker() {
    Worker* best = nullptr;
    int bestLoad = 0;
    for (auto& worker : m_workers) {
        if (worker->givenUp)
            continue;
        int load = 0;
        for (const auto& [id, request] : m_requests) {
            if (request->worker == worker.get())
                ++load;
        }
        if (!best || load < bestLoad) {
            best = worker.get();
            bestLoad = load;
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
        if (m_startFailure.isEmpty())
            failRequest(request->id, Failure::WorkerDied,
                        QStringLiteral("no harness worker is running"));
        else
            failRequest(request->id, Failure::HarnessMissing, m_startFailure);
        return;
    }
    request->worker = worker;
    ++request->attempts;
    request->timer->start(m_requestTimeoutMs);
    send(worker, request->message);
}

void EvaluatorPool::finishRequest(const QString& id) {
    m_requests.erase(id);
}

void EvaluatorPool::failRequest(QString id, Failure failure, const QString& message) {
    // By value: the caller's id may live in the request erased here.
    if (m_requests.erase(id) == 0)
        return;
    emit evaluationFailed(id, failure, message);
}

void EvaluatorPool::onRequestTimeout(const QString& id) {
    const auto it = m_requests.find(id);
    if (it == m_requests.end())
        return;
    Worker* worker = it->second->worker;
    failRequest(id, Failure::Timeout,
                QStringLiteral("no result within ") + QString::number(m_requestTimeoutMs / 1000.0) +
                    QStringLiteral(" s; the worker was restarted"));
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
    if (pid > 0)
        ::kill(static_cast<pid_t>(-pid), SIGKILL);
    process->kill();
    if (m_shuttingDown) {
        worker->process = nullptr;
        process->waitForFinished(1000);
        delete process;
    }
}

void EvaluatorPool::onStartFailed(Worker* worker, const QString& why) {
    worker->givenUp = true;
    worker->running = false;
    if (worker->helloTimer)
        worker->helloTimer->stop();
    if (worker->process) {
        worker->process->deleteLater();
        worker->process = nullptr;
    }
    const QString message = QStringLiteral("cannot start the harness ") + quote(worker->command) +
                            QStringLiteral(": ") + why;
    m_startFailure = message;
    emit workerMessageAvailable(worker->index, message);
    QStringList orphans;
    for (const auto& [id, request] : m_requests) {
        if (request->worker == worker || !request->worker)
            orphans << id;
    }
    const bool anyAlive = pickWorker() != nullptr;
    for (const auto& id : orphans) {
        const auto it = m_requests.find(id);
        if (it == m_requests.end())
            continue;
        if (anyAlive)
            dispatch(it->second.get());
        else
            failRequest(id, Failure::HarnessMissing, message);
    }
}

void EvaluatorPool::onExit(Worker* worker, const QString& why) {
    worker->running = false;
    if (worker->process) {
        worker->process->deleteLater();
        worker->process = nullptr;
    }
    if (m_shuttingDown)
        return;
    QStringList affected;
    for (const auto& [id, request] : m_requests) {
        if (request->worker == worker)
            affected << id;
    }
    ++worker->restarts;
    const bool restart = worker->restarts <= m_maxRestarts;
    emit workerMessageAvailable(
        worker->index,
        QStringLiteral("the harness ") + quote(worker->command) + u' ' + why +
            (restart ? QStringLiteral("; restarting it") : QStringLiteral("; giving up on it")));
    worker->outbox.clear();
    if (restart)
        spawn(worker);
    else
        worker->givenUp = true;
    for (const auto& id : affected) {
        const auto it = m_requests.find(id);
        if (it == m_requests.end())
            continue;
        Request* request = it->second.get();
        request->timer->stop();
        request->worker = nullptr;
        if (request->attempts >= 2)
            failRequest(id, Failure::WorkerDied,
                        QStringLiteral("the harness worker died twice during this request (") +
                            why + u')');
        else
            dispatch(request);
    }
}

void EvaluatorPool::killAll() {
    m_shuttingDown = true;
    m_requests.clear();
    for (auto& worker : m_workers) {
        if (worker->helloTimer)
            worker->helloTimer->stop();
        killWorker(worker.get());
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
