// Pieces the memory-bound families (rowwise, gemv, elementwise) share: element conversions and
// vector accesses for exactly the dtypes and vector width of one configuration, the entry point's
// argument checks for an op, and the knobs they have in common. The GEMM helpers
// (gemmcodegen.h) stay as they are.
#ifndef KEV_BUILTIN_MEMORYCODEGEN_H
#define KEV_BUILTIN_MEMORYCODEGEN_H

#include "builtin/kernelfamily.h"

#include <QString>
#include <QStringList>

namespace kev {

struct Task;

namespace memorycodegen {

// toFloat/fromFloat overloads for the given dtypes only, and loadVec/storeVec/loadTail/storeTail
// for VEC elements (one access of VEC * sizeof(T) bytes; the pointer is aligned to it).
QString elementHelpers(const QStringList& dtypes, int vectorWidth);
// The #include lines for the dtypes (cuda_fp16.h, cuda_bf16.h).
QString dtypeIncludes(const QStringList& dtypes);
// Checks at the top of kevolve_launch: ABI version, op, tensor counts and dtypes (in the task's
// tensor order) and unit inner strides, so a kernel run on another task fails loudly.
QString launchChecks(const Task& task, const QString& abiOp);

// Largest vector width (elements) the task's alignment and dtype allow: rows start at multiples
// of leading_dim_multiple elements from a 256-byte aligned base, and one access is at most 16
// bytes.
int maxVectorWidth(const Task& task, const QString& dtype);
// Why `vectorWidth` is not allowed for the tensors' dtypes and the task's alignment (empty = ok).
QStringList vectorWidthProblems(int vectorWidth, const Task& task, const QStringList& dtypes);

QJsonArray ints(std::initializer_list<int> values);
QJsonArray strings(std::initializer_list<const char16_t*> values);

// The strategy's GEMM tile fields the memory-bound families do not use, set to fixed values so
// that equal configurations compare equal (the schema requires every field).
void setTileFieldsUnused(Strategy& s);

// Integer knob `name` of Strategy::params, `fallback` when absent.
int intParam(const Strategy& s, const QString& name, int fallback = 0);
QString stringParam(const Strategy& s, const QString& name);

} // namespace memorycodegen
} // namespace kev

#endif // KEV_BUILTIN_MEMORYCODEGEN_H
