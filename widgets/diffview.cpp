#include "diffview.h"

#include "reportmetrics.h"
#include "statusstyle.h"

#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableWidget>
#include <QTextBlock>
#include <QVBoxLayout>

namespace kev {

using namespace Qt::StringLiterals;

namespace {

const QColor kRemoved(0xfd, 0xe2, 0xe2);
const QColor kAdded(0xdf, 0xf5, 0xe1);
const QColor kChanged(0xfd, 0xf3, 0xd0);
const QColor kFiller(0xf0, 0xf0, 0xf0);

QString valueText(const QJsonValue& v) {
    if (v.isUndefined() || v.isNull())
        return u"—"_s;
    if (v.isString())
        return v.toString();
    if (v.isDouble())
        return QString::number(v.toDouble());
    if (v.isBool())
        return v.toBool() ? u"true"_s : u"false"_s;
    return QString::fromUtf8(
        (v.isArray() ? QJsonDocument(v.toArray()) : QJsonDocument(v.toObject()))
            .toJson(QJsonDocument::Compact));
}

QTableWidget* makeTable(const QStringList& headers, QWidget* parent) {
    auto* table = new QTableWidget(parent);
    table->setColumnCount(int(headers.size()));
    table->setHorizontalHeaderLabels(headers);
    table->verticalHeader()->hide();
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table->horizontalHeader()->setStretchLastSection(true);
    return table;
}

QPlainTextEdit* makeEditor(QWidget* parent) {
    auto* editor = new QPlainTextEdit(parent);
    editor->setReadOnly(true);
    editor->setLineWrapMode(QPlainTextEdit::NoWrap);
    editor->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    return editor;
}

QString signedPercent(double before, double after) {
    if (before == 0)
        return {};
    const double pct = (after - before) / before * 100.0;
    return (pct >= 0 ? u"+"_s : QString()) + QString::number(pct, 'f', 1) + u" %"_s;
}

} // namespace

DiffView::DiffView(QWidget* parent)
    : QWidget(parent)
    , m_header(new QLabel(this))
    , m_left(makeEditor(this))
    , m_right(makeEditor(this))
    , m_fields(makeTable({u"Strategy field"_s, u"before"_s, u"after"_s}, this))
    , m_metrics(makeTable({u"Measured"_s, u"before"_s, u"after"_s, u"change"_s}, this))
    , m_leftPicker(new QComboBox(this))
    , m_rightPicker(new QComboBox(this))
    , m_bestButton(new QPushButton(u"Against the &best"_s, this))
    , m_versions(new QStandardItemModel(this)) {
    m_leftPicker->setModel(m_versions);
    m_rightPicker->setModel(m_versions);
    m_leftPicker->setObjectName(u"diffLeftVersion"_s);
    m_rightPicker->setObjectName(u"diffRightVersion"_s);
    m_leftPicker->setToolTip(u"The older side of the diff: any version of the session"_s);
    m_rightPicker->setToolTip(u"The newer side of the diff: any version of the session"_s);
    m_bestButton->setToolTip(u"Compare the right-hand version with the session's best"_s);
    for (QComboBox* picker : {m_leftPicker, m_rightPicker}) {
        picker->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        picker->setMinimumContentsLength(10);
        connect(picker, &QComboBox::activated, this, [this] {
            const int a = m_leftPicker->currentData().toInt();
            const int b = m_rightPicker->currentData().toInt();
            if (a > 0 && b > 0 && a != b)
                emit diffRequested(std::min(a, b), std::max(a, b));
        });
    }
    connect(m_bestButton, &QPushButton::clicked, this, [this] {
        const int other = m_rightPicker->currentData().toInt();
        if (m_bestVersion > 0 && other > 0 && other != m_bestVersion)
            emit diffRequested(std::min(other, m_bestVersion), std::max(other, m_bestVersion));
    });
    auto* compareLabel = new QLabel(u"&Compare"_s, this);
    compareLabel->setBuddy(m_leftPicker);
    auto* pickers = new QHBoxLayout;
    pickers->addWidget(compareLabel);
    pickers->addWidget(m_leftPicker);
    pickers->addWidget(new QLabel(u"with"_s, this));
    pickers->addWidget(m_rightPicker);
    pickers->addWidget(m_bestButton);
    pickers->addSpacing(12);
    pickers->addWidget(m_header, 1);
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // Wraps rather than widening the window: the diff tab shares it with the timeline.
    m_header->setWordWrap(true);
    m_header->setMinimumWidth(160);
    m_left->setObjectName(u"diffLeft"_s);
    m_right->setObjectName(u"diffRight"_s);
    m_fields->setObjectName(u"diffStrategy"_s);
    m_metrics->setObjectName(u"diffMetrics"_s);

    // Equal halves that never collapse: a side squeezed to nothing hides what changed.
    auto* sources = new QSplitter(Qt::Horizontal, this);
    sources->addWidget(m_left);
    sources->addWidget(m_right);
    sources->setChildrenCollapsible(false);
    sources->setStretchFactor(0, 1);
    sources->setStretchFactor(1, 1);
    m_left->setMinimumWidth(200);
    m_right->setMinimumWidth(200);
    auto* tables = new QSplitter(Qt::Horizontal, this);
    tables->addWidget(m_fields);
    tables->addWidget(m_metrics);
    auto* all = new QSplitter(Qt::Vertical, this);
    all->addWidget(sources);
    all->addWidget(tables);
    all->setStretchFactor(0, 3);
    all->setStretchFactor(1, 1);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addLayout(pickers);
    layout->addWidget(all, 1);

    // The two sides are aligned row for row, so one scroll position fits both.
    for (auto [from, to] : {std::pair{m_left, m_right}, std::pair{m_right, m_left}}) {
        connect(from->verticalScrollBar(), &QScrollBar::valueChanged, to->verticalScrollBar(),
                &QScrollBar::setValue);
        connect(from->horizontalScrollBar(), &QScrollBar::valueChanged, to->horizontalScrollBar(),
                &QScrollBar::setValue);
    }
    clear();
}

void DiffView::setCandidates(const Candidate& left, const Candidate& right) {
    m_rows = diffLines(left.source, right.source);
    m_fieldChanges = compareStrategies(left.strategy, right.strategy);
    m_metricDeltas = compareReports(left.report, right.report, m_referenceName);
    m_header->setText(
        u"<b>Diff</b> v%1 → v%2 — %3 changed lines, %4 strategy fields"_s.arg(left.version)
            .arg(right.version)
            .arg(changedLineCount())
            .arg(m_fieldChanges.size()));
    showSources();
    const QSignalBlocker blockLeft(m_leftPicker);
    const QSignalBlocker blockRight(m_rightPicker);
    m_leftPicker->setCurrentIndex(m_leftPicker->findData(left.version));
    m_rightPicker->setCurrentIndex(m_rightPicker->findData(right.version));

    m_fields->setRowCount(int(m_fieldChanges.size()));
    for (int i = 0; i < m_fieldChanges.size(); ++i) {
        const auto& c = m_fieldChanges[i];
        m_fields->setItem(i, 0, new QTableWidgetItem(c.field));
        m_fields->setItem(i, 1, new QTableWidgetItem(c.before));
        m_fields->setItem(i, 2, new QTableWidgetItem(c.after));
    }
    m_metrics->setRowCount(int(m_metricDeltas.size()));
    for (int i = 0; i < m_metricDeltas.size(); ++i) {
        const auto& d = m_metricDeltas[i];
        m_metrics->setItem(i, 0, new QTableWidgetItem(d.metric));
        m_metrics->setItem(i, 1, new QTableWidgetItem(d.before));
        m_metrics->setItem(i, 2, new QTableWidgetItem(d.after));
        m_metrics->setItem(i, 3, new QTableWidgetItem(d.delta));
    }
}

void DiffView::setVersions(const QVector<int>& versions, int bestVersion) {
    m_bestVersion = bestVersion;
    const int left = m_leftPicker->currentData().toInt();
    const int right = m_rightPicker->currentData().toInt();
    const QSignalBlocker blockLeft(m_leftPicker);
    const QSignalBlocker blockRight(m_rightPicker);
    // One model for both pickers, filled in one insertion: a 1,000-step session stays cheap.
    QList<QStandardItem*> items;
    items.reserve(versions.size());
    for (int v : versions) {
        auto* item = new QStandardItem(v == bestVersion ? u"v%1 (best)"_s.arg(v) : u"v%1"_s.arg(v));
        item->setData(v, Qt::UserRole);
        items.append(item);
    }
    m_versions->clear();
    m_versions->invisibleRootItem()->appendRows(items);
    m_leftPicker->setCurrentIndex(std::max(0, m_leftPicker->findData(left)));
    m_rightPicker->setCurrentIndex(right > 0 ? std::max(0, m_rightPicker->findData(right))
                                             : m_rightPicker->count() - 1);
    m_bestButton->setEnabled(bestVersion > 0);
}

void DiffView::clear() {
    m_rows.clear();
    m_fieldChanges.clear();
    m_metricDeltas.clear();
    m_left->clear();
    m_right->clear();
    m_fields->setRowCount(0);
    m_metrics->setRowCount(0);
    m_header->setText(u"pick two versions here, or select two rows in the timeline and press "
                      "Ctrl+D (Ctrl+Shift+D: the shown version against the best)"_s);
}

int DiffView::changedLineCount() const {
    return int(std::count_if(m_rows.begin(), m_rows.end(),
                             [](const DiffRow& r) { return r.kind != DiffRow::Kind::Same; }));
}

void DiffView::showSources() {
    QStringList left, right;
    left.reserve(m_rows.size());
    right.reserve(m_rows.size());
    const auto numbered = [](int line, const QString& text) {
        return line > 0 ? u"%1  %2"_s.arg(line, 4).arg(text) : QString();
    };
    for (const auto& r : m_rows) {
        left << numbered(r.leftLine, r.left);
        right << numbered(r.rightLine, r.right);
    }
    m_left->setPlainText(left.join(u'\n'));
    m_right->setPlainText(right.join(u'\n'));

    const auto mark = [this](QPlainTextEdit* editor, bool isLeft) {
        QList<QTextEdit::ExtraSelection> selections;
        QTextBlock block = editor->document()->firstBlock();
        for (const auto& r : m_rows) {
            if (!block.isValid())
                break;
            QColor color;
            switch (r.kind) {
            case DiffRow::Kind::Same:
                break;
            case DiffRow::Kind::Changed:
                color = kChanged;
                break;
            case DiffRow::Kind::Removed:
                color = isLeft ? kRemoved : kFiller;
                break;
            case DiffRow::Kind::Added:
                color = isLeft ? kFiller : kAdded;
                break;
            }
            if (color.isValid()) {
                QTextEdit::ExtraSelection selection;
                selection.format.setBackground(color);
                selection.format.setProperty(QTextFormat::FullWidthSelection, true);
                selection.cursor = QTextCursor(block);
                selections.append(selection);
            }
            block = block.next();
        }
        editor->setExtraSelections(selections);
    };
    mark(m_left, true);
    mark(m_right, false);
}

QVector<DiffView::FieldChange> DiffView::compareStrategies(const Strategy& left,
                                                           const Strategy& right) {
    QVector<FieldChange> changes;
    const QJsonObject a = left.toJson();
    const QJsonObject b = right.toJson();
    QStringList keys = a.keys();
    for (const auto& k : b.keys()) {
        if (!keys.contains(k))
            keys << k;
    }
    keys.sort();
    for (const auto& key : keys) {
        const QJsonValue va = a.value(key);
        const QJsonValue vb = b.value(key);
        if (va == vb)
            continue;
        if (va.isObject() && vb.isObject()) {
            // Family parameters: one row per parameter that changed.
            const QJsonObject pa = va.toObject();
            const QJsonObject pb = vb.toObject();
            QStringList sub = pa.keys();
            for (const auto& k : pb.keys()) {
                if (!sub.contains(k))
                    sub << k;
            }
            sub.sort();
            for (const auto& s : sub) {
                if (pa.value(s) != pb.value(s))
                    changes.append(
                        {key + u"."_s + s, valueText(pa.value(s)), valueText(pb.value(s))});
            }
            continue;
        }
        changes.append({key, valueText(va), valueText(vb)});
    }
    return changes;
}

QVector<DiffView::MetricDelta>
DiffView::compareReports(const std::optional<EvaluationReport>& left,
                         const std::optional<EvaluationReport>& right,
                         const QString& referenceName) {
    QVector<MetricDelta> deltas;
    const auto status = [](const std::optional<EvaluationReport>& r) {
        return r ? EvaluationReport::statusToString(r->status) : u"—"_s;
    };
    deltas.append({u"status"_s, status(left), status(right), {}});
    const auto number = [&deltas](const QString& name, std::optional<double> a,
                                  std::optional<double> b, int precision) {
        if (!a && !b)
            return;
        const auto text = [precision](std::optional<double> v) {
            return v ? QString::number(*v, 'f', precision) : u"—"_s;
        };
        deltas.append({name, text(a), text(b), a && b ? signedPercent(*a, *b) : QString()});
    };
    const auto timed = [](const std::optional<EvaluationReport>& r,
                          auto field) -> std::optional<double> {
        if (r && r->timed)
            return field(*r);
        return std::nullopt;
    };
    number(u"speed-up vs "_s + referenceName, timed(left, [](const auto& r) { return r.speedup; }),
           timed(right, [](const auto& r) { return r.speedup; }), 3);
    number(u"median (ms)"_s, timed(left, [](const auto& r) { return r.medianMs; }),
           timed(right, [](const auto& r) { return r.medianMs; }), 4);
    number(u"TFLOP/s"_s, timed(left, [](const auto& r) { return r.tflops; }),
           timed(right, [](const auto& r) { return r.tflops; }), 1);
    number(u"% of roofline floor"_s, left ? left->percentOfFloor : std::nullopt,
           right ? right->percentOfFloor : std::nullopt, 1);
    const auto compiled = [](const std::optional<EvaluationReport>& r,
                             auto field) -> std::optional<double> {
        if (r && r->compileOk && !r->kernels.isEmpty())
            return field(*r);
        return std::nullopt;
    };
    number(u"registers"_s, compiled(left, [](const auto& r) { return double(r.maxRegisters()); }),
           compiled(right, [](const auto& r) { return double(r.maxRegisters()); }), 0);
    number(u"spill bytes"_s,
           compiled(left, [](const auto& r) { return double(r.totalSpillBytes()); }),
           compiled(right, [](const auto& r) { return double(r.totalSpillBytes()); }), 0);
    const ReportMetrics ma = left ? ReportMetrics::fromReport(*left) : ReportMetrics{};
    const ReportMetrics mb = right ? ReportMetrics::fromReport(*right) : ReportMetrics{};
    QStringList keys;
    for (const auto& m : ma.candidate)
        keys << m.key;
    for (const auto& m : mb.candidate) {
        if (!keys.contains(m.key))
            keys << m.key;
    }
    for (const auto& key : keys) {
        const auto a = ma.value(key);
        const auto b = mb.value(key);
        deltas.append({ReportMetrics::label(key), a ? ReportMetrics::format(key, *a) : u"—"_s,
                       b ? ReportMetrics::format(key, *b) : u"—"_s,
                       a && b ? signedPercent(*a, *b) : QString()});
    }
    return deltas;
}

} // namespace kev
