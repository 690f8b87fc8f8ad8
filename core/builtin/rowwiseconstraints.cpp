// The row-wise family's feasibility rules over its typed configuration: each message names the
// knob and the limit.
#include "builtin/memorycodegen.h"
#include "builtin/rowwiseconfig.h"

#include <algorithm>

using namespace Qt::StringLiterals;

namespace kev::rowwise {

namespace {

// The runtime reserves 1 KB of an SM's shared memory per resident block (sm_80 and newer).
constexpr qint64 kSmemReservedPerBlock = 1024;

QStringList asyncProblems(const RowwiseConfig& c, const RowTensors& t, const DeviceInfo& device) {
    QStringList problems;
    if (c.depth < 2 || c.depth > 6)
        problems << u"params.depth=%1: rows in flight per block with pipeline=async must be "
                    "2 to 6"_s.arg(c.depth);
    const int bytes = vectorBytes(c, t);
    if (bytes != 4 && bytes != 8 && bytes != 16)
        problems << u"pipeline=async copies whole vectors with cp.async (4, 8 or 16 bytes), "
                    "but vectorWidth=%1 of %2 is %3 bytes"_s.arg(c.vectorWidth)
                        .arg(t.x)
                        .arg(bytes);
    if (device.ccMajor < 8)
        problems << u"pipeline=async needs cp.async (sm_80 or newer); device %1 is sm_%2%3"_s
                        .arg(device.name)
                        .arg(device.ccMajor)
                        .arg(device.ccMinor);
    const qint64 block = smemPerBlock(c, t);
    if (block > device.smemPerBlockOptin)
        problems << u"pipeline=async ring of %1 bytes (depth x threads x vectors_per_thread x "
                    "%2-byte vectors) exceeds the %3 bytes of shared memory a block may "
                    "have"_s.arg(block)
                        .arg(bytes)
                        .arg(device.smemPerBlockOptin);
    else if (c.ctasPerSm > 0 &&
             qint64(c.ctasPerSm) * (block + kSmemReservedPerBlock) > device.smemPerSm)
        problems << u"ctas_per_sm=%1 x (%2 bytes of ring and partials + 1024 reserved) "
                    "exceeds the %3 bytes of shared memory of an SM, so the persistent "
                    "blocks cannot all be resident"_s.arg(c.ctasPerSm)
                        .arg(block)
                        .arg(device.smemPerSm);
    return problems;
}

} // namespace

bool splitImplemented(RowOp op) {
    switch (op) {
    case RowOp::Softmax:
    case RowOp::LayerNorm:
    case RowOp::Reduce:
    case RowOp::RmsNorm:
        return true;
    }
    return false;
}

QStringList splitProblems(const RowwiseConfig& c, const RowTensors& t, const DeviceInfo& device) {
    QStringList problems;
    const int s = c.split;
    if (s < 1 || s > 8)
        problems << u"params.split=%1: blocks per row must be 1 to 8 (a portable thread block "
                    "cluster has at most 8 blocks)"_s.arg(s);
    if (s <= 1)
        return problems;
    if (!splitImplemented(t.op)) {
        problems << u"split=%1: no cluster kernel for %2; use split=1"_s.arg(s).arg(opName(t.op));
        return problems;
    }
    if (device.ccMajor < 9)
        problems << u"split=%1 shares a row between the blocks of a thread block cluster, which "
                    "needs sm_90 or newer; device %2 is sm_%3%4 (use split=1)"_s.arg(s)
                        .arg(device.name)
                        .arg(device.ccMajor)
                        .arg(device.ccMinor);
    if (c.mapping != Mapping::Block || c.invalid.mapping)
        problems << u"split=%1 splits a row over blocks: use mapping=block (a warp per row "
                    "shares nothing between blocks)"_s.arg(s);
    if ((c.pipeline != Pipeline::None && c.pipeline != Pipeline::Bulk) || c.invalid.pipeline)
        problems << u"split=%1 streams each block's slice of the row or copies it whole into "
                    "shared memory: use pipeline=none or bulk"_s.arg(s);
    if (c.ctasPerSm != 0)
        problems << u"split=%1 launches one cluster per row, not a persistent grid: use "
                    "ctas_per_sm=0"_s.arg(s);
    if (t.op != RowOp::Reduce && (c.stats != Stats::OnePass || c.invalid.stats))
        problems << u"split=%1 combines each slice's %2 across the cluster: use "
                    "stats=one_pass"_s.arg(s)
                        .arg(t.op == RowOp::Softmax     ? u"running maximum and sum"_s
                             : t.op == RowOp::LayerNorm ? u"Welford moments"_s
                                                        : u"sum of squares"_s);
    return problems;
}

QStringList bulkProblems(const RowwiseConfig& c, const RowTensors& t, qint64 n,
                         const DeviceInfo& device) {
    QStringList problems;
    if (t.op != RowOp::Softmax) {
        problems << u"pipeline=bulk: implemented for softmax only, not %1"_s.arg(opName(t.op));
        return problems;
    }
    if (device.ccMajor < 9)
        problems << u"pipeline=bulk copies with cp.async.bulk and mbarriers (sm_90 or newer); "
                    "device %1 is sm_%2%3"_s.arg(device.name)
                        .arg(device.ccMajor)
                        .arg(device.ccMinor);
    if (c.mapping != Mapping::Block || c.invalid.mapping)
        problems << u"pipeline=bulk copies a block's slice of one row: use mapping=block"_s;
    if (c.keepsWeights())
        problems << u"weights=registers: softmax has no W and B to keep; use weights=load"_s;
    // A persistent grid of clusters with two slice buffers was built and measured (H200, session
    // 16): 25-57% of the DRAM floor against this kernel's 60-78%.
    if (c.ctasPerSm != 0)
        problems << u"pipeline=bulk launches a block (or cluster) per row, not a persistent "
                    "grid: use ctas_per_sm=0"_s;
    if (c.stats != Stats::OnePass || c.invalid.stats)
        problems << u"pipeline=bulk computes online statistics as the pieces land: use "
                    "stats=one_pass"_s;
    if (vectorBytes(c, t) != 16)
        problems << u"pipeline=bulk reads 16-byte vectors of the copied slice (the copies need "
                    "16-byte alignment), but vectorWidth=%1 of %2 is %3 bytes"_s.arg(c.vectorWidth)
                        .arg(t.x)
                        .arg(vectorBytes(c, t));
    const qint64 block = smemPerBlock(c, t, n);
    if (block > device.smemPerBlockOptin)
        problems << u"pipeline=bulk keeps a slice of %1 elements (%2 bytes with the barriers) "
                    "in shared memory, over the %3 bytes a block may have: raise split (a "
                    "cluster of up to 8 blocks shares the row)"_s
                        .arg(bulkSliceBytes(c, t, n) / t.xBytes)
                        .arg(block)
                        .arg(device.smemPerBlockOptin);
    return problems;
}

QStringList pipelineProblems(const RowwiseConfig& c, const RowTensors& t, qint64 n,
                             const DeviceInfo& device) {
    QStringList problems;
    const QString p = c.invalid.pipeline.value_or(pipelineName(c.pipeline));
    if (c.invalid.pipeline)
        problems << u"params.pipeline=\"%1\": must be none, prefetch, async or bulk"_s.arg(p);
    if (c.invalid.weights)
        problems << u"params.weights=\"%1\": must be load or registers"_s.arg(*c.invalid.weights);
    if (c.keepsWeights() && c.pipeline == Pipeline::None)
        problems << u"weights=registers: only a persistent block that keeps rows in flight "
                    "(pipeline=prefetch or async) keeps W and B across rows"_s;
    if (c.pipeline == Pipeline::None)
        return problems;
    if (c.pipeline == Pipeline::Bulk)
        return problems << bulkProblems(c, t, n, device);
    if (c.pipeline == Pipeline::Async && t.op != RowOp::LayerNorm) {
        problems << u"pipeline=%1: implemented for layernorm only, not %2"_s.arg(p, opName(t.op));
        return problems;
    }
    if (c.pipeline == Pipeline::Prefetch && t.op == RowOp::Reduce) {
        problems
            << u"pipeline=prefetch: implemented for layernorm, rmsnorm and softmax only, not %1"_s
                   .arg(opName(t.op));
        return problems;
    }
    if (t.op == RowOp::Softmax && c.keepsWeights())
        problems << u"weights=registers: softmax has no W and B to keep; use weights=load"_s;
    const int k = c.ctasPerSm;
    if (k == 0)
        problems << u"pipeline=%1 needs a persistent grid to have a next row: set "
                    "params.ctas_per_sm to 1..8"_s.arg(p);
    const bool twoPass = !c.invalid.stats && c.stats == Stats::TwoPass;
    if (c.pipeline == Pipeline::Async && !twoPass)
        problems << u"pipeline=%1 computes two-pass statistics; use stats=two_pass"_s.arg(p);
    const bool prefetch = c.pipeline == Pipeline::Prefetch;
    if (prefetch && t.op == RowOp::Softmax && !twoPass &&
        (c.invalid.stats || c.stats != Stats::OnePass))
        problems << u"pipeline=prefetch on softmax computes two-pass or one-pass (per-thread "
                    "maximum and sum, one reduction) statistics; use stats=two_pass or one_pass"_s;
    if (prefetch && t.op == RowOp::LayerNorm && !twoPass &&
        (c.invalid.stats || c.stats != Stats::ShiftedOnePass))
        problems << u"pipeline=prefetch computes two-pass or shifted one-pass statistics; use "
                    "stats=two_pass or shifted_one_pass"_s;
    if (n > c.chunkElements())
        problems << u"pipeline=%1 keeps the row %2, but rows of %3 exceed the %4 elements its "
                    "threads cover (row threads x vectorWidth x vectors_per_thread)"_s
                        .arg(p, c.pipeline == Pipeline::Async ? u"in its shared-memory ring"_s
                                                              : u"in registers"_s)
                        .arg(n)
                        .arg(c.chunkElements());
    if (prefetch && prefetchWords(c, t) > 128)
        problems << u"pipeline=prefetch holds %1 packed registers per thread (two rows%2); at most "
                    "128 fit beside the arithmetic"_s.arg(prefetchWords(c, t))
                        .arg(c.keepsWeights() ? u", W and B"_s : QString());
    if (prefetch && t.op == RowOp::Softmax && c.vectorsPerThread * c.vectorWidth > 64)
        problems << u"pipeline=prefetch on softmax keeps %1 floats of exp(x - m) per thread "
                    "(vectors_per_thread x vectorWidth) beside the packed rows; at most 64 fit"_s
                        .arg(c.vectorsPerThread * c.vectorWidth);
    if (c.pipeline == Pipeline::Async)
        problems << asyncProblems(c, t, device);
    const qint64 regs = qint64(registerEstimate(c, t)) * c.warps * 32 * std::max(k, 1);
    if (k > 0 && regs > device.regsPerSm)
        problems << u"ctas_per_sm=%1 x %2 threads x about %3 registers exceeds the %4 registers "
                    "of an SM, so the persistent blocks cannot all be resident"_s.arg(k)
                        .arg(c.warps * 32)
                        .arg(registerEstimate(c, t))
                        .arg(device.regsPerSm);
    return problems;
}

QStringList constraintProblems(const RowwiseConfig& c, const RowTensors& t, const Task& task,
                               const DeviceInfo& device) {
    QStringList problems;
    if (c.invalid.mapping)
        problems << u"params.mapping=\"%1\": must be warp or block"_s.arg(*c.invalid.mapping);
    // A block that shares one row reduces over any number of warps (rowReduce loops over them):
    // 6 warps x 16 vectors hold softmax rows of 12288 at two blocks per SM, where 8 x 12 do not
    // fit the registers twice (H200, docs/benchmarks.md, session 19).
    const bool anyWarps = c.mapping == Mapping::Block && !c.splitsRows() &&
                          (c.pipeline == Pipeline::Prefetch || c.pipeline == Pipeline::None);
    if (c.warps < 1 || c.warps > 32 || (!anyWarps && (c.warps & (c.warps - 1)) != 0))
        problems << u"warps=%1: must be a power of two in 1..32%2"_s.arg(c.warps).arg(
            c.warps >= 1 && c.warps <= 32
                ? u" (any count 2..32 only for mapping=block with pipeline=prefetch or none)"_s
                : QString());
    if (c.mapping == Mapping::Block && c.warps < 2)
        problems << u"mapping=block with warps=%1: a one-warp block is mapping=warp"_s.arg(c.warps);
    problems << memorycodegen::vectorWidthProblems(c.vectorWidth, task, t.vectorDtypes());
    const int v = c.vectorsPerThread;
    const bool holdsRows = c.pipeline != Pipeline::None;
    // Any count: a row of 1536 16-bit elements is one warp's 6 vectors of 8 per lane, read with
    // no bounds tests (the FULL instantiation) only when the chunk is exactly the row.
    if (v < 1 || v > 16)
        problems << u"params.vectors_per_thread=%1: must be 1 to 16"_s.arg(v);
    else if (!holdsRows && cacheFloats(c, t) > 64)
        problems << u"vectors_per_thread=%1 x vectorWidth=%2 is %3 cached floats per thread%4; "
                    "at most 64 fit without spilling"_s.arg(v)
                        .arg(c.vectorWidth)
                        .arg(cacheFloats(c, t))
                        .arg(t.op == RowOp::LayerNorm ? u" (row, W and B)"_s
                             : t.op == RowOp::RmsNorm ? u" (row and W)"_s
                                                      : QString());
    if (c.invalid.stats)
        problems << u"params.stats=\"%1\": must be one_pass, two_pass or shifted_one_pass"_s.arg(
            *c.invalid.stats);
    else if (c.stats == Stats::ShiftedOnePass &&
             (t.op != RowOp::LayerNorm || c.pipeline != Pipeline::Prefetch))
        problems << u"stats=shifted_one_pass: implemented for layernorm with pipeline=prefetch "
                    "only (here %1 with pipeline=%2)"_s.arg(
                        opName(t.op), c.invalid.pipeline.value_or(pipelineName(c.pipeline)));
    else if (t.op == RowOp::Reduce && c.stats != Stats::OnePass)
        problems << u"stats=two_pass: a reduction reads its row once; use one_pass"_s;
    else if (t.op == RowOp::RmsNorm && c.stats != Stats::OnePass)
        problems << u"stats=%1: rmsnorm's only statistic is the mean square, one reduction over "
                    "one read of the row; use one_pass"_s.arg(statsName(c.stats));
    const int k = c.ctasPerSm;
    if (k < 0 || k > 8)
        problems << u"params.ctas_per_sm=%1: must be 0 to 8"_s.arg(k);
    else if (k > 0 && k * c.warps * 32 > 2048)
        problems << u"ctas_per_sm=%1 x %2 threads exceeds the 2048 threads of an SM, so the "
                    "persistent blocks cannot all be resident"_s.arg(k)
                        .arg(c.warps * 32);
    problems << pipelineProblems(c, t, task.n, device);
    problems << splitProblems(c, t, device);
    const int regs = registerEstimate(c, t);
    if (qint64(regs) * c.warps * 32 > device.regsPerSm)
        problems << u"about %1 registers x %2 threads exceeds the %3 registers of an SM"_s.arg(regs)
                        .arg(c.warps * 32)
                        .arg(device.regsPerSm);
    return problems;
}

} // namespace kev::rowwise
