#include "iterationtimeline.h"

#include "statusstyle.h"
#include "timelinemodel.h"

#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMenu>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace kev {

using namespace Qt::StringLiterals;

IterationTimeline::IterationTimeline(QWidget* parent)
    : QWidget(parent)
    , m_model(new TimelineModel(this))
    , m_view(new QTableView(this))
    , m_summary(new QLabel(this)) {
    m_view->setModel(m_model);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_view->verticalHeader()->hide();
    // Fixed row heights keep a long session cheap to lay out.
    m_view->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_view->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_view->setColumnWidth(TimelineModel::VersionColumn, 90);
    m_view->setColumnWidth(TimelineModel::StatusColumn, 120);
    m_view->setColumnWidth(TimelineModel::FamilyColumn, 100);
    m_view->setColumnWidth(TimelineModel::SpeedupColumn, 80);
    m_view->setAlternatingRowColors(true);
    m_view->setMinimumWidth(480);
    m_view->setContextMenuPolicy(Qt::CustomContextMenu);
    m_view->setObjectName(u"timelineView"_s);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view);
    layout->addWidget(m_summary);
    m_summary->setWordWrap(true);

    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (m_selecting || !current.isValid())
                    return;
                emit versionSelected(current.data(TimelineModel::VersionRole).toInt());
            });
    connect(m_view, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
        const QModelIndexList rows = m_view->selectionModel()->selectedRows();
        QMenu menu(this);
        QAction* diff = menu.addAction(u"Diff the two selected versions"_s);
        diff->setEnabled(rows.size() == 2);
        if (menu.exec(m_view->viewport()->mapToGlobal(pos)) == diff && rows.size() == 2) {
            int a = rows[0].data(TimelineModel::VersionRole).toInt();
            int b = rows[1].data(TimelineModel::VersionRole).toInt();
            emit diffRequested(std::min(a, b), std::max(a, b));
        }
    });
    updateSummary();
}

void IterationTimeline::setSteps(const QVector<IterationSummary>& steps) {
    m_model->setSteps(steps);
    updateSummary();
}

void IterationTimeline::addStep(const IterationSummary& step) {
    const bool atEnd = m_view->currentIndex().row() == m_model->rowCount() - 1 ||
                       !m_view->currentIndex().isValid();
    m_model->addStep(step);
    if (atEnd)
        m_view->scrollToBottom();
    updateSummary();
}

void IterationTimeline::setBestVersion(int version) {
    m_model->setBestVersion(version);
    updateSummary();
}

void IterationTimeline::setReferenceName(const QString& name) {
    m_model->setReferenceName(name);
    updateSummary();
}

void IterationTimeline::clear() {
    m_model->setSteps({});
    m_model->setBestVersion(0);
    updateSummary();
}

void IterationTimeline::selectVersion(int version) {
    const int row = m_model->rowOfVersion(version);
    if (row < 0)
        return;
    m_selecting = true;
    m_view->selectionModel()->setCurrentIndex(
        m_model->index(row, 0), QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    m_view->scrollTo(m_model->index(row, 0));
    m_selecting = false;
}

int IterationTimeline::selectedVersion() const {
    const QModelIndex current = m_view->currentIndex();
    return current.isValid() ? current.data(TimelineModel::VersionRole).toInt() : 0;
}

void IterationTimeline::updateSummary() {
    const auto& steps = m_model->steps();
    int correct = 0;
    double best = 0;
    for (const auto& step : steps) {
        if (step.status == u"ok")
            ++correct;
        if (step.isTrustworthy())
            best = std::max(best, *step.speedup);
    }
    QString text = u"%1 versions, %2 correct"_s.arg(steps.size()).arg(correct);
    if (best > 0)
        text += u", best "_s + StatusStyle::speedup(best) + u' ' + m_model->referenceName();
    m_summary->setText(text);
}

} // namespace kev
