// libFuzzer: the harness's JSON reader (every request, task file and child line goes through it).
// A document that parses must dump to text that parses back to the same value.
#include "json.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    for (const kev::json::Limits& limits : {kev::json::Limits(), kev::json::requestLimits()}) {
        std::string error;
        const auto value = kev::json::tryParse(text, &error, limits);
        if (!value) {
            if (error.empty())
                std::abort(); // a refusal always says why
            continue;
        }
        for (const int indent : {-1, 2}) {
            const std::string dumped = value->dump(indent);
            const auto back = kev::json::tryParse(dumped, &error, kev::json::Limits());
            if (!back || !(*back == *value))
                std::abort();
        }
        (void)value->toInt();
    }
    return 0;
}
