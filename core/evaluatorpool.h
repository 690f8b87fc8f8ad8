// The client side of harness/PROTOCOL.md: starts `kevolve-harness serve` workers from launcher
// commands (one per GPU: "kevolve-harness serve --device 1", "ssh host kevolve-harness serve" and
// "srun --gres=gpu:1 kevolve-harness serve" work like a local one; docs/cluster.md), frames JSON
// lines, matches events to requests by id, and recovers: a line that is not protocol is skipped,
// a worker that dies is restarted and its requests are retried once, a request that outlives its
// time-out kills its worker (a hung harness) and fails as a time-out. Compiles of several requests
// may run in parallel on a worker; the harness serialises GPU work itself, and every ratio comes
// from one worker's samples (a request is retried whole, candidate and reference, elsewhere).
//
// Clusters: a worker whose launcher says it waits for an allocation (srun's "queued and waiting
// for resources") is not timed out while it waits, and gets no new work while another worker can
// take it; a worker that never greets (a refused ssh host, a cancelled job) is restarted a few
// times, then given up with its last stderr line; when no worker is left, requests fail as
// HarnessMissing. A worker that serves a GPU another worker already measures on (the same device
// UUID in its hello) is refused: two workers timing on one GPU would slow each other's samples.
// Workers are stopped with SIGTERM first, so that srun cancels its job and ssh closes its session.
//
// Create it in the thread that uses it (its QProcess objects live there); nothing here blocks.
#pragma once

#include "deviceinfo.h"
#include "evaluationreport.h"
#include "task.h"

#include <QJsonObject>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QVector>

#include <map>
#include <memory>
#include <optional>
#include <vector>

class QProcess;
class QTimer;

namespace kev {

struct EvaluationFailure;

class EvaluatorPool : public QObject {
    Q_OBJECT
public:
    enum class Failure {
        // No worker is left: a launcher could not be started (no such program), or its workers
        // never answered (a refused ssh host, a cancelled Slurm job) or were refused.
        HarnessMissing,
        // The worker died during the request twice, or could not be restarted.
        WorkerDied,
        // No result within the request time-out.
        Timeout,
        // The harness refused the request (bad_request, bad_task, unsupported_version, internal).
        Refused,
        // The harness answered with something that is not a valid report.
        Protocol
    };
    Q_ENUM(Failure)

    explicit EvaluatorPool(QObject* parent = nullptr);
    ~EvaluatorPool() override;

    // The default launcher: $KEVOLVE_HARNESS if set, else kevolve-harness next to this executable
    // (or in ../harness/, as in a build tree), else on PATH; with " serve".
    static QString defaultCommand();

    // A launcher list as people write it (the workbench's settings, --harness, $KEVOLVE_HARNESS):
    // commands separated by ';' or new lines outside double quotes, so that a command may hold
    // `bash -lc "module load cuda; exec kevolve-harness serve"`. Nullopt, with *error naming the
    // launcher, when a command has an unbalanced quote or the list holds no command at all.
    static std::optional<QStringList> parseLaunchers(const QString& text, QString* error);
    static QString formatLaunchers(const QStringList& commands);

    // One worker per command; an empty list means defaultCommand().
    void setCommands(const QStringList& commands);
    QStringList commands() const;
    void setRequestTimeoutMs(int ms) { m_requestTimeoutMs = ms; }
    void setHelloTimeoutMs(int ms) { m_helloTimeoutMs = ms; }
    // Consecutive restarts of one worker without a completed request before it is given up.
    void setMaxRestarts(int restarts) { m_maxRestarts = restarts; }

    // Starts the workers and greets them; devicesAvailable follows each hello.
    void start();
    bool isStarted() const { return m_started; }

    // Queues an eval; returns the request id the signals carry.
    QString evaluate(const Task& task, const QString& source, const QString& kernelName,
                     const QJsonObject& options);
    // Asks the harness to cancel; nothing more is emitted for the request.
    void cancel(const QString& requestId);
    // Cancels every request and kills every worker and its children now.
    void killAll();
    // Says goodbye to the workers and kills the ones that do not leave within a grace period.
    void shutdown();

