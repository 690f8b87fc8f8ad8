#include "deviceinfo.h"

namespace kev {

DeviceInfo DeviceInfo::fromJson(const QJsonObject& json) {
    DeviceInfo d;
    d.index = json.value(QLatin1String("index")).toInt(d.index);
    d.name = json.value(QLatin1String("name")).toString();
    d.uuid = json.value(QLatin1String("uuid")).toString();
    if (json.contains(QLatin1String("cc_major"))) {
        d.ccMajor = json.value(QLatin1String("cc_major")).toInt();
        d.ccMinor = json.value(QLatin1String("cc_minor")).toInt();
    } else {
        const QString cc = json.value(QLatin1String("cc")).toString();
        const auto parts = cc.split(u'.');
        if (parts.size() == 2) {
            d.ccMajor = parts.at(0).toInt();
            d.ccMinor = parts.at(1).toInt();
        }
    }
    // NVML (the supervisor's only view of the GPU) does not give these; a report's environment
    // (measured by the CUDA child) does. Until then a Hopper part is described as an H200.
    const DeviceInfo hopper = h200();
    const bool assumeHopper = d.ccMajor == 9;
    d.smCount = json.value(QLatin1String("sm_count")).toInt(assumeHopper ? hopper.smCount : 0);
    d.l2Bytes = json.value(QLatin1String("l2_bytes")).toInteger(assumeHopper ? hopper.l2Bytes : 0);
    d.smemPerBlockOptin =
        json.value(QLatin1String("smem_per_block_optin")).toInteger(d.smemPerBlockOptin);
    d.smemPerSm = json.value(QLatin1String("smem_per_sm")).toInteger(d.smemPerSm);
    d.regsPerSm = json.value(QLatin1String("regs_per_sm")).toInt(d.regsPerSm);
    d.memoryBytes = json.value(QLatin1String("memory_bytes")).toInteger(d.memoryBytes);
    d.driver = json.value(QLatin1String("driver_version"))
                   .toString(json.value(QLatin1String("driver")).toString());
    return d;
}

QJsonObject DeviceInfo::toJson() const {
    return {
        {QStringLiteral("index"), index},
        {QStringLiteral("name"), name},
        {QStringLiteral("uuid"), uuid},
        {QStringLiteral("cc"), QString(QString::number(ccMajor) + u'.' + QString::number(ccMinor))},
        {QStringLiteral("sm_count"), smCount},
        {QStringLiteral("l2_bytes"), l2Bytes},
        {QStringLiteral("smem_per_block_optin"), smemPerBlockOptin},
        {QStringLiteral("smem_per_sm"), smemPerSm},
        {QStringLiteral("regs_per_sm"), regsPerSm},
        {QStringLiteral("memory_bytes"), memoryBytes},
        {QStringLiteral("driver_version"), driver},
    };
}

QString DeviceInfo::arch() const {
    const QString base =
        QStringLiteral("sm_") + QString::number(ccMajor) + QString::number(ccMinor);
    return isHopper() ? base + u'a' : base;
}

DeviceInfo DeviceInfo::h200() {
    DeviceInfo d;
    d.name = QStringLiteral("NVIDIA H200");
    d.ccMajor = 9;
    d.ccMinor = 0;
    d.smCount = 132;
    d.l2Bytes = 62914560;
    d.smemPerBlockOptin = 232448;
    d.smemPerSm = 233472;
    d.regsPerSm = 65536;
    d.memoryBytes = 150754820096;
    return d;
}

} // namespace kev
