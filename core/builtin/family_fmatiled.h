// The simplest rung of the ladder: a shared-memory tiled CUDA-core GEMM. A T x T tile of A and one
// of B are staged in shared memory (converted to fp32, rows padded by one word against bank
// conflicts), each thread accumulates one to four outputs of a row in fp32 with FMA. Any input
// type (f16, bf16, f32), any output type; no tensor cores and no TF32.
#ifndef KEV_BUILTIN_FAMILY_FMATILED_H
#define KEV_BUILTIN_FAMILY_FMATILED_H

#include "builtin/kernelfamily.h"

namespace kev {

class FmaTiledFamily : public KernelFamily {
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

#endif // KEV_BUILTIN_FAMILY_FMATILED_H
