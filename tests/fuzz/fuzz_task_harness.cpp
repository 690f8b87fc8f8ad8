// libFuzzer: the harness's task rules. A task that is accepted normalises to a document that is
// accepted again as the same task.
#include "json.h"
#include "task.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto value = kev::json::tryParse(text, nullptr, kev::json::requestLimits());
    if (!value)
        return 0;
    try {
        const kev::Task task = kev::parseTask(*value);
        const kev::Task again = kev::parseTask(kev::toJson(task));
        if (!(again == task))
            std::abort();
        try {
            // The roofline's counts: finite arithmetic on whatever dimensions were accepted.
            for (const auto& shape : task.validationShapes)
                (void)(task.flops(shape) + task.minBytes(shape));
            (void)(task.flops(task.shape) + task.minBytes(task.shape));
        } catch (const std::out_of_range&) {
            // A count the op does not define for that shape: reported, not a fault.
        }
    } catch (const kev::TaskError& e) {
        if (std::string_view(e.what()).rfind("task", 0) != 0)
            std::abort(); // every message starts with the field's path
    }
    return 0;
}
