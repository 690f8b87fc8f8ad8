#include "reportmetrics.h"

#include <QHash>
#include <QJsonObject>

namespace kev {

using namespace Qt::StringLiterals;

namespace {

QVector<ReportMetrics::Metric> numbers(const QJsonObject& object) {
    QVector<ReportMetrics::Metric> result;
    // Known metrics first, in the documented order, then the rest alphabetically (QJsonObject
    // iterates in key order).
    for (const QString& key : ReportMetrics::knownKeys()) {
        if (object.value(key).isDouble())
            result.append({key, object.value(key).toDouble()});
    }
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (it->isDouble() && !ReportMetrics::knownKeys().contains(it.key()))
            result.append({it.key(), it->toDouble()});
    }
    return result;
}

std::optional<double> find(const QVector<ReportMetrics::Metric>& metrics, const QString& key) {
    for (const auto& m : metrics) {
        if (m.key == key)
            return m.value;
    }
    return std::nullopt;
}

} // namespace

ReportMetrics ReportMetrics::fromReport(const EvaluationReport& report) {
    // Kevolve's names first (derived from the harness's counters), then the counters themselves
    // under their Nsight Compute names.
    const DerivedMetrics derived = DerivedMetrics::fromReport(report);
    ReportMetrics result;
    result.candidate = numbers(derived.candidate) + numbers(derived.candidateCounters);
    result.reference = numbers(derived.reference) + numbers(derived.referenceCounters);
    for (auto it = derived.candidateStalls.begin(); it != derived.candidateStalls.end(); ++it) {
        if (it->isDouble())
            result.warpStalls.append({it.key(), it->toDouble()});
    }
    return result;
}

std::optional<double> ReportMetrics::value(const QString& key) const {
    return find(candidate, key);
}

std::optional<double> ReportMetrics::referenceValue(const QString& key) const {
    return find(reference, key);
}

const QStringList& ReportMetrics::knownKeys() {
    static const QStringList keys = {u"achieved_occupancy"_s,  u"theoretical_occupancy"_s,
                                     u"smem_conflict_share"_s, u"smem_wavefronts_per_request"_s,
                                     u"smem_bank_conflicts"_s, u"dram_throughput_pct"_s,
                                     u"sm_throughput_pct"_s,   u"tensor_pipe_pct"_s,
                                     u"fma_pipe_pct"_s,        u"l2_hit_rate_pct"_s,
                                     u"dram_bytes"_s,          u"local_memory_bytes"_s};
    return keys;
}

QString ReportMetrics::label(const QString& key) {
    static const QHash<QString, QString> labels = {
        {u"achieved_occupancy"_s, u"achieved occupancy"_s},
        {u"theoretical_occupancy"_s, u"theoretical occupancy"_s},
        {u"smem_bank_conflicts"_s, u"shared-memory bank conflicts (count)"_s},
        {u"smem_conflict_share"_s, u"bank-conflict share"_s},
        {u"smem_wavefronts_per_request"_s, u"shared-memory wavefronts / request"_s},
        {u"dram_throughput_pct"_s, u"DRAM throughput"_s},
        {u"sm_throughput_pct"_s, u"SM throughput"_s},
        {u"tensor_pipe_pct"_s, u"tensor pipe utilisation"_s},
        {u"fma_pipe_pct"_s, u"FMA pipe utilisation"_s},
        {u"l2_hit_rate_pct"_s, u"L2 hit rate"_s},
        {u"dram_bytes"_s, u"DRAM bytes"_s},
        {u"local_memory_bytes"_s, u"local-memory traffic"_s}};
    return labels.value(key, key);
}

QString ReportMetrics::format(const QString& key, double value) {
    if (key.endsWith(u"_occupancy") || key.endsWith(u"_share"))
        return QString::number(value * 100.0, 'f', 1) + u" %"_s;
    if (key.endsWith(u"_pct"))
        return QString::number(value, 'f', 1) + u" %"_s;
    if (key.endsWith(u"_bytes"))
        return QString::number(value / (1024.0 * 1024.0), 'f', 1) + u" MiB"_s;
    if (key == u"smem_bank_conflicts")
        return QString::number(qint64(value));
    return QString::number(value, 'g', 4);
}

