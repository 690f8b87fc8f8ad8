#include "taskeditor.h"

#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace kev {

using namespace Qt::StringLiterals;

TaskEditor::TaskEditor(const Task& task, QWidget* parent)
    : QDialog(parent)
    , m_text(new QPlainTextEdit(this))
    , m_status(new QLabel(this))
    , m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this)) {
    setWindowTitle(u"Edit task"_s);
    m_text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_text->setPlainText(
        QString::fromUtf8(QJsonDocument(task.toJson()).toJson(QJsonDocument::Indented)));
    m_status->setWordWrap(true);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_text);
    layout->addWidget(m_status);
    layout->addWidget(m_buttons);
    resize(640, 560);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    m_timer.setSingleShot(true);
    m_timer.setInterval(250);
    connect(&m_timer, &QTimer::timeout, this, &TaskEditor::validateNow);
    connect(m_text, &QPlainTextEdit::textChanged, &m_timer, qOverload<>(&QTimer::start));
    validateNow();
}

void TaskEditor::validateNow() {
    m_timer.stop();
    QJsonParseError parseError;
    const auto doc = QJsonDocument::fromJson(m_text->toPlainText().toUtf8(), &parseError);
    m_task.reset();
    if (!doc.isObject()) {
        m_error = doc.isNull() ? u"not JSON: %1 at offset %2"_s.arg(parseError.errorString())
                                     .arg(parseError.offset)
                               : u"task: expected a JSON object"_s;
    } else {
        m_error.clear();
        m_task = Task::fromJson(doc.object(), &m_error);
    }
    if (m_task) {
        m_status->setText(u"<span style='color:#3fa34d'>valid: %1</span>"_s.arg(
            m_task->summary().toHtmlEscaped()));
    } else {
        m_status->setText(u"<span style='color:#c0392b'>%1</span>"_s.arg(m_error.toHtmlEscaped()));
    }
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(m_task.has_value());
}

} // namespace kev
