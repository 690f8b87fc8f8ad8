// The harness report (harness/PROTOCOL.md, "Report"), parsed once into the typed parts the engine,
// agents, panels and exporters read. The verbatim JSON is private to evaluationreport.cpp and only
// leaves it through toJson() (for saving the report as the harness wrote it), so no consumer
// re-reads the report's JSON by key.
#pragma once

#include "deviceinfo.h"

#include <QJsonObject>
#include <QMetaType>
#include <QString>
#include <QStringList>
#include <QVector>

#include <optional>
#include <utility>

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

struct EvaluationReport;
struct ProfileMetrics;

// One correctness trial (correctness.trials[]).
struct Trial {
    QString phase; // "pre" before timing, "post" on fresh inputs after it
    // Dimension name -> extent (M, N, K for GEMM; rows, cols, ... for other ops), in the order
    // the report lists them.
    QVector<std::pair<QString, qint64>> shape;
    QString distribution;
    bool pass = false;
    double margin = 0;      // candidate error / bound (< 1 passes)
    double relFro = 0;      // the candidate's relative Frobenius error
    double boundRelFro = 0; // the bound it is held to
    qint64 nanCount = 0;
    qint64 infCount = 0;

    // The extent of one named dimension, 0 when the shape has no such dimension.
    qint64 dim(const QString& name) const;
};

// One check of rules.checks[] (lint, launch_audit, ...).
struct RuleCheck {
    QString name;
    bool ok = false;
    QString evidence;
};

// Where the harness's own wall time went (report.stages, seconds; 0 when absent).
struct HarnessStages {
    double compileS = 0; // stages.compile_s
    double gpuS = 0;     // stages.gpu_s: the GPU children, from start to verdict
    double profileS = 0; // stages.profile_s: what profiling added after the verdict
    double totalS = 0;   // stages.total_s
    bool present() const { return totalS > 0; }
};

// How the harness timed (timing.method) and how stable the rounds were.
struct TimingDetails {
    QVector<double> roundMedians; // timing.rounds[].median_ratio
    double roundSpread = 0;
    int reruns = 0;
    int discardedPairs = 0;
    QString pairing;
    double l2FlushBytes = 0;
    bool blockingKernel = false;
    int inputSets = 0;
};

// The GPU the CUDA child ran on (environment.gpu).
struct GpuEnvironment {
    QString name;
    // The full description, when the child measured it (it carries sm_count).
    std::optional<DeviceInfo> device;
};

struct CorrectnessSummary {
    bool present = false;
    bool ok = false;
    int trials = 0;
    int passed = 0;
    // Worst candidate error / bound over all trials (< 1 passes).
    double worstMargin = 0;
    QString firstFailure;
    QString rule; // correctness.rule.text: how the bound is set
    QVector<Trial> trialResults;
};

// The hardware metrics of a report under Kevolve's own names (achieved_occupancy as a fraction,
// dram_throughput_pct, sm_throughput_pct, tensor_pipe_pct, fma_pipe_pct, l2_hit_rate_pct,
// dram_bytes, local_memory_bytes, smem_bank_conflicts, smem_wavefronts_per_request) and the warp
// stall reasons as fractions of the active warps' cycles (long_scoreboard, barrier, ...). The
// harness reports Nsight Compute counters under `metrics.candidate` / `metrics.reference`
// (harness/PROTOCOL.md); these are derived from them, and the counters themselves are kept in
// `counters`. A report in the older `profile` shape (derived names already) is read as it is.
struct DerivedMetrics {
    QJsonObject candidate;
    QJsonObject reference;
    QJsonObject candidateStalls;
    QJsonObject candidateCounters;
    QJsonObject referenceCounters;

    // The metrics the report derived when it was parsed.
    static DerivedMetrics fromReport(const EvaluationReport& report);
    // Derives them from a report's metrics (preferred) or profile section.
    static DerivedMetrics fromSections(const ProfileMetrics& sections);
    // The derived names of one set of counters (missing counters give missing names).
    static QJsonObject fromCounters(const QJsonObject& counters);
    // stall reason -> fraction, from smsp__warp_issue_stalled_<reason>_per_warp_active.pct.
    static QJsonObject stallsFromCounters(const QJsonObject& counters);
};

// The profile part of a report: the harness's sections as it sent them (the agents' prompts quote
// them) and the metrics derived from them once.
struct ProfileMetrics {
    std::optional<QJsonObject> metricsSection; // "metrics": Nsight Compute counters by name
    std::optional<QJsonObject> profileSection; // "profile": the older, derived shape
    DerivedMetrics derived;
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
    QVector<RuleCheck> ruleChecks;
    bool lintEnabled = true; // rules.lint: false when options.lint switched static lint off

    CorrectnessSummary correctness;

    // Timing: present only for correct candidates measured on a GPU.
    bool timed = false;
    // The report has a non-empty timing part (an unstable candidate has one without a speed-up).
    bool timingPresent = false;
    double speedup = 0;
    double ciLow = 0;
    double ciHigh = 0;
    double medianMs = 0;
    double referenceMs = 0;
    double tflops = 0;
    double referenceTflops = 0;
    QVector<TimingSample> samples;
    TimingDetails timing;
    // task.timing.max_round_spread of the task the harness normalised, when the report carries it.
    std::optional<double> maxRoundSpread;

    // Roofline, when the report carries it ("roofline": {"floor_ms", "percent_of_floor", "bound",
    // "min_bytes"}).
    std::optional<double> floorMs;
    std::optional<double> percentOfFloor;
    std::optional<double> minBytes;
    QString bound;
    // The rest of the roofline part: the device peaks, the task's work and its intensity.
    std::optional<double> peakFlops;
    std::optional<double> peakBytesPerSecond;
    std::optional<double> roofFlops;
    std::optional<double> intensity;

    QString gpuName;
    GpuEnvironment environment;
    QString errorStage;
    QString errorMessage;
    QString errorSignal; // error.signal_name, when the child died of a signal
    QString reverify;
    HarnessStages stages;

    // The task as the harness normalised it (report.task), empty when the report has none.
    QJsonObject harnessTask;
    ProfileMetrics profile;
    // Which worker measured it, set by the EvaluatorPool (not part of the harness's report):
    // {"worker": index, "launcher": command, "host", "gpu": name, "gpu_uuid", "pci_bus_id",
    // "device": index}; empty for a report no harness produced.
    QJsonObject measuredBy;

    // Accepts any report whose status is known; *error names what is missing or wrong.
    static std::optional<EvaluationReport> fromJson(const QJsonObject& json, QString* error);
    // The verbatim report, or a minimal one built from the fields for a report no harness wrote.
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

private:
    // The report exactly as the harness sent it; read only by evaluationreport.cpp.
    QJsonObject m_verbatim;
};

} // namespace kev

Q_DECLARE_METATYPE(kev::EvaluationReport)
