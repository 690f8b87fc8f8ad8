// The typed configuration of the row-wise family (softmax, layernorm, rmsnorm, reduce):
// Strategy::params parsed once into enums and integers, the way cutlass_library describes an
// operation, so the constraints, the resource model and the generators never compare knob strings.
// Strings exist only at the save/load boundary (fromStrategy/applyTo).
#ifndef KEV_BUILTIN_ROWWISECONFIG_H
#define KEV_BUILTIN_ROWWISECONFIG_H

#include "core/deviceinfo.h"
#include "core/strategy.h"
#include "core/task.h"

#include <QString>
#include <QStringList>

#include <optional>

namespace kev::rowwise {

// The task's op, from Task::op at the boundary.
enum class RowOp { Softmax, LayerNorm, Reduce, RmsNorm };
// reduce's params.reduction.
enum class Reduction { Sum, Max };
// mapping: one warp per row (several rows per block) or the whole block on one row.
enum class Mapping { Warp, Block };
// pipeline: one row at a time; the next row prefetched packed in registers; rows copied ahead
// with cp.async into a shared-memory ring; the block's whole slice of the row copied into shared
// memory with bulk asynchronous copies (TMA), read once however long the row (softmax, sm_90).
enum class Pipeline { None, Prefetch, Async, Bulk };
// stats: maximum then sum / mean then variance; online softmax / Welford (rmsnorm and reduce: their
// one reduction); sums of x - x[0] and of its square in one pass (layernorm, prefetch).
enum class Stats { TwoPass, OnePass, ShiftedOnePass };
// weights: layernorm's W and B (rmsnorm's W) read per row, or kept packed in registers for all
// rows.
enum class Weights { Load, Registers };

std::optional<RowOp> rowOpOf(const QString& op);
QString opName(RowOp op);
QString mappingName(Mapping m);
QString pipelineName(Pipeline p);
QString statsName(Stats s);
QString weightsName(Weights w);

struct RowwiseConfig {
    Mapping mapping = Mapping::Warp;
    int warps = 4;
    int vectorWidth = 1;
    int vectorsPerThread = 1;
    Stats stats = Stats::TwoPass;
    int ctasPerSm = 0; // 0: one block per row group; k > 0: persistent grid of k blocks per SM
    Pipeline pipeline = Pipeline::None;
    int depth = 4; // rows in flight with Pipeline::Async
    Weights weights = Weights::Load;
    // Blocks of a thread block cluster (sm_90) that share one row: 1 (a row per block or warp),
    // 2 to 8 (rows too few to fill the GPU or too long for a block's shared memory, each split
    // into slices combined through DSMEM).
    int split = 1;
    // Knob text that names none of the enum's values: the enum then holds its first value, so
    // the estimates stay defined, and the constraints report the text.
    struct Invalid {
        std::optional<QString> mapping;
        std::optional<QString> stats;
        std::optional<QString> pipeline;
        std::optional<QString> weights;
    } invalid;

    // Reads the knobs; strategies written before pipeline, depth and weights existed read as the
    // one-row-at-a-time kernel (none, 4, load).
    static RowwiseConfig fromStrategy(const Strategy& s);
    // Writes the knobs back as Strategy::params (and warps, vectorWidth).
    void applyTo(Strategy& s) const;

    bool persistent() const { return ctasPerSm > 0; }
    bool splitsRows() const { return split > 1; }
    bool keepsWeights() const { return weights == Weights::Registers; }
    // Threads that share one row.
    int rowThreads() const { return mapping == Mapping::Block ? warps * 32 : 32; }
    // Elements of a row the registers of its threads cover in one load.
    qint64 chunkElements() const { return qint64(rowThreads()) * vectorWidth * vectorsPerThread; }
};

// The element types a row-wise task reads and writes, as the generators and estimates need them.
struct RowTensors {
    RowOp op = RowOp::Softmax;
    Reduction reduction = Reduction::Sum;
    QString x, y, w, b; // dtypes; w empty unless layernorm or rmsnorm, b unless layernorm
    int xBytes = 4;