    int pendingCount() const { return static_cast<int>(m_requests.size()); }
    QVector<DeviceInfo> devices() const;
    QString harnessVersion() const { return m_harnessVersion; }
    // Lines from workers that were not protocol (counted, then skipped).
    int garbageLines() const { return m_garbageLines; }

signals:
    void devicesAvailable(const QVector<kev::DeviceInfo>& devices, const QString& harnessVersion);
    void progressAvailable(const QString& requestId, const QString& stage, const QString& message,
                           double fraction);
    void resultAvailable(const QString& requestId, const kev::EvaluationReport& report);
    void evaluationFailed(const QString& requestId, const kev::EvaluationFailure& failure);
    // Something about one worker a person should know (a restart, a skipped line, stderr).
    void workerMessageAvailable(int worker, const QString& message);
    // The worker's launcher waits for resources (a pending Slurm job) or got them; message is the
    // launcher's own line.
    void allocationChanged(int worker, bool waiting, const QString& message);

private:
    struct Worker;
    struct Request;

    void spawn(Worker* worker);
    void onStarted(Worker* worker);
    void onOutput(Worker* worker);
    void onLine(Worker* worker, const QByteArray& line);
    void onExit(Worker* worker, const QString& why);
    void onStartFailed(Worker* worker, const QString& why);
    void send(Worker* worker, const QJsonObject& message);
    void dispatch(Request* request);
    void finishRequest(const QString& id);
    void failRequest(QString id, const EvaluationFailure& failure);
    void onRequestTimeout(const QString& id);
    // SIGTERM to the worker's process group now, SIGKILL after a grace period (at once when the
    // pool is shutting down and cannot wait).
    void killWorker(Worker* worker);
    void onStderrLine(Worker* worker, const QString& line);
    void onHello(Worker* worker, const QJsonObject& message);
    // No more restarts; its requests go to the other workers (a retry when its harness had them).
    void giveUp(Worker* worker, const QString& why, bool receivedByHarness = false);
    void redispatchFrom(Worker* worker, bool countAttempt, const QString& why);
    QString noWorkerLeft() const;
    QJsonObject measuredBy(const Worker* worker, const QJsonObject& report) const;
    Worker* pickWorker();

    QStringList m_commands;
    std::vector<std::unique_ptr<Worker>> m_workers;
    std::map<QString, std::unique_ptr<Request>> m_requests;
    int m_requestTimeoutMs = 900000;
    int m_helloTimeoutMs = 120000;
    int m_maxRestarts = 3;
    int m_nextId = 1;
    int m_garbageLines = 0;
    bool m_started = false;
    bool m_shuttingDown = false;
    QString m_harnessVersion;
};

// The error codes of the harness's "error" event (harness/PROTOCOL.md), as a field instead of
// text: callers decide on the code, never on the wording of the message.
enum class HarnessErrorCode {
    None, // the failure did not come from a harness error event
    BadRequest,
    BadTask,
    UnsupportedVersion,
    UnknownId,
    Internal,
    Unknown // a code this client does not know (a newer harness); codeText keeps it
};

// Why a request produced no report.
struct EvaluationFailure {
    EvaluatorPool::Failure kind = EvaluatorPool::Failure::Protocol;
    // Set when kind is Refused: the code the harness sent, parsed and verbatim.
    HarnessErrorCode code = HarnessErrorCode::None;
    QString codeText;
    QString message;

    static EvaluationFailure refused(const QString& codeText, const QString& message);
    static HarnessErrorCode codeFromString(const QString& text);
    // The message, led by the harness's code when there is one ("bad_task: ...").
    QString describe() const;
};

} // namespace kev

Q_DECLARE_METATYPE(kev::EvaluatorPool::Failure)
Q_DECLARE_METATYPE(kev::EvaluationFailure)
