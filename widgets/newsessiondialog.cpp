#include "newsessiondialog.h"

#include "taskeditor.h"

#include "core/agents.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSpinBox>

namespace kev {

using namespace Qt::StringLiterals;

namespace {
QComboBox* backendBox(QWidget* parent) {
    auto* box = new QComboBox(parent);
    for (const QString& name : AgentFactory::backends()) {
        // The scripted backend answers from a test script; offered only to a developer who set
        // one up.
        if (name == u"scripted" && qEnvironmentVariableIsEmpty("KEVOLVE_SCRIPTED_AGENTS"))
            continue;
        box->addItem(name);
        box->setItemData(box->count() - 1, AgentFactory::description(name), Qt::ToolTipRole);
    }
    box->setCurrentText(u"builtin"_s);
    return box;
}
} // namespace

NewSessionDialog::NewSessionDialog(const AppSettings& app, bool stepMode, QWidget* parent)
    : QDialog(parent)
    , m_app(app)
    , m_taskBox(new QComboBox(this))
    , m_taskSummary(new QLabel(this))
    , m_planner(backendBox(this))
    , m_coder(backendBox(this))
    , m_reviewer(backendBox(this))
    , m_iterations(new QSpinBox(this))
    , m_target(new QDoubleSpinBox(this))
    , m_targetFloor(new QDoubleSpinBox(this))
    , m_stepMode(new QCheckBox(u"Step mode: wait for me at every gate"_s, this))
    , m_gatePlans(new QCheckBox(u"Also stop after planning"_s, this))
    , m_dir(new QLineEdit(this)) {
    setWindowTitle(u"New session"_s);
    QStringList problems;
    m_tasks = TaskLibrary().tasks(&problems);
    for (const auto& t : m_tasks)
        m_taskBox->addItem(t.name);
    m_taskSummary->setWordWrap(true);

    auto* openTask = new QPushButton(u"Open file…"_s, this);
    auto* editTask = new QPushButton(u"Edit…"_s, this);
    auto* taskRow = new QHBoxLayout;
    taskRow->addWidget(m_taskBox, 1);
    taskRow->addWidget(openTask);
    taskRow->addWidget(editTask);

    m_iterations->setRange(1, 10000);
    m_iterations->setValue(10);
    m_target->setRange(0, 10);
    m_target->setDecimals(2);
    m_target->setSingleStep(0.05);
    m_target->setValue(1.0);
    m_target->setSpecialValueText(u"none"_s);
    // The harness calls a kernel past 110% of the floor suspicious, so a higher target is
    // unreachable.
    m_targetFloor->setRange(0, 110);
    m_targetFloor->setDecimals(0);
    m_targetFloor->setSingleStep(5);
    m_targetFloor->setValue(EngineSettings().targetFloorPercent);
    m_targetFloor->setSuffix(u"% of the DRAM floor"_s);
    m_targetFloor->setSpecialValueText(u"off"_s);
    m_targetFloor->setToolTip(
        u"Memory-bound tasks only (softmax, layernorm, rmsnorm, reduce, elementwise, GEMV): the "
        "run stops at the target when a kernel reaches both the speed-up and this share of the "
        "DRAM roofline floor. Beating a plain reference kernel says little there. Compute-bound "
        "tasks (GEMM) ignore it. Off: the speed-up alone decides."_s);
    m_stepMode->setChecked(stepMode);
    m_gatePlans->setEnabled(stepMode);
    m_dir->setText(
        QDir(app.sessionsRoot)
            .filePath(u"session-"_s + QDateTime::currentDateTime().toString(u"yyyyMMdd-HHmmss"_s)));
    auto* browse = new QPushButton(u"…"_s, this);
    auto* dirRow = new QHBoxLayout;
    dirRow->addWidget(m_dir, 1);
    dirRow->addWidget(browse);

    auto* targetRow = new QHBoxLayout;
    targetRow->addWidget(m_target, 1);
    targetRow->addWidget(new QLabel(u"and"_s, this));
    targetRow->addWidget(m_targetFloor, 1);

    auto* form = new QFormLayout;
    form->addRow(u"Task"_s, taskRow);
    form->addRow(QString(), m_taskSummary);
    form->addRow(u"Planner"_s, m_planner);
    form->addRow(u"Coder"_s, m_coder);
    form->addRow(u"Reviewer"_s, m_reviewer);
    form->addRow(u"Iterations"_s, m_iterations);
    form->addRow(u"Target"_s, targetRow);
    form->addRow(QString(), m_stepMode);
    form->addRow(QString(), m_gatePlans);
    form->addRow(u"Session folder"_s, dirRow);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(u"Start"_s);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(buttons);

    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_stepMode, &QCheckBox::toggled, m_gatePlans, &QWidget::setEnabled);
    connect(m_taskBox, &QComboBox::currentIndexChanged, this, &NewSessionDialog::updateSummary);
    connect(openTask, &QPushButton::clicked, this, [this] {
        const QString path =
            QFileDialog::getOpenFileName(this, u"Open task"_s, QString(), u"Task (*.json)"_s);
        if (path.isEmpty())
            return;
        QString error;
        const auto task = TaskLibrary::loadFile(path, &error);
        if (!task) {
            QMessageBox::warning(this, u"Task"_s, error);
            return;
        }
        addTask(*task);
    });
    connect(editTask, &QPushButton::clicked, this, [this] {
        const auto current = task();
        if (!current)
            return;
        TaskEditor editor(*current, this);
        if (editor.exec() == QDialog::Accepted && editor.task())
            addTask(*editor.task());
    });
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, u"Parent folder"_s);
        if (!dir.isEmpty())
            m_dir->setText(QDir(dir).filePath(QFileInfo(m_dir->text()).fileName()));
    });
    const int headline = m_taskBox->findText(u"gemm_fp16_fp32_4096"_s);
    if (headline >= 0)
        m_taskBox->setCurrentIndex(headline);
    updateSummary();
}

void NewSessionDialog::addTask(const Task& task) {
    for (int i = 0; i < m_tasks.size(); ++i) {
        if (m_tasks[i].name == task.name) {
            m_tasks[i] = task;
            m_taskBox->setCurrentIndex(i);
            updateSummary();
            return;
        }
    }
    m_tasks.append(task);
    m_taskBox->addItem(task.name);
    m_taskBox->setCurrentIndex(m_taskBox->count() - 1);
}

std::optional<Task> NewSessionDialog::task() const {
    const int i = m_taskBox->currentIndex();
    if (i < 0 || i >= m_tasks.size())
        return std::nullopt;
    return m_tasks[i];
}

EngineSettings NewSessionDialog::settings() const {
    EngineSettings s;
    s.plannerBackend = m_planner->currentText();
    s.coderBackend = m_coder->currentText();
    s.reviewerBackend = m_reviewer->currentText();
    s.maxIterations = m_iterations->value();
    s.targetSpeedup = m_target->value();
    s.targetFloorPercent = m_targetFloor->value();
    s.stepMode = m_stepMode->isChecked();
    s.gatePlans = s.stepMode && m_gatePlans->isChecked();
    m_app.applyTo(s);
    return s;
}

QString NewSessionDialog::sessionDir() const {
    return m_dir->text();
}

void NewSessionDialog::updateSummary() {
    const auto t = task();
    m_target->setSuffix(u"× "_s + (t ? referenceName(*t) : u"cuBLAS"_s));
    m_taskSummary->setText(
        t ? u"<i>%1</i><br>%2"_s.arg(t->summary().toHtmlEscaped(), t->description.toHtmlEscaped())
          : QString());
}

} // namespace kev
