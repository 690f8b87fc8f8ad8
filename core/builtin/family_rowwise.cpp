// The row-wise family's shared generator: its knobs, constraints and estimates over the typed
// configuration (rowwiseconfig.h), the row mapping of the default plan, and the file skeleton
// (templates/rowwise/rowwise.cu) around the kernels of each op (rowwiseops.h).
#include "builtin/family_rowwise.h"

#include "builtin/cudatemplates.h"
#include "builtin/gemmcodegen.h"
#include "builtin/memorycodegen.h"
#include "builtin/rowwiseconfig.h"
#include "builtin/rowwiseops.h"

#include <QJsonArray>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace kev {

namespace rowwise {

int RowOpGenerator::cachedFloatsTarget(const RowTensors& t) const {
    // ptxas spilled the f32 softmax at 32 cached floats per thread (docs/benchmarks.md,
    // "Row-wise: cached floats per thread").
    return t.xBytes == 4 ? 16 : 32;
}

bool RowOpGenerator::defaultShape(RowwiseConfig&, const RowTensors&, qint64, QString*) const {
    return false;
}

QString RowOpGenerator::headerPipeline(const RowwiseConfig&, const RowTensors&) const {
    return {};
}

const RowOpGenerator& generatorFor(RowOp op) {
    switch (op) {
    case RowOp::LayerNorm:
        return layerNormGenerator();
    case RowOp::Reduce:
        return reduceGenerator();
    case RowOp::RmsNorm:
        return rmsNormGenerator();
    case RowOp::Softmax:
        break;
    }
    return softmaxGenerator();
}

QString weightsText(const RowwiseConfig& c, bool inRationale) {
    if (c.keepsWeights())
        return u"kept in registers"_s;
    return inRationale ? u"read per row from L1/L2"_s : u"read per row"_s;
}

void setPackedPairs(TemplateValues& values, const RowwiseConfig& c, const RowTensors& t) {
    const bool f16 = t.y == u"f16"_s;
    values
        .flag(u"PACKED_PAIRS"_s, c.pipeline == Pipeline::Prefetch && t.w == t.y &&
                                     (t.b.isEmpty() || t.b == t.y) && (f16 || t.y == u"bf16"_s) &&
                                     c.vectorWidth % 2 == 0)
        .set(u"PAIR"_s, f16 ? u"__half2"_s : u"__nv_bfloat162"_s)
        .set(u"PACK_PAIR"_s, f16 ? u"__floats2half2_rn"_s : u"__floats2bfloat162_rn"_s);
}

} // namespace rowwise

using namespace memorycodegen;
using namespace rowwise;

