#include "builtin/rowwiseconfig.h"

#include "builtin/memorycodegen.h"

#include <algorithm>
#include <array>
#include <utility>

using namespace Qt::StringLiterals;

namespace kev::rowwise {

namespace {

template <typename E, std::size_t N> using NameTable = std::array<std::pair<E, const char16_t*>, N>;

constexpr NameTable<RowOp, 4> kOps{{{RowOp::Softmax, u"softmax"},
                                    {RowOp::LayerNorm, u"layernorm"},
                                    {RowOp::Reduce, u"reduce"},
                                    {RowOp::RmsNorm, u"rmsnorm"}}};
constexpr NameTable<Mapping, 2> kMappings{{{Mapping::Warp, u"warp"}, {Mapping::Block, u"block"}}};
constexpr NameTable<Pipeline, 4> kPipelines{{{Pipeline::None, u"none"},
                                             {Pipeline::Prefetch, u"prefetch"},
                                             {Pipeline::Async, u"async"},
                                             {Pipeline::Bulk, u"bulk"}}};
constexpr NameTable<Stats, 3> kStats{{{Stats::TwoPass, u"two_pass"},
                                      {Stats::OnePass, u"one_pass"},
                                      {Stats::ShiftedOnePass, u"shifted_one_pass"}}};
constexpr NameTable<Weights, 2> kWeights{
    {{Weights::Load, u"load"}, {Weights::Registers, u"registers"}}};

template <typename E, std::size_t N> QString nameOf(const NameTable<E, N>& table, E value) {
    for (const auto& [e, name] : table) {
        if (e == value)
            return QString::fromUtf16(name);
    }
    return {};
}

template <typename E, std::size_t N>
std::optional<E> valueOf(const NameTable<E, N>& table, const QString& text) {
    for (const auto& [e, name] : table) {
        if (text == QStringView(name))
            return e;
    }
    return std::nullopt;
}

// A string knob of params: its enum value, or the first value with the text kept in *invalid.
// `absent` is the value of a strategy without the knob (nullopt: absent reads as "").
template <typename E, std::size_t N>
E parseKnob(const Strategy& s, const QString& name, const NameTable<E, N>& table,
            std::optional<E> absent, std::optional<QString>& invalid) {
    if (absent && !s.params.contains(name))
        return *absent;
    const QString text = s.params.value(name).toString();
    if (const auto value = valueOf(table, text))
        return *value;
    invalid = text;
    return table.front().first;
}

int packedRowWords(const RowwiseConfig& c, const RowTensors& t) {
    return c.vectorsPerThread * c.vectorWidth * t.xBytes / 4;
}

int packedWeightWords(const RowwiseConfig& c, const RowTensors& t) {
    const int bytes = Task::dtypeBytes(t.w) + (t.b.isEmpty() ? 0 : Task::dtypeBytes(t.b));
    return c.vectorsPerThread * c.vectorWidth * bytes / 4;
}

bool prefetching(const RowwiseConfig& c) {
    return c.pipeline == Pipeline::Prefetch;
}

bool ring(const RowwiseConfig& c) {
    return c.pipeline == Pipeline::Async;
}

// The runtime reserves 1 KB of an SM's shared memory per resident block (sm_80 and newer).
constexpr qint64 kSmemReservedPerBlock = 1024;

} // namespace

std::optional<RowOp> rowOpOf(const QString& op) {
    return valueOf(kOps, op);
}

QString opName(RowOp op) {
    return nameOf(kOps, op);
}

QString mappingName(Mapping m) {
    return nameOf(kMappings, m);
}

QString pipelineName(Pipeline p) {
    return nameOf(kPipelines, p);
}

QString statsName(Stats s) {
    return nameOf(kStats, s);
}

QString weightsName(Weights w) {
    return nameOf(kWeights, w);
}

RowwiseConfig RowwiseConfig::fromStrategy(const Strategy& s) {
    using memorycodegen::intParam;
    RowwiseConfig c;
    c.mapping = parseKnob(s, u"mapping"_s, kMappings, std::optional<Mapping>(), c.invalid.mapping);
    c.warps = s.warps;
    c.vectorWidth = s.vectorWidth;
    c.vectorsPerThread = intParam(s, u"vectors_per_thread"_s);
    c.stats = parseKnob(s, u"stats"_s, kStats, std::optional<Stats>(), c.invalid.stats);
    c.ctasPerSm = intParam(s, u"ctas_per_sm"_s, -1);
    c.pipeline =
        parseKnob(s, u"pipeline"_s, kPipelines, std::optional(Pipeline::None), c.invalid.pipeline);
    c.depth = intParam(s, u"depth"_s, 4);
    c.weights =
        parseKnob(s, u"weights"_s, kWeights, std::optional(Weights::Load), c.invalid.weights);
    c.split = intParam(s, u"split"_s, 1);
    return c;
}

void RowwiseConfig::applyTo(Strategy& s) const {
    s.warps = warps;
    s.vectorWidth = vectorWidth;
    s.params.insert(u"mapping"_s, invalid.mapping.value_or(mappingName(mapping)));
    s.params.insert(u"vectors_per_thread"_s, vectorsPerThread);
    s.params.insert(u"stats"_s, invalid.stats.value_or(statsName(stats)));
    s.params.insert(u"ctas_per_sm"_s, ctasPerSm);
    s.params.insert(u"pipeline"_s, invalid.pipeline.value_or(pipelineName(pipeline)));
    s.params.insert(u"weights"_s, invalid.weights.value_or(weightsName(weights)));
    if (pipeline == Pipeline::Async || s.params.contains(u"depth"_s))
        s.params.insert(u"depth"_s, depth);
    // Written only when rows are split (or were), so strategies without the knob stay as saved.
    if (split != 1 || s.params.contains(u"split"_s))
        s.params.insert(u"split"_s, split);
}

std::optional<RowTensors> RowTensors::fromTask(const Task& task) {
    const auto op = rowOpOf(task.op);
    if (!op)
        return std::nullopt;
    RowTensors t;
    t.op = *op;
    t.reduction =
        task.params.value(u"reduction"_s).toString() == u"max" ? Reduction::Max : Reduction::Sum;
    t.x = task.dtypeOf(u"X"_s);
    t.y = task.dtypeOf(u"Y"_s);
    t.w = task.dtypeOf(u"W"_s);
    t.b = task.dtypeOf(u"B"_s);
    t.xBytes = Task::dtypeBytes(t.x);
    return t;
}

QStringList RowTensors::dtypes() const {
    if (op == RowOp::LayerNorm)
        return {x, w, b, y};
    if (op == RowOp::RmsNorm)
        return {x, w, y};
    return {x, y};
}

QStringList RowTensors::vectorDtypes() const {
    if (op == RowOp::Reduce)
        return {x};
    return dtypes();
}

QString RowTensors::weightNames() const {
    if (op == RowOp::LayerNorm)
        return u"W and B"_s;
    if (op == RowOp::RmsNorm)
        return u"W"_s;
    return {};
}

int cacheFloats(const RowwiseConfig& c, const RowTensors& t) {
    // layernorm keeps the row and, while normalising, one vector of W and B (rmsnorm: of W);
    // reduce keeps one accumulator per loaded value
    if (t.op == RowOp::LayerNorm)
        return (c.vectorsPerThread + 2) * c.vectorWidth;
    if (t.op == RowOp::RmsNorm)
        return (c.vectorsPerThread + 1) * c.vectorWidth;
    return c.vectorsPerThread * c.vectorWidth * (t.op == RowOp::Reduce ? 2 : 1);
}

// Packed words a prefetching thread holds: the current and the next row, and W and B when kept.
int prefetchWords(const RowwiseConfig& c, const RowTensors& t) {
    return 2 * packedRowWords(c, t) + (c.keepsWeights() ? packedWeightWords(c, t) : 0);
}

int registerEstimate(const RowwiseConfig& c, const RowTensors& t) {
    const int vpt = c.vectorsPerThread;
    // The prefetching kernel's converted vectors and per-vector addresses come on top (ptxas,
    // sm_90a, docs/benchmarks.md "Row-wise register estimates").
    // rmsnorm's kernel is layernorm's with one statistic and no B: the same model, unmeasured.
    if (prefetching(c) && (t.op == RowOp::LayerNorm || t.op == RowOp::RmsNorm))
        return prefetchWords(c, t) + 40 + 2 * c.vectorWidth + 2 * vpt;
    // Softmax keeps exp(x - m) of the whole share in floats through the sum's reduction (the
    // output is that times one scale, no second exponential), beside the two packed rows.
    if (prefetching(c) && t.op == RowOp::Softmax)
        return prefetchWords(c, t) + vpt * c.vectorWidth + 40;
    // The ring holds the rows; registers keep W and B when asked, and one vector converted. Past
    // 4 vectors ptxas keeps some of the row's shared loads live across the passes.
    if (ring(c) && t.op == RowOp::LayerNorm)
        return (c.keepsWeights() ? packedWeightWords(c, t) : 0) + 40 + 2 * c.vectorWidth + 2 * vpt +
               4 * std::max(0, vpt - 4);
    // The bulk kernel converts one vector at a time from shared memory.
    if (c.pipeline == Pipeline::Bulk)
        return 40 + 2 * c.vectorWidth;
    return cacheFloats(c, t) + 40;
}

int vectorBytes(const RowwiseConfig& c, const RowTensors& t) {
    return c.vectorWidth * t.xBytes;
}

// The pipeline=async ring: depth rows of every thread's vectors.
qint64 ringBytes(const RowwiseConfig& c, const RowTensors& t) {
    return qint64(c.depth) * c.vectorsPerThread * c.warps * 32 * vectorBytes(c, t);
}

qint64 bulkSliceBytes(const RowwiseConfig& c, const RowTensors& t, qint64 n) {
    const qint64 split = std::max(1, c.split);
    const qint64 vec = std::max(1, c.vectorWidth);
    if (split == 1)
        return (n + vec - 1) / vec * vec * t.xBytes;
    // Slices of whole 128-byte lines from the row's first line boundary; the last one longer by
    // the row's lead, at most a line less a vector (templates/rowwise/bulk.cu, bulkSlice).
    const qint64 line = 128 / std::max(1, t.xBytes);
    const qint64 stride = ((n + split - 1) / split + line - 1) / line * line;
    const qint64 last = n - (split - 1) * stride;
    return std::max(stride, (last + vec - 1) / vec * vec + line - vec) * t.xBytes;
}

// Shared memory of one block: the block reduction's partials, the ring with pipeline=async, the
// slice and its barriers with pipeline=bulk.
qint64 smemPerBlock(const RowwiseConfig& c, const RowTensors& t, qint64 n) {
    // Two buffers (the reductions alternate), of at most 12 bytes per warp (Welford's moments).
    const qint64 partials = c.mapping == Mapping::Block ? qint64(c.warps) * 24 : 0;
    if (c.pipeline == Pipeline::Bulk)
        return partials + 8 * kBulkPieces + 8 + bulkSliceBytes(c, t, n);
    return partials + (ring(c) && t.op == RowOp::LayerNorm ? ringBytes(c, t) : 0);
}

int residentBlocks(const RowwiseConfig& c, const RowTensors& t, const DeviceInfo& device,
                   qint64 n) {
    const qint64 threads = qint64(c.warps) * 32;
    const qint64 byRegs = device.regsPerSm / (qint64(registerEstimate(c, t)) * threads);
    const qint64 bySmem = device.smemPerSm / (smemPerBlock(c, t, n) + kSmemReservedPerBlock);
    return int(std::min({byRegs, bySmem, 2048 / threads, qint64(8)}));
}

int prefetchCtasWanted(const RowwiseConfig& c, qint64 rowBytes, int atLeast) {
    const qint64 perBlock = std::max<qint64>(1, rowBytes * (c.warps * 32 / c.rowThreads()));
    const qint64 wanted = (kPrefetchBytesPerSm + perBlock - 1) / perBlock;
    return int(std::clamp<qint64>(wanted, atLeast, 8));
}

} // namespace kev::rowwise
