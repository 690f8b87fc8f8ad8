#include "settingsdialog.h"

#include "core/evaluatorpool.h"
#include "core/llm/providerpreset.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QVBoxLayout>

namespace kev {

using namespace Qt::StringLiterals;

SettingsDialog::SettingsDialog(const AppSettings& settings, QWidget* parent)
    : QDialog(parent)
    , m_settings(settings)
    , m_preset(new QComboBox(this))
    , m_baseUrl(new QLineEdit(settings.llmBaseUrl, this))
    , m_model(new QLineEdit(settings.llmModel, this))
    , m_key(new QLineEdit(this))
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
    m_gpu->setRange(0, 63);
    m_gpu->setValue(settings.gpu);
    m_gpu->setToolTip(u"The GPU of a single local launcher; 0 leaves the device to each launcher "
                      "(serve --device N)"_s);

    auto* form = new QFormLayout;
    form->addRow(u"LLM provider"_s, m_preset);
    form->addRow(u"Base URL"_s, m_baseUrl);
    form->addRow(u"Model"_s, m_model);
    form->addRow(u"API key"_s, m_key);
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

QString SettingsDialog::newKey() const {
    return m_key->text();
}

} // namespace kev
