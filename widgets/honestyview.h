// Why the referee's verdict on one candidate can be trusted: every check it ran (the static rules,
// output poisoning, completeness, the post-timing re-check, the launch audit, timing stability,
// the suspicious flag) with its result and the evidence the report carries for it.
#pragma once

#include "core/evaluationreport.h"

#include <QWidget>

class QLabel;
class QTreeWidget;

namespace kev {

class HonestyView : public QWidget {
    Q_OBJECT
public:
    enum class Result { Pass, Fail, Warn, NotRun };
    struct Check {
        QString name;
        Result result = Result::NotRun;
        QString evidence;
    };

    explicit HonestyView(QWidget* parent = nullptr);

    // What the speed-up is against (referenceName(task)); "cuBLAS" until set.
    void setReferenceName(const QString& name) { m_referenceName = name; }
    void setReport(int version, const kev::EvaluationReport& report);
    void clear();

    // The checks as shown, in order.
    QVector<Check> checks() const { return m_checks; }
    static QVector<Check> checksOf(const EvaluationReport& report,
                                   const QString& referenceName = QStringLiteral("cuBLAS"));
    QTreeWidget* tree() const { return m_tree; }

private:
    QTreeWidget* m_tree;
    QLabel* m_header;
    QVector<Check> m_checks;
    QString m_referenceName = QStringLiteral("cuBLAS");
};

} // namespace kev
