// The task rules use task_abi.h's copies of abi.h's values (so that they build without CUDA):
// this file fails to compile when the two disagree.
#include "kevolve/abi.h"
#include "task.h"
#include "task_abi.h"

namespace kev::abi {

static_assert(kMaxTensors == KEVOLVE_MAX_TENSORS);
static_assert(kMaxDims == KEVOLVE_MAX_DIMS);
static_assert(kMaxScalars == KEVOLVE_MAX_SCALARS);
static_assert(kF32 == KEVOLVE_F32 && kF16 == KEVOLVE_F16 && kBF16 == KEVOLVE_BF16 &&
              kF64 == KEVOLVE_F64 && kI32 == KEVOLVE_I32 && kI8 == KEVOLVE_I8);
static_assert(static_cast<int>(Dtype::F32) == KEVOLVE_F32);
static_assert(static_cast<int>(Dtype::F16) == KEVOLVE_F16);
static_assert(static_cast<int>(Dtype::BF16) == KEVOLVE_BF16);
static_assert(static_cast<int>(Dtype::F64) == KEVOLVE_F64);
static_assert(static_cast<int>(Dtype::I32) == KEVOLVE_I32);
static_assert(static_cast<int>(Dtype::I8) == KEVOLVE_I8);
static_assert(kOpGemm == KEVOLVE_OP_GEMM && kOpGemv == KEVOLVE_OP_GEMV &&
              kOpSoftmax == KEVOLVE_OP_SOFTMAX && kOpLayernorm == KEVOLVE_OP_LAYERNORM &&
              kOpReduce == KEVOLVE_OP_REDUCE && kOpElementwise == KEVOLVE_OP_ELEMENTWISE &&
              kOpRmsnorm == KEVOLVE_OP_RMSNORM && kOpCustom == KEVOLVE_OP_CUSTOM);

} // namespace kev::abi
