#include "llm/llmexchange.h"

#include "keystore.h"
#include "spendledger.h"

#include <QTimer>

#include <utility>

using namespace Qt::Literals::StringLiterals;

namespace kev {

LlmExchange::LlmExchange(LlmSettings settings, std::shared_ptr<KeyStore> keys,
                         const PromptBuilder* builder, std::shared_ptr<SpendLedger> ledger,
                         QObject* parent)
    : QObject(parent)
    , m_settings(std::move(settings))
    , m_keys(keys ? std::move(keys) : std::make_shared<EnvironmentKeyStore>())
    , m_ledger(std::move(ledger))
    , m_builder(builder) {}

void LlmExchange::failLater(const QString& error) {
    const quint64 generation = m_generation;
    // Results arrive by signal, never from inside the call that started the work.
    QTimer::singleShot(0, this, [this, error, generation] {
        if (generation == m_generation)
            emit exchangeFailed(error);
    });
}

void LlmExchange::start(const RenderedPrompt& prompt, std::optional<QJsonObject> schema,
                        const QString& schemaName, const QString& expected, Check check,
                        Rerender rerender) {
    cancel();
    m_messages = prompt.messages;
    m_schema = std::move(schema);
    m_schemaName = schemaName;
    m_expected = expected;
    m_check = std::move(check);
    m_rerender = std::move(rerender);
    m_promptTokens = prompt.estimatedTokens;
    m_reasks = 0;
    m_turn = AgentTurn();
    m_turn.role = m_settings.role;
    m_turn.backend = u"llm"_s;
    m_turn.model = m_settings.model;
    m_model = m_settings.model;

    const QString key = (m_settings.generalKey ? m_keys->key(m_settings.keyService)
                                               : m_keys->ownKey(m_settings.keyService))
                            .value_or(QString());
    if (key.isEmpty() && m_settings.keyRequired) {
        failLater(u"no API key for the %1 endpoint %2: set $%3 (or $KEVOLVE_API_KEY)"_s.arg(
            m_settings.preset, m_settings.baseUrl, m_settings.keyVariable()));
        return;
    }
    if (!m_client || key != m_clientKey) {
        delete m_client;
        m_client = new ChatClient(m_settings.clientSettings(key), this);
        m_clientKey = key;
        connect(m_client, &ChatClient::replyAvailable, this, &LlmExchange::onReply);
        connect(m_client, &ChatClient::requestFailed, this, &LlmExchange::onFailed);
        connect(m_client, &ChatClient::textAvailable, this, [this](const QString& chunk) {
            if (m_showing == Showing::Reasoning)
                emit textAvailable(u"\n[answer]\n"_s);
            m_showing = Showing::Answer;
            emit textAvailable(chunk);
        });
        connect(m_client, &ChatClient::reasoningAvailable, this, [this](const QString& chunk) {
            if (m_showing != Showing::Reasoning)
                emit textAvailable(u"[reasoning]\n"_s);
            m_showing = Showing::Reasoning;
            emit textAvailable(chunk);
        });
        connect(m_client, &ChatClient::statusChanged, this,
                [this](const QString& status) { emit textAvailable(u"\n[%1]\n"_s.arg(status)); });
        connect(m_client, &ChatClient::progressChanged, this, [this](AgentProgress progress) {
            progress.role = m_settings.role;
            emit progressChanged(progress);
        });
        connect(m_client, &ChatClient::attemptFinished, this, &LlmExchange::onAttempt);
        // Retries and re-sends are requests too: each is checked against the budget.
        m_client->setRequestGate(
            [ledger = m_ledger] { return ledger ? ledger->exhausted() : QString(); });
    }
    send();
}

void LlmExchange::cancel() {
    ++m_generation;
    if (m_client)
        m_client->cancel();
}

void LlmExchange::send() {
    if (m_ledger) {
        const QString used = m_ledger->exhausted();
        if (!used.isEmpty()) {
            failLater(u"%1: no further request is sent to %2"_s.arg(used, m_settings.baseUrl));
            return;
        }
    }
    ChatRequest request;
    request.model = m_model;
    request.extraFields = m_settings.extraFields();
    request.messages = m_messages;
    request.temperature = m_settings.temperature;
    request.maxTokens = m_settings.maxTokens;
    request.stream = m_settings.stream;
    request.jsonSchema = m_schema;
    request.schemaName = m_schemaName;
    m_turn.prompt = transcript();
    m_showing = Showing::Nothing;
    m_client->send(request);
}

QString LlmExchange::transcript() const {
    QStringList parts;
    for (const ChatMessage& message : m_messages)
        parts << u"### %1\n%2"_s.arg(message.role, message.content);
    return parts.join(u"\n\n"_s);
}

void LlmExchange::onAttempt(const ChatAttempt& attempt) {
    const double cost =
        m_settings.cost(attempt.model, attempt.promptTokens, attempt.completionTokens);
    m_turn.tokensIn += attempt.promptTokens;
    m_turn.tokensOut += attempt.completionTokens;
    m_turn.tokensEstimated = m_turn.tokensEstimated || attempt.usageEstimated;
    m_turn.costUsd += cost;
    if (!m_ledger)
        return;
    SpendLedger::Entry entry;
    entry.role = m_settings.role;
    entry.model = attempt.model;
    entry.attempt = attempt.attempt;
    entry.httpStatus = attempt.httpStatus;
    entry.error = attempt.error;
    entry.tokensIn = attempt.promptTokens;
    entry.tokensOut = attempt.completionTokens;
    entry.tokensEstimated = attempt.usageEstimated;
    entry.costUsd = cost;
    entry.priced = m_settings.priced(attempt.model);
    entry.seconds = attempt.seconds;
    entry.reply = attempt.reply;
    QString error;
    if (!m_ledger->record(entry, &error))
        emit textAvailable(u"\n[%1]\n"_s.arg(error));
}

void LlmExchange::onReply(const ChatReply& reply) {
    m_turn.seconds += reply.seconds;
    if (!reply.model.isEmpty())
        m_turn.model = reply.model;
    m_turn.reply = reply.content;

    QString problem = m_check(reply.content);
    if (problem.isEmpty()) {
        emit exchangeAvailable(reply.content, m_turn);
        return;
    }
    if (reply.truncated())
        problem += u" (the reply was cut off at max_tokens = %1: be more concise)"_s.arg(
            m_settings.maxTokens);
    if (m_reasks >= m_settings.maxReasks) {
        fail(m_settings.maxReasks == 0
                 ? u"the %1's reply is not usable: %2"_s.arg(m_settings.role, problem)
                 : u"the %1's reply is still not usable after %2 re-asks: %3"_s.arg(
                       m_settings.role, QString::number(m_reasks), problem));
        return;
    }
    QString error;
    const auto reask = m_builder->reask(problem, m_expected, &error);
    if (!reask) {
        fail(error);
        return;
    }
    ++m_reasks;
    // The unusable reply goes back to the model so it can see what to fix, shortened if the
    // conversation would not fit the context otherwise.
    qint64 used = PromptBuilder::estimateTokens(*reask);
    for (const ChatMessage& message : m_messages)
        used += PromptBuilder::estimateTokens(message.content);
    const qint64 room = m_settings.contextTokens - m_settings.maxTokens - used;
    const int keepChars = static_cast<int>(std::max<qint64>(600, room * 3));
    m_messages.append({u"assistant"_s, PromptBuilder::trimMiddle(reply.content, keepChars)});
    m_messages.append({u"user"_s, *reask});
    emit textAvailable(u"\n\n[the reply was not usable (%1); asking again, %2 of %3]\n\n"_s.arg(
        problem, QString::number(m_reasks), QString::number(m_settings.maxReasks)));
    send();
}

void LlmExchange::onFailed(const ChatError& error) {
    if (error.kind == ChatError::Kind::ContextTooLong && m_rerender && m_reasks == 0) {
        const Rerender rerender = std::exchange(m_rerender, Rerender());
        QString problem;
        const qint64 budget = m_promptTokens * 2 / 3;
        if (const auto smaller = rerender(budget, &problem)) {
            emit textAvailable(u"\n[%1; asking again with the prompt shortened to about %2 "
                               u"tokens]\n"_s.arg(error.message, QString::number(budget)));
            m_messages = smaller->messages;
            m_promptTokens = smaller->estimatedTokens;
            send();
            return;
        }
    }
    if (tryFallbackModel(error))
        return;
    fail(u"%1 (%2 at %3): %4"_s.arg(m_settings.role, m_model, m_settings.baseUrl, error.message));
}

bool LlmExchange::tryFallbackModel(const ChatError& error) {
    if (m_settings.fallbackModel.isEmpty() || m_model == m_settings.fallbackModel)
        return false;
    switch (error.kind) {
    case ChatError::Kind::NotFound:
    case ChatError::Kind::RateLimited:
    case ChatError::Kind::Server:
    case ChatError::Kind::Timeout:
    case ChatError::Kind::MalformedReply:
    case ChatError::Kind::ContextTooLong:
        break;
    default:
        return false;
    }
    emit textAvailable(
        u"\n[%1; asking the fallback model %2]\n"_s.arg(error.message, m_settings.fallbackModel));
    m_model = m_settings.fallbackModel;
    send();
    return true;
}

void LlmExchange::fail(const QString& error) {
    emit exchangeFailed(error);
}

} // namespace kev