namespace {

// The task's tensors; a task of another op (which supports() refuses) reads as a softmax so
// that estimates stay defined.
RowTensors tensorsOf(const Task& task) {
    return RowTensors::fromTask(task).value_or(RowTensors{});
}

// Why a warp per row: the row fits its lanes' registers.
QString warpWhy(const RowwiseConfig& c, qint64 n) {
    return u"rows of %1 fit in one warp's registers (%2 vectors of %3 per lane): one warp per row, "
           "no barriers"_s.arg(n)
               .arg(c.vectorsPerThread)
               .arg(c.vectorWidth);
}

// Why the row is read once (or streamed): the elements the registers of its warp (warpWhy) or
// block cache.
QString cacheWhy(const RowwiseConfig& c, qint64 n) {
    if (c.mapping == Mapping::Warp)
        return warpWhy(c, n);
    const qint64 cached = qint64(c.warps) * 32 * c.vectorsPerThread * c.vectorWidth;
    if (n > cached)
        return u"rows of %1 exceed what a block's registers cache: %2 warps x %3 vectors of %4 "
               "elements per thread stream the row in chunks of %5 elements (the statistics' "
               "read, then the output's, which finds the row in L2)"_s.arg(n)
                   .arg(c.warps)
                   .arg(c.vectorsPerThread)
                   .arg(c.vectorWidth)
                   .arg(cached);
    return u"rows of %1 need a block to stay in registers: %2 warps x %3 vectors of %4 "
           "elements per thread cache up to %5 elements, so the row is read once"_s.arg(n)
               .arg(c.warps)
               .arg(c.vectorsPerThread)
               .arg(c.vectorWidth)
               .arg(cached);
}

// A warp per row when the row fits a warp's registers at the op's target of cached floats per
// thread, else a block per row sized so that the row is read once. `coverInexact`: a block may
// cover the row inexactly (measured for 16-bit rows only).
QString defaultMapping(RowwiseConfig& c, qint64 n, int perThread, bool coverInexact) {
    const auto warpPerRow = [&c, n] {
        c.mapping = Mapping::Warp;
        c.warps = 4;
        // Just enough vectors for the row: when they cover it exactly, the kernel's FULL
        // instantiation reads it with no bounds tests (rows of 768 f16: 6 vectors of 4, not 8).
        const int v =
            int(std::clamp<qint64>((n + 32LL * c.vectorWidth - 1) / (32LL * c.vectorWidth), 1, 16));
        c.vectorsPerThread = v;
        return warpWhy(c, n);
    };
    if (n <= 32LL * perThread)
        return warpPerRow();
    c.mapping = Mapping::Block;
    // At most 16 vectors per thread (the knob's range): rows of odd length (1-element vectors)
    // cache fewer elements and stream.
    const int v = std::clamp(perThread / c.vectorWidth, 1, 16);
    // A block that covers the row exactly, fewest warps first (the most rows in flight per SM):
    // its FULL kernel has no bounds tests. H200, layernorm f16 rows of 1536 at 8 prefetching
    // blocks per SM: 2 warps x 6 vectors of 4 (exact) 87.1% of the DRAM floor, 2 warps x 8
    // vectors of 4 (a chunk of 2048, bounds-tested) 59.2%.
    // Half-width vectors when full-width ones cannot (16-bit rows of 2560: 4 warps x 5 vectors
    // of 4; vectors of 8 would need 2.5 per thread).
    // A block of 2 warps may cache a quarter more (H200, layernorm bf16 rows of 2560 at 8
    // prefetching blocks per SM: 2 warps x 10 vectors of 4, 84.6% of the DRAM floor; 4 warps x 5
    // at 6 blocks per SM, 79.8%).
    // Where no block covers the row exactly, the block that covers it with the fewest elements
    // past its end, if under 5% (rows of 3000 f16: 4 warps x 6 vectors of 4, a chunk of 3072,
    // not 4 x 8 = 4096). H200 (docs/benchmarks.md, session 15), % of the DRAM floor: rmsnorm
    // 74.6 -> 84.5, softmax 71.6 -> 86.3. Not for 32-bit rows, whose chunk of 4096 for rows of
    // 3000 measured 95.6% (softmax f32).
    qint64 bestChunk = 0;
    RowwiseConfig cover = c;
    for (int width = c.vectorWidth; width >= std::max(1, c.vectorWidth / 2); width /= 2) {
        // An inexact cover may take a quarter more vectors than the target, a 2-warp block three
        // eighths more: H200 (docs/benchmarks.md, session 19), rows of 2600 f16 and bf16, % of
        // the DRAM floor, 4 warps x 6 vectors of 4 at 5-6 blocks per SM -> 2 x 11 at 8: layernorm
        // 71.8 -> 81.9, rmsnorm 83.8 -> 86.1, softmax 82.8 -> 86.0 (3 warps x 7: 71.8 / 82.5 /
        // 84.8).
        for (int warps = 2; warps <= 32; warps *= 2) {
            const int mostInexact =
                std::clamp(perThread * (warps == 2 ? 11 : 10) / (8 * width), 1, 16);
            const int most = std::clamp(perThread * (warps == 2 ? 5 : 4) / (4 * width), 1, 16);
            const qint64 lane = qint64(warps) * 32 * width;
            if (n % lane == 0 && n / lane <= most) {
                c.vectorWidth = width;
                c.warps = warps;
                c.vectorsPerThread = int(n / lane);
                return cacheWhy(c, n);
            }
            const qint64 vectors = (n + lane - 1) / lane;
            if (vectors <= mostInexact && (bestChunk == 0 || vectors * lane < bestChunk)) {
                bestChunk = vectors * lane;
                cover.vectorWidth = width;
                cover.warps = warps;
                cover.vectorsPerThread = int(vectors);
            }
        }
    }
    // 16-bit rows a quarter past a warp's target that no block covers exactly: a warp per row
    // (up to 10 vectors of 4 a lane) rather than a block's inexact cover. H200 (docs/benchmarks.md,
    // session 17), rows of 1200, % of the DRAM floor, 2 warps x 5 at 8 blocks per SM -> a warp
    // per row x 10 at 4 blocks of 4 warps: layernorm 58.9 -> 65.2, rmsnorm 77.8 -> 80.3, softmax
    // 77.0 -> 85.8.
    if (coverInexact && 4 * n <= 5LL * 32 * perThread)
        return warpPerRow();
    const int threads = int(
        std::min<qint64>(1024, (n + qint64(c.vectorWidth) * v - 1) / (qint64(c.vectorWidth) * v)));
    int warps = 2;
    while (warps * 32 < threads && warps < 32)
        warps *= 2;
    // The inexact cover when it passes the row by under 5% or by less than the power-of-two
    // block below would. H200 (docs/benchmarks.md, session 17), f16 and bf16 rows no block covers
    // exactly, % of the DRAM floor, power-of-two block -> cover (layernorm / rmsnorm / softmax):
    // rows of 9000, 16 x 8 at one block per SM -> 8 x 9 at two: 33.4 / 49.3 / 47.3 -> 62.0 /
    // 79.0 / 85.0; rows of 20000, streamed in 16 x 5 or one block of 32 x 5 -> 16 x 10: 24.8 /
    // 53.2 / 47.6 -> 62.2 / 79.6 / 84.1 (rows of 1200, 2 x 8 -> 2 x 5: 44.8 / 60.4 / 58.5 -> 58.2
    // / 77.6 / 77.2, before the warp per row above). Before that, rows of 3000 in 4 warps x 6
    // (session 15): rmsnorm 74.6 -> 84.5, softmax 71.6 -> 86.3. Not for 32-bit rows, whose chunk
    // of 4096 for rows of 3000 measured 95.6% (softmax f32).
    const qint64 powerChunk = qint64(warps) * 32 * v * c.vectorWidth;
    if (coverInexact && bestChunk > 0 &&
        (20 * (bestChunk - n) < n || (n <= powerChunk && bestChunk < powerChunk))) {
        c = cover;
        return cacheWhy(c, n) +
               u" (the last vectors bounds-tested: %1 elements past the row)"_s.arg(bestChunk - n);
    }
    c.warps = warps;
    c.vectorsPerThread = v;
    return cacheWhy(c, n);
}

// A block of 1024 threads has 64 registers per thread (65536 per SM): a row longer than such a
// block caches is read in chunks, so the default halves the block (then the vectors per thread)
// until its registers fit, instead of planning a block that cannot be resident (rows of 32000 f16
// asked 72 registers x 1024 threads). Halving the warps keeps each thread's vectors in flight:
// on the H200, rows of 32000 f16 in blocks of 512 threads x 4 vectors (two resident per SM) ran
// at 50.2% of the DRAM floor, 1024 x 2 vectors (one per SM) at 38.1%. True when it changed c.
bool fitRegisterFile(RowwiseConfig& c, const RowTensors& t, const DeviceInfo& device) {
    bool changed = false;
    const auto tooMany = [&] {
        return qint64(registerEstimate(c, t)) * c.warps * 32 > device.regsPerSm;
    };
    while (c.mapping == Mapping::Block && c.warps > 2 && tooMany()) {
        c.warps /= 2;
        changed = true;
    }
    while (c.vectorsPerThread > 1 && tooMany()) {
        c.vectorsPerThread /= 2;
        changed = true;
    }
    return changed;
}

QString splitKernel(const RowwiseConfig& c, const RowTensors& t) {
    return cudatemplates::render(u"rowwise/split.cu"_s,
                                 TemplateValues()
                                     .set(u"SPLIT"_s, c.split)
                                     .flag(u"SOFTMAX"_s, t.op == RowOp::Softmax)
                                     .flag(u"LAYERNORM"_s, t.op == RowOp::LayerNorm)
                                     .flag(u"RMSNORM"_s, t.op == RowOp::RmsNorm)
                                     .flag(u"REDUCE"_s, t.op == RowOp::Reduce)
                                     .flag(u"MAX"_s, t.reduction == Reduction::Max));
}

// pipeline=bulk: rowwise/split.cu's helpers (SPLIT, sliceLength; no op's cluster kernel; the
// bulk kernel's split blocks exchange their statistics by st.async, not clusterCombine),
// rowwise/packed.cu's (unpackVec) and the bulk kernel, whose exponentials stored in X's type
// keep under e^SLACK (f16's largest is 65504).
QString bulkKernel(const RowwiseConfig& c, const RowTensors& t) {
    const TemplateValues helpers = TemplateValues()
                                       .set(u"SPLIT"_s, c.split)
                                       .flag(u"SOFTMAX"_s, false)
                                       .flag(u"LAYERNORM"_s, false)
                                       .flag(u"RMSNORM"_s, false)
                                       .flag(u"REDUCE"_s, false)
                                       .flag(u"MAX"_s, false);
    return cudatemplates::render(u"rowwise/split.cu"_s, helpers) +
           cudatemplates::render(u"rowwise/packed.cu"_s,
                                 TemplateValues().flag(u"WEIGHTS"_s, false)) +
           cudatemplates::render(u"rowwise/bulk.cu"_s,
                                 TemplateValues()
                                     .set(u"PIECES"_s, kBulkPieces)
                                     .set(u"SLACK"_s, t.x == u"f16"_s ? u"10.0f"_s : u"20.0f"_s)
                                     .flag(u"CLUSTER"_s, c.splitsRows()));
}

// The largest slice of a row a block of the bulk default copies into shared memory. H200
// (docs/benchmarks.md, session 16), 8 warps, time against the split that gives the slice: rows of
// 32000 f16 whole (64 KB) 42.2 us, in 2 (32 KB) 50.6; 50257 bf16 whole (100 KB) 53.4, in 2 (50 KB)
// 49.8, in 4 58.9; 128256 f16 in 2 (128 KB) 67.3, in 4 (64 KB) 49.7, in 8 55.2; 151936 bf16 in 2
// 60.4, in 4 (76 KB) 50.1, in 8 (38 KB) 55.9. Again with session 23's kernel, % of the DRAM
// floor: 50257 bf16 whole 68.5 (launched without clusters), in 2 72.8; 128256 f16 in 2 55.2, in 4
// 69.4; 151936 bf16 in 2 57.8, in 4 67.8, in 8 64.3.
constexpr qint64 kBulkSliceBytes = 80 * 1024;
// The smallest slice a bulk default splits a row into for more blocks per row, where the rows
// fill more than one round of resident blocks. Since the split exchanges its statistics without a
// cluster barrier (session 24), smaller slices won down to about 30 KB (more blocks per SM, each
// done sooner), with slices and copies on 128-byte lines. H200, session 25, % of the DRAM floor
// by blocks per row (64 MiB of rows a task): 32768 bf16 1 88.5, 2 (32 KB) 90.2; 32000 f16 1 88.4,
// 2 (31 KB) 89.0; 40000 f16 1 78.6, 2 (39 KB) 89.4, 3 (26 KB) 82.9; 50257 bf16 2 82.0, 3 (32 KB)
// 83.2, 4 79.5; 65536 f16 2 85.0, 3 87.1, 4 (32 KB) 87.9, 5 81.1; 100277 bf16 4 80.5, 5 81.1, 6
// (32 KB) 80.3, 7 79.6; 128256 f16 4 78.9, 5 81.7, 6 84.3, 7 83.3, 8 (31 KB) 82.1; 151936 bf16 4
// 77.9, 6 81.6, 7 82.6, 8 (37 KB) 83.3; 152064 f16 4 78.8, 6 82.2, 7 82.6, 8 83.2; 256000 bf16 7
// 76.0, 8 76.8. This rule's choice is the best or within 2.2 points of it.
constexpr qint64 kBulkMinSliceBytes = 30 * 1024;

// Streamed rows (longer than the registers cache) that pipeline=bulk can run (softmax, sm_90,
// 16-byte vectors: bulkProblems decides): the row, or a cluster's slice of it, copied whole into
// shared memory, read once instead of twice (statistics, then output). 8 warps; the fewest blocks
// per row whose slices fit kBulkSliceBytes, more by kBulkMinSliceBytes's rule where the rows fill
// more than a round of resident blocks. H200, % of the DRAM floor, streamed -> bulk: rows of
// 32000 f16 67.8 -> 74.6, 50257 bf16 52.3 -> 64.0, 128256 f16 56.4 -> 63.0, 151936 bf16 52.6 ->
// 61.7. A row or a few, fewer blocks than SMs even at 8 a row, keep the streamed split, whose
// slices the registers hold: it finishes sooner (one row of 128256 f16, 8.4 us against 9.6 us;
// 32 rows of 128256 bf16, 16.0 us against 15.4 us).
void chooseBulk(RowwiseConfig& c, const RowTensors& t, qint64 m, qint64 n,
                const DeviceInfo& device) {
    if (c.pipeline != Pipeline::None || n <= c.chunkElements() || m * 8 < device.smCount)
        return;
    RowwiseConfig bulk = c;
    bulk.pipeline = Pipeline::Bulk;
    bulk.warps = 8;
    bulk.vectorsPerThread = 4;
    bulk.split = 1;
    while (bulk.split < 8 && bulkSliceBytes(bulk, t, n) > kBulkSliceBytes)
        ++bulk.split;
    // Rows over a round of the resident blocks: the most blocks per row whose slices keep
    // kBulkMinSliceBytes. Fewer rows keep the fitted split (chooseSplit may raise it).
    if (m * bulk.split > qint64(device.smCount) * residentBlocks(bulk, t, device, n)) {
        RowwiseConfig more = bulk;
        ++more.split;
        while (more.split <= 8 && bulkSliceBytes(more, t, n) >= kBulkMinSliceBytes &&
               bulkProblems(more, t, n, device).isEmpty()) {
            bulk.split = more.split;
            ++more.split;
        }
    }
    if (bulkProblems(bulk, t, n, device).isEmpty())
        c = bulk;
}

// Whether the prefetching kernel gets its instantiation that tests only each thread's last vector
// (rowwise.cu): for a task row that the chunk covers inexactly with less than one vector per thread
// past its end (rows of 9000 in 8 warps x 9 vectors of 4: 8 vectors always inside). Other rows of
// N <= CHUNK test every vector; rows of exactly CHUNK test none.
bool tailTested(const RowwiseConfig& c, qint64 n) {
    const qint64 chunk = c.chunkElements();
    return c.pipeline == Pipeline::Prefetch && c.vectorsPerThread >= 2 && n % c.vectorWidth == 0 &&
           n < chunk && n > chunk - qint64(c.rowThreads()) * c.vectorWidth;
}

// Rows too few to give every SM a block: each row split over a cluster of 2, 4 or 8 blocks (the
// most whose blocks are all resident at once, each slice at least one vector per thread). Returns
// what the rationale adds ("" without a split).
QString chooseSplit(RowwiseConfig& c, const RowTensors& t, qint64 m, qint64 n,
                    const DeviceInfo& device) {
    if (c.pipeline == Pipeline::Bulk) {
        // The bulk default's slices fit its shared memory already; too few rows split further,
        // as the streamed rows below.
        const int fitted = c.split;
        while (c.split < 8 && m * c.split < device.smCount)
            c.split = std::min(8, c.split * 2);
        if (c.split == fitted)
            return {};
        return u"; %1 rows give too few blocks for %2 SMs, so each row takes %3 blocks"_s.arg(m)
            .arg(device.smCount)
            .arg(c.split);
    }
    if (device.ccMajor < 9 || !splitImplemented(t.op) || c.mapping != Mapping::Block ||
        c.pipeline != Pipeline::None || c.ctasPerSm != 0)
        return {};
    const qint64 resident = qint64(device.smCount) * std::max(1, residentBlocks(c, t, device));
    // A slice gives each thread at least one vector and is at least 16 KB: below that the
    // cluster's barriers cost more than the blocks gain.
    const qint64 minSlice = std::max(qint64(c.rowThreads()) * c.vectorWidth, 16384LL / t.xBytes);
    // The fewest blocks per row that give every SM a block, within two rounds of the resident
    // blocks the estimate allows (it is conservative: the streaming kernels' 512-thread blocks
    // estimated at one per SM compile to two). H200: 32 rows of 128256 bf16 over 8 blocks of 512
    // threads per row ran at 23.9% of the floor, over 4 blocks of 1024 at 17.6%, unsplit 17.7%.
    int split = 1;
    while (split < 8 && m * split < device.smCount && m * split * 2 <= 2 * resident &&
           n / (split * 2) >= minSlice)
        split *= 2;
    if (split == 1)
        return {};
    c.split = split;
    // The slices' statistics combine across the cluster: online softmax and Welford moments.
    if (t.op != RowOp::Reduce)
        c.stats = Stats::OnePass;
    const qint64 slice = (n + split - 1) / split;
    return u"; %1 rows give too few blocks for %2 SMs, so each row is split over a cluster of %3 "
           "blocks (slices of about %4 elements, %5), their statistics combined through "
           "distributed shared memory in a fixed order"_s.arg(m)
               .arg(device.smCount)
               .arg(split)
               .arg(slice)
               .arg(slice <= c.chunkElements() ? u"each read once from DRAM"_s
                                               : u"each streamed in chunks"_s);
}

} // namespace

