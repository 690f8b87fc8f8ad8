// Edits a task as JSON (harness/PROTOCOL.md, "Task"), validated as the person types with the
// harness's own rules; the message names the field. OK stays disabled while the task is invalid.
#pragma once

#include "core/task.h"

#include <QDialog>
#include <QTimer>

#include <optional>

class QDialogButtonBox;
class QLabel;
class QPlainTextEdit;

namespace kev {

class TaskEditor : public QDialog {
    Q_OBJECT
public:
    explicit TaskEditor(const kev::Task& task, QWidget* parent = nullptr);

    std::optional<Task> task() const { return m_task; }
    QString error() const { return m_error; }
    QPlainTextEdit* editor() const { return m_text; }
    void validateNow();

private:
    QPlainTextEdit* m_text;
    QLabel* m_status;
    QDialogButtonBox* m_buttons;
    QTimer m_timer;
    std::optional<Task> m_task;
    QString m_error;
};

} // namespace kev
