// The GEMV path of small-M GEMMs (M <= 8, decode): C = A B computed as a GEMV over B with M
// accumulators per column on the CUDA cores. A pure bandwidth kernel: 16-byte loads of B rows,
// several rows in flight per warp, the few A values broadcast from L1, split over K so that at
// least two waves of blocks exist, the splits' fp32 partials summed in split order by a second
// kernel (deterministic). No tensor cores: at M <= 8 an MMA tile would be mostly padding, and the
// FMAs (M per B element) are far below the FP32 rate at the DRAM rate.
#ifndef KEV_BUILTIN_FAMILY_SMALLMGEMV_H
#define KEV_BUILTIN_FAMILY_SMALLMGEMV_H

#include "builtin/kernelfamily.h"

namespace kev {

class SmallMGemvFamily : public KernelFamily {
public:
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
};

// The largest M the GEMV path takes (its accumulators are M x 8 registers a thread).
inline constexpr int kSmallMGemvLimit = 8;

} // namespace kev

#endif // KEV_BUILTIN_FAMILY_SMALLMGEMV_H
