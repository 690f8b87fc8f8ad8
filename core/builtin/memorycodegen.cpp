#include "builtin/memorycodegen.h"

#include "builtin/gemmcodegen.h"
#include "task.h"

#include <QJsonArray>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace kev::memorycodegen {

namespace {

QString conversion(const QString& dtype) {
    if (dtype == u"f16")
        return uR"CU(__device__ __forceinline__ float toFloat(__half x) { return __half2float(x); }
__device__ __forceinline__ void fromFloat(float v, __half& out) { out = __float2half_rn(v); }
)CU"_s;
    if (dtype == u"bf16")
        return uR"CU(__device__ __forceinline__ float toFloat(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ void fromFloat(float v, __nv_bfloat16& out) { out = __float2bfloat16_rn(v); }
)CU"_s;
    return uR"CU(__device__ __forceinline__ float toFloat(float x) { return x; }
__device__ __forceinline__ void fromFloat(float v, float& out) { out = v; }
)CU"_s;
}

} // namespace

QString elementHelpers(const QStringList& dtypes, int vectorWidth) {
    QString out;
    QStringList done;
    for (const QString& d : dtypes) {
        if (done.contains(d))
            continue;
        done << d;
        out += conversion(d);
    }
    out += gemmcodegen::render(uR"CU(
// The unsigned type of one access of `Bytes` bytes (vector loads and stores are 2 to 16 bytes).
template <int Bytes> struct Raw;
template <> struct Raw<2> { using type = unsigned short; };
template <> struct Raw<4> { using type = unsigned int; };
template <> struct Raw<8> { using type = uint2; };
template <> struct Raw<16> { using type = uint4; };

constexpr int VEC = ${VEC}; // elements per access

// VEC elements at p, which is aligned to VEC * sizeof(T), in one access.
template <typename T> __device__ __forceinline__ void loadVec(const T* p, float (&v)[VEC])
{
    using R = typename Raw<VEC * sizeof(T)>::type;
    const R raw = *reinterpret_cast<const R*>(p);
    T e[VEC];
    memcpy(e, &raw, sizeof(R));
#pragma unroll
    for (int i = 0; i < VEC; ++i)
        v[i] = toFloat(e[i]);
}

template <typename T> __device__ __forceinline__ void storeVec(T* p, const float (&v)[VEC])
{
    using R = typename Raw<VEC * sizeof(T)>::type;
    T e[VEC];
#pragma unroll
    for (int i = 0; i < VEC; ++i)
        fromFloat(v[i], e[i]);
    R raw;
    memcpy(&raw, e, sizeof(R));
    *reinterpret_cast<R*>(p) = raw;
}

// The last, partial vector of a row: `valid` (< VEC) elements exist, the rest read as `fill`.
template <typename T>
__device__ __forceinline__ void loadTail(const T* p, long long valid, float fill, float (&v)[VEC])
{
#pragma unroll
    for (int i = 0; i < VEC; ++i)
        v[i] = i < valid ? toFloat(p[i]) : fill;
}

template <typename T>
__device__ __forceinline__ void storeTail(T* p, long long valid, const float (&v)[VEC])
{
#pragma unroll
    for (int i = 0; i < VEC; ++i) {
        if (i < valid)
            fromFloat(v[i], p[i]);
    }
}
)CU"_s,
                               {{u"VEC"_s, QString::number(vectorWidth)}});
    return out;
}

QString dtypeIncludes(const QStringList& dtypes) {
    QString out;
    if (dtypes.contains(u"f16"_s))
        out += u"#include <cuda_fp16.h>\n"_s;
    if (dtypes.contains(u"bf16"_s))
        out += u"#include <cuda_bf16.h>\n"_s;
    return out;
}

