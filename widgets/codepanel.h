// The Coding agent's panel: the candidate's CUDA source (QScintilla, CUDA highlighting), compile
// errors from the nvcc log marked on their lines, read-only until the person chooses Edit, and the
// coder's live output.
#pragma once

#include "compilelog.h"

#include <Qsci/qscistyle.h>

#include <QWidget>

class QLabel;
class QPlainTextEdit;
class QTabWidget;
class QsciScintilla;

namespace kev {

class AgentTextView;
class CudaLexer;

class CodePanel : public QWidget {
    Q_OBJECT
public:
    explicit CodePanel(QWidget* parent = nullptr);

    void setSource(int version, const QString& source, int attempt = 0);
    // Marks the diagnostics of an nvcc log (the report's compile.log) on their lines.
    void setCompileLog(const QString& log);
    void clear();

    int version() const { return m_version; }
    QString source() const;
    void setEditing(bool editing);
    bool isEditing() const { return m_editing; }
    bool isModified() const;

    // 1-based lines that carry an error marker, in order.
    QVector<int> errorLines() const;
    QVector<CompileDiagnostic> diagnostics() const { return m_diagnostics; }
    bool isReadOnly() const;

    QsciScintilla* editor() const { return m_editor; }
    AgentTextView* agentView() const { return m_agent; }

signals:
    void modificationChanged(bool modified);

private:
    void updateHeader();

    QTabWidget* m_tabs;
    QsciScintilla* m_editor;
    CudaLexer* m_lexer;
    QPlainTextEdit* m_log;
    QLabel* m_header;
    AgentTextView* m_agent;
    QsciStyle m_errorStyle;
    QsciStyle m_warningStyle;
    QVector<CompileDiagnostic> m_diagnostics;
    QString m_original;
    int m_version = 0;
    int m_attempt = 0;
    bool m_editing = false;
};

} // namespace kev