    // nullopt when the task is not softmax, layernorm, rmsnorm or reduce.
    static std::optional<RowTensors> fromTask(const Task& task);
    // Every tensor's dtype in the task's order, and those accessed with vectors (reduce's output
    // is one value per row).
    QStringList dtypes() const;
    QStringList vectorDtypes() const;
    // The per-column tensors a row is scaled by, as the texts name them ("W and B", "W"; "" for
    // none).
    QString weightNames() const;
};

// The resource model shared by the constraints, the estimates and the defaults.
int registerEstimate(const RowwiseConfig& c, const RowTensors& t);
int cacheFloats(const RowwiseConfig& c, const RowTensors& t);
int prefetchWords(const RowwiseConfig& c, const RowTensors& t);
int vectorBytes(const RowwiseConfig& c, const RowTensors& t);
qint64 ringBytes(const RowwiseConfig& c, const RowTensors& t);
// pipeline=bulk: the bytes of a block's slice of a row of `n` (N / split in whole vectors).
qint64 bulkSliceBytes(const RowwiseConfig& c, const RowTensors& t, qint64 n);
// The mbarriers of pipeline=bulk: the slice lands in this many copies.
inline constexpr int kBulkPieces = 8;
// Shared memory of one block, for rows of `n` (only pipeline=bulk's depends on it).
qint64 smemPerBlock(const RowwiseConfig& c, const RowTensors& t, qint64 n = 0);
// Blocks per SM the register file and shared memory hold, at most 8 (and 2048 threads).
int residentBlocks(const RowwiseConfig& c, const RowTensors& t, const DeviceInfo& device,
                   qint64 n = 0);

// Bytes of next rows a prefetching persistent grid keeps in flight per SM at its default: where
// the measured defaults sit (layernorm bf16 rows of 8 KB at 4 blocks per SM, 83.5% of the DRAM
// floor; softmax f16 rows of 16 KB at 2, 85.0%), about the bandwidth-latency product of an H200
// SM (4.8 TB/s x ~1 us / 132 SMs). Layernorm f16 rows of 1536 at 4 blocks (12 KB) reached 38.7%,
// at 8 blocks (24 KB) 56.9% (issue 18).
inline constexpr qint64 kPrefetchBytesPerSm = 32 * 1024;
// The rows in flight per SM that 4-warp prefetching blocks of 16-bit rows of 10 to 14 KB keep at
// most (family_rowwise.cpp; H200, session 13: 36-42 KB measured best, 48 KB lost 1-2%).
inline constexpr qint64 kFourWarpRowBytesInFlight = 44 * 1024;
// Blocks per SM that keep kPrefetchBytesPerSm of next rows in flight (each block prefetches one
// row per row group of the block), at least `atLeast`, at most 8 (the knob's largest).
int prefetchCtasWanted(const RowwiseConfig& c, qint64 rowBytes, int atLeast);

// Why the configuration cannot run the task on the device (each message names the knob).
QStringList constraintProblems(const RowwiseConfig& c, const RowTensors& t, const Task& task,
                               const DeviceInfo& device);
// Whether templates/rowwise/split.cu has the op's cluster kernel (a switch over every op, so a
// new op must decide).
bool splitImplemented(RowOp op);
// The part of them a row split over a cluster adds.
QStringList splitProblems(const RowwiseConfig& c, const RowTensors& t, const DeviceInfo& device);
// What pipeline=bulk adds, for rows of `n` elements.
QStringList bulkProblems(const RowwiseConfig& c, const RowTensors& t, qint64 n,
                         const DeviceInfo& device);
// The part of them the pipelines add, for rows of `n` elements (the defaults test a pipeline
// with it).
QStringList pipelineProblems(const RowwiseConfig& c, const RowTensors& t, qint64 n,
                             const DeviceInfo& device);

} // namespace kev::rowwise

#endif // KEV_BUILTIN_ROWWISECONFIG_H
