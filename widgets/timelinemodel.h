// The session's steps as a table for the timeline: one row per step, appended as steps arrive.
#pragma once

#include "core/iterationsummary.h"

#include <QAbstractTableModel>
#include <QVector>

namespace kev {

class TimelineModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        VersionColumn,
        StatusColumn,
        FamilyColumn,
        SpeedupColumn,
        DecisionColumn,
        ColumnCount
    };
    enum Role { VersionRole = Qt::UserRole + 1, StatusRole, SpeedupRole };

    using QAbstractTableModel::QAbstractTableModel;

    void setSteps(const QVector<kev::IterationSummary>& steps);
    // Adds a step, or replaces the row of a step with the same version (a decision that changed).
    void addStep(const kev::IterationSummary& step);
    void setBestVersion(int version);
    // What the speed-up column is against (referenceName(task)); "cuBLAS" until set.
    void setReferenceName(const QString& name);
    QString referenceName() const { return m_referenceName; }
    int bestVersion() const { return m_bestVersion; }

    const QVector<IterationSummary>& steps() const { return m_steps; }
    int rowOfVersion(int version) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    QVector<IterationSummary> m_steps;
    int m_bestVersion = 0;
    QString m_referenceName = QStringLiteral("cuBLAS");
};

} // namespace kev
