// Provider presets for OpenAI-compatible chat servers. A preset only fills in defaults (base URL,
// the environment variable that holds the key, how the server takes a JSON schema); every field
// can be overridden, and "custom" fills in nothing but the generic key variable.
#ifndef KEV_LLM_PROVIDERPRESET_H
#define KEV_LLM_PROVIDERPRESET_H

#include <QString>
#include <QStringList>
#include <QVector>

#include <optional>

namespace kev {

// How a server is asked to constrain a reply to a JSON schema.
enum class SchemaDialect {
    None,     // not asked: the reply is validated and re-asked on error
    OpenAi,   // "response_format": {"type": "json_schema", "json_schema": {"name", "schema"}}
    Vllm,     // "guided_json": schema (vLLM releases before structured_outputs)
    LlamaCpp, // "json_schema": schema (llama.cpp server)
    Ollama,   // "format": schema (Ollama's native field) plus "response_format" for its /v1
};

QString schemaDialectToString(SchemaDialect dialect);
std::optional<SchemaDialect> schemaDialectFromString(const QString& text);
QStringList schemaDialectNames();

struct ProviderPreset {
    QString id;          // "openai", "vllm", ...
    QString displayName; // "OpenAI"
    QString baseUrl;     // ends in /v1; the client appends /chat/completions
    // The variable KeyStore reads for this preset (EnvironmentKeyStore::variableFor(id)), named in
    // messages; KEVOLVE_API_KEY always works too.
    QString keyEnvVar;
    bool keyRequired = false;
    SchemaDialect schemaDialect = SchemaDialect::None;
    QString defaultModel; // empty: the user must name one

    static const QVector<ProviderPreset>& all();
    static std::optional<ProviderPreset> byId(const QString& id);
    static QStringList ids();
};

} // namespace kev

#endif // KEV_LLM_PROVIDERPRESET_H