QString RowwiseFamily::id() const {
    return u"rowwise"_s;
}

QString RowwiseFamily::description() const {
    return u"Row-wise memory-bound ops (softmax, layernorm, rmsnorm, reduce sum/max): one warp per "
           u"row "
           "(mapping=warp, several rows per block) or one block per row (mapping=block), vector "
           "accesses of vectorWidth elements, vectors_per_thread vectors per thread cached in "
           "registers so a row that fits is read once and written once (longer rows stream in "
           "chunks), stats=one_pass (online softmax, Welford layernorm) or two_pass, and "
           "ctas_per_sm > 0 for a persistent grid of that many blocks per SM looping over rows, "
           "split > 1 for a row shared by a cluster of blocks (sm_90) when rows are too few. "
           "fp32 arithmetic whatever the storage type."_s;
}

bool RowwiseFamily::supports(const Task& task, const DeviceInfo& device) const {
    const auto tensors = RowTensors::fromTask(task);
    if (!tensors || device.ccMajor < 7)
        return false;
    const QStringList dtypes = tensors->dtypes();
    return std::all_of(dtypes.begin(), dtypes.end(),
                       [](const QString& d) { return d == u"f32" || d == u"f16" || d == u"bf16"; });
}

QVector<ParameterSpec> RowwiseFamily::parameters() const {
    return {
        paramsParameter(u"mapping"_s,
                        u"warp: one warp per row, warps rows per block, shuffles only; block: "
                        "all the block's threads on one row, shared memory between warps"_s,
                        strings({u"warp", u"block"})),
        fieldParameter(u"warps"_s,
                       u"Warps per block: a power of two, or any count 2..32 with mapping=block "
                       "and pipeline=prefetch or none (6 warps x 16 vectors cover rows of 12288)"_s,
                       ints({1, 2, 4, 8, 16, 32}), &Strategy::warps),
        fieldParameter(u"vectorWidth"_s, u"Elements per load and store (one access)"_s,
                       ints({1, 2, 4, 8}), &Strategy::vectorWidth),
        paramsParameter(u"vectors_per_thread"_s,
                        u"Vectors a thread keeps in registers: the row is cached when it fits, "
                        "and more vectors mean more bytes in flight"_s,
                        ints({1, 2, 3, 4, 6, 8, 12, 16})),
        paramsParameter(u"stats"_s,
                        u"one_pass: online softmax / Welford layernorm / rmsnorm's mean square "
                        "(its only choice) (one reduction, one read for long rows; with softmax "
                        "pipeline=prefetch each thread's maximum and "
                        "sum of its cached elements, then one reduction); two_pass: maximum then "
                        "sum / mean then variance; "
                        "shifted_one_pass: layernorm with pipeline=prefetch, sums of x - x[0] and "
                        "of its square in one pass and one reduction"_s,
                        strings({u"two_pass", u"one_pass", u"shifted_one_pass"})),
        paramsParameter(u"ctas_per_sm"_s,
                        u"0: one block per row group; k > 0: a persistent grid of k blocks per "
                        "SM that loops over rows"_s,
                        ints({0, 1, 2, 3, 4, 5, 6, 8})),
        paramsParameter(
            u"pipeline"_s,
            u"layernorm, rmsnorm and softmax rows that fit in registers: none loads a row, "
            "then reduces "
            "it; prefetch (persistent grid) loads the next row, packed, before the "
            "current row's reductions so DRAM loads stay in flight; async "
            "(layernorm, persistent grid) keeps depth rows in flight through cp.async copies "
            "into a shared-memory ring; bulk (softmax, sm_90, a block or cluster per row) copies "
            "the block's whole slice of the row into shared memory with TMA bulk copies, so a "
            "row longer than the registers is still read once"_s,
            strings({u"none", u"prefetch", u"async", u"bulk"})),
        paramsParameter(u"depth"_s,
                        u"rows in flight per block with pipeline=async (ring slots of shared "
                        "memory); ignored by the other pipelines"_s,
                        ints({2, 3, 4, 5, 6})),
        paramsParameter(u"weights"_s,
                        u"layernorm W and B (rmsnorm W) with pipeline=prefetch or async: load "
                        "reads them per row (L1/L2 hits); registers keeps them packed for all of a "
                        "block's rows"_s,
                        strings({u"load", u"registers"})),
        paramsParameter(u"split"_s,
                        u"blocks per row (sm_90 thread block clusters, mapping=block, "
                        "pipeline=none or bulk): 1 gives each row to one block; 2 to 8 split a row "
                        "into slices whose statistics the cluster combines through distributed "
                        "shared memory in a fixed order (deterministic), for too few rows to "
                        "fill the GPU or (bulk) rows too long for one block's shared memory"_s,
                        ints({1, 2, 3, 4, 5, 6, 7, 8})),
    };
}

