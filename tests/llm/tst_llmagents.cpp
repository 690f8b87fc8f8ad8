// The LLM planner, coder and reviewer against the local test server: structured replies
// validated and re-asked, exact code extraction, report facts, keys, accounting, failures.
#include "fakechatserver.h"
#include "llmfixtures.h"

#include "keystore.h"
#include "llm/llmcoder.h"
#include "llm/llmplanner.h"
#include "llm/llmreviewer.h"

#include <QJsonArray>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTest>

using namespace Qt::Literals::StringLiterals;
using namespace kev;
using namespace kev::test;

namespace {

const QString testKey = u"sk-llm-agents-test-KEY-9f8e7d6c5b4a"_s;

class FixedKeyStore : public KeyStore {
public:
    explicit FixedKeyStore(QString key)
        : m_key(std::move(key)) {}
    std::optional<QString> key(const QString&) override {
        if (m_key.isEmpty())
            return std::nullopt;
        return m_key;
    }

private:
    QString m_key;
};

AgentSettings llmSettings(const QString& role, const FakeChatServer& server, QJsonObject extra = {},
                          const QString& key = testKey) {
    AgentSettings settings;
    settings.role = role;
    settings.backend = u"llm"_s;
    QJsonObject options{
        {u"base_url"_s, server.baseUrl()}, {u"model"_s, u"test-model"_s}, {u"max_retries"_s, 0}};
    for (auto it = extra.begin(); it != extra.end(); ++it)
        options[it.key()] = it.value();
    settings.options = options;
    settings.keyStore = std::make_shared<FixedKeyStore>(key);
    return settings;
}

QString strategyJson(const QString& rationale =
                         u"Swizzle both tiles to remove the bank conflicts the profile shows."_s) {
    QJsonObject object = fixedStrategy().toJson();
    object[u"rationale"_s] = rationale;
    return QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Indented));
}

QString kernelFile() {
    return readText(testDir() + u"/data/kernel_v7.cu"_s);
}

QString coderReply(const QString& file) {
    return u"Plan: 8 warps, each a 64x32 warp tile; cp.async 3-stage pipeline.\n\n```cuda\n%1```\n"_s
        .arg(file);
}

QJsonObject reviewJson() {
    return QJsonObject{{u"compile_ok"_s, false}, // wrong on purpose: facts come from the report
                       {u"correct"_s, false},
                       {u"status"_s, u"incorrect"_s},
                       {u"time_ms"_s, 123.0},
                       {u"reference_ms"_s, QJsonValue()},
                       {u"speedup"_s, 9.9},
                       {u"percent_of_floor"_s, QJsonValue()},
                       {u"bottleneck"_s, QJsonObject{{u"id"_s, u"smem_bank_conflicts"_s},
                                                     {u"text"_s, u"3.9 conflicts per request"_s}}},
                       {u"suggestions"_s, QJsonArray{u"Swizzle B with 128 bytes"_s}},
                       {u"blame"_s, u"implementation"_s},
                       {u"evidence"_s, QJsonObject{{u"smem_bank_conflicts_per_request"_s, 3.9}}}};
}

QString compact(const QJsonObject& object) {
    return QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact));
}

QJsonArray messagesOf(const ReceivedRequest& request) {
    return request.body[u"messages"_s].toArray();
}

template <typename Agent> std::unique_ptr<Agent> make(const AgentSettings& settings) {
    return std::make_unique<Agent>(settings);
}

} // namespace

