// Two versions side by side: the kernels' sources with changed, removed and added lines marked,
// the strategy fields that changed, and the deltas of what the harness measured.
#pragma once

#include "core/candidate.h"
#include "textdiff.h"

#include <QWidget>

class QComboBox;
class QLabel;
class QPushButton;
class QStandardItemModel;
class QPlainTextEdit;
class QTableWidget;

namespace kev {

class DiffView : public QWidget {
    Q_OBJECT
public:
    struct FieldChange {
        QString field;
        QString before;
        QString after;
    };
    struct MetricDelta {
        QString metric;
        QString before;
        QString after;
        QString delta;
    };

    explicit DiffView(QWidget* parent = nullptr);

    void setCandidates(const kev::Candidate& left, const kev::Candidate& right);
    void clear();
    // The versions the pickers offer (ascending) and the session's best (0 = none yet).
    void setVersions(const QVector<int>& versions, int bestVersion);
    QComboBox* leftPicker() const { return m_leftPicker; }
    QComboBox* rightPicker() const { return m_rightPicker; }

    QVector<DiffRow> rows() const { return m_rows; }
    QVector<FieldChange> strategyChanges() const { return m_fieldChanges; }
    QVector<MetricDelta> metricDeltas() const { return m_metricDeltas; }
    int changedLineCount() const;

    static QVector<FieldChange> compareStrategies(const Strategy& left, const Strategy& right);
    static QVector<MetricDelta>
    compareReports(const std::optional<EvaluationReport>& left,
                   const std::optional<EvaluationReport>& right,
                   const QString& referenceName = QStringLiteral("cuBLAS"));
    // What the speed-up is against (referenceName(task)); "cuBLAS" until set.
    void setReferenceName(const QString& name) { m_referenceName = name; }

    QPlainTextEdit* leftEditor() const { return m_left; }
    QPlainTextEdit* rightEditor() const { return m_right; }

signals:
    // A version picked in the pickers (left < right): the window loads both and calls
    // setCandidates.
    void diffRequested(int left, int right);

private:
    void showSources();

    QLabel* m_header;
    QPlainTextEdit* m_left;
    QPlainTextEdit* m_right;
    QTableWidget* m_fields;
    QTableWidget* m_metrics;
    QComboBox* m_leftPicker;
    QComboBox* m_rightPicker;
    QPushButton* m_bestButton;
    QStandardItemModel* m_versions;
    int m_bestVersion = 0;
    QVector<DiffRow> m_rows;
    QVector<FieldChange> m_fieldChanges;
    QVector<MetricDelta> m_metricDeltas;
    QString m_referenceName = QStringLiteral("cuBLAS");
};

} // namespace kev
