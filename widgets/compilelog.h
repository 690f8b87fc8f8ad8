// Diagnostics read from an nvcc log (the harness's compile.log, verbatim), so the code panel can
// mark the lines they point at. Only diagnostics about the candidate's own .cu file are kept.
#pragma once

#include <QString>
#include <QVector>

namespace kev {

struct CompileDiagnostic {
    // 1-based, as nvcc prints it.
    int line = 0;
    // 0 when nvcc gave none (its front end prints "file(line): ...").
    int column = 0;
    bool error = true;
    QString message;
};

// Reads both forms nvcc prints: the CUDA front end's "kernel.cu(42): error: ..." and the host
// compiler's "kernel.cu:42:10: error: ...". Lines of other files (headers) are skipped.
QVector<CompileDiagnostic> parseCompileLog(const QString& log);

} // namespace kev
