// Row reductions (sum, max) over the shared row-wise generator: one pass, fp32 accumulators per
// register slot, a warp per row.
#include "builtin/cudatemplates.h"
#include "builtin/rowwiseops.h"

#include <algorithm>

using namespace Qt::StringLiterals;

namespace kev::rowwise {

namespace {

class ReduceGenerator final : public RowOpGenerator {
public:
    bool defaultShape(RowwiseConfig& c, const RowTensors&, qint64 n, QString* why) const override {
        // A reduction reads each row once whatever the mapping: a warp per row needs no
        // barrier, and 8 vectors per thread keep enough loads in flight.
        c.mapping = Mapping::Warp;
        c.warps = 8;
        c.vectorsPerThread = std::min(8, 32 / c.vectorWidth);
        *why = u"reduce: one warp per row (no barriers), 8 rows per block, several vectors in "
               "flight per thread"_s;
        // Past 16 of a warp's chunks a row is long enough that one barrier per row costs
        // nothing, and a block reads it 8 times as fast as a warp (a row of 262144 is 256
        // chunks of one warp: the whole grid would wait on the slowest rows).
        if (n > 16 * c.chunkElements()) {
            c.mapping = Mapping::Block;
            *why = u"reduce: rows of %1 are longer than 16 of a warp's chunks, so one block (8 "
                   "warps, one barrier per row) reads each row, several vectors in flight per "
                   "thread"_s.arg(n);
        }
        return true;
    }

    void tuneDefault(RowwiseConfig& c, const RowTensors&, qint64,
                     const DeviceInfo&) const override {
        c.stats = Stats::OnePass;
    }

    QString rationaleStats(const RowwiseConfig&) const override { return u"fp32 accumulation"_s; }

    QString headerStats(const RowwiseConfig&) const override {
        return u"fp32 accumulators per register slot"_s;
    }

    QString kernels(const RowwiseConfig&, const RowTensors& t) const override {
        return cudatemplates::render(
            u"rowwise/reduce.cu"_s, TemplateValues().flag(u"MAX"_s, t.reduction == Reduction::Max));
    }
};

} // namespace

const RowOpGenerator& reduceGenerator() {
    static const ReduceGenerator generator;
    return generator;
}

} // namespace kev::rowwise