QString launchChecks(const Task& task, const QString& abiOp) {
    const QStringList names = Task::tensorNames(task.op);
    int inputs = 0;
    if (task.op == u"gemv" || task.op == u"layernorm")
        inputs = task.op == u"gemv" ? 2 : 3;
    else
        inputs = 1;
    const int outputs = int(names.size()) - inputs;
    QStringList dtypeChecks;
    QStringList strideChecks;
    for (qsizetype i = 0; i < names.size(); ++i) {
        const bool input = i < inputs;
        const QString tensor =
            u"args->%1[%2]"_s.arg(input ? u"inputs"_s : u"outputs"_s).arg(input ? i : i - inputs);
        dtypeChecks << u"%1.dtype != %2"_s.arg(tensor,
                                               gemmcodegen::abiDtype(task.dtypeOf(names.at(i))));
        strideChecks << u"%1.stride[%1.rank - 1] != 1"_s.arg(tensor);
    }
    return gemmcodegen::render(
        uR"(    // This file was generated for one task; refuse any other so a mismatch is an error.
    if (args->abi_version != KEVOLVE_ABI_VERSION || args->op != ${OP} ||
        args->num_inputs != ${INPUTS} || args->num_outputs != ${OUTPUTS})
        return 1;
    if (${DTYPES})
        return 2;
    if (${STRIDES})
        return 3;
)"_s,
        {{u"OP"_s, abiOp},
         {u"INPUTS"_s, QString::number(inputs)},
         {u"OUTPUTS"_s, QString::number(outputs)},
         {u"DTYPES"_s, dtypeChecks.join(u" ||\n        "_s)},
         {u"STRIDES"_s, strideChecks.join(u" ||\n        "_s)}});
}

int maxVectorWidth(const Task& task, const QString& dtype) {
    const int bytes = Task::dtypeBytes(dtype);
    int width = 16 / bytes;
    while (width > 1 && task.leadingDimMultiple % width != 0)
        width /= 2;
    return width;
}

QStringList vectorWidthProblems(int vectorWidth, const Task& task, const QStringList& dtypes) {
    QStringList problems;
    if (vectorWidth != 1 && vectorWidth != 2 && vectorWidth != 4 && vectorWidth != 8) {
        problems << u"vectorWidth=%1: must be 1, 2, 4 or 8"_s.arg(vectorWidth);
        return problems;
    }
    for (const QString& d : dtypes) {
        if (vectorWidth * Task::dtypeBytes(d) > 16)
            problems << u"vectorWidth=%1 with %2 is %3 bytes per access; the widest access is "
                        "16 bytes"_s.arg(vectorWidth)
                            .arg(d)
                            .arg(vectorWidth * Task::dtypeBytes(d));
    }
    if (task.leadingDimMultiple % vectorWidth != 0)
        problems << u"vectorWidth=%1 does not divide alignment.leading_dim_multiple %2, so rows "
                    "are not aligned to a vector"_s.arg(vectorWidth)
                        .arg(task.leadingDimMultiple);
    return problems;
}

QJsonArray ints(std::initializer_list<int> values) {
    QJsonArray out;
    for (int v : values)
        out.append(v);
    return out;
}

QJsonArray strings(std::initializer_list<const char16_t*> values) {
    QJsonArray out;
    for (const char16_t* v : values)
        out.append(QString::fromUtf16(v));
    return out;
}

void setTileFieldsUnused(Strategy& s) {
    s.blockK = 16;
    s.warpM = 0;
    s.warpN = 0;
    s.stages = 1;
    s.smemLayout = u"plain"_s;
    s.smemPaddingBytes = 0;
    s.swizzleBytes = 0;
    s.splitK = 1;
    s.raster = u"row"_s;
    s.groupSize = 1;
    s.epilogue = u"direct"_s;
}

int intParam(const Strategy& s, const QString& name, int fallback) {
    return s.params.value(name).toInt(fallback);
}

QString stringParam(const Strategy& s, const QString& name) {
    return s.params.value(name).toString();
}

} // namespace kev::memorycodegen
