// Small-M GEMM for LLM inference shapes (M <= 256 tokens against N x K weights): B holds nearly
// all the bytes, so the design streams B at the DRAM rate. A block owns a row band of up to
// blockM rows and blockN columns; its warps split the columns only (each B element is read from
// shared memory by one warp), a deep cp.async pipeline keeps many B bytes in flight, row bands
// vary fastest in the grid so B comes from DRAM once, and split-K (fp32 partials in the ABI
// workspace, summed in split order by a second kernel: deterministic) fills the GPU when the
// output has few tiles.
#ifndef KEV_BUILTIN_FAMILY_SMALLM_H
#define KEV_BUILTIN_FAMILY_SMALLM_H

#include "builtin/kernelfamily.h"

namespace kev {

class SmallMFamily : public KernelFamily {
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

// The largest M the family takes: beyond it the output has enough tiles for the square families.
inline constexpr int kSmallMLimit = 256;

} // namespace kev

#endif // KEV_BUILTIN_FAMILY_SMALLM_H
