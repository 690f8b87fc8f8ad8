#include "llm/llmsettings.h"

#include "keystore.h"

#include <QRegularExpression>
#include <QUrl>

#include <algorithm>

using namespace Qt::Literals::StringLiterals;

namespace kev {

namespace {

bool readNumber(const QJsonObject& options, const QString& name, double min, double max,
                double* out, QString* error) {
    const QJsonValue value = options.value(name);
    if (value.isUndefined() || value.isNull())
        return true;
    if (!value.isDouble() || value.toDouble() < min || value.toDouble() > max) {
        if (error)
            *error = u"llm option %1: expected a number from %2 to %3, got %4"_s.arg(
                name, QString::number(min), QString::number(max),
                value.isString() ? u"\"%1\""_s.arg(value.toString())
                                 : QString::number(value.toDouble()));
        return false;
    }
    *out = value.toDouble();
    return true;
}

bool readInt(const QJsonObject& options, const QString& name, int min, int max, int* out,
             QString* error) {
    double value = *out;
    if (!readNumber(options, name, min, max, &value, error))
        return false;
    if (value != static_cast<double>(static_cast<int>(value))) {
        if (error)
            *error = u"llm option %1: expected a whole number, got %2"_s.arg(
                name, QString::number(value));
        return false;
    }
    *out = static_cast<int>(value);
    return true;
}

bool readString(const QJsonObject& options, const QString& name, QString* out, QString* error) {
    const QJsonValue value = options.value(name);
    if (value.isUndefined() || value.isNull())
        return true;
    if (!value.isString()) {
        if (error)
            *error = u"llm option %1: expected a string"_s.arg(name);
        return false;
    }
    *out = value.toString().trimmed();
    return true;
}

} // namespace

QStringList LlmSettings::optionNames() {
    return {u"preset"_s,
            u"base_url"_s,
            u"model"_s,
            u"key_service"_s,
            u"schema_dialect"_s,
            u"temperature"_s,
            u"max_tokens"_s,
            u"stream"_s,
            u"context_tokens"_s,
            u"max_reasks"_s,
            u"connect_timeout_s"_s,
            u"first_token_timeout_s"_s,
            u"first_byte_timeout_s"_s,
            u"stall_timeout_s"_s,
            u"total_timeout_s"_s,
            u"max_retries"_s,
            u"fallback_model"_s,
            u"num_ctx"_s,
            u"keep_alive"_s,
            u"prompts_dir"_s,
            u"prices"_s};
}

QString LlmSettings::optionHelp() {
    return u"  preset                 openai, vllm, ollama, llamacpp, openrouter, deepseek, "
           u"custom\n"
           u"  base_url, model        the endpoint (.../v1) and the model's name on it\n"
           u"  key_service            where the key comes from: $<SERVICE>_API_KEY\n"
           u"  schema_dialect         none, openai, vllm, llamacpp, ollama\n"
           u"  temperature            0 to 2 (default: the server's)\n"
           u"  max_tokens             reply limit (default 16384 coder, 4096 others)\n"
           u"  context_tokens         the model's context (default 32768)\n"
           u"  stream                 true (default) or false\n"
           u"  max_reasks             re-asks of an unusable reply (default 2)\n"
           u"  connect_timeout_s      default 10\n"
           u"  first_token_timeout_s  from sending to the first token (default 60)\n"
           u"  stall_timeout_s        longest silence once tokens flow (default 120)\n"
           u"  total_timeout_s        one attempt in all (default 1800)\n"
           u"  max_retries            default 3 (a server that sends no token: 1)\n"
           u"  fallback_model         asked when the model is missing or keeps failing\n"
           u"  num_ctx, keep_alive    Ollama: context it loads the model with, how long it stays\n"
           u"  prompts_dir            a folder of prompt overrides\n"
           u"  prices                 {\"model\": {\"input_per_mtok\": N, \"output_per_mtok\": N}}"_s;
}

int LlmSettings::defaultMaxTokens(const QString& role) {
    return role == u"coder"_s ? 16384 : 4096;
}

std::optional<LlmSettings> LlmSettings::fromOptions(const QJsonObject& options, const QString& role,
                                                    QString* error) {
    const QStringList known = optionNames();
    for (auto it = options.begin(); it != options.end(); ++it) {
        if (!known.contains(it.key())) {
            if (error)
                *error =
                    u"llm option %1 is unknown (known: %2)"_s.arg(it.key(), known.join(u", "_s));
            return std::nullopt;
        }
    }

    LlmSettings s;
    s.role = role;
    s.maxTokens = defaultMaxTokens(role);
    if (!readString(options, u"preset"_s, &s.preset, error))
        return std::nullopt;
    const auto preset = ProviderPreset::byId(s.preset);
    if (!preset) {
        if (error)
            *error = u"llm option preset: unknown preset \"%1\" (known: %2)"_s.arg(
                s.preset, ProviderPreset::ids().join(u", "_s));
        return std::nullopt;
    }
    s.baseUrl = preset->baseUrl;
    s.model = preset->defaultModel;
    s.keyService = preset->id;
    s.keyRequired = preset->keyRequired;
    s.generalKey = preset->keyRequired || preset->id == u"custom"_s;
    s.dialect = preset->schemaDialect;

    QString dialect;
    if (!readString(options, u"base_url"_s, &s.baseUrl, error) ||
        !readString(options, u"model"_s, &s.model, error) ||
        !readString(options, u"key_service"_s, &s.keyService, error) ||
        !readString(options, u"schema_dialect"_s, &dialect, error) ||
        !readString(options, u"prompts_dir"_s, &s.promptsDir, error) ||
        !readString(options, u"fallback_model"_s, &s.fallbackModel, error))
        return std::nullopt;
    const QJsonValue keepAlive = options.value(u"keep_alive"_s);
    if (keepAlive.isDouble()) {
        s.keepAlive = QString::number(keepAlive.toDouble());
    } else if (!readString(options, u"keep_alive"_s, &s.keepAlive, error)) {
        return std::nullopt;
    }
    static const QRegularExpression duration(u"^-?[0-9]+(\\.[0-9]+)?(ms|s|m|h)?$"_s);
    if (!s.keepAlive.isEmpty() && !duration.match(s.keepAlive).hasMatch()) {
        if (error)
            *error = u"llm option keep_alive: expected a duration such as \"30m\", \"1h\", "
                     u"\"300\" (seconds) or \"-1\" (forever), got \"%1\""_s.arg(s.keepAlive);
        return std::nullopt;
    }
    if (!dialect.isEmpty()) {
        const auto parsed = schemaDialectFromString(dialect);
        if (!parsed) {
            if (error)
                *error = u"llm option schema_dialect: unknown dialect \"%1\" (known: %2)"_s.arg(
                    dialect, schemaDialectNames().join(u", "_s));
            return std::nullopt;
        }
        s.dialect = *parsed;
    }

    if (options.contains(u"temperature"_s) && !options.value(u"temperature"_s).isNull()) {
        double temperature = 0;
        if (!readNumber(options, u"temperature"_s, 0, 2, &temperature, error))
            return std::nullopt;
        s.temperature = temperature;
    }
    const QJsonValue stream = options.value(u"stream"_s);
    if (!stream.isUndefined() && !stream.isNull()) {
        if (!stream.isBool()) {
            if (error)
                *error = u"llm option stream: expected true or false"_s;
            return std::nullopt;
        }
        s.stream = stream.toBool();
    }
    if (!readInt(options, u"max_tokens"_s, 16, 1 << 20, &s.maxTokens, error) ||
        !readInt(options, u"context_tokens"_s, 1024, 1 << 24, &s.contextTokens, error) ||
        !readInt(options, u"max_reasks"_s, 0, 10, &s.maxReasks, error) ||
        !readInt(options, u"max_retries"_s, 0, 20, &s.maxRetries, error) ||
        !readInt(options, u"num_ctx"_s, 0, 1 << 24, &s.numCtx, error) ||
        !readNumber(options, u"connect_timeout_s"_s, 0.1, 3600, &s.connectTimeoutS, error) ||
        // first_byte_timeout_s: the name sessions of earlier releases saved.
        !readNumber(options, u"first_byte_timeout_s"_s, 0.1, 86400, &s.firstTokenTimeoutS, error) ||
        !readNumber(options, u"first_token_timeout_s"_s, 0.1, 86400, &s.firstTokenTimeoutS,
                    error) ||
        !readNumber(options, u"stall_timeout_s"_s, 0.1, 86400, &s.stallTimeoutS, error) ||
        !readNumber(options, u"total_timeout_s"_s, 0.1, 86400, &s.totalTimeoutS, error))
        return std::nullopt;

    const QJsonValue prices = options.value(u"prices"_s);
    if (!prices.isUndefined() && !prices.isNull()) {
        if (!prices.isObject()) {
            if (error)
                *error = u"llm option prices: expected an object of model -> price"_s;
            return std::nullopt;
        }
        auto table = PriceTable::fromJson(prices.toObject(), error);
        if (!table)
            return std::nullopt;
        s.prices = *table;
    }

    if (s.baseUrl.isEmpty()) {
        if (error)
            *error = u"llm %1: no base URL: set base_url (e.g. http://127.0.0.1:8000/v1) or a "
                     u"preset (%2)"_s.arg(role, ProviderPreset::ids().join(u", "_s));
        return std::nullopt;
    }
    const QUrl url(s.baseUrl);
    if (!url.isValid() || (url.scheme() != u"http"_s && url.scheme() != u"https"_s) ||
        url.host().isEmpty()) {
        if (error)
            *error =
                u"llm %1: base_url \"%2\" is not an http:// or https:// URL"_s.arg(role, s.baseUrl);
        return std::nullopt;
    }
    if (s.model.isEmpty()) {
        if (error)
            *error = u"llm %1: no model: set model (the name the server knows, e.g. "
                     u"qwen2.5-coder:32b)"_s.arg(role);
        return std::nullopt;
    }
    if (!options.contains(u"max_tokens"_s))
        s.maxTokens = std::min(s.maxTokens, s.contextTokens / 2);
    if (s.maxTokens * 2 > s.contextTokens) {
        if (error)
            *error = u"llm %1: max_tokens %2 leaves too little of context_tokens %3 for the "
                     u"prompt (at most half of it may be reserved for the reply)"_s.arg(
                         role, QString::number(s.maxTokens), QString::number(s.contextTokens));
        return std::nullopt;
    }
    return s;
}

QJsonObject LlmSettings::toOptions() const {
    QJsonObject options{{u"preset"_s, preset},
                        {u"base_url"_s, baseUrl},
                        {u"model"_s, model},
                        {u"key_service"_s, keyService},
                        {u"schema_dialect"_s, schemaDialectToString(dialect)},
                        {u"max_tokens"_s, maxTokens},
                        {u"stream"_s, stream},
                        {u"context_tokens"_s, contextTokens},
                        {u"max_reasks"_s, maxReasks},
                        {u"connect_timeout_s"_s, connectTimeoutS},
                        {u"first_token_timeout_s"_s, firstTokenTimeoutS},
                        {u"stall_timeout_s"_s, stallTimeoutS},
                        {u"total_timeout_s"_s, totalTimeoutS},
                        {u"max_retries"_s, maxRetries}};
    if (temperature)
        options[u"temperature"_s] = *temperature;
    if (!promptsDir.isEmpty())
        options[u"prompts_dir"_s] = promptsDir;
    if (!fallbackModel.isEmpty())
        options[u"fallback_model"_s] = fallbackModel;
    if (numCtx > 0)
        options[u"num_ctx"_s] = numCtx;
    if (!keepAlive.isEmpty())
        options[u"keep_alive"_s] = keepAlive;
    if (!prices.isEmpty())
        options[u"prices"_s] = prices.toJson();
    return options;
}

QString LlmSettings::keyVariable() const {
    return EnvironmentKeyStore::variableFor(keyService);
}

double LlmSettings::cost(const QString& servedModel, qint64 tokensIn, qint64 tokensOut) const {
    const PriceTable table = prices.withBuiltin();
    return table.prices(servedModel) ? table.cost(servedModel, tokensIn, tokensOut)
                                     : table.cost(model, tokensIn, tokensOut);
}

bool LlmSettings::priced(const QString& servedModel) const {
    const PriceTable table = prices.withBuiltin();
    return table.prices(servedModel) || table.prices(model);
}

QJsonObject LlmSettings::extraFields() const {
    if (dialect != SchemaDialect::Ollama)
        return {};
    QJsonObject fields{
        {u"options"_s, QJsonObject{{u"num_ctx"_s, numCtx > 0 ? numCtx : contextTokens}}}};
    if (!keepAlive.isEmpty()) {
        bool number = false;
        const double seconds = keepAlive.toDouble(&number);
        fields[u"keep_alive"_s] = number ? QJsonValue(seconds) : QJsonValue(keepAlive);
    }
    return fields;
}

ChatClientSettings LlmSettings::clientSettings(const QString& apiKey) const {
    const auto ms = [](double seconds) { return static_cast<int>(seconds * 1000.0); };
    ChatClientSettings client;
    client.baseUrl = baseUrl;
    client.apiKey = apiKey;
    client.keyEnvVar = keyVariable();
    client.dialect = dialect;
    client.connectTimeoutMs = ms(connectTimeoutS);
    client.firstTokenTimeoutMs = ms(firstTokenTimeoutS);
    client.stallTimeoutMs = ms(stallTimeoutS);
    client.totalTimeoutMs = ms(totalTimeoutS);
    client.maxRetries = maxRetries;
    return client;
}

} // namespace kev
