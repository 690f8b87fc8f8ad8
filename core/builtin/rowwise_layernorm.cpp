// Layer normalisation over the shared row-wise generator: mean then variance (or Welford, or
// shifted sums) from the row in registers, and for 16-bit rows a persistent grid prefetching the
// next row with W and B kept in registers; rows copied ahead into a shared-memory ring
// (pipeline=async) stay selectable.
#include "builtin/cudatemplates.h"
#include "builtin/rowwiseops.h"

#include <algorithm>

using namespace Qt::StringLiterals;

namespace kev::rowwise {

namespace {

class LayerNormGenerator final : public RowOpGenerator {
public:
    // Layernorm caches the row only (W and B stream one vector at a time), and the fewer threads
    // a row takes, the more rows an SM keeps in flight (docs/benchmarks.md, "Layernorm: one row
    // per block").
    int cachedFloatsTarget(const RowTensors&) const override { return 32; }

    void tuneDefault(RowwiseConfig& c, const RowTensors& t, qint64 n,
                     const DeviceInfo& device) const override {
        // Two passes over registers cost no DRAM traffic and ran faster than one-pass Welford.
        c.stats = Stats::TwoPass;
        // A row longer than the registers cache streams: Welford statistics read it once (two
        // passes would read it twice before the output's read).
        if (n > c.chunkElements()) {
            c.stats = Stats::OnePass;
            return;
        }
        // f32 rows keep one row at a time (their 16 KB rows keep enough loads in flight); 16-bit
        // rows prefetch the next row at 4 blocks per SM, W and B in registers when 4 blocks still
        // fit, with shifted one-pass statistics (docs/benchmarks.md, "Layernorm: prefetching the
        // next row").
        if (n > c.chunkElements() || t.xBytes != 2)
            return;
        // Shorter rows take more blocks per SM, up to kPrefetchBytesPerSm of next rows in flight
        // (rows of 1536 f16: 8 blocks, not 4).
        c.pipeline = Pipeline::Prefetch;
        const int wanted = prefetchCtasWanted(c, n * t.xBytes, 4);
        c.weights = Weights::Registers;
        if (residentBlocks(c, t, device) < wanted)
            c.weights = Weights::Load;
        c.ctasPerSm = std::min(wanted, residentBlocks(c, t, device));
        c.stats = Stats::ShiftedOnePass;
    }

    QString rationaleStats(const RowwiseConfig& c) const override {
        if (c.stats == Stats::OnePass)
            return u"Welford statistics in one read of the row"_s;
        if (c.stats == Stats::ShiftedOnePass)
            return u"the sums of x - x[0] and of its square in one pass over the row in "
                   "registers"_s;
        return u"mean, then variance, from the row in %1"_s.arg(
            c.pipeline == Pipeline::Async ? u"shared memory"_s : u"registers"_s);
    }

    QString headerStats(const RowwiseConfig& c) const override {
        switch (c.stats) {
        case Stats::OnePass:
            return u"Welford statistics"_s;
        case Stats::ShiftedOnePass:
            return u"shifted one-pass statistics (sums of x - x[0] and its square, one "
                   "reduction)"_s;
        case Stats::TwoPass:
            break;
        }
        return u"two-pass statistics (mean, then variance)"_s;
    }

    QString headerPipeline(const RowwiseConfig& c, const RowTensors& t) const override {
        if (c.pipeline == Pipeline::Prefetch)
            return u", the next row prefetched (packed) before the current row's reductions, W "
                   "and B %1"_s.arg(weightsText(c, false));
        if (c.pipeline == Pipeline::Async)
            return u", %1 rows per block in flight through cp.async copies into a shared-memory "
                   "ring (%2 bytes), W and B %3"_s.arg(c.depth)
                       .arg(ringBytes(c, t))
                       .arg(weightsText(c, false));
        return {};
    }

    QString kernels(const RowwiseConfig& c, const RowTensors& t) const override {
        const bool holdsRows = c.pipeline != Pipeline::None;
        TemplateValues values;
        setPackedPairs(values, c, t); // y = n * w + b as HFMA2
        values.flag(u"ONE_PASS"_s, c.stats == Stats::OnePass)
            .flag(u"PREFETCH"_s, c.pipeline == Pipeline::Prefetch)
            .flag(u"ASYNC"_s, c.pipeline == Pipeline::Async)
            .flag(u"SHIFTED"_s, c.stats == Stats::ShiftedOnePass)
            .flag(u"KEEP_WEIGHTS"_s, c.keepsWeights())
            .set(u"DEPTH"_s, c.depth);
        if (holdsRows) {
            values.set(u"PACKED"_s,
                       cudatemplates::render(u"rowwise/packed.cu"_s,
                                             TemplateValues().flag(u"WEIGHTS"_s, true)));
            values.set(u"WEIGHTS_HELPERS"_s,
                       c.keepsWeights() ? cudatemplates::render(u"rowwise/layernorm_weights.cu"_s,
                                                                TemplateValues())
                                        : QString());
        }
        return cudatemplates::render(u"rowwise/layernorm.cu"_s, values);
    }
};

} // namespace

const RowOpGenerator& layerNormGenerator() {
    static const LayerNormGenerator generator;
    return generator;
}

} // namespace kev::rowwise
