// Pieces every GEMM generator of the built-in backend shares: element types of the task as CUDA
// types, the ABI entry point's argument checks (templates/gemm/), and the header comment. Generated
// files must read as if a person wrote them for this one configuration, so these helpers return
// finished text, never a runtime switch over dtypes.
#ifndef KEV_BUILTIN_GEMMCODEGEN_H
#define KEV_BUILTIN_GEMMCODEGEN_H

#include <QString>
#include <QStringList>

namespace kev {

struct Task;

namespace gemmcodegen {

// A task dtype ("f16", "bf16", "f32") as the CUDA type and the KevolveDtype enumerator.
QString cudaType(const QString& dtype);
QString abiDtype(const QString& dtype);
// The #include lines the dtypes of the task need (cuda_fp16.h, cuda_bf16.h).
QString dtypeIncludes(const Task& task);

// The checks at the top of kevolve_launch: op, tensor count and dtypes, so that a kernel run on a
// task it was not generated for fails with a launch error instead of computing garbage.
QString launchChecks(const Task& task);

// Device helpers for the output type `Output` (C's dtype): outputToFloat(x), storeOutputPair(p, v0,
// v1) (p is 2-element aligned), and epiloguePair(C, ldc, M, N, row, col, x0, x1, alpha, beta),
// the bounded alpha/beta store of two adjacent columns every family's epilogue uses.
QString outputHelpers(const QString& dtype);

// A strategy's rationale folded into comment-width lines.
QStringList wrapText(const QString& text, int width = 92);

// The header comment of a generated file: one line per entry, as "// " comments.
QString headerComment(const QStringList& lines);

} // namespace gemmcodegen
} // namespace kev

#endif // KEV_BUILTIN_GEMMCODEGEN_H
