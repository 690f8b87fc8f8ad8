// The workbench's settings: the LLM endpoint (preset, base URL, model), its key (kept in the
// system keyring, never in a file), the harness launchers (one worker each; the same list
// kevolve-cli's --harness takes, docs/cluster.md) and the GPU.
#pragma once

#include "appsettings.h"

#include <QDialog>

class QComboBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace kev {

class SettingsDialog : public QDialog {
    Q_OBJECT
public:
    SettingsDialog(const AppSettings& settings, QWidget* parent = nullptr);

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

    AppSettings m_settings;
    QComboBox* m_preset;
    QLineEdit* m_baseUrl;
    QLineEdit* m_model;
    QLineEdit* m_key;
    QLineEdit* m_harness;
    QLabel* m_harnessError;
    QSpinBox* m_gpu;
    bool m_keyChanged = false;
};

} // namespace kev
