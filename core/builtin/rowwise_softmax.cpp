// Softmax over the shared row-wise generator: max then sum (or online statistics) from the row
// in registers, and for 16-bit rows a persistent grid prefetching the next row.
#include "builtin/cudatemplates.h"
#include "builtin/rowwiseops.h"

#include <algorithm>

using namespace Qt::StringLiterals;

namespace kev::rowwise {

namespace {

// The largest slice of a row a block of the bulk default copies into shared memory. H200
// (docs/benchmarks.md, session 16), 8 warps, time against the split that gives the slice: rows of
// 32000 f16 whole (64 KB) 42.2 us, in 2 (32 KB) 50.6; 50257 bf16 whole (100 KB) 53.4, in 2 (50 KB)
// 49.8, in 4 58.9; 128256 f16 in 2 (128 KB) 67.3, in 4 (64 KB) 49.7, in 8 55.2; 151936 bf16 in 2
// 60.4, in 4 (76 KB) 50.1, in 8 (38 KB) 55.9.
constexpr qint64 kBulkSliceBytes = 80 * 1024;

// Rows the registers do not hold: the row (or a cluster's slice of it) copied whole into shared
// memory with bulk copies, read once instead of twice (the streaming kernel's statistics, then
// its output). 8 warps; the fewest blocks per row whose slices fit kBulkSliceBytes. H200, % of the
// DRAM floor, streamed -> bulk: rows of 32000 f16 67.8 -> 74.6, 50257 bf16 52.3 -> 64.0, 128256
// f16 56.4 -> 63.0, 151936 bf16 52.6 -> 61.7.
void chooseBulk(RowwiseConfig& c, const RowTensors& t, qint64 n, const DeviceInfo& device) {
    RowwiseConfig bulk = c;
    bulk.pipeline = Pipeline::Bulk;
    bulk.warps = 8;
    bulk.vectorsPerThread = 4;
    bulk.split = 1;
    while (bulk.split < 8 && bulkSliceBytes(bulk, t, n) > kBulkSliceBytes)
        bulk.split *= 2;
    if (bulkProblems(bulk, t, n, device).isEmpty())
        c = bulk;
}

class SoftmaxGenerator final : public RowOpGenerator {
public:
    void tuneDefault(RowwiseConfig& c, const RowTensors& t, qint64 n,
                     const DeviceInfo& device) const override {
        c.stats = Stats::TwoPass;
        // A row longer than the registers cache streams: online statistics read it once (the
        // two-pass kernel reads it twice before the output's read).
        if (n > c.chunkElements()) {
            c.stats = Stats::OnePass;
            chooseBulk(c, t, n, device);
            return;
        }
        // A 16-bit row per block at a time leaves DRAM idle through its barriers; prefetching
        // the next row (packed) at 2 blocks per SM is faster (docs/benchmarks.md, "Softmax:
        // prefetching the next row").
        if (n <= c.chunkElements() && t.xBytes == 2) {
            c.pipeline = Pipeline::Prefetch;
            // Shorter rows take more blocks, up to kPrefetchBytesPerSm of next rows in flight.
            c.ctasPerSm =
                std::min(prefetchCtasWanted(c, n * t.xBytes, 2), residentBlocks(c, t, device));
        }
    }

    QString rationaleStats(const RowwiseConfig& c) const override {
        if (c.stats == Stats::OnePass)
            return u"online statistics (running maximum and sum) in one read of the row"_s;
        return u"max then sum from registers"_s;
    }

    QString headerStats(const RowwiseConfig& c) const override {
        return c.stats == Stats::OnePass
                   ? u"online softmax (maximum and sum in one pass, one reduction)"_s
                   : u"two-pass softmax (maximum, then sum)"_s;
    }

    QString headerPipeline(const RowwiseConfig& c, const RowTensors&) const override {
        if (c.pipeline == Pipeline::Prefetch)
            return u", the next row prefetched (packed) before the current row's reductions"_s;
        if (c.pipeline == Pipeline::Bulk)
            return u", the block's slice of the row copied whole into shared memory by %1 bulk "
                   "copies (TMA) issued at once, so it is read once from DRAM"_s.arg(kBulkPieces);
        return {};
    }

    QString kernels(const RowwiseConfig& c, const RowTensors&) const override {
        const bool prefetch = c.pipeline == Pipeline::Prefetch;
        TemplateValues values;
        values.flag(u"ONE_PASS"_s, c.stats == Stats::OnePass).flag(u"PREFETCH"_s, prefetch);
        if (prefetch)
            values.set(u"PACKED"_s,
                       cudatemplates::render(u"rowwise/packed.cu"_s,
                                             TemplateValues().flag(u"WEIGHTS"_s, false)));
        return cudatemplates::render(u"rowwise/softmax.cu"_s, values);
    }
};

} // namespace

const RowOpGenerator& softmaxGenerator() {
    static const SoftmaxGenerator generator;
    return generator;
}

} // namespace kev::rowwise
