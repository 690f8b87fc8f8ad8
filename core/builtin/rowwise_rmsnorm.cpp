// RMS normalisation over the shared row-wise generator: layernorm without the mean, so one
// statistic (the mean square, one reduction of a row read once) and one weight vector; for 16-bit
// rows a persistent grid prefetching the next row with W kept in registers, as layernorm's
// measured default does.
#include "builtin/cudatemplates.h"
#include "builtin/rowwiseops.h"

#include <algorithm>

using namespace Qt::StringLiterals;

namespace kev::rowwise {

namespace {

class RmsNormGenerator final : public RowOpGenerator {
public:
    // Like layernorm, the row alone is cached (W streams one vector at a time).
    int cachedFloatsTarget(const RowTensors&) const override { return 32; }

    void tuneDefault(RowwiseConfig& c, const RowTensors& t, qint64 n,
                     const DeviceInfo& device) const override {
        // The mean square is one reduction whatever the pipeline: nothing to choose.
        c.stats = Stats::OnePass;
        // layernorm's measured choice carried over (docs/benchmarks.md, "Layernorm: prefetching
        // the next row"): f32 rows one at a time, 16-bit rows that fit the registers prefetch the
        // next row at up to 4 blocks per SM, W in registers when 4 blocks still fit. Not yet
        // measured for rmsnorm itself (tests/rowwise/rmsnorm_gpu_check.sh checks it on a GPU).
        if (n > c.chunkElements() || t.xBytes != 2)
            return;
        // Shorter rows take more blocks per SM, up to kPrefetchBytesPerSm of next rows in flight,
        // as layernorm's (rows of 1536 f16: 39.0% of the floor at 4 blocks, 58.0% at 8).
        c.pipeline = Pipeline::Prefetch;
        const int wanted = prefetchCtasWanted(c, n * t.xBytes, 4);
        c.weights = Weights::Registers;
        if (residentBlocks(c, t, device) < wanted)
            c.weights = Weights::Load;
        c.ctasPerSm = std::min(wanted, residentBlocks(c, t, device));
    }

    Stats fallbackStats() const override { return Stats::OnePass; }

    QString rationaleStats(const RowwiseConfig&) const override {
        return u"the mean square in one fp32 reduction (its terms never cancel), then x times "
               "1/sqrt(mean square + epsilon) times W"_s;
    }

    QString headerStats(const RowwiseConfig&) const override {
        return u"one-pass mean square (fp32 sum of squares, one reduction)"_s;
    }

    QString headerPipeline(const RowwiseConfig& c, const RowTensors&) const override {
        if (c.pipeline == Pipeline::Prefetch)
            return u", the next row prefetched (packed) before the current row's reduction, W "
                   "%1"_s.arg(weightsText(c, false));
        return {};
    }

    QString kernels(const RowwiseConfig& c, const RowTensors& t) const override {
        const bool prefetch = c.pipeline == Pipeline::Prefetch;
        TemplateValues values;
        setPackedPairs(values, c, t); // y = n * w as HMUL2
        values.flag(u"PREFETCH"_s, prefetch).flag(u"KEEP_WEIGHTS"_s, c.keepsWeights());
        if (prefetch)
            values.set(u"PACKED"_s,
                       cudatemplates::render(u"rowwise/packed.cu"_s,
                                             TemplateValues().flag(u"WEIGHTS"_s, false)));
        return cudatemplates::render(u"rowwise/rmsnorm.cu"_s, values);
    }
};

} // namespace

const RowOpGenerator& rmsNormGenerator() {
    static const RmsNormGenerator generator;
    return generator;
}

} // namespace kev::rowwise
