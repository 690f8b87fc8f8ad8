// EvaluationFailure (declared in evaluatorpool.h): the harness's error codes of PROTOCOL.md's
// "error" event, parsed into HarnessErrorCode so that callers decide on the code, never on text.
#include "evaluatorpool.h"

namespace kev {

namespace {

struct CodeName {
    HarnessErrorCode code;
    const char* name;
};

constexpr CodeName kCodeNames[] = {
    {HarnessErrorCode::BadRequest, "bad_request"},
    {HarnessErrorCode::BadTask, "bad_task"},
    {HarnessErrorCode::UnsupportedVersion, "unsupported_version"},
    {HarnessErrorCode::UnknownId, "unknown_id"},
    {HarnessErrorCode::Internal, "internal"},
};

} // namespace

HarnessErrorCode EvaluationFailure::codeFromString(const QString& text) {
    if (text.isEmpty())
        return HarnessErrorCode::None;
    for (const auto& entry : kCodeNames) {
        if (text == QLatin1String(entry.name))
            return entry.code;
    }
    return HarnessErrorCode::Unknown;
}

EvaluationFailure EvaluationFailure::refused(const QString& codeText, const QString& message) {
    EvaluationFailure failure;
    failure.kind = EvaluatorPool::Failure::Refused;
    failure.codeText = codeText;
    failure.code = codeFromString(codeText);
    // An error event without a code is still a refusal; the harness just did not say which.
    if (failure.code == HarnessErrorCode::None)
        failure.code = HarnessErrorCode::Unknown;
    failure.message = message;
    return failure;
}

QString EvaluationFailure::describe() const {
    if (codeText.isEmpty())
        return message;
    return codeText + QStringLiteral(": ") + message;
}

} // namespace kev
