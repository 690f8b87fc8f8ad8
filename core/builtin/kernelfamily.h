// A kernel family of the built-in backend: one parameterised kernel design (its parameter space,
// the rules that make a point of that space feasible on a device, and a code generator that
// writes one readable .cu file per point). The planner searches over families and parameters;
// the coder calls generate(). Families are knowledge, never a table of per-shape answers.
#ifndef KEV_BUILTIN_KERNELFAMILY_H
#define KEV_BUILTIN_KERNELFAMILY_H

#include "core/deviceinfo.h"
#include "core/strategy.h"
#include "core/task.h"

#include <QJsonArray>
#include <QJsonValue>
#include <QString>
#include <QStringList>
#include <QVector>

#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

namespace kev {

// One named knob of a family and the values it may take, in order: a neighbour move steps to the
// adjacent value, so the order is the order of "smaller" to "larger" (or a fixed list of modes).
// `get`/`set` read and write the knob on a Strategy, so a knob can be a typed Strategy field
// (blockM, stages, ...) or a family-specific entry of Strategy::params.
struct ParameterSpec {
    QString name; // as shown to a person and used in rationales, e.g. "blockM"
    QString description;
    QJsonArray values; // allowed values (ints or strings), ordered
    std::function<QJsonValue(const Strategy&)> get;
    std::function<void(Strategy&, const QJsonValue&)> set;
};

// A knob that is a typed Strategy field, e.g. fieldParameter(u"blockM"_s, ..., &Strategy::blockM).
template <typename T>
ParameterSpec fieldParameter(const QString& name, const QString& description,
                             const QJsonArray& values, T Strategy::*field) {
    ParameterSpec spec{name, description, values, {}, {}};
    spec.get = [field](const Strategy& s) {
        if constexpr (std::is_arithmetic_v<T>)
            return QJsonValue(static_cast<double>(s.*field));
        else
            return QJsonValue(s.*field);
    };
    spec.set = [field](Strategy& s, const QJsonValue& v) {
        if constexpr (std::is_arithmetic_v<T>)
            s.*field = static_cast<T>(v.toDouble());
        else
            s.*field = v.toString();
    };
    return spec;
}

// A family-specific knob kept in Strategy::params under `name`.
ParameterSpec paramsParameter(const QString& name, const QString& description,
                              const QJsonArray& values);

// Static resource use of one configuration, as the family estimates it before compiling.
struct ResourceEstimate {
    int threadsPerBlock = 0;
    qint64 smemBytesPerBlock = 0; // dynamic + static shared memory
    int registersPerThread = 0;   // estimate; ptxas has the last word
    int blocksPerSm = 0;          // occupancy the estimate allows on the device, 0 = does not fit
    qint64 workspaceBytes = 0;    // for the task's timed shape (split-K partials, ...)
};

// The estimate for blocks of `threads` threads, `smemBytes` of shared memory and about `registers`
// registers a thread: blocks per SM bounded by registers, shared memory, 2048 threads and 32
// blocks.
ResourceEstimate estimateResources(int threads, qint64 smemBytes, int registers,
                                   const DeviceInfo& device);

class KernelFamily {
public:
    virtual ~KernelFamily() = default;

    // Stable id, the value of Strategy::family ("fma_tiled", "mma_sync", "wgmma_tma", ...).
    virtual QString id() const = 0;
    // One paragraph for people and for the LLM planner's prompt.
    virtual QString description() const = 0;
    // Whether the family can implement the task (op, dtypes, layouts) on the device (arch).
    virtual bool supports(const Task& task, const DeviceInfo& device) const = 0;
    // The parameter space. Strategy fields that a family does not list keep their default values.
    virtual QVector<ParameterSpec> parameters() const = 0;
    // Why the strategy cannot run on the device for the task; an empty list means feasible. Each
    // message names the parameter and the limit, e.g. "shared memory 245760 B per block exceeds
    // the device's opt-in limit 232448 B (blockM=256, blockN=256, blockK=32, stages=4)".
    virtual QStringList constraints(const Strategy& strategy, const Task& task,
                                    const DeviceInfo& device) const = 0;
    virtual ResourceEstimate resources(const Strategy& strategy, const Task& task,
                                       const DeviceInfo& device) const = 0;
    // A good, feasible starting point for the task on the device, with a rationale.
    virtual Strategy defaultStrategy(const Task& task, const DeviceInfo& device) const = 0;
    // Single-parameter moves (each knob one step up and one step down) plus any coupled moves a
    // family knows (e.g. warp tile follows block tile). Not filtered by constraints(): callers
    // filter for their task and device.
    virtual QVector<Strategy> neighbours(const Strategy& strategy) const;
    // The order in which the planner's local search tries the moves from `from`: the untried
    // moves of the lowest tier first (then the farthest from the other slots of a beam, then at
    // random). A family ranks by what moved its kernels on the hardware; the default is one tier
    // (every move alike).
    virtual int moveTier(const Strategy& from, const Strategy& to) const;
    // Sets the fields that follow from the knobs (warps from the block and warp tiles, mma, ...),
    // so that a moved strategy is consistent. The default changes nothing.
    virtual void normalize(Strategy& strategy) const;
    // The complete .cu file implementing harness/include/kevolve/abi.h for this configuration
    // only: constexpr parameters at the top, a header comment stating the strategy, no branches
    // for other configurations. Precondition: constraints(strategy, task, device) is empty.
    virtual QString generate(const Strategy& strategy, const Task& task) const = 0;
};

// Reads a knob of `strategy` through `spec`, or an undefined value when absent.
QJsonValue parameterValue(const ParameterSpec& spec, const Strategy& strategy);
// The position that steps along `spec`'s ordered values count from for `value`: its index when
// listed; for a number between the listed ones (a default's 11 vectors per thread, 7 blocks per
// SM) the index of the listed value below it (-1 below them all), so that one step up reaches
// the listed value above it; nullopt when neither (a string not listed, an unordered list).
std::optional<qsizetype> stepOrigin(const ParameterSpec& spec, const QJsonValue& value);
// The strategy with `spec` moved `steps` positions along its ordered values (from stepOrigin), or
// nullopt when there is no origin, a zero step from an unlisted value, or the move leaves them.
std::optional<Strategy> stepParameter(const ParameterSpec& spec, const Strategy& strategy,
                                      int steps);
// A compact key of the knob values of a strategy ("mma_sync blockM=128 blockN=128 ..."), used to
// recognise a configuration that has already been measured.
QString configurationKey(const KernelFamily& family, const Strategy& strategy);

// Every family the built-in backend knows, in ladder order (simplest first). Families are
// created once and live for the process. A family in its own files declares a factory such as
// `std::unique_ptr<KernelFamily> makeWgmmaTmaFamily();` in its header (family_wgmma.h), and the
// registry's constructor (familyregistry.cpp) adds it.
class FamilyRegistry {
public:
    static const FamilyRegistry& instance();

    QVector<const KernelFamily*> families() const;
    const KernelFamily* find(const QString& id) const;
    // Families whose supports() accepts the task on the device, in ladder order.
    QVector<const KernelFamily*> supporting(const Task& task, const DeviceInfo& device) const;

private:
    FamilyRegistry();
    std::vector<std::unique_ptr<KernelFamily>> m_families;
};

} // namespace kev

#endif // KEV_BUILTIN_KERNELFAMILY_H
