// Row-wise memory-bound ops (softmax, layernorm, rmsnorm, reduce): one warp or one block per row,
// vector accesses, the row cached in registers when it fits (one DRAM read and one write, the
// floor), online softmax or Welford statistics against two passes, and an optional persistent grid.
#ifndef KEV_BUILTIN_FAMILY_ROWWISE_H
#define KEV_BUILTIN_FAMILY_ROWWISE_H

#include "builtin/kernelfamily.h"

namespace kev {

class RowwiseFamily : public KernelFamily {
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
    // The single moves, where a vector-width step keeps the chunk (vectors_per_thread halved or
    // doubled with it): the plain step doubled or halved the row a block covers.
    QVector<Strategy> neighbours(const Strategy& strategy) const override;
    QString generate(const Strategy& strategy, const Task& task) const override;
};

} // namespace kev

#endif // KEV_BUILTIN_FAMILY_ROWWISE_H