class TestLlmAgents : public QObject {
    Q_OBJECT

private slots:
    void backendIsRegistered();
    void plannerReturnsValidatedStrategy();
    void plannerReasksOnInvalidJson();
    void plannerReasksNamingTheMissingField();
    void plannerReasksOnInfeasiblePlan();
    void plannerGivesUpAfterBoundedReasks();
    void plannerWorksWhenServerRejectsSchema();
    void coderExtractsTheBlockExactly();
    void coderReasksOnNoBlockOrSeveral_data();
    void coderReasksOnNoBlockOrSeveral();
    void coderReasksOnForbiddenCalls();
    void coderFixesCompileErrors();
    void reviewerTakesFactsFromTheReport();
    void reviewerReasksOnInvalidEnum();
    void missingKeyFailsNamingTheVariable();
    void unknownOptionFailsNamingIt();
    void nothingListeningFailsFast();
    void cancelStopsEverything();
    void accountingSumsCallsAndPrices();
    void keyNeverReachesATurn();
    void smallContextStillSendsEssentials();
    void contextOverflowIsRetriedOnceShorter();
    void reasoningIsShownButNotParsed();
};

void TestLlmAgents::backendIsRegistered() {
    QVERIFY(AgentFactory::hasBackend(u"llm"_s));
    FakeChatServer server;
    QVERIFY(server.listen());
    QString error;
    std::unique_ptr<Planner> planner(
        AgentFactory::createPlanner(llmSettings(u"planner"_s, server), &error));
    std::unique_ptr<Coder> coder(
        AgentFactory::createCoder(llmSettings(u"coder"_s, server), &error));
    std::unique_ptr<Reviewer> reviewer(
        AgentFactory::createReviewer(llmSettings(u"reviewer"_s, server), &error));
    QVERIFY2(planner && coder && reviewer, qPrintable(error));
    QVERIFY(qobject_cast<LlmPlanner*>(planner.get()));
}

