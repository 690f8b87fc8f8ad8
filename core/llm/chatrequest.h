// One chat-completions request as a value, and its wire form for a given schema dialect.
#ifndef KEV_LLM_CHATREQUEST_H
#define KEV_LLM_CHATREQUEST_H

#include "llm/providerpreset.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>
#include <QVector>

#include <optional>

namespace kev {

struct ChatMessage {
    QString role; // "system", "user" or "assistant"
    QString content;
};

struct ChatRequest {
    QString model;
    QVector<ChatMessage> messages;
    std::optional<double> temperature;
    int maxTokens = 0; // 0: the server's default
    bool stream = true;
    // When set, the server is asked (in its dialect) to constrain the reply to this schema.
    std::optional<QJsonObject> jsonSchema;
    QString schemaName = QStringLiteral("reply");
    // Server-specific fields added to the body as they are (Ollama's "options" and "keep_alive").
    QJsonObject extraFields;

    // Characters of every message, for budgeting and for estimating tokens when a server does
    // not report usage.
    qint64 characterCount() const;
};

struct WireOptions {
    SchemaDialect dialect = SchemaDialect::None;
    bool sendSchema = true;         // false once a server has refused the schema field
    bool requestStreamUsage = true; // stream_options.include_usage
    // OpenAI's reasoning models take max_completion_tokens and only the default temperature.
    bool maxCompletionTokens = false;
    bool sendTemperature = true;
};

QJsonObject chatRequestJson(const ChatRequest& request, const WireOptions& options);

} // namespace kev

#endif // KEV_LLM_CHATREQUEST_H
