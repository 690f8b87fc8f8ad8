// Tensor cores through `mma.sync.m16n8k16` (sm_80 and later): cp.async multi-stage pipelines into
// swizzled or padded shared memory, fragments loaded with ldmatrix (ldmatrix.trans for row-major
// B), fp32 accumulators in registers. The split-K variant splits K over blockIdx.z into fp32
// partials in the workspace and sums them in a second kernel, without atomics or a zeroed buffer.
#ifndef KEV_BUILTIN_FAMILY_MMASYNC_H
#define KEV_BUILTIN_FAMILY_MMASYNC_H

#include "builtin/kernelfamily.h"

#include <optional>

namespace kev {

// The knobs of one mma_sync configuration, parsed once from the Strategy (its tile fields and the
// smemLayout and raster strings, which exist as text only on the Strategy, the save boundary).
struct MmaSyncConfig {
    enum class Layout { Swizzled, Padded };
    enum class Raster { Row, Grouped };

    int blockM = 0;
    int blockN = 0;
    int blockK = 0;
    int warpM = 0;
    int warpN = 0;
    int warps = 0;
    int stages = 0;
    Layout layout = Layout::Swizzled;
    Raster raster = Raster::Row;
    int groupSize = 1;
    int splitK = 1;
    // Text of smemLayout or raster that names neither value (the enum then holds its first
    // value; the constraints report the text).
    std::optional<QString> invalidLayout;
    std::optional<QString> invalidRaster;

    static MmaSyncConfig fromStrategy(const Strategy& s);
    static QString layoutName(Layout layout);
    static QString rasterName(Raster raster);

    bool padded() const { return !invalidLayout && layout == Layout::Padded; }
    bool swizzled() const { return !invalidLayout && layout == Layout::Swizzled; }
    bool grouped() const { return !invalidRaster && raster == Raster::Grouped; }
    // Elements of one shared-memory row of the A and B tiles (padded rows are 16 bytes longer).
    int aRowElems() const { return padded() ? blockK + 8 : blockK; }
    int bRowElems() const { return padded() ? blockN + 8 : blockN; }
    qint64 smemBytes() const;
    // Registers per thread: the accumulators, one k step of fragments, and about 40 for
    // addresses, loop counters and the epilogue.
    int registerEstimate() const;
};

class MmaSyncFamily : public KernelFamily {
public:
    // splitK = false: the "mma_sync" family (split_k is 1); true: "mma_sync_splitk" (split_k ≥ 2).
    explicit MmaSyncFamily(bool splitK = false);

    QString id() const override;
    QString description() const override;
    bool supports(const Task& task, const DeviceInfo& device) const override;
    QVector<ParameterSpec> parameters() const override;
    QStringList constraints(const Strategy& strategy, const Task& task,
                            const DeviceInfo& device) const override;
    ResourceEstimate resources(const Strategy& strategy, const Task& task,
                               const DeviceInfo& device) const override;
    Strategy defaultStrategy(const Task& task, const DeviceInfo& device) const override;
    void normalize(Strategy& strategy) const override;
    QString generate(const Strategy& strategy, const Task& task) const override;

private:
    bool m_splitK;
};

} // namespace kev

#endif // KEV_BUILTIN_FAMILY_MMASYNC_H
