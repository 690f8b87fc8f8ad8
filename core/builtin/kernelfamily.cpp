#include "builtin/kernelfamily.h"

#include <algorithm>

using namespace Qt::StringLiterals;

namespace kev {

ParameterSpec paramsParameter(const QString& name, const QString& description,
                              const QJsonArray& values) {
    ParameterSpec spec{name, description, values, {}, {}};
    spec.get = [name](const Strategy& s) { return s.params.value(name); };
    spec.set = [name](Strategy& s, const QJsonValue& v) { s.params.insert(name, v); };
    return spec;
}

namespace {

qsizetype indexOfValue(const QJsonArray& values, const QJsonValue& v) {
    for (qsizetype i = 0; i < values.size(); ++i) {
        const QJsonValue candidate = values.at(i);
        if (candidate.isDouble() && v.isDouble() ? candidate.toDouble() == v.toDouble()
                                                 : candidate == v)
            return i;
    }
    return -1;
}

// For a number that `values` (ascending numbers) does not hold: the index of the last value below
// it (-1 when all are above); -2 when the list is not ascending numbers or v is not a number.
qsizetype listedBelow(const QJsonArray& values, const QJsonValue& v) {
    if (!v.isDouble())
        return -2;
    qsizetype below = -1;
    for (qsizetype i = 0; i < values.size(); ++i) {
        if (!values.at(i).isDouble() ||
            (i > 0 && values.at(i).toDouble() <= values.at(i - 1).toDouble()))
            return -2;
        if (values.at(i).toDouble() < v.toDouble())
            below = i;
    }
    return below;
}

// Where `v` sits along `values`: its index, listed; or, for a number between ascending listed
// numbers, the index of the one below it (-1 below them all), not listed; nullopt otherwise.
struct Position {
    qsizetype at;
    bool listed;
};
std::optional<Position> locate(const QJsonArray& values, const QJsonValue& v) {
    if (const qsizetype at = indexOfValue(values, v); at >= 0)
        return Position{at, true};
    if (const qsizetype below = listedBelow(values, v); below >= -1)
        return Position{below, false};
    return std::nullopt;
}

QString valueText(const QJsonValue& v) {
    return v.isDouble() ? QString::number(v.toDouble()) : v.toVariant().toString();
}

} // namespace

QJsonValue parameterValue(const ParameterSpec& spec, const Strategy& strategy) {
    return spec.get ? spec.get(strategy) : QJsonValue(QJsonValue::Undefined);
}

std::optional<qsizetype> stepOrigin(const ParameterSpec& spec, const QJsonValue& value) {
    const std::optional<Position> p = locate(spec.values, value);
    return p ? std::optional<qsizetype>(p->at) : std::nullopt;
}

std::optional<Strategy> stepParameter(const ParameterSpec& spec, const Strategy& strategy,
                                      int steps) {
    const QJsonValue current = parameterValue(spec, strategy);
    const std::optional<Position> p = locate(spec.values, current);
    if (!spec.set || !p || (!p->listed && steps == 0))
        return std::nullopt;
    // From a value between the listed ones (p->at: the one below it), a step down is the listed
    // value below it, a step up the one above.
    const qsizetype to = p->listed || steps > 0 ? p->at + steps : p->at + 1 + steps;
    if (to < 0 || to >= spec.values.size())
        return std::nullopt;
    Strategy moved = strategy;
    spec.set(moved, spec.values.at(to));
    return moved;
}

QVector<Strategy> KernelFamily::neighbours(const Strategy& strategy) const {
    QVector<Strategy> out;
    const auto specs = parameters();
    for (const ParameterSpec& spec : specs) {
        for (int steps : {-1, 1}) {
            auto moved = stepParameter(spec, strategy, steps);
            if (!moved)
                continue;
            normalize(*moved);
            // A move the family's normalisation undoes (split_reduce without split-K) is none.
            if (parameterValue(spec, *moved) == parameterValue(spec, strategy))
                continue;
            moved->rationale =
                u"%1 %2 -> %3"_s.arg(spec.name, valueText(parameterValue(spec, strategy)),
                                     valueText(parameterValue(spec, *moved)));
            out.append(*moved);
        }
    }
    return out;
}

void KernelFamily::normalize(Strategy&) const {}

int KernelFamily::moveTier(const Strategy&, const Strategy&) const {
    return 0;
}

QString configurationKey(const KernelFamily& family, const Strategy& strategy) {
    QString key = family.id();
    const auto specs = family.parameters();
    for (const ParameterSpec& spec : specs)
        key += u' ' + spec.name + u'=' + valueText(parameterValue(spec, strategy));
    return key;
}

ResourceEstimate estimateResources(int threads, qint64 smemBytes, int registers,
                                   const DeviceInfo& device) {
    ResourceEstimate r;
    r.threadsPerBlock = threads;
    r.smemBytesPerBlock = smemBytes;
    r.registersPerThread = registers;
    if (threads > 0 && registers > 0) {
        const qint64 byRegs = device.regsPerSm / (qint64(registers) * threads);
        const qint64 bySmem = device.smemPerSm / std::max<qint64>(smemBytes, 1);
        r.blocksPerSm = int(std::min({byRegs, bySmem, qint64(2048 / threads), qint64(32)}));
    }
    return r;
}

} // namespace kev
