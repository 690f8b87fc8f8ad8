// What surrounds a call to a model: the options (time-outs, fallback model, Ollama's context and
// keep-alive), which key goes to which preset, the built-in price table, the paths kept out of
// prompts, the session's spend ledger and its budgets, the /models check, and the exchange's
// fallback to another model.
#include "fakechatserver.h"

#include "keystore.h"
#include "llm/llmexchange.h"
#include "llm/llmsettings.h"
#include "llm/modelcheck.h"
#include "llm/privatepaths.h"
#include "spendledger.h"

#include <QEventLoop>
#include <QFile>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

using namespace Qt::Literals::StringLiterals;
using namespace kev;
using kev::test::FakeChatServer;
using kev::test::ScriptedReply;

namespace {

LlmSettings settingsFrom(const QJsonObject& options, const QString& role = u"planner"_s) {
    QString error;
    const auto settings = LlmSettings::fromOptions(options, role, &error);
    if (!settings)
        qWarning("%s", qPrintable(error));
    return settings.value_or(LlmSettings());
}

class FixedKeys : public KeyStore {
public:
    std::optional<QString> key(const QString&) override { return std::nullopt; }
};

} // namespace

class TestLlmConfig : public QObject {
    Q_OBJECT

private slots:
    void newOptionsAreReadAndWritten();
    void badOptionsAreNamed_data();
    void badOptionsAreNamed();
    void generalKeyOnlyForPresetsThatNeedAKey();
    void builtInPricesCanBeOverridden();
    void privatePathsAreDropped_data();
    void privatePathsAreDropped();
    void ledgerKeepsTheSessionsSpendAcrossOpens();
    void modelCheckJudgesWhatServersList_data();
    void modelCheckJudgesWhatServersList();
    void modelCheckAsksTheServer();
    void exchangeFallsBackToTheFallbackModel();
    void exchangeSendsNothingOnceTheBudgetIsUsed();
};

