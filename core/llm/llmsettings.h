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
    SchemaDialect dialect = SchemaDialect::None;
    std::optional<double> temperature;
    int maxTokens = 4096;
    bool stream = true;
    int contextTokens = 32768;
    int maxReasks = 2;
    double connectTimeoutS = 15;
    double firstByteTimeoutS = 300;
    double stallTimeoutS = 120;
    double totalTimeoutS = 1800;
    int maxRetries = 3;
    QString promptsDir;
    PriceTable prices;

    // The option names fromOptions accepts.
    static QStringList optionNames();
    static int defaultMaxTokens(const QString& role);
    static std::optional<LlmSettings> fromOptions(const QJsonObject& options, const QString& role,
                                                  QString* error);
    QJsonObject toOptions() const;

    // The key variable named in messages, e.g. "OPENAI_API_KEY".
    QString keyVariable() const;
    // The client settings, with the key (from the KeyStore) in memory only.
    ChatClientSettings clientSettings(const QString& apiKey) const;
};

} // namespace kev

#endif // KEV_LLM_LLMSETTINGS_H
