// The Planning agent's panel: the plan as a structured view, its text form (editable when the
// person chooses Edit, validated as they type), and the planner's live output.
#pragma once

#include "core/strategy.h"

#include <QTimer>
#include <QWidget>

#include <optional>

class QLabel;
class QPlainTextEdit;
class QTabWidget;
class QTreeWidget;

namespace kev {

class AgentTextView;

class StrategyPanel : public QWidget {
    Q_OBJECT
public:
    explicit StrategyPanel(QWidget* parent = nullptr);

    void setStrategy(int version, const kev::Strategy& strategy);
    void clear();
    int version() const { return m_version; }
    std::optional<Strategy> strategy() const { return m_strategy; }

    // In edit mode the text form is writable and every change is validated.
    void setEditing(bool editing);
    bool isEditing() const { return m_editing; }
    // The edited text as a valid plan, or nullopt (problems() says why).
    std::optional<Strategy> editedStrategy() const;
    QStringList problems() const { return m_problems; }

    AgentTextView* agentView() const { return m_agent; }
    QTreeWidget* structuredView() const { return m_tree; }
    QPlainTextEdit* textView() const { return m_text; }
    QLabel* problemsLabel() const { return m_problemsLabel; }

    // Validates the text now instead of after the typing pause.
    void validateNow();

signals:
    // The edited text became valid or invalid.
    void validityChanged(bool valid);

private:
    void fillTree(const Strategy& strategy);
    void showProblems(const QStringList& problems);

    QTabWidget* m_tabs;
    QTreeWidget* m_tree;
    QPlainTextEdit* m_text;
    QLabel* m_problemsLabel;
    QLabel* m_header;
    AgentTextView* m_agent;
    QTimer m_validateTimer;
    std::optional<Strategy> m_strategy;
    QStringList m_problems;
    int m_version = 0;
    bool m_editing = false;
    bool m_lastValid = true;
};

} // namespace kev
