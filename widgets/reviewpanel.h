// The Review agent's panel: what the harness measured (status, correctness per shape, timings with
// the reference and the confidence interval, roofline, resources and profiler metrics) and what
// the reviewer concluded (bottleneck, suggestions, blame), plus the reviewer's live output.
#pragma once

#include "core/evaluationreport.h"
#include "core/reviewfeedback.h"

#include <QWidget>

#include <optional>

class QLabel;
class QTabWidget;
class QTextBrowser;

namespace kev {

class AgentTextView;

class ReviewPanel : public QWidget {
    Q_OBJECT
public:
    explicit ReviewPanel(QWidget* parent = nullptr);

    // What the timing is against (referenceName(task)); "cuBLAS" until set.
    void setReferenceName(const QString& name) { m_referenceName = name; }
    void setReport(int version, const kev::EvaluationReport& report);
    void setReview(int version, const kev::ReviewFeedback& review);
    // Shown while the harness works on a version.
    void setProgress(int version, const QString& stage, const QString& message, double fraction);
    // Drops the in-flight note (the run ended, or another begins).
    void clearProgress();
    void clear();

    int version() const { return m_version; }
    // The panel's text as a person reads it (for tests and copy).
    QString plainText() const;
    AgentTextView* agentView() const { return m_agent; }

private:
    void render();

    QTabWidget* m_tabs;
    QTextBrowser* m_browser;
    QLabel* m_header;
    AgentTextView* m_agent;
    std::optional<EvaluationReport> m_report;
    std::optional<ReviewFeedback> m_review;
    QString m_progress;
    int m_version = 0;
    QString m_referenceName = QStringLiteral("cuBLAS");
};

} // namespace kev
