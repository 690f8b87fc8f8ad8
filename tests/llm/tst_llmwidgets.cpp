// The settings dialog's LLM fields reach the agents' options and the session's budgets; its check
// button asks the endpoint for its models; an agent panel shows the live line of a model call.
#include "agenttextview.h"
#include "appsettings.h"
#include "core/keystore.h"
#include "fakechatserver.h"
#include "settingsdialog.h"

#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTest>

using namespace Qt::Literals::StringLiterals;
using namespace kev;

namespace {

class NoKeys : public KeyStore {
public:
    std::optional<QString> key(const QString&) override { return std::nullopt; }
};

template <typename Widget> Widget* field(QWidget& dialog, const QString& label) {
    // The form's label names each field; find the widget on the same row.
    for (QLabel* candidate : dialog.findChildren<QLabel*>()) {
        if (candidate->text() == label && candidate->buddy())
            return qobject_cast<Widget*>(candidate->buddy());
    }
    return nullptr;
}

} // namespace

class LlmSettingsTest : public QObject {
    Q_OBJECT

private slots:
    void fieldsReachTheOptionsAndBudgets();
    void checkButtonAsksTheServer();
    void agentViewShowsTheProgressLine();
};

void LlmSettingsTest::fieldsReachTheOptionsAndBudgets() {
    AppSettings app;
    app.llmPreset = u"ollama"_s;
    app.llmModel = u"qwen2.5-coder:32b"_s;
    SettingsDialog dialog(app, nullptr, std::make_shared<NoKeys>());
    field<QLineEdit>(dialog, u"Fallback model"_s)->setText(u"qwen2.5-coder:7b"_s);
    field<QDoubleSpinBox>(dialog, u"First-token time-out"_s)->setValue(45);
    field<QSpinBox>(dialog, u"Retries"_s)->setValue(2);
    field<QSpinBox>(dialog, u"Ollama context (num_ctx)"_s)->setValue(65536);
    field<QLineEdit>(dialog, u"Ollama keep_alive"_s)->setText(u"1h"_s);
    field<QDoubleSpinBox>(dialog, u"Token budget"_s)->setValue(500000);
    field<QDoubleSpinBox>(dialog, u"Cost budget"_s)->setValue(1.5);
    const AppSettings s = dialog.settings();
    const QJsonObject options = s.llmOptions();
    QCOMPARE(options.value(u"fallback_model"_s).toString(), u"qwen2.5-coder:7b"_s);
    QCOMPARE(options.value(u"first_token_timeout_s"_s).toDouble(), 45.0);
    QCOMPARE(options.value(u"max_retries"_s).toInt(), 2);
    QCOMPARE(options.value(u"num_ctx"_s).toInt(), 65536);
    QCOMPARE(options.value(u"keep_alive"_s).toString(), u"1h"_s);
    QVERIFY(!options.contains(u"stall_timeout_s"_s)); // left at its default
    EngineSettings engine;
    engine.plannerBackend = engine.coderBackend = u"llm"_s;
    s.applyTo(engine);
    QCOMPARE(engine.tokenBudget, qint64(500000));
    QCOMPARE(engine.costBudgetUsd, 1.5);
    QCOMPARE(engine.coderOptions.value(u"num_ctx"_s).toInt(), 65536);
}

void LlmSettingsTest::checkButtonAsksTheServer() {
    test::FakeChatServer server;
    server.setModels({u"m"_s});
    QVERIFY(server.listen());
    AppSettings app;
    app.llmPreset = u"custom"_s;
    app.llmBaseUrl = server.baseUrl();
    app.llmModel = u"absent"_s;
    SettingsDialog dialog(app, nullptr, std::make_shared<NoKeys>());
    QPushButton* check = nullptr;
    for (QPushButton* button : dialog.findChildren<QPushButton*>()) {
        if (button->text() == u"Check endpoint"_s)
            check = button;
    }
    QVERIFY(check);
    check->click();
    QLabel* result = nullptr;
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            for (QLabel* label : dialog.findChildren<QLabel*>()) {
                if (label->text().startsWith(u"Problem: "_s))
                    result = label;
            }
            return result != nullptr;
        }(),
        60'000);
    QVERIFY2(result->text().contains(u"does not serve the model \"absent\"; it serves: m"_s),
             qPrintable(result->text()));
}

void LlmSettingsTest::agentViewShowsTheProgressLine() {
    AgentTextView view;
    view.resize(400, 200);
    AgentProgress progress;
    progress.role = u"coder"_s;
    progress.model = u"m"_s;
    progress.version = 3;
    progress.state = AgentProgress::State::Retrying;
    progress.attempt = 1;
    progress.maxAttempts = 4;
    progress.waitMs = 2000;
    progress.retryAfter = true;
    progress.elapsedMs = 1500;
    view.setProgress(progress);
    QVERIFY2(view.progressText().startsWith(u"v3 coder m: retrying in 2.0 s (the server's "
                                            u"Retry-After)"_s),
             qPrintable(view.progressText()));
    QVERIFY(view.progressText().contains(u"attempt 1 of 4"_s));
    progress.state = AgentProgress::State::Done;
    progress.tokens = 1234;
    progress.tokensEstimated = false;
    view.setProgress(progress);
    QVERIFY2(view.progressText().contains(u"done, 1234 tokens"_s), qPrintable(view.progressText()));
}

QTEST_MAIN(LlmSettingsTest)
#include "tst_llmwidgets.moc"
