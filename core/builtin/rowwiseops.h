// The ops of the row-wise family over its shared generator (family_rowwise.cpp: knobs,
// constraints, the row mapping, the file skeleton templates/rowwise/rowwise.cu): softmax,
// layernorm, rmsnorm and reduce each choose their default pipeline and statistics, describe them,
// and render their kernels from their own template (rowwise_softmax.cpp, rowwise_layernorm.cpp,
// rowwise_rmsnorm.cpp, rowwise_reduce.cpp). The measurements behind the defaults are in
// docs/benchmarks.md.
#ifndef KEV_BUILTIN_ROWWISEOPS_H
#define KEV_BUILTIN_ROWWISEOPS_H

#include "builtin/rowwiseconfig.h"
#include "core/texttemplate.h"

namespace kev::rowwise {

class RowOpGenerator {
public:
    virtual ~RowOpGenerator() = default;

    // Cached floats per thread the default aims at (ptxas spilled an f32 softmax at 32).
    virtual int cachedFloatsTarget(const RowTensors& t) const;
    // The default's mapping, warps and vectors per thread when the op has its own (reduce);
    // false leaves them to the shared rule (a warp per row when it fits, else a block).
    virtual bool defaultShape(RowwiseConfig& c, const RowTensors& t, qint64 n, QString* why) const;
    // The default's statistics and pipeline on top of the shape (c.pipeline is None, c.weights
    // Load, c.ctasPerSm 0 when called).
    virtual void tuneDefault(RowwiseConfig& c, const RowTensors& t, qint64 n,
                             const DeviceInfo& device) const = 0;
    // The statistics of the one-row-at-a-time kernel the default falls back to when two packed
    // rows do not fit the registers (two passes; rmsnorm's one reduction).
    virtual Stats fallbackStats() const { return Stats::TwoPass; }
    // The statistics as the default's rationale and the file's header state them.
    virtual QString rationaleStats(const RowwiseConfig& c) const = 0;
    virtual QString headerStats(const RowwiseConfig& c) const = 0;
    // What the pipeline adds to the header's strategy line ("" for one row at a time).
    virtual QString headerPipeline(const RowwiseConfig& c, const RowTensors& t) const;
    // The op's device code (the skeleton's ${KERNEL}).
    virtual QString kernels(const RowwiseConfig& c, const RowTensors& t) const = 0;
};

const RowOpGenerator& softmaxGenerator();
const RowOpGenerator& layerNormGenerator();
const RowOpGenerator& reduceGenerator();
const RowOpGenerator& rmsNormGenerator();
const RowOpGenerator& generatorFor(RowOp op);

// "kept in registers" or "read per row" for layernorm's W and B (rmsnorm's W).
QString weightsText(const RowwiseConfig& c, bool inRationale);
// The prefetching kernel's last step on pairs of the output's 16-bit type (layernorm's HFMA2,
// rmsnorm's HMUL2): PACKED_PAIRS where W (and B, where the op has one) share Y's 16-bit type and a
// vector holds whole pairs, with PAIR and PACK_PAIR naming the pair type and its packing.
void setPackedPairs(TemplateValues& values, const RowwiseConfig& c, const RowTensors& t);

} // namespace kev::rowwise

#endif // KEV_BUILTIN_ROWWISEOPS_H
