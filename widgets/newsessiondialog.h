// Starts a session: a task from the library or a file (editable), a backend per role, the number
// of iterations, the target speed-up (and, for memory-bound tasks, the target share of the DRAM
// floor), step or automatic mode, and the session folder.
#pragma once

#include "appsettings.h"
#include "core/enginesettings.h"
#include "core/task.h"

#include <QDialog>
#include <QVector>

#include <optional>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace kev {

class NewSessionDialog : public QDialog {
    Q_OBJECT
public:
    NewSessionDialog(const AppSettings& app, bool stepMode, QWidget* parent = nullptr);

    std::optional<Task> task() const;
    EngineSettings settings() const;
    QString sessionDir() const;

    // Adds a task (from a file or the editor) to the list and selects it.
    void addTask(const kev::Task& task);
    QComboBox* taskBox() const { return m_taskBox; }

private:
    void updateSummary();

    AppSettings m_app;
    QVector<Task> m_tasks;
    QComboBox* m_taskBox;
    QLabel* m_taskSummary;
    QComboBox* m_planner;
    QComboBox* m_coder;
    QComboBox* m_reviewer;
    QSpinBox* m_iterations;
    QDoubleSpinBox* m_target;
    QDoubleSpinBox* m_targetFloor;
    QCheckBox* m_stepMode;
    QCheckBox* m_gatePlans;
    QLineEdit* m_dir;
};

} // namespace kev
