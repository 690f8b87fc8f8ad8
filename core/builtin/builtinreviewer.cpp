#include "builtin/builtinreviewer.h"

#include "builtin/counterjumps.h"
#include "builtin/family_wgmma.h"
#include "builtin/kernelfamily.h"
#include "builtin/knowledgebase.h"

#include <QJsonArray>
#include <QMetaObject>
#include <QPointer>

using namespace Qt::StringLiterals;

namespace kev {

namespace {

// Thresholds of the rules. Sources: the CUDA best-practices rules of thumb (a shared-memory
// instruction ideally costs one wavefront; occupancy below ~25% leaves latency exposed when a
// kernel has no other latency hiding).
constexpr double kNearFloorPercent = 85.0;
constexpr double kNearReferenceSpeedup = 0.97;
constexpr double kWavefrontsPerRequestHigh = 1.5;
constexpr double kLowOccupancy = 0.20;
constexpr double kDramBusyPercent = 70.0;
constexpr double kTensorIdlePercent = 40.0;
// A GEMM judged by the DRAM floor whose tensor pipe is this busy shares its time between MMAs and
// bytes: near the ridge (M = 160 to 224 on the H200, tensor pipe 57-68%) more bytes in flight
// (split-K + 1) measured 10-25% slower, so the bytes-in-flight remedies do not apply.
constexpr double kTensorBusyPercent = 50.0;
constexpr int kManyRegisters = 168;
// Memory-bound families: near 90% of the DRAM floor there is nothing left worth a search step;
// below half occupancy with DRAM not busy, too few bytes are in flight.
constexpr double kMemoryNearFloorPercent = 90.0;
constexpr double kMemoryLowOccupancy = 0.5;
// A memory-bound kernel whose warps wait at barriers in at least this share of the stall samples
// is bound by its reductions per row.
constexpr double kBarrierBoundShare = 0.25;
// Bank conflicts matter when they add this share of the shared-memory wavefronts (a 2-way
// conflict adds half).
constexpr double kConflictShareHigh = 0.2;
// DRAM bytes beyond the task's minimum by this factor: rows or tiles read more than once.
constexpr double kExtraTrafficFactor = 1.1;

struct Move {
    QString param;
    int step;
    QString why;
};

QJsonArray movesJson(const QVector<Move>& moves) {
    QJsonArray out;
    for (const Move& m : moves)
        out.append(QJsonObject{{u"param"_s, m.param}, {u"step"_s, m.step}, {u"why"_s, m.why}});
    return out;
}

QString firstLines(const QString& text, int lines) {
    QStringList kept;
    const QStringList all = text.split(u'\n', Qt::SkipEmptyParts);
    for (const QString& line : all) {
        if (line.contains(u"error"_s, Qt::CaseInsensitive))
            kept << line.trimmed();
        if (kept.size() >= lines)
            break;
    }
    if (kept.isEmpty() && !all.isEmpty())
        kept << all.first().trimmed();
    return kept.join(u"\n"_s);
}

// Whether the source is exactly what the built-in coder writes for the strategy. Then coding
// again cannot change anything, so a failure is the plan's to fix (move elsewhere); otherwise a
// person or another coder wrote it and the implementation is to blame.
bool isBuiltinSource(const Strategy& strategy, const Task& task, const QString& source) {
    const KernelFamily* family = FamilyRegistry::instance().find(strategy.family);
    return family && family->generate(strategy, task) == source;
}

// Named warp stalls and their usual remedies, as parameter moves.
QVector<Move> stallRemedy(const QString& stall) {
    if (stall == u"long_scoreboard")
        return {{u"stages"_s, 1, u"global loads not hidden: deepen the pipeline"_s}};
    if (stall == u"barrier")
        return {{u"blockK"_s, 1, u"warps wait at __syncthreads: more work per barrier"_s}};
    if (stall == u"mio_throttle" || stall == u"short_scoreboard")
        return {{u"smemLayout"_s, 1, u"shared-memory queue full: remove bank conflicts"_s},
                {u"warpN"_s, 1, u"more MMAs per fragment load"_s}};
    if (stall == u"math_pipe_throttle")
        return {{u"warpM"_s, -1, u"math pipe saturated by few warps: spread over more warps"_s}};
    if (stall == u"not_selected")
        return {{u"warpN"_s, 1, u"too many eligible warps: larger warp tiles"_s}};
    return {};
}

// A correct kernel of a memory-bound family: the headline is the share of the DRAM floor, and the
// remedies move bytes in flight (vector width, vectors per thread, rows per block, resident
// blocks) rather than data reuse.
void reviewMemoryBound(const QJsonObject& metrics, double speedup,
                       const std::optional<double>& percentOfFloor, double minBytes, qint64 spills,
                       int registers, ReviewFeedback& fb, QJsonObject& evidence,
                       QVector<Move>& moves) {
    const auto metric = [&metrics](const char16_t* name) {
        return metrics.value(QString::fromUtf16(name)).toDouble(-1.0);
    };
    const QString floorText = percentOfFloor
                                  ? u"%1% of the DRAM floor"_s.arg(*percentOfFloor, 0, 'f', 1)
                                  : u"an unknown share of the DRAM floor"_s;
    if (percentOfFloor)
        evidence.insert(u"percent_of_floor"_s, *percentOfFloor);
    QString worstStall;
    double worst = 0;
    for (auto it = metrics.begin(); it != metrics.end(); ++it) {
        if (it.key().startsWith(u"stall_"_s) && it->toDouble() > worst) {
            worst = it->toDouble();
            worstStall = it.key().mid(6);
        }
    }
    const double dram = metric(u"dram_throughput_pct");
    const double occupancy = metric(u"achieved_occupancy");
    const double bytes = metric(u"dram_bytes");
    if (percentOfFloor && *percentOfFloor >= kMemoryNearFloorPercent) {
        fb.bottleneckId = u"near_floor"_s;
        fb.bottleneckText =
            u"At %1 (%2x the reference): the memory system is nearly saturated."_s.arg(floorText)
                .arg(speedup, 0, 'f', 3);
        fb.suggestions << u"Stop; only a persistent grid or more bytes in flight may add a few "
                          "percent."_s;
        evidence.insert(u"stop"_s, true);
        moves << Move{u"ctas_per_sm"_s, 1, u"fine move"_s}
              << Move{u"vectors_per_thread"_s, 1, u"fine move"_s};
    } else if (spills > 0) {
        fb.bottleneckId = u"register_spills"_s;
        fb.bottleneckText = u"At %1 with %2 bytes spilled (%3 registers): local-memory traffic "
                            "competes with the data."_s.arg(floorText)
                                .arg(spills)
                                .arg(registers);
        fb.suggestions << u"Hold fewer values per thread."_s;
        moves << Move{u"vectors_per_thread"_s, -1, u"fewer cached values per thread"_s}
              << Move{u"vectorWidth"_s, -1, u"fewer values per access"_s};
    } else if (dram >= 0 && dram < kDramBusyPercent && occupancy >= 0 &&
               occupancy < kMemoryLowOccupancy) {
        fb.bottleneckId = u"few_bytes_in_flight"_s;
        fb.bottleneckText = u"At %1, DRAM %2% busy with occupancy %3: too few warps, so too few "
                            "bytes in flight to cover the memory latency."_s.arg(floorText)
                                .arg(dram, 0, 'f', 0)
                                .arg(occupancy, 0, 'f', 2);
        fb.suggestions << u"More rows per block, more vectors per thread, or more resident "
                          "blocks."_s;
        moves << Move{u"warps"_s, 1, u"more rows (warps) per block"_s}
              << Move{u"vectors_per_thread"_s, 1, u"more loads in flight per thread"_s}
              << Move{u"ctas_per_sm"_s, 1, u"more resident blocks"_s};
    } else if (worstStall == u"long_scoreboard") {
        fb.bottleneckId = u"stall_long_scoreboard"_s;
        fb.bottleneckText =
            u"At %1, warps mostly wait on global loads (%2 of samples)."_s.arg(floorText).arg(
                worst, 0, 'f', 2);
        fb.suggestions << u"Wider accesses and more independent loads per thread."_s;
        moves << Move{u"vectorWidth"_s, 1, u"more bytes per load"_s}
              << Move{u"vectors_per_thread"_s, 1, u"more loads in flight"_s};
    } else if (worstStall == u"barrier" && worst >= kBarrierBoundShare) {
        // The 16-bit rows of softmax and layernorm on the H200: half the bytes of an f32 row for
        // the same reductions, so the barriers and instructions per row, not the bytes in flight,
        // bound them (one reduction instead of two, the next row's loads issued before them, and
        // a barrier instead of two per reduction took them from 61-78% to 87% of the floor).
        fb.bottleneckId = u"stall_barrier"_s;
        fb.bottleneckText = u"At %1, warps mostly wait at the block's barriers (%2 of samples): "
                            "the row's reductions serialise the block."_s.arg(floorText)
                                .arg(worst, 0, 'f', 2);
        fb.suggestions << u"Fewer block reductions per row (one-pass statistics), the next row's "
                          "loads in flight through them (pipeline=prefetch on a persistent grid), "
                          "or fewer warps per row."_s;
        moves << Move{u"stats"_s, 1, u"one reduction per row"_s}
              << Move{u"pipeline"_s, 1, u"loads in flight through the barriers"_s}
              << Move{u"warps"_s, -1, u"fewer warps at each barrier"_s};
    } else if (bytes > 0 && minBytes > 0 ? bytes > kExtraTrafficFactor * minBytes
                                         : dram >= kDramBusyPercent) {
        // Measured DRAM bytes against the task's minimum when the report has both; a busy DRAM
        // alone says nothing (a kernel at the floor is busy too).
        fb.bottleneckId = u"extra_traffic"_s;
        fb.bottleneckText =
            bytes > 0 && minBytes > 0
                ? u"At %1 the kernel moves %2x the minimum bytes (rows read more than once)."_s
                      .arg(floorText)
                      .arg(bytes / minBytes, 0, 'f', 2)
                : u"At %1 while DRAM is %2% busy: the kernel moves more bytes than the floor "
                  "(rows read more than once)."_s.arg(floorText)
                      .arg(dram, 0, 'f', 0);
        fb.suggestions << u"Cache the whole row in registers, or use one-pass statistics."_s;
        moves << Move{u"vectors_per_thread"_s, 1, u"cache more of the row"_s}
              << Move{u"stats"_s, 1, u"one read for the statistics"_s};
    } else {
        fb.bottleneckId = u"timing_only"_s;
        fb.bottleneckText =
            u"At %1 (%2x the reference); no profiler metrics point elsewhere."_s.arg(floorText).arg(
                speedup, 0, 'f', 3);
        fb.suggestions << u"Try more bytes in flight: wider vectors, more vectors per thread."_s;
        moves << Move{u"vectors_per_thread"_s, 1, u"more loads in flight"_s}
              << Move{u"vectorWidth"_s, 1, u"wider accesses"_s};
    }
}

} // namespace

QJsonObject candidateMetrics(const EvaluationReport& report) {
    // The harness's counters under Kevolve's names (DerivedMetrics: achieved_occupancy,
    // dram_throughput_pct, ...), and each warp stall reason as stall_<reason>, a fraction.
    const DerivedMetrics derived = DerivedMetrics::fromReport(report);
    QJsonObject out;
    for (auto it = derived.candidate.begin(); it != derived.candidate.end(); ++it) {
        if (it->isDouble())
            out.insert(it.key(), *it);
    }
    for (auto it = derived.candidateStalls.begin(); it != derived.candidateStalls.end(); ++it) {
        if (it->isDouble())
            out.insert(u"stall_"_s + it.key(), *it);
    }
    return out;
}

ReviewFeedback reviewReport(const AgentContext& context, const Strategy& strategy,
                            const QString& source, const EvaluationReport& report) {
    ReviewFeedback fb;
    fb.status = EvaluationReport::statusToString(report.status);
    fb.compileOk = report.compileOk;
    fb.correct = report.isCorrect();
    if (report.timed) {
        fb.timeMs = report.medianMs;
        fb.referenceMs = report.referenceMs;
        fb.speedup = report.speedup;
    }
    fb.percentOfFloor = report.percentOfFloor;

    const bool generated = isBuiltinSource(strategy, context.task, source);
    const QString failureBlame = generated ? u"strategy"_s : u"implementation"_s;
    const QString parentText =
        context.parentStrategy
            ? u"revert to the parent (%1)"_s.arg(context.parentStrategy->summary())
            : u"start again from the family's default"_s;
    QJsonObject evidence{{u"generated_by_builtin"_s, generated}};
    QVector<Move> moves;

    switch (report.status) {
    case EvaluationReport::Status::CompileError:
        fb.bottleneckId = u"compile_error"_s;
        fb.bottleneckText = u"The kernel does not compile: "_s + firstLines(report.compileLog, 1);
        fb.suggestions << (generated
                               ? u"The template failed for this point: pick another "
                                 "configuration and report the template bug."_s
                               : u"Fix the compile error: "_s + firstLines(report.compileLog, 3));
        fb.blame = failureBlame;
        evidence.insert(u"compile_log_head"_s, firstLines(report.compileLog, 5));
        break;
    case EvaluationReport::Status::RuleViolation:
        fb.bottleneckId = u"rule_violation"_s;
        fb.bottleneckText = u"The referee refused the kernel: "_s + report.violations.join(u"; "_s);
        fb.suggestions << u"Remove the forbidden calls or symbols; only launches on the given "
                          "stream are allowed."_s;
        fb.blame = u"implementation"_s;
        evidence.insert(u"violations"_s, QJsonArray::fromStringList(report.violations));
        break;
    case EvaluationReport::Status::RuntimeError:
    case EvaluationReport::Status::Timeout:
        fb.bottleneckId =
            report.status == EvaluationReport::Status::Timeout ? u"timeout"_s : u"runtime_error"_s;
        fb.bottleneckText = u"The kernel failed at run time (%1): %2"_s.arg(
            report.errorStage,
            report.errorMessage.isEmpty() ? report.message : report.errorMessage);
        fb.suggestions << parentText + u"; check launch bounds, shared-memory size and "
                                       "out-of-range addresses."_s;
        fb.blame = failureBlame;
        break;
    case EvaluationReport::Status::Incorrect:
        fb.bottleneckId = u"incorrect"_s;
        fb.bottleneckText =
            u"Wrong results (%1 of %2 trials passed, worst error %3x the bound%4)."_s
                .arg(report.correctness.passed)
                .arg(report.correctness.trials)
                .arg(report.correctness.worstMargin, 0, 'g', 3)
                .arg(report.correctness.firstFailure.isEmpty()
                         ? QString()
                         : u"; first failure: "_s + report.correctness.firstFailure);
        fb.suggestions << parentText + u": this configuration is not trusted."_s;
        if (!generated)
            fb.suggestions << u"Check tile tails (rows past M, columns past N, k past K) and the "
                              "fragment index math."_s;
        fb.blame = failureBlame;
        evidence.insert(u"revert_to_parent"_s, true);
        break;
    case EvaluationReport::Status::Unstable:
        fb.bottleneckId = u"unstable"_s;
        fb.bottleneckText = u"Timing rounds disagree; nobody acts on these numbers."_s;
        fb.suggestions << u"Measure again on a quiet GPU."_s;
        fb.blame = u"none"_s;
        break;
    case EvaluationReport::Status::NoDevice:
        fb.bottleneckId = u"no_device"_s;
        fb.bottleneckText = u"No CUDA device: the kernel was not run."_s;
        fb.blame = u"none"_s;
        break;
    case EvaluationReport::Status::Ok:
        break;
    }
    if (report.status != EvaluationReport::Status::Ok) {
        evidence.insert(u"moves"_s, movesJson(moves));
        fb.evidence = evidence;
        return fb;
    }

    // Correct: find the bottleneck, strongest evidence first.
    fb.blame = u"strategy"_s;
    const QJsonObject metrics = candidateMetrics(report);
    evidence.insert(u"metrics"_s, metrics);
    const qint64 spills = report.totalSpillBytes();
    const int registers = report.maxRegisters();
    evidence.insert(u"spill_bytes"_s, spills);
    evidence.insert(u"registers"_s, registers);
    const double speedup = report.timed ? report.speedup : 0.0;
    const auto metric = [&metrics](const char16_t* name) {
        return metrics.value(QString::fromUtf16(name)).toDouble(-1.0);
    };

    if (knowledge::isMemoryBoundPlan(strategy.family, context.task, context.device)) {
        reviewMemoryBound(metrics, speedup, report.percentOfFloor, report.minBytes.value_or(0.0),
                          spills, registers, fb, evidence, moves);
        if (context.task.isGemm()) {
            // A small-M GEMM streams B: its bytes in flight are the pipeline depth and the split
            // count (SMs kept busy), its access size the k-tile depth (mma_smallm) or the tile
            // width (wgmma_tma, whose k-tile is fixed), so the remedies move those knobs.
            evidence.insert(u"judged_by"_s, u"share of the DRAM floor (memory-bound GEMM)"_s);
            const bool gemvPath = strategy.family == u"gemv_smallm";
            for (Move& m : moves) {
                if (m.param == u"ctas_per_sm")
                    m.param = u"splitK"_s;
                else if (gemvPath) // rows of B in flight per warp: vectors_per_thread itself
                    m.param = u"vectors_per_thread"_s;
                else if (m.param == u"vectorWidth")
                    m.param = strategy.family == u"mma_smallm" ? u"blockK"_s : u"blockN"_s;
                else
                    m.param = u"stages"_s;
            }
        }
        const double tensorPipe = metric(u"tensor_pipe_pct");
        if (context.task.isGemm() && tensorPipe >= kTensorBusyPercent &&
            (fb.bottleneckId == u"few_bytes_in_flight" ||
             fb.bottleneckId == u"stall_long_scoreboard")) {
            fb.bottleneckId = u"tensor_busy"_s;
            fb.bottleneckText =
                u"At %1% of the DRAM floor with the tensor pipe %2% busy: the tile's MMAs "
                "share the time with the bytes, so more bytes in flight (more splits) would add "
                "partials, not speed."_s.arg(report.percentOfFloor.value_or(0.0), 0, 'f', 1)
                    .arg(tensorPipe, 0, 'f', 0);
            fb.suggestions = {u"Less padded MMA work (a tile as tall as M, or swapped operands "
                              "with C's rows on the wgmma N), a deeper ring, a wider tile."_s};
            evidence.insert(u"tensor_pipe_pct"_s, tensorPipe);
            moves = {Move{u"stages"_s, 1, u"a deeper ring"_s},
                     Move{u"blockN"_s, 1, u"a wider tile: fewer tiles, less epilogue"_s},
                     Move{u"splitK"_s, -1, u"fewer partials"_s}};
        }
        // Too few bytes in flight, with a number: go to the configuration that would have
        // enough in one move (first, so the planner takes it), then search around it.
        const double achieved =
            report.percentOfFloor ? *report.percentOfFloor : metric(u"dram_throughput_pct");
        const KernelFamily* family = FamilyRegistry::instance().find(strategy.family);
        if (family && (fb.bottleneckId == u"few_bytes_in_flight" ||
                       fb.bottleneckId == u"stall_long_scoreboard")) {
            if (const auto jump =
                    bytesInFlightJump(*family, strategy, context.task, context.device, achieved)) {
                moves.prepend(Move{jump->param, jump->step, jump->why});
                evidence.insert(u"jump"_s, jump->evidence);
                fb.suggestions.prepend(jump->why);
            }
        }
        // Split-K's partials summed by a second kernel: on chip instead, where the clusters fit.
        if (context.task.isGemm()) {
            const QString clusterSum = wgmmaClusterSumMove(strategy, context.task, context.device);
            if (!clusterSum.isEmpty()) {
                moves.prepend(Move{u"split_reduce"_s, 1, clusterSum});
                fb.suggestions.prepend(clusterSum.left(1).toUpper() + clusterSum.mid(1) + u'.');
                evidence.insert(u"cluster_sum"_s, clusterSum);
            }
        }
        const double bytes = metric(u"dram_bytes");
        const double minBytes = report.minBytes.value_or(0.0);
        if (family && fb.bottleneckId == u"extra_traffic" && bytes > 0 && minBytes > 0) {
            if (const auto jump = cacheRowJump(*family, strategy, context.task, context.device,
                                               bytes / minBytes)) {
                moves.prepend(Move{jump->param, jump->step, jump->why});
                evidence.insert(u"jump"_s, jump->evidence);
                fb.suggestions.prepend(jump->why);
            }
        }
    } else if ((report.percentOfFloor && *report.percentOfFloor >= kNearFloorPercent) ||
               speedup >= kNearReferenceSpeedup) {
        fb.bottleneckId = u"near_floor"_s;
        fb.bottleneckText =
            report.percentOfFloor
                ? u"At %1% of the roofline floor and %2x the reference: little is "
                  "left to gain."_s.arg(*report.percentOfFloor, 0, 'f', 1)
                      .arg(speedup, 0, 'f', 3)
                : u"At %1x the reference: little is left to gain."_s.arg(speedup, 0, 'f', 3);
        fb.suggestions << u"Stop, or try only fine moves (raster, stages)."_s;
        evidence.insert(u"stop"_s, true);
        moves << Move{u"raster"_s, 1, u"fine move"_s} << Move{u"stages"_s, 1, u"fine move"_s};
    } else if (spills > 0) {
        fb.bottleneckId = u"register_spills"_s;
        fb.bottleneckText =
            u"ptxas spills %1 bytes to local memory (%2 registers)."_s.arg(spills).arg(registers);
        fb.suggestions << u"Use fewer registers: a smaller warp tile or fewer stages."_s;
        moves << Move{u"warpN"_s, -1, u"fewer accumulators per thread"_s}
              << Move{u"warpM"_s, -1, u"fewer accumulators per thread"_s}
              << Move{u"stages"_s, -1, u"fewer addresses in flight"_s};
    } else if (metrics.contains(u"smem_conflict_share"_s)
                   ? metric(u"smem_conflict_share") > kConflictShareHigh
                   : metric(u"smem_wavefronts_per_request") > kWavefrontsPerRequestHigh) {
        fb.bottleneckId = u"smem_bank_conflicts"_s;
        fb.bottleneckText = metrics.contains(u"smem_conflict_share"_s)
                                ? u"Bank conflicts add %1% of the shared-memory wavefronts."_s.arg(
                                      100.0 * metric(u"smem_conflict_share"), 0, 'f', 0)
                                : u"%1 shared-memory wavefronts per request: bank conflicts."_s.arg(
                                      metric(u"smem_wavefronts_per_request"), 0, 'f', 2);
        fb.suggestions << u"Pad or swizzle the shared-memory tiles."_s;
        moves << Move{u"smemLayout"_s, strategy.smemLayout == u"swizzled" ? -1 : 1,
                      u"change the bank mapping"_s};
    } else if (metric(u"achieved_occupancy") >= 0 &&
               metric(u"achieved_occupancy") < kLowOccupancy && registers >= kManyRegisters) {
        fb.bottleneckId = u"low_occupancy"_s;
        fb.bottleneckText = u"Occupancy %1 with %2 registers per thread."_s
                                .arg(metric(u"achieved_occupancy"), 0, 'f', 2)
                                .arg(registers);
        fb.suggestions << u"Smaller warp tile or fewer stages to fit more warps."_s;
        moves << Move{u"warpN"_s, -1, u"fewer registers per thread"_s}
              << Move{u"stages"_s, -1, u"less shared memory per block"_s};
    } else if (metric(u"dram_throughput_pct") >= kDramBusyPercent &&
               metric(u"tensor_pipe_pct") >= 0 && metric(u"tensor_pipe_pct") < kTensorIdlePercent) {
        fb.bottleneckId = u"memory_bound"_s;
        fb.bottleneckText = u"DRAM %1% busy while the tensor pipe is %2% busy: too little reuse."_s
                                .arg(metric(u"dram_throughput_pct"), 0, 'f', 0)
                                .arg(metric(u"tensor_pipe_pct"), 0, 'f', 0);
        fb.suggestions << u"Larger block tiles and a grouped raster for L2 reuse."_s;
        moves << Move{u"blockN"_s, 1, u"more reuse of each A byte"_s}
              << Move{u"blockM"_s, 1, u"more reuse of each B byte"_s}
              << Move{u"raster"_s, 1, u"L2 reuse between neighbouring blocks"_s};
    } else {
        QString worstStall;
        double worst = 0;
        for (auto it = metrics.begin(); it != metrics.end(); ++it) {
            if (it.key().startsWith(u"stall_"_s) && it->toDouble() > worst) {
                worst = it->toDouble();
                worstStall = it.key().mid(6);
            }
        }
        const QVector<Move> remedy = stallRemedy(worstStall);
        if (!remedy.isEmpty()) {
            fb.bottleneckId = u"stall_"_s + worstStall;
            fb.bottleneckText = u"Warps mostly stall on %1 (%2 of samples)."_s.arg(worstStall)
                                    .arg(worst, 0, 'f', 2);
            for (const Move& m : remedy)
                fb.suggestions << m.why;
            moves << remedy;
        } else {
            // Timing only: judge against the parent and propose the moves that usually pay.
            const bool hasParent = context.parentReport && context.parentReport->timed;
            const double parentSpeedup = hasParent ? context.parentReport->speedup : 0.0;
            fb.bottleneckId = u"timing_only"_s;
            fb.bottleneckText =
                hasParent ? u"%1x the reference (parent %2x); no profiler metrics."_s
                                .arg(speedup, 0, 'f', 3)
                                .arg(parentSpeedup, 0, 'f', 3)
                          : u"%1x the reference; no profiler metrics."_s.arg(speedup, 0, 'f', 3);
            fb.suggestions << u"Explore neighbouring tiles, pipeline depth and layout."_s;
            if (hasParent)
                evidence.insert(u"parent_speedup"_s, parentSpeedup);
            evidence.insert(u"improved"_s, !hasParent || speedup > parentSpeedup);
        }
    }
    evidence.insert(u"moves"_s, movesJson(moves));
    fb.evidence = evidence;
    return fb;
}

BuiltinReviewer::BuiltinReviewer(QObject* parent)
    : Reviewer(parent) {}

void BuiltinReviewer::review(const AgentContext& context, const Strategy& strategy,
                             const QString& source, const EvaluationReport& report) {
    const quint64 request = ++m_request;
    const ReviewFeedback fb = reviewReport(context, strategy, source, report);
    AgentTurn turn;
    turn.role = u"reviewer"_s;
    turn.backend = u"builtin"_s;
    turn.prompt = u"report status %1: %2"_s.arg(fb.status, report.message);
    turn.reply = fb.bottleneckId + u": "_s + fb.bottleneckText;
    // Results arrive by signal after the call returns, like every other backend's.
    QMetaObject::invokeMethod(
        this,
        [this, request, fb, turn] {
            if (request == m_request)
                emit reviewAvailable(fb, turn);
        },
        Qt::QueuedConnection);
}

void BuiltinReviewer::cancel() {
    ++m_request;
}

} // namespace kev
