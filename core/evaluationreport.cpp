#include "evaluationreport.h"

#include <QJsonArray>

#include <algorithm>

namespace kev {

namespace {

struct StatusName {
    EvaluationReport::Status status;
    const char* name;
};

constexpr StatusName kStatusNames[] = {
    {EvaluationReport::Status::Ok, "ok"},
    {EvaluationReport::Status::CompileError, "compile_error"},
    {EvaluationReport::Status::RuleViolation, "rule_violation"},
    {EvaluationReport::Status::RuntimeError, "runtime_error"},
    {EvaluationReport::Status::Timeout, "timeout"},
    {EvaluationReport::Status::Incorrect, "incorrect"},
    {EvaluationReport::Status::Unstable, "unstable"},
    {EvaluationReport::Status::NoDevice, "no_device"},
};

QVector<double> doubles(const QJsonValue& value) {
    QVector<double> result;
    for (const auto& v : value.toArray())
        result.append(v.toDouble());
    return result;
}

std::optional<double> optionalDouble(const QJsonObject& object, const char* key) {
    const QJsonValue v = object.value(QLatin1String(key));
    if (!v.isDouble())
        return std::nullopt;
    return v.toDouble();
}

Trial trialOf(const QJsonObject& json) {
    Trial t;
    t.phase = json.value(QLatin1String("phase")).toString();
    const QJsonObject shape = json.value(QLatin1String("shape")).toObject();
    for (auto it = shape.begin(); it != shape.end(); ++it) {
        if (it->isDouble())
            t.shape.append({it.key(), it->toInteger()});
    }
    t.distribution = json.value(QLatin1String("distribution")).toString();
    t.pass = json.value(QLatin1String("pass")).toBool();
    t.margin = json.value(QLatin1String("margin")).toDouble();
    const QJsonObject candidate = json.value(QLatin1String("candidate")).toObject();
    t.relFro = candidate.value(QLatin1String("rel_fro")).toDouble();
    t.nanCount = candidate.value(QLatin1String("nan_count")).toInteger();
    t.infCount = candidate.value(QLatin1String("inf_count")).toInteger();
    t.boundRelFro =
        json.value(QLatin1String("bound")).toObject().value(QLatin1String("rel_fro")).toDouble();
    return t;
}

} // namespace

qint64 Trial::dim(const QString& name) const {
    for (const auto& [key, extent] : shape) {
        if (key == name)
            return extent;
    }
    return 0;
}

QString EvaluationReport::statusToString(Status status) {
    for (const auto& entry : kStatusNames) {
        if (entry.status == status)
            return QLatin1String(entry.name);
    }
    return QStringLiteral("runtime_error");
}

std::optional<EvaluationReport::Status> EvaluationReport::statusFromString(const QString& text) {
    for (const auto& entry : kStatusNames) {
        if (text == QLatin1String(entry.name))
            return entry.status;
    }
    return std::nullopt;
}

std::optional<EvaluationReport> EvaluationReport::fromJson(const QJsonObject& json,
                                                           QString* error) {
    const auto fail = [error](const QString& message) {
        if (error)
            *error = message;
        return std::nullopt;
    };
    if (json.value(QLatin1String("schema_version")).toInt() != 1)
        return fail(QStringLiteral("report.schema_version: expected 1"));
    if (!json.value(QLatin1String("status")).isString())
        return fail(QStringLiteral("report.status: required field is missing"));
    const auto status = statusFromString(json.value(QLatin1String("status")).toString());
    if (!status)
        return fail(QStringLiteral("report.status: \"") +
                    json.value(QLatin1String("status")).toString() +
                    QStringLiteral("\" is not a known status"));

    EvaluationReport r;
    r.m_verbatim = json;
    r.status = *status;
    r.suspicious = json.value(QLatin1String("suspicious")).toBool();
    r.message = json.value(QLatin1String("message")).toString();
    r.id = json.value(QLatin1String("id")).toString();
    r.harnessVersion = json.value(QLatin1String("harness_version")).toString();
    r.reverify = json.value(QLatin1String("reverify")).toString();
    const QJsonObject stages = json.value(QLatin1String("stages")).toObject();
    r.stages.compileS = stages.value(QLatin1String("compile_s")).toDouble();
    r.stages.gpuS = stages.value(QLatin1String("gpu_s")).toDouble();
    r.stages.profileS = stages.value(QLatin1String("profile_s")).toDouble();
    r.stages.totalS = stages.value(QLatin1String("total_s")).toDouble();

    const QJsonObject compile = json.value(QLatin1String("compile")).toObject();
    r.compileOk = compile.value(QLatin1String("ok")).toBool();
    r.compileSeconds = compile.value(QLatin1String("seconds")).toDouble();
    r.compileLog = compile.value(QLatin1String("log")).toString();
    for (const auto& k : compile.value(QLatin1String("kernels")).toArray()) {
        const QJsonObject o = k.toObject();
        KernelResources kr;
        kr.name = o.value(QLatin1String("name")).toString();
        kr.registers = o.value(QLatin1String("registers")).toInt();
        kr.sharedStaticBytes = o.value(QLatin1String("shared_static_bytes")).toInteger();
        kr.stackBytes = o.value(QLatin1String("stack_bytes")).toInteger();
        kr.spillStoreBytes = o.value(QLatin1String("spill_store_bytes")).toInteger();
        kr.spillLoadBytes = o.value(QLatin1String("spill_load_bytes")).toInteger();
        r.kernels.append(kr);
    }

    const QJsonObject rules = json.value(QLatin1String("rules")).toObject();
    r.rulesOk = rules.value(QLatin1String("ok")).toBool(true);
    for (const auto& v : rules.value(QLatin1String("violations")).toArray())
        r.violations << v.toString();
    for (const auto& v : rules.value(QLatin1String("checks")).toArray()) {
        const QJsonObject c = v.toObject();
        r.ruleChecks.append({c.value(QLatin1String("name")).toString(),
                             c.value(QLatin1String("ok")).toBool(),
                             c.value(QLatin1String("evidence")).toString()});
    }
    r.lintEnabled = rules.value(QLatin1String("lint")).toBool(true);

    if (json.contains(QLatin1String("correctness"))) {
        const QJsonObject c = json.value(QLatin1String("correctness")).toObject();
        r.correctness.present = true;
        r.correctness.ok = c.value(QLatin1String("ok")).toBool();
        r.correctness.rule =
            c.value(QLatin1String("rule")).toObject().value(QLatin1String("text")).toString();
        for (const auto& t : c.value(QLatin1String("trials")).toArray()) {
            const QJsonObject trial = t.toObject();
            r.correctness.trialResults.append(trialOf(trial));
            ++r.correctness.trials;
            const bool pass = trial.value(QLatin1String("pass")).toBool();
            if (pass) {
                ++r.correctness.passed;
            } else if (r.correctness.firstFailure.isEmpty()) {
                const QJsonObject shape = trial.value(QLatin1String("shape")).toObject();
                r.correctness.firstFailure =
                    trial.value(QLatin1String("phase")).toString() + QStringLiteral(" trial ") +
                    QString::number(shape.value(QLatin1String("M")).toInteger()) + u'x' +
                    QString::number(shape.value(QLatin1String("N")).toInteger()) + u'x' +
                    QString::number(shape.value(QLatin1String("K")).toInteger()) + u' ' +
                    trial.value(QLatin1String("distribution")).toString() +
                    QStringLiteral(", margin ") +
                    QString::number(trial.value(QLatin1String("margin")).toDouble(), 'g', 4);
            }
            r.correctness.worstMargin = std::max(r.correctness.worstMargin,
                                                 trial.value(QLatin1String("margin")).toDouble());
        }
    }

    if (json.contains(QLatin1String("timing"))) {
        const QJsonObject t = json.value(QLatin1String("timing")).toObject();
        r.timingPresent = !t.isEmpty();
        r.timed = t.contains(QLatin1String("speedup_vs_reference"));
        r.speedup = t.value(QLatin1String("speedup_vs_reference")).toDouble();
        const QJsonArray ci = t.value(QLatin1String("ci95")).toArray();
        r.ciLow = ci.size() == 2 ? ci.at(0).toDouble() : r.speedup;
        r.ciHigh = ci.size() == 2 ? ci.at(1).toDouble() : r.speedup;
        r.medianMs = t.value(QLatin1String("median_ms")).toDouble();
        r.referenceMs = t.value(QLatin1String("reference_median_ms")).toDouble();
        r.tflops = t.value(QLatin1String("tflops")).toDouble();
        r.referenceTflops = t.value(QLatin1String("reference_tflops")).toDouble();
        for (const auto& s : t.value(QLatin1String("samples")).toArray()) {
            const QJsonObject o = s.toObject();
            TimingSample sample;
            sample.round = o.value(QLatin1String("round")).toInt();
            sample.pair = o.value(QLatin1String("pair")).toInt();
            sample.ratio = o.value(QLatin1String("ratio")).toDouble();
            sample.candidateMs = doubles(o.value(QLatin1String("candidate_ms")));
            sample.referenceMs = doubles(o.value(QLatin1String("reference_ms")));
            sample.inputSet = o.value(QLatin1String("input_set")).toInt();
            sample.smMhz = o.value(QLatin1String("sm_mhz")).toInt();
            sample.memMhz = o.value(QLatin1String("mem_mhz")).toInt();
            for (const auto& th : o.value(QLatin1String("throttle")).toArray())
                sample.throttle << th.toString();
            sample.discarded = o.value(QLatin1String("discarded")).toBool();
            sample.outputCheck = o.value(QLatin1String("output_check")).toDouble();
            r.samples.append(sample);
        }
        for (const auto& round : t.value(QLatin1String("rounds")).toArray())
            r.timing.roundMedians.append(
                round.toObject().value(QLatin1String("median_ratio")).toDouble());
        r.timing.roundSpread = t.value(QLatin1String("round_spread")).toDouble();
        r.timing.reruns = t.value(QLatin1String("reruns")).toInt();
        r.timing.discardedPairs = t.value(QLatin1String("discarded_pairs")).toInt();
        const QJsonObject method = t.value(QLatin1String("method")).toObject();
        r.timing.pairing = method.value(QLatin1String("pairing")).toString();
        r.timing.l2FlushBytes = method.value(QLatin1String("l2_flush_bytes")).toDouble();
        r.timing.blockingKernel = method.value(QLatin1String("blocking_kernel")).toBool();
        r.timing.inputSets = method.value(QLatin1String("input_sets")).toInt();
    }

    r.harnessTask = json.value(QLatin1String("task")).toObject();
    const QJsonValue maxSpread = r.harnessTask.value(QLatin1String("timing"))
                                     .toObject()
                                     .value(QLatin1String("max_round_spread"));
    if (maxSpread.isDouble())
        r.maxRoundSpread = maxSpread.toDouble();

    if (json.contains(QLatin1String("roofline"))) {
        const QJsonObject roof = json.value(QLatin1String("roofline")).toObject();
        if (roof.value(QLatin1String("floor_ms")).isDouble())
            r.floorMs = roof.value(QLatin1String("floor_ms")).toDouble();
        if (roof.value(QLatin1String("percent_of_floor")).isDouble())
            r.percentOfFloor = roof.value(QLatin1String("percent_of_floor")).toDouble();
        if (roof.value(QLatin1String("min_bytes")).isDouble())
            r.minBytes = roof.value(QLatin1String("min_bytes")).toDouble();
        r.bound = roof.value(QLatin1String("bound")).toString();
        r.peakFlops = optionalDouble(roof, "peak_flops");
        r.peakBytesPerSecond = optionalDouble(roof, "peak_bytes_per_s");
        r.roofFlops = optionalDouble(roof, "flops");
        r.intensity = optionalDouble(roof, "intensity");
    }

    const QJsonObject gpu =
        json.value(QLatin1String("environment")).toObject().value(QLatin1String("gpu")).toObject();
    r.gpuName = gpu.value(QLatin1String("name")).toString();
    r.environment.name = r.gpuName;
    // Only the CUDA child measures the SM count and L2 size; the supervisor's part lacks them.
    if (gpu.contains(QLatin1String("sm_count")))
        r.environment.device = DeviceInfo::fromJson(gpu);

    const QJsonObject err = json.value(QLatin1String("error")).toObject();
    r.errorStage = err.value(QLatin1String("stage")).toString();
    r.errorMessage = err.value(QLatin1String("message")).toString();
    r.errorSignal = err.value(QLatin1String("signal_name")).toString();

    if (json.value(QLatin1String("metrics")).isObject())
        r.profile.metricsSection = json.value(QLatin1String("metrics")).toObject();
    if (json.value(QLatin1String("profile")).isObject())
        r.profile.profileSection = json.value(QLatin1String("profile")).toObject();
    r.profile.derived = DerivedMetrics::fromSections(r.profile);
    return r;
}

QJsonObject EvaluationReport::toJson() const {
    if (!m_verbatim.isEmpty())
        return m_verbatim;
    QJsonObject json{
        {QStringLiteral("schema_version"), 1},
        {QStringLiteral("kind"), QStringLiteral("kevolve.report")},
        {QStringLiteral("status"), statusToString(status)},
        {QStringLiteral("suspicious"), suspicious},
        {QStringLiteral("message"), message},
    };
    if (!id.isEmpty())
        json.insert(QStringLiteral("id"), id);
    if (!errorMessage.isEmpty())
        json.insert(QStringLiteral("error"),
                    QJsonObject{{QStringLiteral("stage"), errorStage},
                                {QStringLiteral("message"), errorMessage}});
    return json;
}

int EvaluationReport::maxRegisters() const {
    int result = 0;
    for (const auto& k : kernels)
        result = std::max(result, k.registers);
    return result;
}

qint64 EvaluationReport::totalSpillBytes() const {
    qint64 result = 0;
    for (const auto& k : kernels)
        result += k.spillStoreBytes + k.spillLoadBytes;
    return result;
}

EvaluationReport EvaluationReport::synthetic(Status status, const QString& message) {
    EvaluationReport r;
    r.status = status;
    r.message = message;
    r.errorStage = QStringLiteral("engine");
    r.errorMessage = message;
    r.m_verbatim = r.toJson();
    return r;
}

namespace {

std::optional<double> counter(const QJsonObject& counters, const char* name) {
    const QJsonValue v = counters.value(QLatin1String(name));
    if (!v.isDouble())
        return std::nullopt;
    return v.toDouble();
}

// The sum of the counters present; none present gives nothing.
std::optional<double> sum(const QJsonObject& counters, std::initializer_list<const char*> names) {
    std::optional<double> total;
    for (const char* name : names) {
        if (const auto v = counter(counters, name))
            total = total.value_or(0.0) + *v;
    }
    return total;
}

} // namespace

QJsonObject DerivedMetrics::fromCounters(const QJsonObject& counters) {
    QJsonObject out;
    const auto put = [&out](const char* key, std::optional<double> value) {
        if (value)
            out.insert(QLatin1String(key), *value);
    };
    if (const auto warps = counter(counters, "sm__warps_active.avg.pct_of_peak_sustained_active"))
        out.insert(QStringLiteral("achieved_occupancy"), *warps / 100.0);
    put("dram_throughput_pct",
        counter(counters, "dram__throughput.avg.pct_of_peak_sustained_elapsed"));
    put("sm_throughput_pct", counter(counters, "sm__throughput.avg.pct_of_peak_sustained_elapsed"));
    put("tensor_pipe_pct",
        counter(counters,
                "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"));
    put("fma_pipe_pct",
        counter(counters, "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"));
    put("l2_hit_rate_pct", counter(counters, "lts__t_sector_hit_rate.pct"));
    put("dram_bytes", sum(counters, {"dram__bytes_read.sum", "dram__bytes_write.sum"}));
    put("local_memory_bytes", sum(counters, {"l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum",
                                             "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum"}));
    put("smem_bank_conflicts",
        sum(counters, {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                       "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"}));
    // The share of shared-memory wavefronts that bank conflicts add (0 conflict-free, 0.75 for a
    // 4-way conflict). Wavefronts per instruction alone mislead: a 16-byte LDS takes 4
    // conflict-free wavefronts, and ldmatrix and cp.async add wavefronts without shared ld/st
    // instructions (21 per instruction for a conflict-free mma_sync GEMM on the H200).
    const auto wavefronts = sum(counters, {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                                           "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"});
    const auto bankConflicts =
        sum(counters, {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                       "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"});
    if (wavefronts && bankConflicts && *wavefronts > 0)
        out.insert(QStringLiteral("smem_conflict_share"), *bankConflicts / *wavefronts);
    // The harness derives wavefronts per shared-memory instruction itself
    // (harness/src/metrics.cpp); without it, from the counters (the instruction counter's name
    // changed once: sass_ first).
    if (const auto perInstruction = counter(counters, "smem_wavefronts_per_instruction")) {
        out.insert(QStringLiteral("smem_wavefronts_per_request"), *perInstruction);
    } else {
        auto requests = sum(counters, {"smsp__inst_executed_op_shared_ld.sum",
                                       "smsp__inst_executed_op_shared_st.sum"});
        if (!requests)
            requests = sum(counters, {"smsp__sass_inst_executed_op_shared_ld.sum",
                                      "smsp__sass_inst_executed_op_shared_st.sum"});
        if (wavefronts && requests && *requests > 0)
            out.insert(QStringLiteral("smem_wavefronts_per_request"), *wavefronts / *requests);
    }
    return out;
}

QJsonObject DerivedMetrics::stallsFromCounters(const QJsonObject& counters) {
    static const QLatin1String prefix("smsp__warp_issue_stalled_");
    static const QLatin1String suffix("_per_warp_active.pct");
    QJsonObject out;
    for (auto it = counters.begin(); it != counters.end(); ++it) {
        const QString& key = it.key();
        if (key.startsWith(prefix) && key.endsWith(suffix) && it->isDouble() &&
            key.size() > prefix.size() + suffix.size())
            out.insert(key.mid(prefix.size(), key.size() - prefix.size() - suffix.size()),
                       it->toDouble() / 100.0);
    }
    return out;
}

DerivedMetrics DerivedMetrics::fromReport(const EvaluationReport& report) {
    return report.profile.derived;
}

DerivedMetrics DerivedMetrics::fromSections(const ProfileMetrics& sections) {
    DerivedMetrics m;
    const QJsonObject metrics = sections.metricsSection.value_or(QJsonObject());
    if (metrics.value(QLatin1String("candidate")).isObject()) {
        m.candidateCounters = metrics.value(QLatin1String("candidate")).toObject();
        m.referenceCounters = metrics.value(QLatin1String("reference")).toObject();
        m.candidate = fromCounters(m.candidateCounters);
        m.reference = fromCounters(m.referenceCounters);
        m.candidateStalls = stallsFromCounters(m.candidateCounters);
        return m;
    }
    const QJsonObject profile = sections.profileSection.value_or(QJsonObject());
    const QJsonObject candidate = profile.value(QLatin1String("candidate")).toObject();
    m.candidate = candidate.value(QLatin1String("metrics")).toObject();
    m.reference = profile.value(QLatin1String("reference"))
                      .toObject()
                      .value(QLatin1String("metrics"))
                      .toObject();
    m.candidateStalls = candidate.value(QLatin1String("warp_stalls")).toObject();
    return m;
}

} // namespace kev
