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
    // Widths from the font, so neither a header nor a long family name is clipped at any DPI.
    const QFontMetrics metrics = m_view->fontMetrics();
    const int pad = 2 * metrics.averageCharWidth();
    m_view->setColumnWidth(TimelineModel::VersionColumn,
                           metrics.horizontalAdvance(u"v999 (it 999)"_s) + pad);
    // The status has its icon in front.
    m_view->setColumnWidth(TimelineModel::StatusColumn,
                           metrics.horizontalAdvance(u"compile error"_s) + pad + 20);
    m_view->setColumnWidth(TimelineModel::FamilyColumn,
                           metrics.horizontalAdvance(u"wgmma_tma"_s) + pad);
    fitSpeedupColumn();
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
        const QVector<int> versions = selectedVersions();
        const int best = m_model->bestVersion();
        QMenu menu(this);
        QAction* diff = menu.addAction(u"Diff the two selected versions"_s);
        diff->setShortcut(u"Ctrl+D"_s);
        diff->setEnabled(versions.size() == 2);
        QAction* diffBest = menu.addAction(u"Diff against the best (v%1)"_s.arg(best));
        diffBest->setShortcut(u"Ctrl+Shift+D"_s);
        diffBest->setEnabled(versions.size() == 1 && best > 0 && versions.first() != best);
        QAction* chosen = menu.exec(m_view->viewport()->mapToGlobal(pos));
        if (chosen == diff)
            emit diffRequested(versions[0], versions[1]);
        else if (chosen == diffBest)
            emit diffRequested(std::min(best, versions.first()), std::max(best, versions.first()));
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
    fitSpeedupColumn();
    updateSummary();
}

void IterationTimeline::fitSpeedupColumn() {
    const QFontMetrics metrics = m_view->horizontalHeader()->fontMetrics();
    const QString header =
        m_model->headerData(TimelineModel::SpeedupColumn, Qt::Horizontal, Qt::DisplayRole)
            .toString();
    m_view->setColumnWidth(
        TimelineModel::SpeedupColumn,
        std::max(metrics.horizontalAdvance(u"0.000× (CI)"_s), metrics.horizontalAdvance(header)) +
            4 * metrics.averageCharWidth());
}

void IterationTimeline::clear() {
    m_model->setSteps({});
    m_model->setBestVersion(0);
    updateSummary();
}

void IterationTimeline::selectVersion(int version) {
    const int row = m_model->rowOfVersion(version);
    // The current row already shows it: keep the selection (a Ctrl+click adds a second row for a
    // diff; re-selecting here would clear it).
    if (row < 0 || m_view->currentIndex().row() == row)
        return;
    m_selecting = true;
    m_view->selectionModel()->setCurrentIndex(
        m_model->index(row, 0), QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    m_view->scrollTo(m_model->index(row, 0));
    m_selecting = false;
}

QVector<int> IterationTimeline::selectedVersions() const {
    QVector<int> versions;
    for (const QModelIndex& row : m_view->selectionModel()->selectedRows())
        versions << row.data(TimelineModel::VersionRole).toInt();
    std::sort(versions.begin(), versions.end());
    return versions;
}

void IterationTimeline::selectVersions(const QVector<int>& versions) {
    m_selecting = true;
    QItemSelection selection;
    for (int version : versions) {
        const int row = m_model->rowOfVersion(version);
        if (row >= 0)
            selection.select(m_model->index(row, 0),
                             m_model->index(row, m_model->columnCount() - 1));
    }
    m_view->selectionModel()->select(selection, QItemSelectionModel::ClearAndSelect);
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
        // A version a person rejected is never the best, whatever it measured.
        if (step.isTrustworthy() && step.decision != u"rejected")
            best = std::max(best, *step.speedup);
    }
    QString text = u"%1 versions, %2 correct"_s.arg(steps.size()).arg(correct);
    if (best > 0)
        text += u", best "_s + StatusStyle::speedup(best) + u' ' + m_model->referenceName();
    m_summary->setText(text);
}

} // namespace kev
