// Softmax over the shared row-wise generator: max then sum (or online statistics) from the row
// in registers, and for 16-bit rows a persistent grid prefetching the next row.
#include "builtin/cudatemplates.h"
#include "builtin/rowwiseops.h"

#include <algorithm>

using namespace Qt::StringLiterals;

namespace kev::rowwise {

namespace {

class SoftmaxGenerator final : public RowOpGenerator {
public:
    void tuneDefault(RowwiseConfig& c, const RowTensors& t, qint64 n,
                     const DeviceInfo& device) const override {
        c.stats = Stats::TwoPass;
        // A row longer than the registers cache streams: online statistics read it once (the
        // two-pass kernel reads it twice before the output's read).
        if (n > c.chunkElements()) {
            c.stats = Stats::OnePass;
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
