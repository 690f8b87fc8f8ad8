// libFuzzer: a session's index.jsonl reader. Every line is a step or a problem naming its line and
// byte; no version is held twice and every value is in range.
#include "sessionstore.h"

#include <QByteArray>
#include <QSet>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const QByteArray text(reinterpret_cast<const char*>(data), static_cast<qsizetype>(size));
    const kev::IndexContents contents = kev::parseIndex(text);
    QSet<int> versions;
    for (const auto& s : contents.steps) {
        if (s.version < 1 || s.version > kev::IterationSummary::kMaxVersion ||
            versions.contains(s.version) || s.parentVersion >= s.version)
            std::abort();
        versions.insert(s.version);
        if (s.speedup && !(std::isfinite(*s.speedup) && *s.speedup >= 0 &&
                           *s.speedup <= kev::IterationSummary::kMaxSpeedup))
            std::abort();
        (void)s.toJson();
    }
    int lastLine = 0;
    for (const auto& p : contents.problems) {
        if (p.line <= lastLine || p.byte < 0 || p.byte > text.size() || p.message.isEmpty())
            std::abort();
        lastLine = p.line;
        (void)p.toString();
    }
    return 0;
}
