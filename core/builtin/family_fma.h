// CUDA-core GEMM with FP32 FMA (no tensor cores, so no TF32 either): block tiles staged in shared
// memory (A transposed so a thread's rows are one vector load), a TM x TN register block per
// thread split in 4-wide groups half a tile apart (conflict-free float4 shared loads), vectorised
// global loads, and double buffering with a register prefetch of the next k-tile.
#ifndef KEV_BUILTIN_FAMILY_FMA_H
#define KEV_BUILTIN_FAMILY_FMA_H

#include "builtin/kernelfamily.h"

namespace kev {

class FmaRegBlockFamily : public KernelFamily {
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

#endif // KEV_BUILTIN_FAMILY_FMA_H