void RowwiseFamily::normalize(Strategy& s) const {
    const RowwiseConfig c = RowwiseConfig::fromStrategy(s);
    s.family = id();
    s.mma = u"fma"_s;
    s.blockM = c.mapping == Mapping::Block ? 1 : s.warps;
    // blockN shows the row chunk the registers hold, capped at the schema's 512
    const int chunk = c.rowThreads() * s.vectorWidth * std::max(c.vectorsPerThread, 1);
    s.blockN = 1;
    while (s.blockN * 2 <= std::min(chunk, 512))
        s.blockN *= 2;
    setTileFieldsUnused(s);
}

QVector<Strategy> RowwiseFamily::neighbours(const Strategy& strategy) const {
    // A wider vector at the same count of vectors doubles the chunk (rows of 7000 in 4 warps x 14
    // vectors of 4 -> 14 of 8: 14336 elements, half the lanes past the row), so the search never
    // met the same chunk in 16-byte vectors, which was 3 points faster there (H200,
    // docs/benchmarks.md, session 22, call 3). The step carries vectors_per_thread with it where
    // the count divides (or doubles within 16); elsewhere it stays the plain step.
    QVector<Strategy> out = KernelFamily::neighbours(strategy);
    const int vectors = RowwiseConfig::fromStrategy(strategy).vectorsPerThread;
    for (Strategy& m : out) {
        if (m.vectorWidth == strategy.vectorWidth || m.vectorWidth <= 0 || vectors <= 0)
            continue;
        const bool wider = m.vectorWidth > strategy.vectorWidth;
        const int ratio =
            wider ? m.vectorWidth / strategy.vectorWidth : strategy.vectorWidth / m.vectorWidth;
        const int kept = wider ? (vectors % ratio == 0 ? vectors / ratio : 0) : vectors * ratio;
        if (kept < 1 || kept > 16)
            continue;
        m.params.insert(u"vectors_per_thread"_s, kept);
        normalize(m);
        m.rationale = u"vectorWidth %1 -> %2 with vectors_per_thread %3 -> %4 (the same chunk)"_s
                          .arg(strategy.vectorWidth)
                          .arg(m.vectorWidth)
                          .arg(vectors)
                          .arg(kept);
    }
    return out;
}

