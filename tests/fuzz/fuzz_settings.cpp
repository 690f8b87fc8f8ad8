// libFuzzer: session.json's readers (the session's info and its settings). A wrong type or value
// is an error naming the key; what is accepted validates.
#include "enginesettings.h"
#include "jsonschema.h"
#include "sessionstore.h"

#include <QByteArray>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const QByteArray text(reinterpret_cast<const char*>(data), static_cast<qsizetype>(size));
    QString error;
    const auto object = kev::parseJsonObject(text, &error);
    if (!object)
        return 0;
    const auto settings = kev::EngineSettings::fromJson(*object, &error);
    if (settings && !settings->validate().isEmpty())
        std::abort();
    if (!settings && error.isEmpty())
        std::abort();
    const auto nested =
        kev::EngineSettings::fromJson(object->value(QLatin1String("settings")).toObject(), &error);
    if (nested && !nested->validate().isEmpty())
        std::abort();
    const auto info = kev::SessionInfo::fromJson(*object, &error);
    if (info)
        (void)info->toJson();
    return 0;
}
