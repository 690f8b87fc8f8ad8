// Tensor cores through the CUDA C++ warp-matrix API (nvcuda::wmma, 16x16x16 fragments, f16 or bf16
// inputs, fp32 accumulators): block tiles of A and B staged in padded shared memory with cp.async
// (zero-filled outside M, N and K), optionally double-buffered, and an epilogue that stores each
// accumulator fragment to a small per-warp shared scratch and copies it to C with bounds checks,
// converting to C's type. The rung between the FMA kernels and hand-written mma.sync.
#ifndef KEV_BUILTIN_FAMILY_WMMA_H
#define KEV_BUILTIN_FAMILY_WMMA_H

#include "builtin/kernelfamily.h"

namespace kev {

class WmmaFamily : public KernelFamily {
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

#endif // KEV_BUILTIN_FAMILY_WMMA_H
