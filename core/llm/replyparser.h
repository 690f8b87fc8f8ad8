// Taking a model's reply apart: lenient about where the answer sits, strict about the answer.
// A JSON answer may be the whole reply, one fenced block, or one object embedded in prose; a
// kernel may be in one fenced block of any tag (```cuda, ```cu, ```cpp, a bare ```) or be the
// whole reply when that is a file with kevolve_launch; reasoning before </think> is dropped. What
// comes out is then validated exactly (schema, referee lint) by the agents; an ambiguous reply
// (two candidates) is an error that says what was found, so the agent can ask again.
#ifndef KEV_LLM_REPLYPARSER_H
#define KEV_LLM_REPLYPARSER_H

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <optional>

namespace kev {

// The reply without its reasoning: a leading <think>...</think> block, or everything up to a lone
// </think> (R1-style servers that strip the opening tag).
QString stripReasoning(const QString& reply);

std::optional<QJsonObject> extractJsonObject(const QString& reply, QString* error);

// The kernel file, exactly as written: the body of the single fenced block (of any tag; with
// several blocks, the single ```cuda/```cu one, else the single one defining kevolve_launch), or
// the whole reply when it has no fence and defines kevolve_launch.
std::optional<QString> extractCudaBlock(const QString& reply, QString* error);

// Problems the referee would certainly refuse, found before spending a compile on them: the
// entry point or the ABI header missing, allocation, copies, synchronisation, streams, library
// calls, threads or processes. Comments and string literals are ignored.
QStringList lintCandidate(const QString& source);

} // namespace kev

#endif // KEV_LLM_REPLYPARSER_H
