#include "codepanel.h"

#include "agenttextview.h"
#include "cudalexer.h"

#include <Qsci/qsciscintilla.h>

#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>
#include <QTabWidget>
#include <QVBoxLayout>

namespace kev {

using namespace Qt::StringLiterals;

namespace {
enum Marker { ErrorMarker = 1, WarningMarker = 2 };
} // namespace

CodePanel::CodePanel(QWidget* parent)
    : QWidget(parent)
    , m_tabs(new QTabWidget(this))
    , m_editor(new QsciScintilla(this))
    , m_lexer(new CudaLexer(m_editor))
    , m_log(new QPlainTextEdit(this))
    , m_header(new QLabel(this))
    , m_agent(new AgentTextView(this))
    , m_errorStyle(-1, u"compile error"_s, QColor(0x8b, 0x1a, 0x1a), QColor(0xfd, 0xe8, 0xe8),
                   QFontDatabase::systemFont(QFontDatabase::FixedFont))
    , m_warningStyle(-1, u"compile warning"_s, QColor(0x7a, 0x4a, 0x0a), QColor(0xfd, 0xf3, 0xe0),
                     QFontDatabase::systemFont(QFontDatabase::FixedFont)) {
    m_editor->setObjectName(u"codeEditor"_s);
    m_editor->setLexer(m_lexer);
    m_editor->setUtf8(true);
    m_editor->setMarginType(0, QsciScintilla::NumberMargin);
    m_editor->setMarginWidth(0, u"00000"_s);
    m_editor->setMarginType(1, QsciScintilla::SymbolMargin);
    m_editor->setMarginWidth(1, 14);
    m_editor->setMarginMarkerMask(1, (1 << ErrorMarker) | (1 << WarningMarker));
    m_editor->markerDefine(QsciScintilla::Circle, ErrorMarker);
    m_editor->setMarkerBackgroundColor(QColor(0xd0, 0x3b, 0x3b), ErrorMarker);
    m_editor->setMarkerForegroundColor(QColor(0xd0, 0x3b, 0x3b), ErrorMarker);
    m_editor->markerDefine(QsciScintilla::Circle, WarningMarker);
    m_editor->setMarkerBackgroundColor(QColor(0xc0, 0x7b, 0x1a), WarningMarker);
    m_editor->setMarkerForegroundColor(QColor(0xc0, 0x7b, 0x1a), WarningMarker);
    m_editor->setFolding(QsciScintilla::BoxedTreeFoldStyle, 2);
    m_editor->setBraceMatching(QsciScintilla::SloppyBraceMatch);
    m_editor->setIndentationsUseTabs(false);
    m_editor->setTabWidth(4);
    m_editor->setAnnotationDisplay(QsciScintilla::AnnotationBoxed);
    m_editor->setReadOnly(true);

    m_log->setReadOnly(true);
    m_log->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_log->setPlaceholderText(u"No compile output."_s);
    m_log->setObjectName(u"compileLog"_s);

    m_tabs->addTab(m_editor, u"Source"_s);
    m_tabs->addTab(m_log, u"Compile log"_s);
    m_tabs->addTab(m_agent, u"Coder"_s);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(m_header);
    layout->addWidget(m_tabs);
    updateHeader();

    connect(m_editor, &QsciScintilla::modificationChanged, this, &CodePanel::modificationChanged);
}

void CodePanel::setSource(int version, const QString& source, int attempt) {
    m_version = version;
    m_attempt = attempt;
    m_original = source;
    const bool readOnly = m_editor->isReadOnly();
    m_editor->setReadOnly(false);
    m_editor->setText(source);
    m_editor->setModified(false);
    m_editor->setReadOnly(readOnly);
    setCompileLog({});
    updateHeader();
}

void CodePanel::setCompileLog(const QString& log) {
    m_log->setPlainText(log);
    m_editor->markerDeleteAll();
    m_editor->clearAnnotations();
    m_diagnostics = parseCompileLog(log);
    for (const auto& d : m_diagnostics) {
        const int line = d.line - 1;
        if (line < 0 || line >= m_editor->lines())
            continue;
        m_editor->markerAdd(line, d.error ? ErrorMarker : WarningMarker);
        const QString existing = m_editor->annotation(line);
        m_editor->annotate(line, existing.isEmpty() ? d.message : existing + u"\n"_s + d.message,
                           d.error ? m_errorStyle : m_warningStyle);
    }
    if (!m_diagnostics.isEmpty()) {
        m_editor->setCursorPosition(std::max(0, m_diagnostics.first().line - 1), 0);
        m_editor->ensureLineVisible(std::max(0, m_diagnostics.first().line - 1));
    }
    m_tabs->setTabText(1, m_diagnostics.isEmpty()
                              ? u"Compile log"_s
                              : u"Compile log (%1)"_s.arg(m_diagnostics.size()));
    updateHeader();
}

void CodePanel::clear() {
    m_version = 0;
    m_attempt = 0;
    m_original.clear();
    setEditing(false);
    m_editor->setReadOnly(false);
    m_editor->clear();
    m_editor->setReadOnly(true);
    setCompileLog({});
    updateHeader();
}

QString CodePanel::source() const {
    return m_editor->text();
}

void CodePanel::setEditing(bool editing) {
    m_editing = editing;
    m_editor->setReadOnly(!editing);
    if (editing) {
        m_tabs->setCurrentIndex(0);
        m_editor->setFocus();
    } else if (m_editor->isModified()) {
        m_editor->setReadOnly(false);
        m_editor->setText(m_original);
        m_editor->setModified(false);
        m_editor->setReadOnly(true);
    }
    updateHeader();
}

bool CodePanel::isModified() const {
    return m_editor->isModified();
}

bool CodePanel::isReadOnly() const {
    return m_editor->isReadOnly();
}

QVector<int> CodePanel::errorLines() const {
    QVector<int> lines;
    int line = m_editor->markerFindNext(0, 1 << ErrorMarker);
    while (line >= 0) {
        lines.append(line + 1);
        line = m_editor->markerFindNext(line + 1, 1 << ErrorMarker);
    }
    return lines;
}

void CodePanel::updateHeader() {
    QString text = u"<b>Code</b>"_s;
    if (m_version > 0)
        text += u" kernel_v%1.cu"_s.arg(m_version);
    if (m_attempt > 1)
        text += u" (attempt %1)"_s.arg(m_attempt);
    const int errors = int(std::count_if(m_diagnostics.begin(), m_diagnostics.end(),
                                         [](const CompileDiagnostic& d) { return d.error; }));
    if (errors > 0)
        text += u" — <span style='color:#d03b3b'>%1 compile error%2</span>"_s.arg(errors).arg(
            errors == 1 ? QString() : u"s"_s);
    if (m_editing)
        text += u" — <i>editing</i>"_s;
    m_header->setText(text);
}

} // namespace kev
