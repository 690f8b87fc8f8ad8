// Matrix-vector product (gemv), both orientations, fp32 accumulation: transpose 0 gives one warp
// per row of A with vector loads of A and x; transpose 1 walks columns with vector loads, splits M
// over blocks and sums the splits in a second kernel (never relying on a zeroed workspace).
#ifndef KEV_BUILTIN_FAMILY_GEMV_H
#define KEV_BUILTIN_FAMILY_GEMV_H

#include "builtin/kernelfamily.h"

namespace kev {

class GemvFamily : public KernelFamily {
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

} // namespace kev

#endif // KEV_BUILTIN_FAMILY_GEMV_H
