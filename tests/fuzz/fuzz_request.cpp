// libFuzzer: serve's request reader. Whatever the line, it returns a request or an error event that
// names the problem, and never throws.
#include "serve.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view line(reinterpret_cast<const char*>(data), size);
    const kev::ServeRequest r = kev::parseRequestLine(line, 0);
    if (r.error) {
        const kev::json::Value* message = r.error->find("message");
        const kev::json::Value* code = r.error->find("code");
        if (!message || !message->isString() || message->asString().empty() || !code ||
            r.op != kev::ServeRequest::Op::None || r.eval)
            std::abort();
        // The event is written as one protocol line.
        if (r.error->dump().find('\n') != std::string::npos)
            std::abort();
    } else if (r.op == kev::ServeRequest::Op::Eval && !r.eval) {
        std::abort();
    }
    return 0;
}
