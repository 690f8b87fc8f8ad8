// Taking a model's reply apart exactly, or not at all: one JSON object (the whole reply, or one
// fenced json block), or one fenced cuda block. Anything else is an error that says what was
// found, so the agent can ask again; nothing is guessed from a malformed reply.
#ifndef KEV_LLM_REPLYPARSER_H
#define KEV_LLM_REPLYPARSER_H

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <optional>

namespace kev {

// The reply without a leading <think>...</think> block (reasoning models behind some servers).
QString stripReasoning(const QString& reply);

std::optional<QJsonObject> extractJsonObject(const QString& reply, QString* error);

// The text between the ```cuda line and the closing ``` line, exactly as written.
std::optional<QString> extractCudaBlock(const QString& reply, QString* error);

// Problems the referee would certainly refuse, found before spending a compile on them: the
// entry point or the ABI header missing, allocation, copies, synchronisation, streams, library
// calls, threads or processes. Comments and string literals are ignored.
QStringList lintCandidate(const QString& source);

} // namespace kev

#endif // KEV_LLM_REPLYPARSER_H
