// Tensor cores through `mma.sync.m16n8k16` (sm_80 and later): cp.async multi-stage pipelines into
// swizzled or padded shared memory, fragments loaded with ldmatrix (ldmatrix.trans for row-major
// B), fp32 accumulators in registers. The split-K variant splits K over blockIdx.z into fp32
// partials in the workspace and sums them in a second kernel, without atomics or a zeroed buffer.
#ifndef KEV_BUILTIN_FAMILY_MMASYNC_H
#define KEV_BUILTIN_FAMILY_MMASYNC_H

#include "builtin/kernelfamily.h"

namespace kev {

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
