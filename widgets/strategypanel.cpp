#include "strategypanel.h"

#include "agenttextview.h"

#include <QFontDatabase>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QPlainTextEdit>
#include <QTabWidget>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace kev {

using namespace Qt::StringLiterals;

namespace {
constexpr int kValidateDelayMs = 300;

QString tile(int m, int n) {
    return m > 0 && n > 0 ? u"%1 × %2"_s.arg(m).arg(n) : u"—"_s;
}
} // namespace

StrategyPanel::StrategyPanel(QWidget* parent)
    : QWidget(parent)
    , m_tabs(new QTabWidget(this))
    , m_tree(new QTreeWidget(this))
    , m_text(new QPlainTextEdit(this))
    , m_problemsLabel(new QLabel(this))
    , m_header(new QLabel(this))
    , m_agent(new AgentTextView(this)) {
    m_tree->setColumnCount(2);
    m_tree->setHeaderLabels({u"Field"_s, u"Value"_s});
    m_tree->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_tree->setObjectName(u"strategyTree"_s);

    m_text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_text->setReadOnly(true);
    m_text->setObjectName(u"strategyText"_s);
    m_problemsLabel->setWordWrap(true);
    m_problemsLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_problemsLabel->setObjectName(u"strategyProblems"_s);
    m_problemsLabel->hide();

    auto* textPage = new QWidget(this);
    auto* textLayout = new QVBoxLayout(textPage);
    textLayout->setContentsMargins(0, 0, 0, 0);
    textLayout->addWidget(m_text);
    textLayout->addWidget(m_problemsLabel);

    m_tabs->addTab(m_tree, u"Plan"_s);
    m_tabs->addTab(textPage, u"Text"_s);
    m_tabs->addTab(m_agent, u"Planner"_s);

    m_header->setText(u"<b>Strategy</b>"_s);
    // The plan summary names every knob that differs from the family default: it wraps rather
    // than widen the window.
    m_header->setWordWrap(true);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(m_header);
    layout->addWidget(m_tabs);

    m_validateTimer.setSingleShot(true);
    m_validateTimer.setInterval(kValidateDelayMs);
    connect(&m_validateTimer, &QTimer::timeout, this, &StrategyPanel::validateNow);
    connect(m_text, &QPlainTextEdit::textChanged, this, [this] {
        if (m_editing)
            m_validateTimer.start();
    });
}

void StrategyPanel::setStrategy(int version, const Strategy& strategy) {
    m_version = version;
    m_strategy = strategy;
    m_header->setText(
        u"<b>Strategy</b> v%1 — %2"_s.arg(version).arg(strategy.summary().toHtmlEscaped()));
    fillTree(strategy);
    const bool wasEditing = m_editing;
    m_editing = false;
    m_text->setPlainText(strategy.toText());
    m_editing = wasEditing;
    showProblems(strategy.validate());
}

void StrategyPanel::clear() {
    m_version = 0;
    m_strategy.reset();
    m_header->setText(u"<b>Strategy</b>"_s);
    m_tree->clear();
    m_editing = false;
    m_text->clear();
    m_text->setReadOnly(true);
    showProblems({});
}

void StrategyPanel::setEditing(bool editing) {
    m_editing = editing;
    m_text->setReadOnly(!editing);
    if (editing) {
        m_tabs->setCurrentIndex(1);
        m_text->setFocus();
        validateNow();
    } else if (m_strategy) {
        m_text->setPlainText(m_strategy->toText());
        showProblems(m_strategy->validate());
    }
}

std::optional<Strategy> StrategyPanel::editedStrategy() const {
    QString error;
    auto parsed = Strategy::fromText(m_text->toPlainText(), &error);
    if (!parsed || !parsed->validate().isEmpty())
        return std::nullopt;
    return parsed;
}

void StrategyPanel::validateNow() {
    m_validateTimer.stop();
    QString error;
    const auto parsed = Strategy::fromText(m_text->toPlainText(), &error);
    QStringList problems;
    if (!parsed) {
        problems = error.split(u'\n', Qt::SkipEmptyParts);
        if (problems.isEmpty())
            problems << u"the text is not a plan"_s;
    } else {
        problems = parsed->validate();
        fillTree(*parsed);
    }
    showProblems(problems);
    const bool valid = problems.isEmpty();
    if (valid != m_lastValid) {
        m_lastValid = valid;
        emit validityChanged(valid);
    }
}

