#include "settingsdialog.h"

#include "core/evaluatorpool.h"
#include "core/keystore.h"
#include "core/llm/llmsettings.h"
#include "core/llm/modelcheck.h"
#include "core/llm/providerpreset.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace kev {

using namespace Qt::StringLiterals;

namespace {

// The key typed in the dialog, for the check button before it is stored.
class TypedKeyStore : public KeyStore {
public:
    TypedKeyStore(QString key, std::shared_ptr<KeyStore> fallback)
        : m_key(std::move(key))
        , m_fallback(std::move(fallback)) {}
    std::optional<QString> key(const QString& service) override {
        return m_key.isEmpty() ? m_fallback->key(service) : std::optional<QString>(m_key);
    }
    std::optional<QString> ownKey(const QString& service) override {
        return m_key.isEmpty() ? m_fallback->ownKey(service) : std::optional<QString>(m_key);
    }

private:
    QString m_key;
    std::shared_ptr<KeyStore> m_fallback;
};

QDoubleSpinBox* secondsBox(double value, const QString& defaultText, QWidget* parent) {
    auto* box = new QDoubleSpinBox(parent);
    box->setRange(0, 86400);
    box->setDecimals(0);
    box->setSuffix(u" s"_s);
    box->setSpecialValueText(defaultText);
    box->setValue(value);
    return box;
}

} // namespace

SettingsDialog::SettingsDialog(const AppSettings& settings, QWidget* parent,
                               std::shared_ptr<KeyStore> keys)
    : QDialog(parent)
    , m_settings(settings)
    , m_keys(keys ? std::move(keys) : std::make_shared<EnvironmentKeyStore>())
    , m_preset(new QComboBox(this))
    , m_baseUrl(new QLineEdit(settings.llmBaseUrl, this))
    , m_model(new QLineEdit(settings.llmModel, this))
    , m_key(new QLineEdit(this))
    , m_fallback(new QLineEdit(settings.llmFallbackModel, this))
    , m_firstToken(secondsBox(settings.llmFirstTokenTimeoutS, u"default (60 s)"_s, this))
    , m_stall(secondsBox(settings.llmStallTimeoutS, u"default (120 s)"_s, this))
    , m_retries(new QSpinBox(this))
    , m_numCtx(new QSpinBox(this))
    , m_keepAlive(new QLineEdit(settings.llmKeepAlive, this))
    , m_tokenBudget(new QDoubleSpinBox(this))
    , m_costBudget(new QDoubleSpinBox(this))
    , m_checkButton(new QPushButton(u"Check endpoint"_s, this))
    , m_checkResult(new QLabel(this))
    , m_harness(new QLineEdit(EvaluatorPool::formatLaunchers(settings.harnessCommands), this))
    , m_harnessError(new QLabel(this))
    , m_gpu(new QSpinBox(this)) {
    setWindowTitle(u"Settings"_s);
    for (const auto& preset : ProviderPreset::all())
        m_preset->addItem(preset.displayName, preset.id);
    if (m_preset->findData(u"custom"_s) < 0)
        m_preset->addItem(u"Custom"_s, u"custom"_s);
    m_preset->setCurrentIndex(std::max(0, m_preset->findData(settings.llmPreset)));
    const auto updatePlaceholders = [this] {
        const auto preset = ProviderPreset::byId(m_preset->currentData().toString());
        m_baseUrl->setPlaceholderText(preset ? preset->baseUrl : u"http://host:8000/v1"_s);
        m_model->setPlaceholderText(preset ? preset->defaultModel : QString());
    };
    updatePlaceholders();
    connect(m_preset, &QComboBox::currentIndexChanged, this, updatePlaceholders);
    m_key->setEchoMode(QLineEdit::Password);
    m_key->setPlaceholderText(u"unchanged (stored in the system keyring)"_s);
    connect(m_key, &QLineEdit::textEdited, this, [this] { m_keyChanged = true; });
    m_harness->setPlaceholderText(
        u"kevolve-harness serve   (or: ssh gpu1 kevolve-harness serve; srun --gres=gpu:1 "
        "kevolve-harness serve)"_s);
    m_harness->setToolTip(
        u"One command per worker, separated by ';' (a ';' inside double quotes stays in its "
        "command): one worker per GPU, e.g. \"kevolve-harness serve --device 0; kevolve-harness "
        "serve --device 1\". The same list as kevolve-cli --harness; see docs/cluster.md."_s);
    m_harnessError->setStyleSheet(u"color: #b00020"_s);
    m_harnessError->setWordWrap(true);
    m_harnessError->hide();
    connect(m_harness, &QLineEdit::textEdited, m_harnessError, &QWidget::hide);
    m_gpu->setObjectName(u"gpu"_s);
    m_gpu->setRange(0, 63);
    m_gpu->setValue(settings.gpu);
    m_gpu->setToolTip(u"The GPU of a single local launcher; 0 leaves the device to each launcher "
                      "(serve --device N)"_s);
    m_fallback->setPlaceholderText(u"none (asked when the model is missing or keeps failing)"_s);
    m_firstToken->setToolTip(u"From sending a request to its first token: queueing, prefill, "
                             "loading the model"_s);
    m_stall->setToolTip(u"The longest silence once tokens flow"_s);
    m_retries->setRange(-1, 20);
    m_retries->setSpecialValueText(u"default (3)"_s);
    m_retries->setValue(settings.llmMaxRetries);
    m_numCtx->setRange(0, 1 << 24);
    m_numCtx->setSingleStep(4096);
    m_numCtx->setSpecialValueText(u"default (the context tokens)"_s);
    m_numCtx->setValue(settings.llmNumCtx);
    m_keepAlive->setPlaceholderText(u"Ollama's default (e.g. 30m, 1h, -1 = forever)"_s);
    m_tokenBudget->setRange(0, 1e12);
    m_tokenBudget->setDecimals(0);
    m_tokenBudget->setSingleStep(100'000);
    m_tokenBudget->setSpecialValueText(u"none"_s);
    m_tokenBudget->setSuffix(u" tokens"_s);
    m_tokenBudget->setValue(static_cast<double>(settings.tokenBudget));
    m_tokenBudget->setToolTip(u"Per session, across resumes; every call counts, failed ones too, "
                              "and no request starts once it is used"_s);
    m_costBudget->setRange(0, 1e6);
    m_costBudget->setDecimals(2);
    m_costBudget->setPrefix(u"$"_s);
    m_costBudget->setSpecialValueText(u"none"_s);
    m_costBudget->setValue(settings.costBudgetUsd);
    m_costBudget->setToolTip(m_tokenBudget->toolTip());
    m_checkResult->setWordWrap(true);
    m_checkResult->setTextFormat(Qt::PlainText);
    m_checkResult->setTextInteractionFlags(Qt::TextSelectableByMouse);
    connect(m_checkButton, &QPushButton::clicked, this, &SettingsDialog::checkEndpoint);

    auto* form = new QFormLayout;
    form->addRow(u"LLM provider"_s, m_preset);
    form->addRow(u"Base URL"_s, m_baseUrl);
    form->addRow(u"Model"_s, m_model);
    form->addRow(u"API key"_s, m_key);
    form->addRow(u"Fallback model"_s, m_fallback);
    form->addRow(u"First-token time-out"_s, m_firstToken);
    form->addRow(u"Stall time-out"_s, m_stall);
    form->addRow(u"Retries"_s, m_retries);
    form->addRow(u"Ollama context (num_ctx)"_s, m_numCtx);
    form->addRow(u"Ollama keep_alive"_s, m_keepAlive);
    form->addRow(u"Token budget"_s, m_tokenBudget);
    form->addRow(u"Cost budget"_s, m_costBudget);
    form->addRow(m_checkButton, m_checkResult);
    form->addRow(u"Harness launchers"_s, m_harness);
    form->addRow(QString(), m_harnessError);
    form->addRow(u"GPU"_s, m_gpu);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(new QLabel(
        u"<small>The key never goes into session files, logs or exports. Without a key in the "
        "keyring, KEVOLVE_API_KEY or the preset's variable (e.g. OPENAI_API_KEY) is used.</small>"_s,
        this));
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, [this] {
        if (validateLaunchers())
            accept();
    });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
}