void TestLlmConfig::newOptionsAreReadAndWritten() {
    const LlmSettings s = settingsFrom({{u"preset"_s, u"ollama"_s},
                                        {u"model"_s, u"qwen2.5-coder:32b"_s},
                                        {u"first_token_timeout_s"_s, 45},
                                        {u"fallback_model"_s, u"qwen2.5-coder:7b"_s},
                                        {u"num_ctx"_s, 65536},
                                        {u"context_tokens"_s, 65536},
                                        {u"keep_alive"_s, u"30m"_s}});
    QCOMPARE(s.firstTokenTimeoutS, 45.0);
    QCOMPARE(s.clientSettings({}).firstTokenTimeoutMs, 45'000);
    QCOMPARE(s.fallbackModel, u"qwen2.5-coder:7b"_s);
    const QJsonObject extra = s.extraFields();
    QCOMPARE(extra.value(u"options"_s)[u"num_ctx"_s].toInt(), 65536);
    QCOMPARE(extra.value(u"keep_alive"_s).toString(), u"30m"_s);
    const LlmSettings again = settingsFrom(s.toOptions());
    QCOMPARE(again.fallbackModel, s.fallbackModel);
    QCOMPARE(again.numCtx, 65536);
    QCOMPARE(again.keepAlive, u"30m"_s);
    QCOMPARE(again.firstTokenTimeoutS, 45.0);

    // Sessions of earlier releases saved first_byte_timeout_s.
    const LlmSettings old = settingsFrom({{u"base_url"_s, u"http://127.0.0.1:1/v1"_s},
                                          {u"model"_s, u"m"_s},
                                          {u"first_byte_timeout_s"_s, 300}});
    QCOMPARE(old.firstTokenTimeoutS, 300.0);
    // Defaults: a dead server fails within about two minutes.
    const ChatClientSettings defaults =
        settingsFrom({{u"preset"_s, u"vllm"_s}, {u"model"_s, u"m"_s}}).clientSettings({});
    QVERIFY(defaults.firstTokenTimeoutMs * (defaults.maxSilentRetries + 1) +
                defaults.maxBackoffMs <=
            150'000);
    // Only Ollama gets Ollama's fields.
    QVERIFY(settingsFrom({{u"preset"_s, u"vllm"_s}, {u"model"_s, u"m"_s}}).extraFields().isEmpty());
    QVERIFY(LlmSettings::optionHelp().contains(u"first_token_timeout_s"_s));
}

void TestLlmConfig::badOptionsAreNamed_data() {
    QTest::addColumn<QJsonObject>("options");
    QTest::addColumn<QString>("named");
    QTest::newRow("keep_alive word") << QJsonObject{{u"preset"_s, u"ollama"_s},
                                                    {u"model"_s, u"m"_s},
                                                    {u"keep_alive"_s, u"forever"_s}}
                                     << u"keep_alive"_s;
    QTest::newRow("num_ctx text") << QJsonObject{{u"preset"_s, u"ollama"_s},
                                                 {u"model"_s, u"m"_s},
                                                 {u"num_ctx"_s, u"big"_s}}
                                  << u"num_ctx"_s;
    QTest::newRow("fallback number")
        << QJsonObject{{u"preset"_s, u"vllm"_s}, {u"model"_s, u"m"_s}, {u"fallback_model"_s, 3}}
        << u"fallback_model"_s;
}

void TestLlmConfig::badOptionsAreNamed() {
    QFETCH(QJsonObject, options);
    QFETCH(QString, named);
    QString error;
    QVERIFY(!LlmSettings::fromOptions(options, u"coder"_s, &error));
    QVERIFY2(error.contains(named), qPrintable(error));
}

void TestLlmConfig::generalKeyOnlyForPresetsThatNeedAKey() {
    QVERIFY(!settingsFrom({{u"preset"_s, u"ollama"_s}, {u"model"_s, u"m"_s}}).generalKey);
    QVERIFY(!settingsFrom({{u"preset"_s, u"vllm"_s}, {u"model"_s, u"m"_s}}).generalKey);
    QVERIFY(settingsFrom({{u"preset"_s, u"openai"_s}, {u"model"_s, u"m"_s}}).generalKey);
    QVERIFY(settingsFrom({{u"base_url"_s, u"http://127.0.0.1:1/v1"_s}, {u"model"_s, u"m"_s}})
                .generalKey);

    QProcessEnvironment environment;
    environment.insert(u"KEVOLVE_API_KEY"_s, u"general"_s);
    environment.insert(u"VLLM_API_KEY"_s, u"own"_s);
    EnvironmentKeyStore keys(environment);
    QVERIFY(!keys.ownKey(u"ollama"_s));
    QCOMPARE(keys.key(u"ollama"_s), std::optional<QString>(u"general"_s));
    QCOMPARE(keys.ownKey(u"vllm"_s), std::optional<QString>(u"own"_s));
}

void TestLlmConfig::builtInPricesCanBeOverridden() {
    const LlmSettings openai =
        settingsFrom({{u"preset"_s, u"openai"_s}, {u"model"_s, u"gpt-4.1"_s}});
    // The served name carries a date; the longest prefix wins (gpt-4.1-mini is not gpt-4.1).
    QCOMPARE(openai.cost(u"gpt-4.1-2025-04-14"_s, 1'000'000, 1'000'000), 10.0);
    QCOMPARE(openai.cost(u"gpt-4.1-mini"_s, 1'000'000, 0), 0.40);
    QCOMPARE(openai.cost(u"openai/gpt-4o-mini"_s, 0, 1'000'000), 0.60);
    QVERIFY(openai.priced(u"deepseek-chat"_s));
    const LlmSettings local = settingsFrom({{u"preset"_s, u"vllm"_s}, {u"model"_s, u"qwen"_s}});
    QVERIFY(!local.priced(u"qwen"_s));
    QCOMPARE(local.cost(u"qwen"_s, 1000, 1000), 0.0);
    const LlmSettings own = settingsFrom(
        {{u"preset"_s, u"openai"_s},
         {u"model"_s, u"gpt-4.1"_s},
         {u"prices"_s, QJsonObject{{u"gpt-4.1*"_s, QJsonObject{{u"input_per_mtok"_s, 1.0},
                                                               {u"output_per_mtok"_s, 1.0}}}}}});
    QCOMPARE(own.cost(u"gpt-4.1-2025-04-14"_s, 1'000'000, 1'000'000), 2.0);
}

void TestLlmConfig::privatePathsAreDropped_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("expected");
    QTest::newRow("nvcc temp folder")
        << u"/tmp/kevolve-eval-Ab12cd/kernel_v8.cu(41): error: identifier \"x\" is undefined"_s
        << u"kernel_v8.cu(41): error: identifier \"x\" is undefined"_s;
    QTest::newRow("home session")
        << u"In file included from /home/alice/work/sessions/gemm-1/kernel_v3.cu:2:"_s
        << u"In file included from kernel_v3.cu:2:"_s;
    QTest::newRow("include folders")
        << u"/usr/local/cuda/include/cuda_fp16.hpp(12) and /opt/k/harness/include/kevolve/abi.h"_s
        << u"cuda_fp16.hpp(12) and kevolve/abi.h"_s;
    QTest::newRow("quoted") << u"cannot open \"/var/tmp/x/y.cu\""_s << u"cannot open \"y.cu\""_s;
    QTest::newRow("windows") << u"C:\\Users\\alice\\AppData\\Local\\Temp\\k\\kernel_v2.cu(9)"_s
                             << u"kernel_v2.cu(9)"_s;
    QTest::newRow("code is left alone") << u"    c[i] = (a + b)/2/3; // x / y and n/4/2\n"_s
                                        << u"    c[i] = (a + b)/2/3; // x / y and n/4/2\n"_s;
}

void TestLlmConfig::privatePathsAreDropped() {
    QFETCH(QString, text);
    QFETCH(QString, expected);
    QCOMPARE(withoutPrivatePaths(text), expected);
}

void TestLlmConfig::ledgerKeepsTheSessionsSpendAcrossOpens() {
    QTemporaryDir dir;
    QString error;
    auto ledger = SpendLedger::open(dir.path(), &error);
    QVERIFY2(ledger, qPrintable(error));
    ledger->setBudgets(100, 0);
    SpendLedger::Entry entry;
    entry.role = u"coder"_s;
    entry.tokensIn = 40;
    entry.tokensOut = 20;
    entry.tokensEstimated = true;
    entry.error = u"HTTP 500"_s;
    QVERIFY(ledger->record(entry, &error));
    QVERIFY(ledger->exhausted().isEmpty());
    entry.error.clear();
    entry.tokensEstimated = false;
    entry.costUsd = 0.5;
    QVERIFY(ledger->record(entry, &error));
    QVERIFY2(ledger->exhausted().contains(u"token budget of 100 used (~120 tokens"_s),
             qPrintable(ledger->exhausted()));
    // A run killed while writing leaves a partial last line: what was whole still counts.
    QFile file(dir.filePath(QString::fromLatin1(SpendLedger::kFileName)));
    QVERIFY(file.open(QIODevice::Append));
    file.write("{\"role\": \"pla");
    file.close();
    auto reopened = SpendLedger::open(dir.path(), &error);
    QVERIFY2(reopened, qPrintable(error));
    QCOMPARE(reopened->tokens(), qint64(120));
    QCOMPARE(reopened->costUsd(), 0.5);
    QCOMPARE(reopened->entryCount(), 2);
    QVERIFY(reopened->tokensEstimated());
    reopened->setBudgets(0, 0.25);
    QVERIFY2(reopened->exhausted().contains(u"cost budget"_s), qPrintable(reopened->exhausted()));
}

void TestLlmConfig::modelCheckJudgesWhatServersList_data() {
    QTest::addColumn<int>("status");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("model");
    QTest::addColumn<bool>("ok");
    QTest::addColumn<QString>("named");
    QTest::newRow("openai list") << 200 << R"({"data": [{"id": "gpt-4.1"}, {"id": "m"}]})"_ba
                                 << u"m"_s << true << u"the key works"_s;
    QTest::newRow("ollama latest") << 200 << R"({"data": [{"id": "qwen2.5-coder:latest"}]})"_ba
                                   << u"qwen2.5-coder"_s << true << u"serves"_s;
    QTest::newRow("missing") << 200 << R"({"data": [{"id": "a"}, {"id": "b"}]})"_ba << u"m"_s
                             << false << u"does not serve the model \"m\"; it serves: a, b"_s;
    QTest::newRow("401") << 401 << R"({"error": {"message": "bad key"}})"_ba << u"m"_s << false
                         << u"refused the key"_s;
    QTest::newRow("404") << 404 << "404 page not found"_ba << u"m"_s << false
                         << u"is the base URL right"_s;
    QTest::newRow("html") << 200 << "<html>login</html>"_ba << u"m"_s << false
                          << u"not with a list of models"_s;
}

void TestLlmConfig::modelCheckJudgesWhatServersList() {
    QFETCH(int, status);
    QFETCH(QByteArray, body);
    QFETCH(QString, model);
    QFETCH(bool, ok);
    QFETCH(QString, named);
    const LlmSettings settings = settingsFrom({{u"preset"_s, u"vllm"_s}, {u"model"_s, model}});
    const ModelCheckResult result = ModelCheck::judge(settings, status, body, true);
    QCOMPARE(result.ok, ok);
    QVERIFY2(result.message.contains(named), qPrintable(result.message));
}

void TestLlmConfig::modelCheckAsksTheServer() {
    FakeChatServer server;
    server.setModels({u"m"_s});
    QVERIFY(server.listen());
    ModelCheck check(settingsFrom({{u"base_url"_s, server.baseUrl()},
                                   {u"model"_s, u"m"_s},
                                   {u"fallback_model"_s, u"absent"_s}}),
                     std::make_shared<FixedKeys>());
    std::optional<ModelCheckResult> result;
    QEventLoop loop;
    connect(&check, &ModelCheck::finished, &loop, [&](const ModelCheckResult& r) {
        result = r;
        loop.quit();
    });
    QTimer::singleShot(60'000, &loop, &QEventLoop::quit);
    check.start();
    loop.exec();
    QVERIFY(result);
    QVERIFY(!result->ok);
    QVERIFY2(result->message.contains(u"not the fallback model \"absent\""_s),
             qPrintable(result->message));
    QCOMPARE(server.requests().size(), 1);
    QCOMPARE(server.requests().first().path, "/v1/models"_ba);
}

void TestLlmConfig::exchangeFallsBackToTheFallbackModel() {
    FakeChatServer server;
    server.setModels({u"backup"_s});
    QVERIFY(server.listen());
    auto ledger = std::make_shared<SpendLedger>();
    LlmExchange exchange(settingsFrom({{u"base_url"_s, server.baseUrl()},
                                       {u"model"_s, u"primary"_s},
                                       {u"fallback_model"_s, u"backup"_s}}),
                         std::make_shared<FixedKeys>(), nullptr, ledger);
    std::optional<QString> reply;
    std::optional<AgentTurn> turn;
    QString failure;
    QEventLoop loop;
    connect(&exchange, &LlmExchange::exchangeAvailable, &loop,
            [&](const QString& text, const AgentTurn& t) {
                reply = text;
                turn = t;
                loop.quit();
            });
    connect(&exchange, &LlmExchange::exchangeFailed, &loop, [&](const QString& error) {
        failure = error;
        loop.quit();
    });
    QTimer::singleShot(60'000, &loop, &QEventLoop::quit);
    RenderedPrompt prompt;
    prompt.messages = {{u"user"_s, u"Say hello."_s}};
    exchange.start(prompt, std::nullopt, QString(), u"anything"_s,
                   [](const QString&) { return QString(); });
    loop.exec();
    QVERIFY2(reply, qPrintable(failure));
    QCOMPARE(server.requests().size(), 2);
    QCOMPARE(server.requests().at(0).body.value(u"model"_s).toString(), u"primary"_s);
    QCOMPARE(server.requests().at(1).body.value(u"model"_s).toString(), u"backup"_s);
    QCOMPARE(turn->model, u"backup"_s);
    // Both attempts are counted: the 404 cost no tokens, the answer did.
    QCOMPARE(ledger->entryCount(), 2);
    QCOMPARE(ledger->tokens(), turn->tokensIn + turn->tokensOut);
}

void TestLlmConfig::exchangeSendsNothingOnceTheBudgetIsUsed() {
    FakeChatServer server;
    QVERIFY(server.listen());
    auto ledger = std::make_shared<SpendLedger>();
    ledger->setBudgets(10, 0);
    SpendLedger::Entry spent;
    spent.tokensIn = 10;
    ledger->record(spent);
    LlmExchange exchange(settingsFrom({{u"base_url"_s, server.baseUrl()}, {u"model"_s, u"m"_s}}),
                         std::make_shared<FixedKeys>(), nullptr, ledger);
    QString failure;
    QEventLoop loop;
    connect(&exchange, &LlmExchange::exchangeFailed, &loop, [&](const QString& error) {
        failure = error;
        loop.quit();
    });
    QTimer::singleShot(60'000, &loop, &QEventLoop::quit);
    RenderedPrompt prompt;
    prompt.messages = {{u"user"_s, u"Say hello."_s}};
    exchange.start(prompt, std::nullopt, QString(), u"anything"_s,
                   [](const QString&) { return QString(); });
    loop.exec();
    QVERIFY2(failure.contains(u"token budget of 10 used"_s), qPrintable(failure));
    QVERIFY(server.requests().isEmpty());
}

QTEST_GUILESS_MAIN(TestLlmConfig)
#include "tst_llmconfig.moc"
