// One structured exchange with a model: send the prompt, check the reply, and ask again with the
// problem named (at most max_reasks times) until the reply is usable. Counts tokens, cost and time
// over every attempt (failed ones too) into one AgentTurn and the session's SpendLedger, which it
// asks before each request whether a budget is used up. Falls back to the fallback model when
// the model is missing or keeps failing. The key is fetched from the KeyStore for each exchange
// and lives only in the ChatClient's memory.
#ifndef KEV_LLM_LLMEXCHANGE_H
#define KEV_LLM_LLMEXCHANGE_H

#include "agentturn.h"
#include "llm/chatclient.h"
#include "llm/llmsettings.h"
#include "llm/promptbuilder.h"

#include <QObject>

#include <functional>
#include <memory>
#include <optional>

namespace kev {

class KeyStore;
class SpendLedger;

class LlmExchange : public QObject {
    Q_OBJECT
public:
    // An empty string when the reply is usable, else what is wrong with it.
    using Check = std::function<QString(const QString& reply)>;
    // The prompt rendered again for a smaller token budget, used once when the server says the
    // prompt is longer than the model's context (the configured context_tokens was too high).
    using Rerender = std::function<std::optional<RenderedPrompt>(qint64 budget, QString* error)>;

    LlmExchange(LlmSettings settings, std::shared_ptr<KeyStore> keys, const PromptBuilder* builder,
                std::shared_ptr<SpendLedger> ledger = {}, QObject* parent = nullptr);

    const LlmSettings& settings() const { return m_settings; }

    // `expected` completes the re-ask sentence "Reply again with ...".
    void start(const RenderedPrompt& prompt, std::optional<QJsonObject> schema,
               const QString& schemaName, const QString& expected, Check check,
               Rerender rerender = {});
    void cancel();

signals:
    void exchangeAvailable(const QString& reply, const kev::AgentTurn& turn);
    void exchangeFailed(const QString& error);
    void textAvailable(const QString& chunk);
    void progressChanged(const kev::AgentProgress& progress);

private:
    void send();
    void onReply(const ChatReply& reply);
    void onFailed(const ChatError& error);
    void onAttempt(const ChatAttempt& attempt);
    bool tryFallbackModel(const ChatError& error);
    void fail(const QString& error);
    void failLater(const QString& error);
    QString transcript() const;

    LlmSettings m_settings;
    std::shared_ptr<KeyStore> m_keys;
    std::shared_ptr<SpendLedger> m_ledger;
    QString m_model; // the model asked now: the configured one, or its fallback
    const PromptBuilder* m_builder;
    ChatClient* m_client = nullptr;
    QString m_clientKey;

    QVector<ChatMessage> m_messages;
    std::optional<QJsonObject> m_schema;
    QString m_schemaName;
    QString m_expected;
    Check m_check;
    Rerender m_rerender;
    qint64 m_promptTokens = 0;
    int m_reasks = 0;
    // What the live text shows now, so that reasoning and the answer are labelled apart.
    enum class Showing { Nothing, Reasoning, Answer } m_showing = Showing::Nothing;
    // Bumped by start() and cancel(), so a deferred signal of an older exchange is dropped.
    quint64 m_generation = 0;
    AgentTurn m_turn;
};

} // namespace kev

#endif // KEV_LLM_LLMEXCHANGE_H
