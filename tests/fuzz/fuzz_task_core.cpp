// libFuzzer: core's task reader, which applies the harness's rules too (one task validator). A task
// core accepts must also be one the harness accepts, and survive its own round trip.
#include "task.h"

#include <QByteArray>
#include <QJsonDocument>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const QByteArray text(reinterpret_cast<const char*>(data), static_cast<qsizetype>(size));
    const QJsonDocument document = QJsonDocument::fromJson(text);
    if (!document.isObject())
        return 0;
    QString error;
    const auto task = kev::Task::fromJson(document.object(), &error);
    if (!task) {
        if (error.isEmpty())
            std::abort();
        return 0;
    }
    if (!kev::harnessTaskError(QJsonDocument(document.object()).toJson()).isEmpty())
        std::abort();
    (void)task->summary();
    (void)task->flops();
    (void)task->minBytes();
    const auto again = kev::Task::fromJson(task->toJson(), &error);
    if (!again)
        std::abort();
    return 0;
}