void StrategyPanel::showProblems(const QStringList& problems) {
    m_problems = problems;
    if (problems.isEmpty()) {
        m_problemsLabel->hide();
        m_problemsLabel->clear();
        return;
    }
    QString html = u"<span style='color:#c0392b'><b>%1 problem%2:</b><ul style='margin:0'>"_s
                       .arg(problems.size())
                       .arg(problems.size() == 1 ? QString() : u"s"_s);
    for (const auto& p : problems)
        html += u"<li>"_s + p.toHtmlEscaped() + u"</li>"_s;
    html += u"</ul></span>"_s;
    m_problemsLabel->setText(html);
    m_problemsLabel->show();
}

void StrategyPanel::fillTree(const Strategy& s) {
    m_tree->clear();
    const auto group = [this](const QString& name) {
        auto* item = new QTreeWidgetItem(m_tree, {name});
        item->setFirstColumnSpanned(true);
        QFont font = item->font(0);
        font.setBold(true);
        item->setFont(0, font);
        item->setExpanded(true);
        return item;
    };
    const auto field = [](QTreeWidgetItem* parent, const QString& name, const QString& value) {
        new QTreeWidgetItem(parent, {name, value});
    };
    auto* kernel = group(u"Kernel"_s);
    field(kernel, u"family"_s, s.family);
    field(kernel, u"MMA"_s, s.mma);
    field(kernel, u"vector width"_s, QString::number(s.vectorWidth));
    auto* tiles = group(u"Tiles"_s);
    field(tiles, u"block tile (M×N×K)"_s,
          u"%1 × %2 × %3"_s.arg(s.blockM).arg(s.blockN).arg(s.blockK));
    field(tiles, u"warps"_s, QString::number(s.warps));
    field(tiles, u"warp tile"_s, tile(s.warpM, s.warpN));
    auto* memory = group(u"Shared memory"_s);
    field(memory, u"stages"_s, QString::number(s.stages));
    QString layout = s.smemLayout;
    if (s.smemLayout == u"padded")
        layout += u" (+%1 B)"_s.arg(s.smemPaddingBytes);
    else if (s.smemLayout == u"swizzled")
        layout += u" (%1 B)"_s.arg(s.swizzleBytes);
    field(memory, u"layout"_s, layout);
    field(memory, u"bytes (f16 inputs)"_s, QString::number(s.smemBytes(2)));
    auto* schedule = group(u"Schedule"_s);
    field(schedule, u"split-K"_s, QString::number(s.splitK));
    field(schedule, u"cluster"_s, tile(s.clusterM, s.clusterN));
    field(schedule, u"consumer warpgroups"_s, QString::number(s.consumerWarpgroups));
    field(schedule, u"raster"_s,
          s.raster == u"row" ? s.raster : u"%1 (group %2)"_s.arg(s.raster).arg(s.groupSize));
    field(schedule, u"epilogue"_s, s.epilogue);
    if (!s.params.isEmpty()) {
        auto* params = group(u"Family parameters"_s);
        for (auto it = s.params.begin(); it != s.params.end(); ++it) {
            const QJsonValue v = it.value();
            QString text;
            if (v.isString())
                text = v.toString();
            else if (v.isDouble())
                text = QString::number(v.toDouble());
            else if (v.isBool())
                text = v.toBool() ? u"true"_s : u"false"_s;
            else
                text = QString::fromUtf8(
                    (v.isArray() ? QJsonDocument(v.toArray()) : QJsonDocument(v.toObject()))
                        .toJson(QJsonDocument::Compact));
            field(params, it.key(), text);
        }
    }
    if (!s.rationale.isEmpty()) {
        auto* why = group(u"Rationale"_s);
        auto* item = new QTreeWidgetItem(why, {s.rationale});
        item->setFirstColumnSpanned(true);
        item->setToolTip(0, s.rationale);
    }
}

} // namespace kev
