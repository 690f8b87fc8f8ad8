// SGEMM on the FP32 pipes (no tensor cores, so no TF32), warp-tiled: a block tile in shared memory
// (A transposed so a lane's rows are one float4), split into warp tiles whose 32 lanes form a
// grid of 4x4 output groups (conflict-free, mostly broadcast float4 shared loads), a register
// block per thread (8x8 by default: 64 FMAs per 16 bytes of fragments), register double
// buffering of the fragments, 128-bit global loads and double-buffered shared memory.
#ifndef KEV_BUILTIN_FAMILY_FMAWARP_H
#define KEV_BUILTIN_FAMILY_FMAWARP_H

#include "builtin/kernelfamily.h"

namespace kev {

class FmaWarpTileFamily : public KernelFamily {
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

#endif // KEV_BUILTIN_FAMILY_FMAWARP_H
