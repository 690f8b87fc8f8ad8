// One GPU as the harness describes it (probe/hello "devices" entries, or a report's
// environment.gpu).
#pragma once

#include <QJsonObject>
#include <QMetaType>
#include <QString>

namespace kev {

struct DeviceInfo {
    int index = 0;
    QString name;
    QString uuid;
    int ccMajor = 0;
    int ccMinor = 0;
    int smCount = 0;
    qint64 l2Bytes = 0;
    // What cudaFuncSetAttribute may raise a kernel's dynamic shared memory to (232448 on sm_90).
    qint64 smemPerBlockOptin = 232448;
    qint64 smemPerSm = 233472;
    int regsPerSm = 65536;
    qint64 memoryBytes = 0;
    QString driver;

    // Accepts "cc": "9.0" or "cc_major"/"cc_minor", and snake_case sizes; fields it does not know
    // keep their defaults (an sm_90 part without sm_count/l2_bytes, as NVML describes it, gets the
    // H200's), so any harness yields a usable description.
    static DeviceInfo fromJson(const QJsonObject& json);
    QJsonObject toJson() const;

    bool isValid() const { return !name.isEmpty() && ccMajor > 0; }
    bool isHopper() const { return ccMajor == 9; }
    // "sm_90a" on Hopper, "sm_XY" elsewhere.
    QString arch() const;

    // The documented default when no device is known: an NVIDIA H200 (sm_90, 132 SMs, 60 MiB L2,
    // 227 KiB opt-in shared memory per block, 141 GB HBM3e).
    static DeviceInfo h200();
};

} // namespace kev

Q_DECLARE_METATYPE(kev::DeviceInfo)
