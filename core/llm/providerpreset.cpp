#include "llm/providerpreset.h"

using namespace Qt::Literals::StringLiterals;

namespace kev {

QString schemaDialectToString(SchemaDialect dialect) {
    switch (dialect) {
    case SchemaDialect::None:
        return u"none"_s;
    case SchemaDialect::OpenAi:
        return u"openai"_s;
    case SchemaDialect::Vllm:
        return u"vllm"_s;
    case SchemaDialect::LlamaCpp:
        return u"llamacpp"_s;
    case SchemaDialect::Ollama:
        return u"ollama"_s;
    }
    return u"none"_s;
}

std::optional<SchemaDialect> schemaDialectFromString(const QString& text) {
    for (auto dialect : {SchemaDialect::None, SchemaDialect::OpenAi, SchemaDialect::Vllm,
                         SchemaDialect::LlamaCpp, SchemaDialect::Ollama}) {
        if (schemaDialectToString(dialect) == text)
            return dialect;
    }
    return std::nullopt;
}

QStringList schemaDialectNames() {
    return {u"none"_s, u"openai"_s, u"vllm"_s, u"llamacpp"_s, u"ollama"_s};
}

const QVector<ProviderPreset>& ProviderPreset::all() {
    // vLLM and llama.cpp honour response_format json_schema in current releases, but their own
    // fields work across more versions; a server that rejects a field is retried without it.
    static const QVector<ProviderPreset> presets = {
        {u"openai"_s,
         u"OpenAI"_s,
         u"https://api.openai.com/v1"_s,
         u"OPENAI_API_KEY"_s,
         true,
         SchemaDialect::OpenAi,
         {}},
        {u"vllm"_s,
         u"vLLM"_s,
         u"http://127.0.0.1:8000/v1"_s,
         u"VLLM_API_KEY"_s,
         false,
         SchemaDialect::OpenAi,
         {}},
        {u"ollama"_s,
         u"Ollama"_s,
         u"http://127.0.0.1:11434/v1"_s,
         u"OLLAMA_API_KEY"_s,
         false,
         SchemaDialect::Ollama,
         {}},
        {u"llamacpp"_s,
         u"llama.cpp server"_s,
         u"http://127.0.0.1:8080/v1"_s,
         u"LLAMACPP_API_KEY"_s,
         false,
         SchemaDialect::LlamaCpp,
         {}},
        {u"openrouter"_s,
         u"OpenRouter"_s,
         u"https://openrouter.ai/api/v1"_s,
         u"OPENROUTER_API_KEY"_s,
         true,
         SchemaDialect::OpenAi,
         {}},
        {u"deepseek"_s, u"DeepSeek"_s, u"https://api.deepseek.com/v1"_s, u"DEEPSEEK_API_KEY"_s,
         true, SchemaDialect::None, u"deepseek-chat"_s},
        {u"custom"_s, u"Custom"_s, {}, u"KEVOLVE_API_KEY"_s, false, SchemaDialect::None, {}},
    };
    return presets;
}

std::optional<ProviderPreset> ProviderPreset::byId(const QString& id) {
    for (const auto& preset : all()) {
        if (preset.id == id)
            return preset;
    }
    return std::nullopt;
}

QStringList ProviderPreset::ids() {
    QStringList result;
    for (const auto& preset : all())
        result << preset.id;
    return result;
}

} // namespace kev