void TestLlmAgents::plannerReturnsValidatedStrategy() {
    FakeChatServer server;
    QVERIFY(server.listen());
    server.enqueue(ScriptedReply::text(strategyJson()));
    auto planner = make<LlmPlanner>(llmSettings(
        u"planner"_s, server, {{u"preset"_s, u"custom"_s}, {u"schema_dialect"_s, u"openai"_s}}));
    QSignalSpy plans(planner.get(), &Planner::planAvailable);
    QSignalSpy failures(planner.get(), &Planner::planFailed);
    QSignalSpy text(planner.get(), &Planner::textAvailable);
    planner->plan(fixedContext());
    QVERIFY(plans.wait(10'000));
    QCOMPARE(failures.size(), 0);
    const auto strategy = plans.first().at(0).value<Strategy>();
    const auto turn = plans.first().at(1).value<AgentTurn>();
    Strategy expected = fixedStrategy();
    expected.rationale = u"Swizzle both tiles to remove the bank conflicts the profile shows."_s;
    QCOMPARE(strategy, expected);
    QCOMPARE(turn.role, u"planner"_s);
    QCOMPARE(turn.backend, u"llm"_s);
    QCOMPARE(turn.model, u"test-model"_s);
    QVERIFY(turn.prompt.contains(u"# Your role: Planning agent"_s));
    QCOMPARE(turn.reply, strategyJson());
    QVERIFY(turn.tokensIn > 0 && turn.tokensOut > 0);
    QVERIFY(!text.isEmpty());
    const QJsonObject body = server.requests().first().body;
    QCOMPARE(body[u"response_format"_s][u"json_schema"_s][u"name"_s].toString(), u"strategy"_s);
    QVERIFY(body[u"response_format"_s][u"json_schema"_s][u"schema"_s][u"required"_s].isArray());
    QCOMPARE(messagesOf(server.requests().first()).size(), 2);
}

void TestLlmAgents::plannerReasksOnInvalidJson() {
    FakeChatServer server;
    QVERIFY(server.listen());
    server.enqueue(ScriptedReply::text(u"{\"family\": \"mma_sync\", \"block_m\": 128,"_s));
    server.enqueue(ScriptedReply::text(u"```json\n"_s + strategyJson() + u"```"_s));
    auto planner = make<LlmPlanner>(llmSettings(u"planner"_s, server));
    QSignalSpy plans(planner.get(), &Planner::planAvailable);
    planner->plan(fixedContext());
    QVERIFY(plans.wait(10'000));
    QCOMPARE(server.requests().size(), 2);
    const QJsonArray second = messagesOf(server.requests()[1]);
    QCOMPARE(second.size(), 4);
    QCOMPARE(second[2][u"role"_s].toString(), u"assistant"_s);
    QCOMPARE(second[2][u"content"_s].toString(), u"{\"family\": \"mma_sync\", \"block_m\": 128,"_s);
    QCOMPARE(second[3][u"role"_s].toString(), u"user"_s);
    QVERIFY2(second[3][u"content"_s].toString().contains(u"not valid JSON"_s),
             qPrintable(second[3][u"content"_s].toString()));
    const auto turn = plans.first().at(1).value<AgentTurn>();
    QVERIFY(turn.prompt.contains(u"### assistant"_s));
}

void TestLlmAgents::plannerReasksNamingTheMissingField() {
    FakeChatServer server;
    QVERIFY(server.listen());
    QJsonObject partial = fixedStrategy().toJson();
    partial.remove(u"rationale"_s);
    server.enqueue(ScriptedReply::text(compact(partial)));
    server.enqueue(ScriptedReply::text(strategyJson()));
    auto planner = make<LlmPlanner>(llmSettings(u"planner"_s, server));
    QSignalSpy plans(planner.get(), &Planner::planAvailable);
    planner->plan(fixedContext());
    QVERIFY(plans.wait(10'000));
    const QString reask = messagesOf(server.requests()[1])[3][u"content"_s].toString();
    QVERIFY2(reask.contains(u"rationale"_s), qPrintable(reask));
    QVERIFY(reask.contains(u"does not follow the schema"_s));
}

void TestLlmAgents::plannerReasksOnInfeasiblePlan() {
    FakeChatServer server;
    QVERIFY(server.listen());
    QJsonObject huge = fixedStrategy().toJson();
    huge[u"block_m"_s] = 256;
    huge[u"block_n"_s] = 256;
    huge[u"block_k"_s] = 64;
    huge[u"warp_m"_s] = 128;
    huge[u"warp_n"_s] = 64;
    huge[u"stages"_s] = 8;
    server.enqueue(ScriptedReply::text(compact(huge)));
    server.enqueue(ScriptedReply::text(strategyJson()));
    auto planner = make<LlmPlanner>(llmSettings(u"planner"_s, server));
    QSignalSpy plans(planner.get(), &Planner::planAvailable);
    planner->plan(fixedContext());
    QVERIFY(plans.wait(10'000));
    const QString reask = messagesOf(server.requests()[1])[3][u"content"_s].toString();
    QVERIFY2(reask.contains(u"cannot run on NVIDIA H200"_s), qPrintable(reask));
    QVERIFY2(reask.contains(u"shared memory"_s), qPrintable(reask));
}

void TestLlmAgents::plannerGivesUpAfterBoundedReasks() {
    FakeChatServer server;
    QVERIFY(server.listen());
    for (int i = 0; i < 5; ++i)
        server.enqueue(ScriptedReply::text(u"I think a 128x128 tile would be good."_s));
    auto planner = make<LlmPlanner>(llmSettings(u"planner"_s, server));
    QSignalSpy plans(planner.get(), &Planner::planAvailable);
    QSignalSpy failures(planner.get(), &Planner::planFailed);
    planner->plan(fixedContext());
    QVERIFY(failures.wait(10'000));
    QCOMPARE(plans.size(), 0);
    QCOMPARE(server.requests().size(), 3);
    const QString error = failures.first().first().toString();
    QVERIFY2(error.contains(u"still not usable after 2 re-asks"_s), qPrintable(error));
    QVERIFY(error.contains(u"no ```json block"_s));
}

void TestLlmAgents::plannerWorksWhenServerRejectsSchema() {
    FakeChatServer server(ServerDialect::RejectsSchema);
    QVERIFY(server.listen());
    server.setResponder([](const QJsonObject&) { return ScriptedReply::text(strategyJson()); });
    auto planner = make<LlmPlanner>(llmSettings(u"planner"_s, server, {{u"preset"_s, u"vllm"_s}}));
    QSignalSpy plans(planner.get(), &Planner::planAvailable);
    planner->plan(fixedContext());
    QVERIFY(plans.wait(10'000));
    QCOMPARE(server.requests().size(), 2);
    QVERIFY(!server.requests()[1].body.contains(u"response_format"_s));
}

void TestLlmAgents::coderExtractsTheBlockExactly() {
    FakeChatServer server;
    QVERIFY(server.listen());
    server.enqueue(ScriptedReply::text(coderReply(kernelFile())));
    auto coder = make<LlmCoder>(llmSettings(u"coder"_s, server));
    QSignalSpy code(coder.get(), &Coder::codeAvailable);
    coder->code(fixedContext(), fixedStrategy());
    QVERIFY(code.wait(10'000));
    QCOMPARE(code.first().first().toString(), kernelFile());
    const auto turn = code.first().at(1).value<AgentTurn>();
    QCOMPARE(turn.role, u"coder"_s);
    QVERIFY(turn.prompt.contains(u"# Your role: Coding agent"_s));
    QVERIFY(!server.requests().first().body.contains(u"response_format"_s));
    QCOMPARE(server.requests().first().body[u"max_tokens"_s].toInt(), 16384);
}

void TestLlmAgents::coderReasksOnNoBlockOrSeveral_data() {
    QTest::addColumn<QString>("bad");
    QTest::addColumn<QString>("named");
    // A block of any tag is taken, then held to the referee's rules.
    QTest::newRow("not a kernel") << u"Here is the kernel:\n```cpp\nint x;\n```\n"_s
                                  << u"does not define kevolve_launch"_s;
    QTest::newRow("none") << u"I would use a 128x128 tile."_s << u"no code block"_s;
    QTest::newRow("two kernels") << coderReply(kernelFile()) + u"\n```cuda\n"_s + kernelFile() +
                                        u"```\n"_s
                                 << u"holds 2 code blocks"_s;
    QTest::newRow("unclosed") << u"```cuda\n#include <kevolve/abi.h>\n"_s << u"not closed"_s;
}

void TestLlmAgents::coderReasksOnNoBlockOrSeveral() {
    QFETCH(QString, bad);
    QFETCH(QString, named);
    FakeChatServer server;
    QVERIFY(server.listen());
    server.enqueue(ScriptedReply::text(bad));
    server.enqueue(ScriptedReply::text(coderReply(kernelFile())));
    auto coder = make<LlmCoder>(llmSettings(u"coder"_s, server));
    QSignalSpy code(coder.get(), &Coder::codeAvailable);
    coder->code(fixedContext(), fixedStrategy());
    QVERIFY(code.wait(10'000));
    QCOMPARE(code.first().first().toString(), kernelFile());
    const QString reask = messagesOf(server.requests()[1])[3][u"content"_s].toString();
    QVERIFY2(reask.contains(named), qPrintable(reask));
}

void TestLlmAgents::coderReasksOnForbiddenCalls() {
    FakeChatServer server;
    QVERIFY(server.listen());
    QString bad = kernelFile();
    bad.replace(u"    return 0;"_s, u"    cudaDeviceSynchronize();\n    return 0;"_s);
    server.enqueue(ScriptedReply::text(coderReply(bad)));
    server.enqueue(ScriptedReply::text(coderReply(kernelFile())));
    auto coder = make<LlmCoder>(llmSettings(u"coder"_s, server));
    QSignalSpy code(coder.get(), &Coder::codeAvailable);
    coder->code(fixedContext(), fixedStrategy());
    QVERIFY(code.wait(10'000));
    const QString reask = messagesOf(server.requests()[1])[3][u"content"_s].toString();
    QVERIFY2(reask.contains(u"cudaDeviceSynchronize is not allowed"_s), qPrintable(reask));
}

void TestLlmAgents::coderFixesCompileErrors() {
    FakeChatServer server;
    QVERIFY(server.listen());
    server.enqueue(ScriptedReply::text(coderReply(kernelFile())));
    auto coder = make<LlmCoder>(llmSettings(u"coder"_s, server));
    QSignalSpy code(coder.get(), &Coder::codeAvailable);
    coder->fixCompile(fixedContext(), fixedStrategy(), kernelFile(),
                      readText(testDir() + u"/data/compile_error.log"_s));
    QVERIFY(code.wait(10'000));
    const QString user = messagesOf(server.requests().first())[1][u"content"_s].toString();
    QVERIFY(user.contains(u"fixing a compile error"_s));
    QVERIFY(user.contains(u"identifier \"ldmatrix_x4\" is undefined"_s));
}

void TestLlmAgents::reviewerTakesFactsFromTheReport() {
    FakeChatServer server(ServerDialect::LlamaCpp);
    QVERIFY(server.listen());
    server.enqueue(ScriptedReply::text(compact(reviewJson())));
    auto reviewer =
        make<LlmReviewer>(llmSettings(u"reviewer"_s, server, {{u"preset"_s, u"llamacpp"_s}}));
    QSignalSpy reviews(reviewer.get(), &Reviewer::reviewAvailable);
    reviewer->review(fixedContext(), fixedStrategy(), kernelFile(), fixedReport());
    QVERIFY(reviews.wait(10'000));
    const auto feedback = reviews.first().first().value<ReviewFeedback>();
    QVERIFY(feedback.compileOk);
    QVERIFY(feedback.correct);
    QCOMPARE(feedback.status, u"ok"_s);
    QCOMPARE(feedback.timeMs, std::optional<double>(0.281));
    QCOMPARE(feedback.referenceMs, std::optional<double>(0.1995));
    QCOMPARE(feedback.speedup, std::optional<double>(0.71));
    QCOMPARE(feedback.percentOfFloor, std::optional<double>(49.5));
    QCOMPARE(feedback.bottleneckId, u"smem_bank_conflicts"_s);
    QCOMPARE(feedback.suggestions, QStringList{u"Swizzle B with 128 bytes"_s});
    QCOMPARE(feedback.blame, u"implementation"_s);
    QVERIFY(feedback.validate().isEmpty());
    QVERIFY(server.requests().first().body[u"json_schema"_s].isObject());
}

void TestLlmAgents::reviewerReasksOnInvalidEnum() {
    FakeChatServer server;
    QVERIFY(server.listen());
    QJsonObject bad = reviewJson();
    bad[u"blame"_s] = u"both"_s;
    server.enqueue(ScriptedReply::text(compact(bad)));
    server.enqueue(ScriptedReply::text(compact(reviewJson())));
    auto reviewer = make<LlmReviewer>(llmSettings(u"reviewer"_s, server));
    QSignalSpy reviews(reviewer.get(), &Reviewer::reviewAvailable);
    reviewer->review(fixedContext(), fixedStrategy(), kernelFile(), fixedReport());
    QVERIFY(reviews.wait(10'000));
    const QString reask = messagesOf(server.requests()[1])[3][u"content"_s].toString();
    QVERIFY2(reask.contains(u"blame"_s), qPrintable(reask));
}

void TestLlmAgents::missingKeyFailsNamingTheVariable() {
    FakeChatServer server;
    QVERIFY(server.listen());
    auto planner = make<LlmPlanner>(
        llmSettings(u"planner"_s, server, {{u"preset"_s, u"openai"_s}}, QString()));
    QSignalSpy failures(planner.get(), &Planner::planFailed);
    planner->plan(fixedContext());
    QCOMPARE(failures.size(), 0); // never from inside the call
    QVERIFY(failures.wait(5'000));
    const QString error = failures.first().first().toString();
    QVERIFY2(error.contains(u"$OPENAI_API_KEY"_s) && error.contains(u"$KEVOLVE_API_KEY"_s),
             qPrintable(error));
    QCOMPARE(server.requests().size(), 0);
}

void TestLlmAgents::unknownOptionFailsNamingIt() {
    FakeChatServer server;
    QVERIFY(server.listen());
    auto planner = make<LlmPlanner>(llmSettings(u"planner"_s, server, {{u"temprature"_s, 0.2}}));
    QSignalSpy failures(planner.get(), &Planner::planFailed);
    planner->plan(fixedContext());
    QVERIFY(failures.wait(5'000));
    QVERIFY2(failures.first().first().toString().contains(u"llm option temprature is unknown"_s),
             qPrintable(failures.first().first().toString()));

    QString error;
    QVERIFY(!LlmSettings::fromOptions({{u"model"_s, u"m"_s}}, u"planner"_s, &error));
    QVERIFY2(error.contains(u"no base URL"_s), qPrintable(error));
    QVERIFY(!LlmSettings::fromOptions({{u"base_url"_s, u"http://h/v1"_s}}, u"planner"_s, &error));
    QVERIFY2(error.contains(u"no model"_s), qPrintable(error));
    QVERIFY(!LlmSettings::fromOptions({{u"preset"_s, u"gpt"_s}}, u"planner"_s, &error));
    QVERIFY2(error.contains(u"unknown preset \"gpt\""_s), qPrintable(error));
    QVERIFY(!LlmSettings::fromOptions(
        {{u"preset"_s, u"ollama"_s}, {u"model"_s, u"m"_s}, {u"temperature"_s, 5}}, u"planner"_s,
        &error));
    QVERIFY2(error.contains(u"temperature"_s), qPrintable(error));
    const auto ollama = LlmSettings::fromOptions({{u"preset"_s, u"ollama"_s}, {u"model"_s, u"m"_s}},
                                                 u"coder"_s, &error);
    QVERIFY2(ollama, qPrintable(error));
    QCOMPARE(ollama->baseUrl, u"http://127.0.0.1:11434/v1"_s);
    QCOMPARE(ollama->dialect, SchemaDialect::Ollama);
    QCOMPARE(ollama->keyVariable(), u"OLLAMA_API_KEY"_s);
    QVERIFY(!ollama->toOptions().contains(u"api_key"_s));
}

void TestLlmAgents::nothingListeningFailsFast() {
    quint16 port = 0;
    {
        QTcpServer probe;
        QVERIFY(probe.listen(QHostAddress::LocalHost));
        port = probe.serverPort();
    }
    AgentSettings settings;
    settings.role = u"planner"_s;
    settings.backend = u"llm"_s;
    settings.options = {{u"base_url"_s, u"http://127.0.0.1:%1/v1"_s.arg(port)},
                        {u"model"_s, u"m"_s}};
    LlmPlanner planner(settings);
    QSignalSpy failures(&planner, &Planner::planFailed);
    QElapsedTimer clock;
    clock.start();
    planner.plan(fixedContext());
    QVERIFY(failures.wait(5'000));
    QVERIFY(clock.elapsed() < 2'000);
    QVERIFY2(failures.first().first().toString().contains(
                 u"nothing listens at http://127.0.0.1:%1"_s.arg(port)),
             qPrintable(failures.first().first().toString()));
}

void TestLlmAgents::cancelStopsEverything() {
    FakeChatServer server;
    QVERIFY(server.listen());
    server.enqueue(ScriptedReply::withFault(ScriptedReply::Fault::Silent));
    auto coder = make<LlmCoder>(llmSettings(u"coder"_s, server));
    QSignalSpy code(coder.get(), &Coder::codeAvailable);
    QSignalSpy failures(coder.get(), &Coder::codeFailed);
    QSignalSpy received(&server, &FakeChatServer::requestReceived);
    coder->code(fixedContext(), fixedStrategy());
    QVERIFY(received.wait(5'000));
    coder->cancel();
    QTest::qWait(300);
    QCOMPARE(code.size() + failures.size(), 0);

    // A deferred failure is dropped by cancel() too.
    auto broken = make<LlmCoder>(llmSettings(u"coder"_s, server, {{u"bogus"_s, 1}}));
    QSignalSpy brokenFailures(broken.get(), &Coder::codeFailed);
    broken->code(fixedContext(), fixedStrategy());
    broken->cancel();
    QTest::qWait(100);
    QCOMPARE(brokenFailures.size(), 0);
}

void TestLlmAgents::accountingSumsCallsAndPrices() {
    FakeChatServer server;
    QVERIFY(server.listen());
    server.enqueue(ScriptedReply::text(u"not json"_s));
    server.enqueue(ScriptedReply::text(strategyJson()));
    const QJsonObject prices{
        {u"test-*"_s, QJsonObject{{u"input_per_mtok"_s, 1000.0}, {u"output_per_mtok"_s, 2000.0}}}};
    auto planner = make<LlmPlanner>(llmSettings(u"planner"_s, server, {{u"prices"_s, prices}}));
    QSignalSpy plans(planner.get(), &Planner::planAvailable);
    planner->plan(fixedContext());
    QVERIFY(plans.wait(10'000));
    const auto turn = plans.first().at(1).value<AgentTurn>();
    // The test server counts characters / 4 + 1 per side; both calls are summed.
    qint64 in = 0;
    for (const ReceivedRequest& request : server.requests()) {
        qint64 characters = 0;
        for (const auto& message : messagesOf(request))
            characters += message[u"content"_s].toString().size();
        in += characters / 4 + 1;
    }
    const qint64 out = (8 / 4 + 1) + (strategyJson().size() / 4 + 1);
    QCOMPARE(turn.tokensIn, in);
    QCOMPARE(turn.tokensOut, out);
    QVERIFY(qAbs(turn.costUsd - (in * 1000.0 + out * 2000.0) / 1e6) < 1e-9);
    QVERIFY(turn.seconds > 0);
}

void TestLlmAgents::keyNeverReachesATurn() {
    FakeChatServer server;
    QVERIFY(server.listen());
    server.setApiKey(testKey);
    server.enqueue(ScriptedReply::text(strategyJson()));
    auto planner = make<LlmPlanner>(llmSettings(u"planner"_s, server));
    QSignalSpy plans(planner.get(), &Planner::planAvailable);
    planner->plan(fixedContext());
    QVERIFY(plans.wait(10'000));
    const auto turn = plans.first().at(1).value<AgentTurn>();
    const QString logged = compact(turn.toJson());
    QVERIFY(!logged.contains(testKey));
    QVERIFY(!logged.contains(testKey.left(12)));
    QCOMPARE(server.requests().first().authorization, "Bearer "_ba + testKey.toUtf8());

    // A wrong key: the failure names the variable, never the key.
    FakeChatServer strict;
    QVERIFY(strict.listen());
    strict.setApiKey(u"sk-another"_s);
    auto rejected = make<LlmPlanner>(llmSettings(
        u"planner"_s, strict, {{u"preset"_s, u"openrouter"_s}, {u"base_url"_s, strict.baseUrl()}}));
    QSignalSpy failures(rejected.get(), &Planner::planFailed);
    rejected->plan(fixedContext());
    QVERIFY(failures.wait(10'000));
    const QString error = failures.first().first().toString();
    QVERIFY2(error.contains(u"OPENROUTER_API_KEY"_s), qPrintable(error));
    for (qsizetype i = 0; i + 8 <= testKey.size(); ++i)
        QVERIFY2(!error.contains(QStringView(testKey).mid(i, 8)), qPrintable(error));
}

void TestLlmAgents::smallContextStillSendsEssentials() {
    FakeChatServer server;
    QVERIFY(server.listen());
    server.enqueue(ScriptedReply::text(strategyJson()));
    AgentContext context = fixedContext();
    for (int v = 4; v <= 400; ++v)
        context.history << summary(v, v - 1, u"mma_sync 128x128x32 w8 s3"_s, u"ok"_s, 0.6);
    auto planner = make<LlmPlanner>(
        llmSettings(u"planner"_s, server, {{u"context_tokens"_s, 16384}, {u"max_tokens"_s, 2048}}));
    QSignalSpy plans(planner.get(), &Planner::planAvailable);
    QSignalSpy failures(planner.get(), &Planner::planFailed);
    planner->plan(context);
    QVERIFY2(plans.wait(10'000),
             failures.isEmpty() ? "" : qPrintable(failures.first().first().toString()));
    const QString user = messagesOf(server.requests().first())[1][u"content"_s].toString();
    QVERIFY(user.contains(u"steps, summarised)"_s));
    QVERIFY(user.contains(u"v400 (from v399)"_s));
    QVERIFY(user.contains(u"Try a 128x256 block tile next."_s));
    QVERIFY(user.contains(u"\"smem_bank_conflicts\""_s));
    qint64 characters = 0;
    for (const auto& message : messagesOf(server.requests().first()))
        characters += message[u"content"_s].toString().size();
    QVERIFY(characters / 3 <= 16384 - 2048);
}

void TestLlmAgents::contextOverflowIsRetriedOnceShorter() {
    FakeChatServer server(ServerDialect::Vllm);
    QVERIFY(server.listen());
    const auto overflow = ScriptedReply::error(
        400, u"This model's maximum context length is 4096 tokens. However, you requested "
             u"9000 tokens."_s);
    server.enqueue(overflow);
    server.enqueue(ScriptedReply::text(strategyJson()));
    server.enqueue(overflow);
    server.enqueue(overflow);
    AgentContext context = fixedContext();
    for (int v = 4; v <= 200; ++v)
        context.history << summary(v, v - 1, u"mma_sync 128x128x32 w8 s3"_s, u"ok"_s, 0.6);
    auto planner = make<LlmPlanner>(llmSettings(u"planner"_s, server));
    QSignalSpy plans(planner.get(), &Planner::planAvailable);
    QSignalSpy failures(planner.get(), &Planner::planFailed);
    planner->plan(context);
    QVERIFY(plans.wait(10'000));
    QCOMPARE(server.requests().size(), 2);
    QVERIFY(server.requests()[1].rawBody.size() < server.requests()[0].rawBody.size() * 3 / 4);

    // Only once: a second overflow is reported, naming the setting to change.
    planner->plan(context);
    QVERIFY(failures.wait(10'000));
    QCOMPARE(server.requests().size(), 4);
    QVERIFY2(failures.first().first().toString().contains(u"lower the context size"_s),
             qPrintable(failures.first().first().toString()));
}

void TestLlmAgents::reasoningIsShownButNotParsed() {
    FakeChatServer server;
    QVERIFY(server.listen());
    auto thinking = ScriptedReply::text(strategyJson());
    thinking.reasoning = u"The profile shows bank conflicts {\"not\": \"the reply\"}."_s;
    server.enqueue(thinking);
    auto planner = make<LlmPlanner>(llmSettings(u"planner"_s, server));
    QSignalSpy plans(planner.get(), &Planner::planAvailable);
    QString live;
    connect(planner.get(), &Planner::textAvailable, this,
            [&live](const QString& chunk) { live += chunk; });
    planner->plan(fixedContext());
    QVERIFY(plans.wait(10'000));
    QCOMPARE(live, u"[reasoning]\n"_s + thinking.reasoning + u"\n[answer]\n"_s + strategyJson());
    QCOMPARE(plans.first().at(1).value<AgentTurn>().reply, strategyJson());
}

QTEST_GUILESS_MAIN(TestLlmAgents)
#include "tst_llmagents.moc"
