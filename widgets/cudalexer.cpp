#include "cudalexer.h"

#include <QByteArray>
#include <QColor>
#include <QFont>
#include <QFontDatabase>

namespace kev {

namespace {

// QScintilla keeps the returned pointers, so the lists live for the whole program.
const char kCudaKeywords[] =
    "__global__ __device__ __host__ __shared__ __constant__ __managed__ __restrict__ "
    "__launch_bounds__ __cluster_dims__ __forceinline__ __noinline__ __grid_constant__ "
    "threadIdx blockIdx blockDim gridDim warpSize clusterIdx "
    "__syncthreads __syncwarp __syncthreads_or __syncthreads_and __threadfence "
    "__shfl_sync __shfl_xor_sync __shfl_down_sync __shfl_up_sync __ballot_sync __any_sync "
    "__all_sync __activemask __ldg __ldcg __ldca __stcg __fmaf_rn __fma_rn __float2half "
    "__half2float __float2bfloat16 __bfloat162float __hfma2 __hmul2 __hadd2 "
    "atomicAdd atomicMax atomicMin atomicCAS atomicExch "
    "asm volatile extern "
    "cudaFuncSetAttribute cudaLaunchKernelEx cudaFuncAttributeMaxDynamicSharedMemorySize "
    "cudaGetLastError cudaSuccess";

const char kCudaTypes[] =
    "half half2 __half __half2 __nv_bfloat16 __nv_bfloat162 nv_bfloat16 "
    "float2 float4 int2 int4 uint2 uint4 char4 uchar4 short2 dim3 "
    "cudaStream_t cudaError_t cudaLaunchConfig_t cudaLaunchAttribute CUtensorMap "
    "KevolveArgs wmma fragment matrix_a matrix_b accumulator row_major col_major nvcuda "
    "size_t uint32_t uint64_t int32_t int64_t";

} // namespace

CudaLexer::CudaLexer(QObject* parent)
    : QsciLexerCPP(parent) {
    setFoldComments(true);
    setFoldCompact(false);
}

const char* CudaLexer::language() const {
    return "CUDA";
}

const char* CudaLexer::keywords(int set) const {
    if (set == 2)
        return kCudaKeywords;
    if (set == 4)
        return kCudaTypes;
    return QsciLexerCPP::keywords(set);
}

QColor CudaLexer::defaultColor(int style) const {
    switch (style) {
    case KeywordSet2:
        return QColor(0x9b, 0x30, 0x9b);
    case GlobalClass:
        return QColor(0x1f, 0x6f, 0x8b);
    default:
        return QsciLexerCPP::defaultColor(style);
    }
}

QFont CudaLexer::defaultFont(int style) const {
    // Monospace everywhere: QScintilla's default uses a proportional face for comments.
    QFont font = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    if (style == Keyword || style == KeywordSet2)
        font.setBold(true);
    return font;
}

} // namespace kev
