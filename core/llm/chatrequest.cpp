#include "llm/chatrequest.h"

#include <QJsonArray>

using namespace Qt::Literals::StringLiterals;

namespace kev {

qint64 ChatRequest::characterCount() const {
    qint64 count = 0;
    for (const auto& message : messages)
        count += message.content.size();
    return count;
}

QJsonObject chatRequestJson(const ChatRequest& request, const WireOptions& options) {
    QJsonArray messages;
    for (const auto& message : request.messages)
        messages.append(QJsonObject{{u"role"_s, message.role}, {u"content"_s, message.content}});

    QJsonObject body{{u"model"_s, request.model}, {u"messages"_s, messages}};
    for (auto it = request.extraFields.begin(); it != request.extraFields.end(); ++it)
        body[it.key()] = it.value();
    if (request.temperature && options.sendTemperature)
        body[u"temperature"_s] = *request.temperature;
    if (request.maxTokens > 0)
        body[options.maxCompletionTokens ? u"max_completion_tokens"_s : u"max_tokens"_s] =
            request.maxTokens;
    body[u"stream"_s] = request.stream;
    if (request.stream && options.requestStreamUsage)
        body[u"stream_options"_s] = QJsonObject{{u"include_usage"_s, true}};

    if (request.jsonSchema && options.sendSchema) {
        const QJsonObject& schema = *request.jsonSchema;
        const QJsonObject responseFormat{
            {u"type"_s, u"json_schema"_s},
            {u"json_schema"_s, QJsonObject{{u"name"_s, request.schemaName},
                                           {u"schema"_s, schema},
                                           {u"strict"_s, false}}}};
        switch (options.dialect) {
        case SchemaDialect::None:
            break;
        case SchemaDialect::OpenAi:
            body[u"response_format"_s] = responseFormat;
            break;
        case SchemaDialect::Vllm:
            body[u"guided_json"_s] = schema;
            break;
        case SchemaDialect::LlamaCpp:
            body[u"json_schema"_s] = schema;
            break;
        case SchemaDialect::Ollama:
            // Ollama's native API reads "format"; its /v1 endpoint reads response_format and
            // ignores unknown fields, so both are sent.
            body[u"format"_s] = schema;
            body[u"response_format"_s] = responseFormat;
            break;
        }
    }
    return body;
}

} // namespace kev