QStringList RowwiseFamily::constraints(const Strategy& s, const Task& task,
                                       const DeviceInfo& device) const {
    QStringList problems;
    if (!supports(task, device))
        problems << u"family rowwise needs a softmax, layernorm, rmsnorm or reduce task with f32, "
                    "f16 or bf16 tensors on an sm_70 or newer GPU (task %1, device %2 sm_%3%4)"_s
                        .arg(task.summary(), device.name)
                        .arg(device.ccMajor)
                        .arg(device.ccMinor);
    if (s.family != id())
        problems << u"family: \"%1\" is not %2"_s.arg(s.family, id());
    const auto tensors = RowTensors::fromTask(task);
    if (!tensors)
        return problems;
    problems << constraintProblems(RowwiseConfig::fromStrategy(s), *tensors, task, device);
    return problems;
}

ResourceEstimate RowwiseFamily::resources(const Strategy& s, const Task& task,
                                          const DeviceInfo& device) const {
    const RowwiseConfig c = RowwiseConfig::fromStrategy(s);
    const RowTensors t = tensorsOf(task);
    return estimateResources(s.warps * 32, smemPerBlock(c, t, task.n), registerEstimate(c, t),
                             device);
}

Strategy RowwiseFamily::defaultStrategy(const Task& task, const DeviceInfo& device) const {
    const RowTensors t = tensorsOf(task);
    const RowOpGenerator& op = generatorFor(t.op);
    const qint64 n = task.n;
    RowwiseConfig c;
    // The widest vector every row tensor's alignment allows.
    c.vectorWidth = 1;
    for (const QString& d : t.vectorDtypes())
        c.vectorWidth = std::max(c.vectorWidth, maxVectorWidth(task, d));
    for (const QString& d : t.vectorDtypes())
        c.vectorWidth = std::min(c.vectorWidth, maxVectorWidth(task, d));
    const int widest = c.vectorWidth;
    QString why;
    if (!op.defaultShape(c, t, n, &why)) {
        why = defaultMapping(c, n, op.cachedFloatsTarget(t), t.xBytes == 2);
    }
    if (fitRegisterFile(c, t, device) && c.mapping == Mapping::Block)
        why = cacheWhy(c, n);
    c.ctasPerSm = 0;
    c.pipeline = Pipeline::None;
    c.weights = Weights::Load;
    op.tuneDefault(c, t, n, device);
    // A 2-warp block that covers a 16-bit row inexactly (bounds-tested) takes 8 blocks per SM
    // where the registers hold them (W and B read per row if that is what fits): H200
    // (docs/benchmarks.md, session 19), rows of 2600 in 2 warps x 11 vectors of 4, % of the DRAM
    // floor, 7 -> 8 blocks: layernorm f16 80.3 -> 82.4, bf16 74.7 -> 78.3 (rmsnorm bf16 and
    // softmax f16 at 8: 86.1, 86.0). Not a stable order for bf16: a later session measured 77.7
    // at 8 and 79.2 at 6.
    if (c.pipeline == Pipeline::Prefetch && t.xBytes == 2 && c.mapping == Mapping::Block &&
        c.warps == 2 && c.chunkElements() != n && c.ctasPerSm < 8) {
        RowwiseConfig eight = c;
        eight.ctasPerSm = 8;
        if (residentBlocks(eight, t, device) < 8)
            eight.weights = Weights::Load;
        if (residentBlocks(eight, t, device) >= 8 &&
            pipelineProblems(eight, t, n, device).isEmpty())
            c = eight;
    }
    chooseBulk(c, t, task.m, n, device);
    const QString splitWhy = chooseSplit(c, t, task.m, n, device);
    const qint64 rowBytes = qint64(c.warps * 32 / c.rowThreads()) * n * t.xBytes;
    // 16-bit rows in the prefetching kernels: half-width vectors (8-byte accesses), twice as
    // many per thread (the same elements), ran faster (docs/benchmarks.md, "16-bit rows in
    // 8-byte vectors").
    if (c.pipeline == Pipeline::Prefetch && t.xBytes == 2 && c.vectorWidth == 8) {
        RowwiseConfig narrow = c;
        narrow.vectorWidth = 4;
        narrow.vectorsPerThread = 2 * c.vectorsPerThread;
        if (pipelineProblems(narrow, t, n, device).isEmpty() &&
            residentBlocks(narrow, t, device) >= narrow.ctasPerSm) {
            // The blocks per SM and where W and B live follow the registers of the vectors the
            // kernel uses, not those of the full-width ones (rows of 6144 f16: 3 blocks per SM,
            // not the 2 that 3 vectors of 8 per thread allowed).
            op.tuneDefault(narrow, t, n, device);
            if (narrow.pipeline == Pipeline::Prefetch && narrow.ctasPerSm < c.ctasPerSm)
                narrow.ctasPerSm = c.ctasPerSm;
            c = narrow;
            why = cacheWhy(c, n);
        }
    }
    // 16-bit rows of 8-warp blocks: a 4-warp block that covers the row exactly in at most 14
    // vectors of 4 a thread needs fewer registers a row (each thread's fixed share is paid by
    // half the threads), so more rows fit in flight; it takes the blocks per SM that keep at most
    // about 44 KB of rows in flight, and only where that is more than the 8-warp block keeps.
    // H200 (docs/benchmarks.md, session 13), % of the DRAM floor, f16 and bf16: rows of 5120 at 4
    // blocks layernorm 88.8 / 88.3 (8 warps at 3: 89.0 / 84.6), rmsnorm 92.4 / 91.5 (90.7 /
    // 91.6); rows of 6144 at 3 layernorm 89.4 / 88.5, softmax 91.6 / 90.9 (8 warps at 2: 83.2 /
    // 81.1, 86.4 / 86.0); rows of 7168 at 3 layernorm 89.0 / 88.7, rmsnorm 91.4 / 91.7, softmax
    // bf16 90.5 (8 warps at 2: 86.0 / 85.6, 89.3 / 89.8, 88.7). Rows of 8192 (16 vectors, 48 KB
    // at 3 blocks) lost 1-2%. Rows that 8 warps cover only in a bounds-tested chunk (4608, 5632,
    // 6656: 8 warps x 8 vectors at 2 blocks) take the exact 4-warp block too (9, 11, 13 vectors;
    // between the measured 10, 12 and 14, not measured themselves).
    // Rows no 4-warp block covers exactly take its inexact cover (the chunk the 8-warp block
    // reads too) at 3 blocks or more, even at the 8-warp block's count: H200 (docs/benchmarks.md,
    // session 19), % of the DRAM floor, 8 warps x 6 or 7 -> 4 x 12 or 14 at 3 blocks: rows of 6000
    // layernorm f16 78.0 -> 81.5, softmax f16 80.2 -> 85.9, rmsnorm bf16 86.7 -> 85.6; rows of 7000
    // 75.7 -> 80.3, 83.0 -> 85.3, 82.7 -> 85.6 (at 2 blocks it lost: 73.9, 77.2, 77.6 at 6000).
    const qint64 fourWarpLane = 4 * 32 * 4;
    const qint64 fourWarpVectors = (n + fourWarpLane - 1) / fourWarpLane;
    if (c.pipeline == Pipeline::Prefetch && t.xBytes == 2 && c.mapping == Mapping::Block &&
        c.warps == 8 && c.vectorWidth == 4 && fourWarpVectors <= 14) {
        const bool exact = n % fourWarpLane == 0;
        RowwiseConfig four = c;
        four.warps = 4;
        four.vectorsPerThread = int(fourWarpVectors);
        four.ctasPerSm = int(std::min<qint64>(residentBlocks(four, t, device),
                                              kFourWarpRowBytesInFlight / (n * t.xBytes)));
        const bool more =
            exact ? four.ctasPerSm > c.ctasPerSm : four.ctasPerSm >= std::max(3, c.ctasPerSm);
        if (more && pipelineProblems(four, t, n, device).isEmpty()) {
            c = four;
            why = cacheWhy(c, n);
        }
    }
    // Long rows in a block of 16 warps or more, one resident per SM: half the warps with twice
    // the vectors, two blocks per SM (one block's reductions overlap the other's loads), where
    // the registers hold them. H200 (docs/benchmarks.md, session 15), % of the DRAM floor:
    // layernorm f16 rows of 12288 80.6 -> 86.8, rmsnorm f16 rows of 10240 81.5 -> 91.6.
    // Where the half's registers do not fit two blocks, 6 of the 16 warps with up to 16 vectors
    // each may (each thread's fixed share is paid by fewer threads): H200
    // (docs/benchmarks.md, session 19), softmax rows in 16 warps x 6 at one block -> 6 warps x 16
    // at two, % of the DRAM floor: f16 rows of 12000 75.0 -> 85.9, bf16 rows of 12288 81.1 ->
    // 87.5 (layernorm f16 rows of 12000, whose half fits: 8 x 12 82.7, 6 x 16 73.3). Measured
    // from 16 warps only, so a 32-warp block keeps only the half.
    if (c.pipeline == Pipeline::Prefetch && c.mapping == Mapping::Block && c.warps >= 16 &&
        c.ctasPerSm == 1) {
        const auto fitsTwo = [&](const RowwiseConfig& x) {
            return x.vectorsPerThread <= 16 && residentBlocks(x, t, device) >= 2 &&
                   pipelineProblems(x, t, n, device).isEmpty();
        };
        RowwiseConfig two = c;
        two.ctasPerSm = 2;
        two.warps = c.warps / 2;
        two.vectorsPerThread = 2 * c.vectorsPerThread;
        bool fits = fitsTwo(two);
        if (!fits && c.warps == 16) {
            two.warps = 6;
            const qint64 lane = qint64(two.warps) * 32 * c.vectorWidth;
            two.vectorsPerThread = int(std::min<qint64>(17, (n + lane - 1) / lane));
            fits = fitsTwo(two);
        }
        if (fits) {
            c = two;
            why = cacheWhy(c, n);
        }
    }
    // Layernorm's 16-bit rows that the chunk covers inexactly back in full-width vectors (16-byte
    // accesses) once the rules above chose 8-byte ones: the same chunk, warps and blocks per SM,
    // half the vectors, still tail-tested (only each thread's last vector tested). With the packed
    // affine step, side by side on the H200 (docs/benchmarks.md, session 22), % of the DRAM floor,
    // every such row gained: f16 rows of 1000 / 1800 / 4000 / 5000 / 6000 / 7000 / 12000 / 20000
    // 89.7 / 84.6 / 88.4 / 86.0 / 86.3 / 83.6 / 86.3 / 86.7 -> 90.7 / 85.5 / 90.5 / 89.0 / 87.4 /
    // 86.7 / 88.0 / 87.9 (rows of 1800 measured with W and B loaded, where the default keeps them
    // in registers), bf16 rows of 5000 / 7000 85.8 / 84.7 -> 89.3 / 87.5. Exact covers did
    // not (f16 rows of 1536 88.3 -> 87.6, 8192 88.8 -> 89.6; bf16 rows of 4096 93.6 -> 90.8, 16384
    // 88.4 -> 87.9) and keep 8-byte vectors; rmsnorm and softmax were not measured.
    if (t.op == RowOp::LayerNorm && c.pipeline == Pipeline::Prefetch && t.xBytes == 2 &&
        c.vectorWidth == 4 && widest >= 8 && c.vectorsPerThread % 2 == 0 && tailTested(c, n)) {
        RowwiseConfig wide = c;
        wide.vectorWidth = 8;
        wide.vectorsPerThread = c.vectorsPerThread / 2;
        if (tailTested(wide, n) && pipelineProblems(wide, t, n, device).isEmpty() &&
            residentBlocks(wide, t, device) >= wide.ctasPerSm) {
            c = wide;
            why = cacheWhy(c, n);
        }
    }
    if (c.pipeline == Pipeline::Prefetch && !pipelineProblems(c, t, n, device).isEmpty()) {
        // Two packed rows do not fit the registers of a resident block: one row at a time.
        c.ctasPerSm = 0;
        c.pipeline = Pipeline::None;
        c.weights = Weights::Load;
        c.stats = op.fallbackStats();
    }
    QString grid = u"one block per row group"_s;
    const int k = c.ctasPerSm;
    if (c.pipeline == Pipeline::Bulk) {
        const qint64 slice = bulkSliceBytes(c, t, n);
        why = u"rows of %1 exceed what a block's registers cache; rather than stream them twice "
              "(statistics, then output), each block copies its slice of the row whole into "
              "shared memory with bulk copies (TMA), and the row is read once from DRAM: %2 "
              "warps, the fewest blocks per row whose slices stay within 80 KB, or with rows "
              "for more than a round of resident blocks the most whose slices keep 30 KB"_s.arg(n)
                  .arg(c.warps);
        grid = c.splitsRows()
                   ? u"each row split over a cluster of %1 blocks (slices of %2 KB; statistics "
                     "combined through distributed shared memory in a fixed order)"_s.arg(c.split)
                         .arg(slice / 1024)
                   : u"one block per row (%1 KB of shared memory)"_s.arg(slice / 1024);
    } else if (c.pipeline == Pipeline::Prefetch) {
        grid = u"a persistent grid of %1 blocks per SM (as many as the registers hold), each "
               "loading its next row before reducing the current one (about %2 KB of loads in "
               "flight per SM)"_s.arg(k)
                   .arg(qint64(k) * rowBytes / 1024);
        if (!t.weightNames().isEmpty())
            grid += u", "_s + t.weightNames() + u' ' + weightsText(c, true);
    } else if (c.pipeline == Pipeline::Async) {
        grid = u"a persistent grid of %1 blocks per SM, each copying rows ahead with cp.async "
               "into a shared-memory ring of %2 rows (%3 KB per block; about %4 KB of loads in "
               "flight per SM beyond the rows being reduced), W and B %5"_s.arg(k)
                   .arg(c.depth)
                   .arg(ringBytes(c, t) / 1024)
                   .arg(qint64(k) * (c.depth - 1) * rowBytes / 1024)
                   .arg(weightsText(c, true));
    }
    Strategy s;
    s.family = id();
    c.applyTo(s);
    normalize(s);
    s.rationale = u"Memory-bound %1: %2; %3-element vectors (%4-byte accesses where the alignment "
                  "allows); %5; %6."_s.arg(opName(t.op), why)
                      .arg(c.vectorWidth)
                      .arg(vectorBytes(c, t))
                      .arg(op.rationaleStats(c))
                      .arg(grid + splitWhy);
    return s;
}