AppSettings SettingsDialog::settings() const {
    AppSettings s = m_settings;
    s.llmPreset = m_preset->currentData().toString();
    s.llmBaseUrl = m_baseUrl->text().trimmed();
    s.llmModel = m_model->text().trimmed();
    s.llmFallbackModel = m_fallback->text().trimmed();
    s.llmFirstTokenTimeoutS = m_firstToken->value();
    s.llmStallTimeoutS = m_stall->value();
    s.llmMaxRetries = m_retries->value();
    s.llmNumCtx = m_numCtx->value();
    s.llmKeepAlive = m_keepAlive->text().trimmed();
    s.tokenBudget = static_cast<qint64>(m_tokenBudget->value());
    s.costBudgetUsd = m_costBudget->value();
    s.harnessCommands.clear();
    // Empty: the default launcher. validateLaunchers() has refused anything unusable.
    if (!m_harness->text().trimmed().isEmpty()) {
        if (const auto launchers = EvaluatorPool::parseLaunchers(m_harness->text(), nullptr))
            s.harnessCommands = *launchers;
    }
    s.gpu = m_gpu->value();
    return s;
}

bool SettingsDialog::validateLaunchers() {
    QString error;
    if (!m_harness->text().trimmed().isEmpty()) {
        const auto launchers = EvaluatorPool::parseLaunchers(m_harness->text(), &error);
        if (launchers && launchers->size() > 1 && m_gpu->value() != 0)
            error = u"with several launchers, give each its GPU (serve --device N) and leave GPU "
                    "at 0"_s;
    }
    m_harnessError->setText(error);
    m_harnessError->setVisible(!error.isEmpty());
    if (!error.isEmpty())
        m_harness->setFocus();
    return error.isEmpty();
}

void SettingsDialog::setKeyNote(const QString& note) {
    m_key->setPlaceholderText(note);
}

void SettingsDialog::checkEndpoint() {
    QString error;
    const auto llm = LlmSettings::fromOptions(settings().llmOptions(), u"planner"_s, &error);
    if (!llm) {
        m_checkResult->setText(error);
        return;
    }
    delete m_check;
    m_check = new ModelCheck(
        *llm, std::make_shared<TypedKeyStore>(m_keyChanged ? m_key->text() : QString(), m_keys),
        this);
    m_checkButton->setEnabled(false);
    m_checkResult->setText(u"asking %1/models ..."_s.arg(llm->baseUrl));
    connect(m_check, &ModelCheck::finished, this, [this](const ModelCheckResult& result) {
        m_checkButton->setEnabled(true);
        m_checkResult->setText((result.ok ? u"OK: "_s : u"Problem: "_s) + result.message);
    });
    m_check->start();
}

QString SettingsDialog::newKey() const {
    return m_key->text();
}

} // namespace kev
