#include "timelinemodel.h"

#include "statusstyle.h"

#include <QBrush>
#include <QFont>

namespace kev {

using namespace Qt::StringLiterals;

void TimelineModel::setSteps(const QVector<IterationSummary>& steps) {
    beginResetModel();
    m_steps = steps;
    endResetModel();
}

void TimelineModel::addStep(const IterationSummary& step) {
    const int row = rowOfVersion(step.version);
    if (row >= 0) {
        m_steps[row] = step;
        emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
        return;
    }
    beginInsertRows({}, int(m_steps.size()), int(m_steps.size()));
    m_steps.append(step);
    endInsertRows();
}

void TimelineModel::setReferenceName(const QString& name) {
    m_referenceName = name;
    emit headerDataChanged(Qt::Horizontal, SpeedupColumn, SpeedupColumn);
}

void TimelineModel::setBestVersion(int version) {
    if (version == m_bestVersion)
        return;
    const int oldRow = rowOfVersion(m_bestVersion);
    m_bestVersion = version;
    for (const int row : {oldRow, rowOfVersion(version)}) {
        if (row >= 0)
            emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
    }
}

int TimelineModel::rowOfVersion(int version) const {
    // Versions are appended in increasing order, so the row is usually version - 1.
    if (version >= 1 && version <= m_steps.size() && m_steps[version - 1].version == version)
        return version - 1;
    for (int row = 0; row < m_steps.size(); ++row) {
        if (m_steps[row].version == version)
            return row;
    }
    return -1;
}

int TimelineModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_steps.size());
}

int TimelineModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant TimelineModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= m_steps.size())
        return {};
    const IterationSummary& step = m_steps[index.row()];
    switch (role) {
    case VersionRole:
        return step.version;
    case StatusRole:
        return step.status;
    case SpeedupRole:
        return step.speedup ? QVariant(*step.speedup) : QVariant();
    case Qt::DisplayRole:
        switch (index.column()) {
        case VersionColumn:
            return u"v%1 (it %2)"_s.arg(step.version).arg(step.iteration);
        case StatusColumn:
            return QString(StatusStyle::label(step.status) +
                           (step.suspicious ? u" ⚠"_s : QString()));
        case FamilyColumn:
            return step.family;
        case SpeedupColumn:
            return step.speedup ? StatusStyle::speedup(*step.speedup) : u"—"_s;
        case DecisionColumn:
            return StatusStyle::decisionLabel(step.decision);
        default:
            return {};
        }
    case Qt::DecorationRole:
        if (index.column() == StatusColumn)
            return StatusStyle::icon(step.status, step.suspicious);
        return {};
    case Qt::ForegroundRole:
        if (index.column() == DecisionColumn)
            return QBrush(StatusStyle::decisionColor(step.decision));
        return {};
    case Qt::FontRole:
        if (step.version == m_bestVersion) {
            QFont font;
            font.setBold(true);
            return font;
        }
        return {};
    case Qt::TextAlignmentRole:
        if (index.column() == SpeedupColumn)
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case Qt::ToolTipRole: {
        QString tip = u"v%1: %2"_s.arg(step.version).arg(step.plan);
        if (!step.message.isEmpty())
            tip += u"\n"_s + step.message;
        if (step.ciLow && step.ciHigh)
            tip += u"\nCI95 [%1, %2]"_s.arg(*step.ciLow, 0, 'f', 3).arg(*step.ciHigh, 0, 'f', 3);
        if (!step.decisionReason.isEmpty())
            tip += u"\nreason: "_s + step.decisionReason;
        if (step.version == m_bestVersion)
            tip += u"\nbest so far"_s;
        return tip;
    }
    default:
        return {};
    }
}

QVariant TimelineModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case VersionColumn:
        return u"Version"_s;
    case StatusColumn:
        return u"Status"_s;
    case FamilyColumn:
        return u"Family"_s;
    case SpeedupColumn:
        return QString(u"vs "_s + m_referenceName);
    case DecisionColumn:
        return u"Decision"_s;
    default:
        return {};
    }
}

} // namespace kev
