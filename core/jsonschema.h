// A validator for the subset of JSON Schema (draft 2020-12) that Kevolve's own schemas use:
// type (a name or a list), properties, required, additionalProperties (a boolean), enum, const,
// minimum, maximum, exclusiveMinimum, exclusiveMaximum, minLength, maxLength, pattern, items,
// minItems, maxItems, and $ref to "#/$defs/NAME". Keywords outside that subset are ignored, so a
// schema that needs them must not rely on this validator.
#pragma once

#include <QJsonObject>
#include <QJsonValue>
#include <QString>
#include <QStringList>

#include <optional>

namespace kev {

class JsonSchema {
public:
    JsonSchema() = default;
    explicit JsonSchema(QJsonObject schema);

    // Loads a schema from a file or a resource (":/schemas/strategy.schema.json").
    static std::optional<JsonSchema> load(const QString& path, QString* error = nullptr);

    // One message per violation, each starting with the JSON path of the offending value
    // (e.g. "strategy.block_m: 0 is less than the minimum 1"); empty when the document is valid.
    QStringList validate(const QJsonValue& document, const QString& rootName = QString()) const;

    const QJsonObject& schema() const { return m_schema; }

private:
    void check(const QJsonObject& schema, const QJsonValue& value, const QString& path,
               QStringList* errors, int depth) const;
    QJsonObject resolve(const QJsonObject& schema) const;

    QJsonObject m_schema;
};

// A value as an error message quotes it: a string in quotes, a number, true/false/null, else its
// JSON type ("object", "array").
QString jsonBrief(const QJsonValue& value);

// Parses a JSON object from text; on failure returns nullopt and says where the text is broken.
std::optional<QJsonObject> parseJsonObject(const QByteArray& text, QString* error);

// Reads a JSON object from a file or resource.
std::optional<QJsonObject> readJsonObjectFile(const QString& path, QString* error);

} // namespace kev
