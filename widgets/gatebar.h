// The step-mode gate: what the engine waits for, and the person's choices: Approve, Edit code,
// Edit plan (then Evaluate, or Cancel the edit), Reject with a reason.
#pragma once

#include "core/gaterequest.h"

#include <QWidget>

class QLabel;
class QPushButton;

namespace kev {

class GateBar : public QWidget {
    Q_OBJECT
public:
    enum class Editing { None, Code, Plan };

    explicit GateBar(QWidget* parent = nullptr);

    void showRequest(const kev::GateRequest& request, int version);
    // The version the buttons act on (one of the request's candidates).
    void setVersion(int version);
    void setEditing(Editing editing);
    void setEvaluateEnabled(bool enabled);
    // What the speed-up is against (referenceName(task)); "cuBLAS" until set.
    void setReferenceName(const QString& name);
    void close();

    int version() const { return m_version; }
    Editing editing() const { return m_editing; }
    bool isOpen() const { return m_open; }
    GateRequest request() const { return m_request; }

    QPushButton* approveButton() const { return m_approve; }
    QPushButton* editCodeButton() const { return m_editCode; }
    QPushButton* editPlanButton() const { return m_editPlan; }
    QPushButton* evaluateButton() const { return m_evaluate; }
    QPushButton* cancelEditButton() const { return m_cancelEdit; }
    QPushButton* rejectButton() const { return m_reject; }

signals:
    void approveRequested(int version);
    void editRequested(kev::GateBar::Editing editing, int version);
    void evaluateRequested(kev::GateBar::Editing editing, int version);
    void editCancelled();
    void rejectRequested(int version);

private:
    void updateText();

    QLabel* m_label;
    QPushButton* m_approve;
    QPushButton* m_editCode;
    QPushButton* m_editPlan;
    QPushButton* m_evaluate;
    QPushButton* m_cancelEdit;
    QPushButton* m_reject;
    GateRequest m_request;
    int m_version = 0;
    Editing m_editing = Editing::None;
    QString m_referenceName = QStringLiteral("cuBLAS");
    bool m_open = false;
};

} // namespace kev
