// The workbench's settings: the LLM endpoint (preset, base URL, model, fallback model), its key
// (kept in the system keyring, never in a file), the time-outs and retries of its calls, Ollama's
// context and keep-alive, the session budgets, a button that checks the endpoint (GET /models),
// the harness launchers (one worker each; the same list kevolve-cli's --harness takes,
// docs/cluster.md) and the GPU.
#pragma once

#include "appsettings.h"

#include <QDialog>

#include <memory>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace kev {

class KeyStore;
class ModelCheck;

class SettingsDialog : public QDialog {
    Q_OBJECT
public:
    // `keys` answers the check button when no new key was typed (default: the environment).
    SettingsDialog(const AppSettings& settings, QWidget* parent = nullptr,
                   std::shared_ptr<KeyStore> keys = {});

    AppSettings settings() const;
    // The key typed in, or empty when the person left the field untouched.
    QString newKey() const;
    bool keyChanged() const { return m_keyChanged; }
    // Where the key of the current preset is now, shown in the empty key field ("stored in the
    // system keyring", "not stored: the environment is used", ...).
    void setKeyNote(const QString& note);

private:
    // False, with the reason shown under the field, when the launcher list cannot be used.
    bool validateLaunchers();
    void checkEndpoint();

    AppSettings m_settings;
    std::shared_ptr<KeyStore> m_keys;
    QComboBox* m_preset;
    QLineEdit* m_baseUrl;
    QLineEdit* m_model;
    QLineEdit* m_key;
    QLineEdit* m_fallback;
    QDoubleSpinBox* m_firstToken;
    QDoubleSpinBox* m_stall;
    QSpinBox* m_retries;
    QSpinBox* m_numCtx;
    QLineEdit* m_keepAlive;
    QDoubleSpinBox* m_tokenBudget;
    QDoubleSpinBox* m_costBudget;
    QPushButton* m_checkButton;
    QLabel* m_checkResult;
    ModelCheck* m_check = nullptr;
    QLineEdit* m_harness;
    QLabel* m_harnessError;
    QSpinBox* m_gpu;
    bool m_keyChanged = false;
};

} // namespace kev
