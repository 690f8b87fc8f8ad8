// The timeline of a session: each step with its status, family, speed-up against the reference and
// the gate's decision. Selecting a row asks the window to show that version.
#pragma once

#include "core/iterationsummary.h"

#include <QWidget>

class QTableView;
class QLabel;

namespace kev {

class TimelineModel;

class IterationTimeline : public QWidget {
    Q_OBJECT
public:
    explicit IterationTimeline(QWidget* parent = nullptr);

    void setSteps(const QVector<kev::IterationSummary>& steps);
    void addStep(const kev::IterationSummary& step);
    void setBestVersion(int version);
    // What the speed-ups are against (referenceName(task)); "cuBLAS" until set.
    void setReferenceName(const QString& name);
    void clear();

    // Selects the row of a version without emitting versionSelected.
    void selectVersion(int version);
    int selectedVersion() const;
    // The selected rows' versions, ascending (two of them make a diff).
    QVector<int> selectedVersions() const;
    void selectVersions(const QVector<int>& versions);
    TimelineModel* model() const { return m_model; }
    QTableView* view() const { return m_view; }

signals:
    void versionSelected(int version);
    // The person asked to compare two versions (left < right): two rows selected, or one against
    // the best, from the context menu or the window's Diff actions.
    void diffRequested(int left, int right);

private:
    void updateSummary();
    void fitSpeedupColumn();

    TimelineModel* m_model;
    QTableView* m_view;
    QLabel* m_summary;
    bool m_selecting = false;
};

} // namespace kev