QString ReportMetrics::description(const QString& key) {
    struct Text {
        const char16_t* what;
        const char16_t* ncu;
        const char16_t* reading;
    };
    static const QHash<QString, Text> texts = {
        {u"achieved_occupancy"_s,
         {u"The average share of the SM's warp slots that held an active warp.",
          u"sm__warps_active.avg.pct_of_peak_sustained_active",
          u"Good: close to the theoretical occupancy. A tensor-core GEMM with a deep pipeline "
          u"runs well at 10–25 %; a memory-bound kernel wants 50 % or more to hide DRAM "
          u"latency. Far below theoretical: tail effects or imbalanced blocks."}},
        {u"theoretical_occupancy"_s,
         {u"The most warps per SM the launch allows (registers, shared memory, block size).",
          u"sm__maximum_warps_per_active_cycle_pct",
          u"Good: enough warps to hide latency; low is fine when a kernel hides it with "
          u"instruction-level parallelism (a pipelined tensor-core GEMM)."}},
        {u"smem_conflict_share"_s,
         {u"The share of shared-memory wavefronts that bank conflicts add.",
          u"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}.sum / "
          u"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum",
          u"Good: 0 %. Bad: above about 10 %; 50 % is a 2-way conflict on every access, 75 % a "
          u"4-way one. Fix with a swizzled or padded layout."}},
        {u"smem_wavefronts_per_request"_s,
         {u"Shared-memory wavefronts per shared load/store instruction.",
          u"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum / "
          u"smsp__inst_executed_op_shared_{ld,st}.sum",
          u"Good: 1 for a conflict-free 4-byte access, 4 for a conflict-free 16-byte one; more "
          u"than the access width needs is bad (bank conflicts). ldmatrix and cp.async add "
          u"wavefronts without instructions, so read it with the conflict share."}},
        {u"smem_bank_conflicts"_s,
         {u"Shared-memory bank conflicts, a raw count over the whole kernel.",
          u"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}.sum",
          u"Good: 0. Compare the conflict share rather than the count, which grows with the "
          u"problem size."}},
        {u"dram_throughput_pct"_s,
         {u"DRAM bandwidth used, as a share of the peak.",
          u"dram__throughput.avg.pct_of_peak_sustained_elapsed",
          u"Memory-bound kernels: good at 80 % or more. A compute-bound GEMM runs well with it "
          u"low; high there means tiles are re-read from DRAM."}},
        {u"sm_throughput_pct"_s,
         {u"The busiest SM unit's throughput, as a share of its peak.",
          u"sm__throughput.avg.pct_of_peak_sustained_elapsed",
          u"Compute-bound kernels: good at 80 % or more. Low together with low DRAM throughput: "
          u"latency-bound (stalls, too little parallelism)."}},
        {u"tensor_pipe_pct"_s,
         {u"Cycles the tensor-core pipe was busy, as a share of the active cycles.",
          u"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
          u"Tensor-core GEMM: good at 70 % or more (cuBLAS reaches 80–90 % at 4096³). Zero: the "
          u"math runs on CUDA cores."}},
        {u"fma_pipe_pct"_s,
         {u"Cycles the FMA pipe was busy, as a share of the active cycles.",
          u"sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
          u"Good: high for a CUDA-core GEMM. Bad: high in a tensor-core kernel, where it means "
          u"math (or address arithmetic) on the wrong pipe."}},
        {u"l2_hit_rate_pct"_s,
         {u"Sectors served from L2 rather than DRAM.", u"lts__t_sector_hit_rate.pct",
          u"Tiled GEMM: good at 80 % or more (tiles reused across blocks). Streaming kernels "
          u"(softmax, elementwise) read each byte once, so low is expected."}},
        {u"dram_bytes"_s,
         {u"Bytes read from and written to DRAM.", u"dram__bytes_read.sum + dram__bytes_write.sum",
          u"Good: close to the task's minimum bytes; more means re-reads or spills."}},
        {u"local_memory_bytes"_s,
         {u"Local-memory (register spill) traffic.",
          u"l1tex__t_bytes_pipe_lsu_mem_local_op_{ld,st}.sum",
          u"Good: 0. Any traffic here is spilled registers or a stack array."}}};
    const auto it = texts.constFind(key);
    if (it == texts.constEnd())
        return u"<b>%1</b> (Nsight Compute counter, as the harness reported it)"_s.arg(key);
    return u"<b>%1</b>: %2<br><br>Nsight Compute: <tt>%3</tt><br><br>%4"_s.arg(
        label(key), QString::fromUtf16(it->what), QString::fromUtf16(it->ncu),
        QString::fromUtf16(it->reading));
}

} // namespace kev
