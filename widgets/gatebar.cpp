#include "gatebar.h"

#include "statusstyle.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>

namespace kev {

using namespace Qt::StringLiterals;

GateBar::GateBar(QWidget* parent)
    : QWidget(parent)
    , m_label(new QLabel(this))
    , m_approve(new QPushButton(u"Approve"_s, this))
    , m_editCode(new QPushButton(u"Edit code"_s, this))
    , m_editPlan(new QPushButton(u"Edit plan"_s, this))
    , m_evaluate(new QPushButton(u"Evaluate"_s, this))
    , m_cancelEdit(new QPushButton(u"Cancel edit"_s, this))
    , m_reject(new QPushButton(u"Reject…"_s, this)) {
    setAutoFillBackground(true);
    QPalette p = palette();
    p.setColor(QPalette::Window, QColor(0xfd, 0xf3, 0xd0));
    setPalette(p);
    m_approve->setObjectName(u"gateApprove"_s);
    m_editCode->setObjectName(u"gateEditCode"_s);
    m_editPlan->setObjectName(u"gateEditPlan"_s);
    m_evaluate->setObjectName(u"gateEvaluate"_s);
    m_reject->setObjectName(u"gateReject"_s);
    m_label->setTextFormat(Qt::RichText);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(6, 4, 6, 4);
    layout->addWidget(m_label, 1);
    for (auto* b : {m_approve, m_editCode, m_editPlan, m_evaluate, m_cancelEdit, m_reject})
        layout->addWidget(b);

    connect(m_approve, &QPushButton::clicked, this, [this] { emit approveRequested(m_version); });
    connect(m_editCode, &QPushButton::clicked, this, [this] {
        setEditing(Editing::Code);
        emit editRequested(Editing::Code, m_version);
    });
    connect(m_editPlan, &QPushButton::clicked, this, [this] {
        setEditing(Editing::Plan);
        emit editRequested(Editing::Plan, m_version);
    });
    connect(m_evaluate, &QPushButton::clicked, this,
            [this] { emit evaluateRequested(m_editing, m_version); });
    connect(m_cancelEdit, &QPushButton::clicked, this, [this] {
        setEditing(Editing::None);
        emit editCancelled();
    });
    connect(m_reject, &QPushButton::clicked, this, [this] { emit rejectRequested(m_version); });
    close();
}

void GateBar::showRequest(const GateRequest& request, int version) {
    m_request = request;
    m_open = true;
    m_version = version;
    setEditing(Editing::None);
    show();
}

void GateBar::setVersion(int version) {
    if (m_editing != Editing::None)
        return;
    m_version = version;
    updateText();
}

void GateBar::setEditing(Editing editing) {
    m_editing = editing;
    const bool idle = editing == Editing::None;
    const bool plan = m_request.kind == GateRequest::Kind::Plan;
    m_approve->setVisible(idle);
    m_editCode->setVisible(idle && !plan);
    m_editPlan->setVisible(idle);
    m_reject->setVisible(idle);
    m_evaluate->setVisible(!idle);
    m_evaluate->setText(plan ? u"Use this plan"_s : u"Evaluate"_s);
    m_evaluate->setEnabled(true);
    m_cancelEdit->setVisible(!idle);
    updateText();
}

void GateBar::setEvaluateEnabled(bool enabled) {
    m_evaluate->setEnabled(enabled);
}

void GateBar::setReferenceName(const QString& name) {
    m_referenceName = name;
    updateText();
}

void GateBar::close() {
    m_open = false;
    m_editing = Editing::None;
    m_version = 0;
    hide();
}

void GateBar::updateText() {
    if (!m_open)
        return;
    QString text;
    if (m_request.kind == GateRequest::Kind::Plan) {
        text = u"<b>Iteration %1: plan v%2 ready.</b> Approve to code it, edit it, or reject with "
               "a reason."_s.arg(m_request.iteration)
                   .arg(m_version);
    } else {
        text = u"<b>Iteration %1 waits for you: v%2</b>"_s.arg(m_request.iteration).arg(m_version);
        for (const auto& c : m_request.candidates) {
            if (c.version != m_version || !c.report)
                continue;
            const QString status = EvaluationReport::statusToString(c.report->status);
            text += u" — <span style='color:%1'>%2</span>"_s.arg(StatusStyle::color(status).name(),
                                                                 StatusStyle::label(status));
            if (c.report->timed)
                text += u" %1 %2"_s.arg(StatusStyle::speedup(c.report->speedup), m_referenceName);
            if (c.report->suspicious)
                text += u" <b>⚠ suspicious: confirm by approving</b>"_s;
        }
        if (m_request.suggestedVersion == m_version && m_request.candidates.size() > 1)
            text += u" (the engine's choice)"_s;
    }
    if (m_editing == Editing::Code)
        text += u" — <i>editing the code; Evaluate submits it as the next version</i>"_s;
    else if (m_editing == Editing::Plan)
        text += u" — <i>editing the plan; it is validated as you type</i>"_s;
    m_label->setText(text);
}

} // namespace kev
