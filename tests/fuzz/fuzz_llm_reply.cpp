// libFuzzer: the LLM reply extractor (core/llm/replyparser.h): a model's reply taken apart exactly
// or refused with a reason; the candidate lint on whatever code block it yields.
#include "llm/replyparser.h"

#include <QByteArray>
#include <QString>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const QString reply =
        QString::fromUtf8(reinterpret_cast<const char*>(data), static_cast<qsizetype>(size));
    const QString stripped = kev::stripReasoning(reply);
    if (stripped.size() > reply.size())
        std::abort();
    QString error;
    const auto object = kev::extractJsonObject(reply, &error);
    if (!object && error.isEmpty())
        std::abort();
    const auto code = kev::extractCudaBlock(reply, &error);
    if (!code && error.isEmpty())
        std::abort();
    (void)kev::lintCandidate(code ? *code : reply);
    return 0;
}
