#include "startpage.h"

#include "core/sessionstore.h"

#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

namespace kev {

using namespace Qt::StringLiterals;

namespace {

// "gemm_fp16_fp32_4096 — 12 steps" for a folder that holds a session, else the reason it does
// not. Reads session.json and the index only (a few KiB), so a list of ten stays instant.
QString describe(const QString& dir, bool* ok) {
    QString error;
    const auto store = SessionStore::open(dir, &error);
    *ok = store.has_value();
    if (!store)
        return u"cannot be opened: "_s + error;
    const int steps = int(store->steps().size());
    QString text =
        store->info().task.name + u" — %1 step%2"_s.arg(steps).arg(steps == 1 ? QString() : u"s"_s);
    if (store->info().device)
        text += u" on "_s + store->info().device->name;
    return text;
}

QPushButton* bigButton(const QString& text, const QString& tip, QWidget* parent) {
    auto* b = new QPushButton(text, parent);
    b->setToolTip(tip);
    b->setMinimumHeight(b->sizeHint().height() * 2);
    b->setMinimumWidth(360);
    return b;
}

void fill(QListWidget* list, const QStringList& dirs) {
    list->clear();
    for (const QString& dir : dirs) {
        bool ok = false;
        const QString what = describe(dir, &ok);
        auto* item = new QListWidgetItem(QFileInfo(dir).fileName() + u"\n"_s + what + u"\n"_s +
                                         QDir::toNativeSeparators(dir));
        item->setData(Qt::UserRole, dir);
        item->setToolTip(QDir::toNativeSeparators(dir));
        if (!ok)
            item->setFlags(item->flags() & ~Qt::ItemIsEnabled);
        list->addItem(item);
    }
}

} // namespace

StartPage::StartPage(QWidget* parent)
    : QWidget(parent)
    , m_example(bigButton(u"Open the recorded H200 example"_s,
                          u"A real session recorded on an NVIDIA H200: step through its versions, "
                          "diffs, reviews and measurements without a GPU"_s,
                          this))
    , m_newSession(bigButton(u"Start a new session…"_s,
                             u"Pick a task and the agents, then run (needs a CUDA GPU for the "
                             "harness)"_s,
                             this))
    , m_open(bigButton(u"Open a session folder…"_s, u"A session recorded earlier"_s, this))
    , m_recent(new QListWidget(this))
    , m_examples(new QListWidget(this))
    , m_exampleNote(new QLabel(this))
    , m_recentNote(new QLabel(this)) {
    setObjectName(u"startPage"_s);
    m_recent->setObjectName(u"startRecent"_s);
    for (QListWidget* list : {m_recent, m_examples}) {
        list->setSpacing(4);
        list->setTextElideMode(Qt::ElideMiddle);
        list->setAlternatingRowColors(true);
    }
    m_examples->setObjectName(u"startExamples"_s);
    m_example->setObjectName(u"startExample"_s);
    m_newSession->setObjectName(u"startNewSession"_s);
    m_example->setDefault(true);

    auto* title = new QLabel(u"<h1>Kevolve</h1><p>Agents write GPU kernels; real hardware judges "
                             "them. Every version is compiled, checked against a reference and "
                             "timed by the harness on the GPU.</p>"_s,
                             this);
    title->setWordWrap(true);

    auto* actions = new QVBoxLayout;
    actions->addWidget(m_example);
    actions->addWidget(m_exampleNote);
    actions->addSpacing(8);
    actions->addWidget(m_newSession);
    actions->addWidget(m_open);
    actions->addWidget(new QLabel(u"<b>Examples</b>"_s, this));
    actions->addWidget(m_examples, 1);

    auto* recent = new QVBoxLayout;
    auto* recentTitle = new QLabel(u"<b>&Recent sessions</b>"_s, this);
    recentTitle->setBuddy(m_recent);
    recent->addWidget(recentTitle);
    recent->addWidget(m_recent, 1);
    recent->addWidget(m_recentNote);

    auto* columns = new QHBoxLayout;
    columns->addLayout(actions, 2);
    columns->addSpacing(24);
    columns->addLayout(recent, 3);

    auto* inner = new QWidget(this);
    inner->setMaximumWidth(1200);
    auto* innerLayout = new QVBoxLayout(inner);
    innerLayout->addWidget(title);
    innerLayout->addSpacing(12);
    innerLayout->addLayout(columns, 1);

    auto* outer = new QHBoxLayout(this);
    outer->setContentsMargins(32, 24, 32, 24);
    outer->addStretch(1);
    outer->addWidget(inner, 10);
    outer->addStretch(1);

    m_exampleNote->setWordWrap(true);
    m_recentNote->setWordWrap(true);
    m_exampleNote->setStyleSheet(u"color: palette(mid)"_s);
    m_recentNote->setStyleSheet(u"color: palette(mid)"_s);

    connect(m_example, &QPushButton::clicked, this, [this] {
        if (!m_headline.isEmpty())
            emit openRequested(m_headline);
    });
    connect(m_newSession, &QPushButton::clicked, this, &StartPage::newSessionRequested);
    connect(m_open, &QPushButton::clicked, this, &StartPage::browseRequested);
    for (QListWidget* list : {m_recent, m_examples}) {
        // Enter or a double-click opens; a single click only selects (the keyboard can browse).
        connect(list, &QListWidget::itemActivated, this, [this](QListWidgetItem* item) {
            if (item->flags() & Qt::ItemIsEnabled)
                emit openRequested(item->data(Qt::UserRole).toString());
        });
    }
    setExamples({});
    setRecent({});
}

void StartPage::setExamples(const QStringList& dirs) {
    m_headline.clear();
    for (const QString& dir : dirs) {
        const QString name = QFileInfo(dir).fileName();
        if (name.contains(u"h200"_s) && name.contains(u"gemm"_s)) {
            m_headline = dir;
            break;
        }
    }
    if (m_headline.isEmpty() && !dirs.isEmpty())
        m_headline = dirs.first();
    fill(m_examples, dirs);
    m_example->setEnabled(!m_headline.isEmpty());
    m_exampleNote->setText(
        m_headline.isEmpty()
            ? u"No example session is installed (looked in share/kevolve/examples and "
              "$KEVOLVE_EXAMPLES)."_s
            : u"Opens "_s + QDir::toNativeSeparators(m_headline));
}

void StartPage::setRecent(const QStringList& dirs) {
    fill(m_recent, dirs);
    m_recentNote->setText(dirs.isEmpty() ? u"Sessions you open or start appear here."_s
                                         : u"Enter or double-click opens a session."_s);
}

} // namespace kev