QString RowwiseFamily::generate(const Strategy& s, const Task& task) const {
    const RowwiseConfig c = RowwiseConfig::fromStrategy(s);
    const RowTensors t = tensorsOf(task);
    const RowOpGenerator& op = generatorFor(t.op);
    const bool block = c.mapping == Mapping::Block;
    const bool bulk = c.pipeline == Pipeline::Bulk;
    const int k = c.ctasPerSm;
    QStringList header{
        u"Kevolve built-in kernel, family rowwise (generated; edit freely)."_s,
        u"Task: %1 (%2)."_s.arg(task.name, task.summary()),
        u"Strategy: %1 per row (%2 threads per block), %3-element vectors, %4 vectors per thread "
        "%5 (rows up to %6 elements are read once), %7, %8%9."_s
            .arg(block ? u"one block"_s : u"one warp"_s)
            .arg(c.warps * 32)
            .arg(c.vectorWidth)
            .arg(c.vectorsPerThread)
            .arg(c.pipeline == Pipeline::Async  ? u"in a shared-memory ring"_s
                 : c.pipeline == Pipeline::Bulk ? u"per step from shared memory"_s
                                                : u"in registers"_s)
            .arg(c.pipeline == Pipeline::Bulk ? bulkSliceBytes(c, t, task.n) / t.xBytes * c.split
                                              : c.chunkElements())
            .arg(op.headerStats(c))
            .arg(k > 0 ? u"a persistent grid of %1 blocks per SM"_s.arg(k)
                 : c.splitsRows()
                     ? u"each row split over a cluster of %1 blocks (slices combined through "
                       "distributed shared memory)"_s.arg(c.split)
                     : u"one block per row group"_s)
            .arg(op.headerPipeline(c, t)),
    };
    if (!s.rationale.isEmpty()) {
        header << u"Rationale:"_s;
        for (const QString& line : gemmcodegen::wrapText(s.rationale))
            header << u"  "_s + line;
    }
    const QStringList dtypes = t.dtypes();
    TemplateValues values;
    values.set(u"HEADER"_s, gemmcodegen::headerComment(header))
        .flag(u"F16"_s, dtypes.contains(u"f16"_s))
        .flag(u"BF16"_s, dtypes.contains(u"bf16"_s))
        .set(u"ELEM_X"_s, gemmcodegen::cudaType(t.x))
        .set(u"ELEM_Y"_s, gemmcodegen::cudaType(t.y))
        .set(u"ELEM_W"_s, gemmcodegen::cudaType(t.w))
        .set(u"ELEM_B"_s, gemmcodegen::cudaType(t.b))
        .set(u"ELEMENTS"_s, elementHelpers(dtypes, c.vectorWidth))
        .set(u"WARPS"_s, c.warps)
        .flag(u"BLOCK"_s, block)
        .set(u"VPT"_s, c.vectorsPerThread)
        .flag(u"TAIL_TESTED"_s, tailTested(c, task.n))
        .flag(u"PERSISTENT"_s, k > 0)
        .set(u"CTAS"_s, k)
        .set(u"KERNEL"_s, op.kernels(c, t))
        .set(u"CHECKS"_s, launchChecks(task, u"KEVOLVE_OP_"_s + opName(t.op).toUpper()))
        .flag(u"SOFTMAX"_s, t.op == RowOp::Softmax)
        .flag(u"LAYERNORM"_s, t.op == RowOp::LayerNorm)
        .flag(u"RMSNORM"_s, t.op == RowOp::RmsNorm)
        .flag(u"REDUCE"_s, t.op == RowOp::Reduce)
        .flag(u"MAX"_s, t.reduction == Reduction::Max)
        .flag(u"PREFETCH"_s, c.pipeline == Pipeline::Prefetch)
        .flag(u"ASYNC"_s, c.pipeline == Pipeline::Async)
        .flag(u"ONE_ROW"_s, c.pipeline == Pipeline::None)
        .flag(u"SPLIT"_s, c.splitsRows() && !bulk)
        .set(u"SPLIT_KERNEL"_s, c.splitsRows() && !bulk ? splitKernel(c, t) : QString())
        .flag(u"BULK"_s, bulk)
        .set(u"BULK_KERNEL"_s, bulk ? bulkKernel(c, t) : QString())
        .flag(u"COOPERATIVE_GROUPS"_s, c.splitsRows() || bulk);
    return cudatemplates::render(u"rowwise/rowwise.cu"_s, values);
}

} // namespace kev
