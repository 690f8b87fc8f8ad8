// The harness report (harness/PROTOCOL.md, "Report"), parsed into the values the engine, agents,
// panels and exporters read. The whole report stays available verbatim in `raw`.
#pragma once

#include <QJsonObject>
#include <QMetaType>
#include <QString>
#include <QStringList>
#include <QVector>

#include <optional>

namespace kev {

struct KernelResources {
    QString name;
    int registers = 0;
    qint64 sharedStaticBytes = 0;
    qint64 stackBytes = 0;
    qint64 spillStoreBytes = 0;
    qint64 spillLoadBytes = 0;
};

// One ABBA quad of timing.samples[].
struct TimingSample {
    int round = 0;
    int pair = 0;
    double ratio = 0;
    QVector<double> candidateMs;
    QVector<double> referenceMs;
    int inputSet = 0;
    int smMhz = 0;
    int memMhz = 0;
    QStringList throttle;
    bool discarded = false;
    double outputCheck = 0;
};

struct CorrectnessSummary {
    bool present = false;
    bool ok = false;
    int trials = 0;
    int passed = 0;
    // Worst candidate error / bound over all trials (< 1 passes).
    double worstMargin = 0;
    QString firstFailure;
};

struct EvaluationReport {
    enum class Status {
        Ok,
        CompileError,
        RuleViolation,
        RuntimeError,
        Timeout,
        Incorrect,
        Unstable,
        NoDevice
    };

    Status status = Status::RuntimeError;
    bool suspicious = false;
    QString message;
    QString id;
    QString harnessVersion;

    bool compileOk = false;
    double compileSeconds = 0;
    QString compileLog;
    QVector<KernelResources> kernels;

    bool rulesOk = true;
    QStringList violations;

    CorrectnessSummary correctness;

    // Timing: present only for correct candidates measured on a GPU.
    bool timed = false;
    double speedup = 0;
    double ciLow = 0;
    double ciHigh = 0;
    double medianMs = 0;
    double referenceMs = 0;
    double tflops = 0;
    double referenceTflops = 0;
    QVector<TimingSample> samples;

    // Roofline, when the report carries it ("roofline": {"floor_ms", "percent_of_floor", "bound",
    // "min_bytes"}).
    std::optional<double> floorMs;
    std::optional<double> percentOfFloor;
    std::optional<double> minBytes;
    QString bound;

    QString gpuName;
    QString errorStage;
    QString errorMessage;
    QString reverify;

    QJsonObject raw;
    // Which worker measured it, set by the EvaluatorPool (not part of the harness's report):
    // {"worker": index, "launcher": command, "host", "gpu": name, "gpu_uuid", "pci_bus_id",
    // "device": index}; empty for a report no harness produced.
    QJsonObject measuredBy;

    // Accepts any report whose status is known; *error names what is missing or wrong.
    static std::optional<EvaluationReport> fromJson(const QJsonObject& json, QString* error);
    // The verbatim report (raw), or a minimal one built from the fields when raw is empty.
    QJsonObject toJson() const;

    bool isCorrect() const { return status == Status::Ok; }
    // Correct, timed, and not flagged: may become the best automatically.
    bool isTrustworthyResult() const { return status == Status::Ok && timed && !suspicious; }
    int maxRegisters() const;
    qint64 totalSpillBytes() const;

    static QString statusToString(Status status);
    static std::optional<Status> statusFromString(const QString& text);

    // A report the engine writes itself when no harness could produce one (e.g. the worker died
    // twice): status runtime_error, or no_device.
    static EvaluationReport synthetic(Status status, const QString& message);
};

// The hardware metrics of a report under Kevolve's own names (achieved_occupancy as a fraction,
// dram_throughput_pct, sm_throughput_pct, tensor_pipe_pct, fma_pipe_pct, l2_hit_rate_pct,
// dram_bytes, local_memory_bytes, smem_bank_conflicts, smem_wavefronts_per_request) and the warp
// stall reasons as fractions of the active warps' cycles (long_scoreboard, barrier, ...). The
// harness reports Nsight Compute counters under `metrics.candidate` / `metrics.reference`
// (harness/PROTOCOL.md); these are derived from them, and the counters themselves are kept in
// `counters`. A report in the `profile` shape of DESIGN.md §3 (derived names already) is read as
// it is.
struct DerivedMetrics {
    QJsonObject candidate;
    QJsonObject reference;
    QJsonObject candidateStalls;
    QJsonObject candidateCounters;
    QJsonObject referenceCounters;

    static DerivedMetrics fromReport(const EvaluationReport& report);
    // The derived names of one set of counters (missing counters give missing names).
    static QJsonObject fromCounters(const QJsonObject& counters);
    // stall reason -> fraction, from smsp__warp_issue_stalled_<reason>_per_warp_active.pct.
    static QJsonObject stallsFromCounters(const QJsonObject& counters);
};

} // namespace kev

Q_DECLARE_METATYPE(kev::EvaluationReport)
