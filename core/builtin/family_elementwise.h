// Elementwise GELU (erf form) and SiLU: vector accesses, several vectors per thread in flight, and
// a grid of one pass or a persistent grid-stride loop.
#ifndef KEV_BUILTIN_FAMILY_ELEMENTWISE_H
#define KEV_BUILTIN_FAMILY_ELEMENTWISE_H

#include "builtin/kernelfamily.h"

namespace kev {

class ElementwiseFamily : public KernelFamily {
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

#endif // KEV_BUILTIN_FAMILY_ELEMENTWISE_H
