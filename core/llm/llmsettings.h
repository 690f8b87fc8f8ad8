// The settings of one LLM agent, read from AgentSettings::options (persisted in session.json, so
// they hold no secret: the key comes from the KeyStore at request time). A preset fills in
// defaults; every option overrides it. Unknown options are errors, so a typo is never ignored.
#ifndef KEV_LLM_LLMSETTINGS_H
#define KEV_LLM_LLMSETTINGS_H

#include "llm/chatclient.h"
#include "llm/pricetable.h"
#include "llm/providerpreset.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <optional>

namespace kev {

struct LlmSettings {
    QString role; // "planner", "coder" or "reviewer"
    QString preset = QStringLiteral("custom");
    QString baseUrl;
    QString model;
    QString keyService; // KeyStore service; EnvironmentKeyStore reads <SERVICE>_API_KEY
    bool keyRequired = false;
    // KEVOLVE_API_KEY (a store's catch-all key) is sent only to presets that need a key and to
    // "custom"; a local server's preset gets its own variable's key or none.
    bool generalKey = true;
    SchemaDialect dialect = SchemaDialect::None;
    std::optional<double> temperature;
    int maxTokens = 4096;
    bool stream = true;
    int contextTokens = 32768;
    int maxReasks = 2;
    double connectTimeoutS = 10;
    double firstTokenTimeoutS = 60;
    double stallTimeoutS = 120;
    double totalTimeoutS = 1800;
    int maxRetries = 3;
    // Asked instead when the model is not found, or still failing after the retries.
    QString fallbackModel;
    // Ollama: the context window it loads the model with (its default, 2048 or 4096 tokens,
    // silently cuts Kevolve's prompts); 0 = context_tokens. keep_alive: how long the model stays
    // loaded ("30m", "-1"); empty = Ollama's default.
    int numCtx = 0;
    QString keepAlive;
    QString promptsDir;
    PriceTable prices; // the user's entries; cost() adds the built-in table

    // The option names fromOptions accepts, and one line on each.
    static QStringList optionNames();
    static QString optionHelp();
    static int defaultMaxTokens(const QString& role);
    static std::optional<LlmSettings> fromOptions(const QJsonObject& options, const QString& role,
                                                  QString* error);
    QJsonObject toOptions() const;

    // The key variable named in messages, e.g. "OPENAI_API_KEY".
    QString keyVariable() const;
    // US dollars for a call, and whether the model has a price at all.
    double cost(const QString& servedModel, qint64 tokensIn, qint64 tokensOut) const;
    bool priced(const QString& servedModel) const;
    // Fields only this server understands (Ollama's options.num_ctx and keep_alive).
    QJsonObject extraFields() const;
    // The client settings, with the key (from the KeyStore) in memory only.
    ChatClientSettings clientSettings(const QString& apiKey) const;
};

} // namespace kev

#endif // KEV_LLM_LLMSETTINGS_H
