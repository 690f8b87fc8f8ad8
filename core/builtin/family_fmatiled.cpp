#include "builtin/family_fmatiled.h"

#include "builtin/gemmcodegen.h"

#include <QJsonArray>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace kev {

namespace {

constexpr auto kTemplate = uR"CU(${HEADER}
#include <kevolve/abi.h>
${INCLUDES}
namespace {

using InputA = ${A_T};
using InputB = ${B_T};
using Output = ${OUT_T};

constexpr int TILE = ${TILE};           // rows and columns of C per block, and the k-tile depth
constexpr int OUTPUTS_N = ${OUTPUTS_N}; // columns of C per thread, THREADS_N columns apart
constexpr int THREADS_N = TILE / OUTPUTS_N;
constexpr int THREADS = TILE * THREADS_N;
// A warp covers 32 / THREADS_N rows of the A tile and reads one k of each: one extra word per
// row puts those rows in different banks (without it, rows TILE words apart share a bank).
constexpr int ROW = TILE + 1;
constexpr int LOADS = TILE * TILE / THREADS; // elements of each tile a thread stages
static_assert(TILE * TILE % THREADS == 0, "tiles must split evenly over the threads");

__device__ __forceinline__ float aToFloat(InputA x) { return ${A_TO_FLOAT}; }
__device__ __forceinline__ float bToFloat(InputB x) { return ${B_TO_FLOAT}; }

// C = alpha * x + beta * C at (row, col), inside M x N only. C is read only when beta is non-zero:
// the harness poisons it, and 0 * NaN is NaN.
__device__ __forceinline__ void storeOutput(Output* __restrict__ C, long long ldc, int M, int N,
                                            int row, int col, float x, float alpha, float beta)
{
    if (row >= M || col >= N)
        return;
    Output* p = C + row * ldc + col;
    float v = alpha * x;
    if (beta != 0.0f)
        v += beta * ${C_TO_FLOAT};
    *p = ${C_FROM_FLOAT};
}

__global__ void __launch_bounds__(THREADS)
    gemmFmaTiled(const InputA* __restrict__ A, const InputB* __restrict__ B,
                 Output* __restrict__ C, int M, int N, int K, long long lda, long long ldb,
                 long long ldc, float alpha, float beta)
{
    __shared__ float sA[TILE * ROW]; // (m, k), converted to fp32
    __shared__ float sB[TILE * ROW]; // (k, n), converted to fp32

    // Row tiles run along blockIdx.x, which has no 65535 limit, so very tall outputs launch.
    const int rowBase = blockIdx.x * TILE;
    const int colBase = blockIdx.y * TILE;
    const int tid = threadIdx.x;
    const int ty = tid / THREADS_N;
    const int tx = tid % THREADS_N;

    float acc[OUTPUTS_N] = {};
    for (int k0 = 0; k0 < K; k0 += TILE) {
        // Consecutive threads take consecutive columns of a tile row, so global reads coalesce.
        // Elements outside M, N or K are staged as zeros and add nothing to the sums.
#pragma unroll
        for (int i = 0; i < LOADS; ++i) {
            const int id = tid + i * THREADS;
            const int r = id / TILE;
            const int c = id % TILE;
            const int aRow = rowBase + r;
            const int aK = k0 + c;
            sA[r * ROW + c] = aRow < M && aK < K ? aToFloat(A[aRow * lda + aK]) : 0.0f;
            const int bK = k0 + r;
            const int bCol = colBase + c;
            sB[r * ROW + c] = bK < K && bCol < N ? bToFloat(B[bK * ldb + bCol]) : 0.0f;
        }
        __syncthreads();
        // sA[ty][k] is one word per row of the warp (broadcast within a row); sB[k][col] is
        // THREADS_N consecutive words, the same for every row of the warp.
#pragma unroll
        for (int k = 0; k < TILE; ++k) {
            const float a = sA[ty * ROW + k];
#pragma unroll
            for (int j = 0; j < OUTPUTS_N; ++j)
                acc[j] = fmaf(a, sB[k * ROW + tx + j * THREADS_N], acc[j]);
        }
        __syncthreads();
    }

#pragma unroll
    for (int j = 0; j < OUTPUTS_N; ++j)
        storeOutput(C, ldc, M, N, rowBase + ty, colBase + tx + j * THREADS_N, acc[j], alpha, beta);
}

} // namespace

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream)
{
${CHECKS}
    const int M = static_cast<int>(KEVOLVE_GEMM_M(args));
    const int N = static_cast<int>(KEVOLVE_GEMM_N(args));
    const int K = static_cast<int>(KEVOLVE_GEMM_K(args));
    const int tilesN = (N + TILE - 1) / TILE;
    if (tilesN > 65535)
        return 4; // gridDim.y limit
    const dim3 grid(static_cast<unsigned>((M + TILE - 1) / TILE), static_cast<unsigned>(tilesN));
    gemmFmaTiled<<<grid, THREADS, 0, stream>>>(
        static_cast<const InputA*>(args->inputs[0].data),
        static_cast<const InputB*>(args->inputs[1].data),
        static_cast<Output*>(args->outputs[0].data), M, N, K, KEVOLVE_GEMM_LDA(args),
        KEVOLVE_GEMM_LDB(args), KEVOLVE_GEMM_LDC(args), static_cast<float>(args->scalars[0]),
        static_cast<float>(args->scalars[1]));
    return cudaGetLastError() == cudaSuccess ? 0 : 5;
}
)CU";

int outputsN(const Strategy& s) {
    return s.params.value(u"thread_tile_n"_s).toInt(0);
}

int threads(const Strategy& s) {
    const int r = outputsN(s);
    return r > 0 ? s.blockM * (s.blockM / r) : 0;
}

qint64 smemBytes(const Strategy& s) {
    return 2LL * s.blockM * (s.blockM + 1) * 4;
}

// Accumulators, the staged elements' addresses and values, and about 24 for indices and the
// epilogue.
int registerEstimate(const Strategy& s) {
    const int r = std::max(outputsN(s), 1);
    return 3 * r + 24;
}

QJsonArray ints(std::initializer_list<int> values) {
    QJsonArray out;
    for (int v : values)
        out.append(v);
    return out;
}

bool isType(const QString& dtype) {
    return dtype == u"f32" || dtype == u"f16" || dtype == u"bf16";
}

} // namespace

QString FmaTiledFamily::id() const {
    return u"fma_tiled"_s;
}

QString FmaTiledFamily::description() const {
    return u"Shared-memory tiled CUDA-core GEMM, the baseline: a tile x tile block of C per "
           "thread block, square k-tiles of A and B staged in shared memory as fp32 (rows padded "
           "by one word against bank conflicts), each thread accumulating thread_tile_n outputs "
           "of one row with FP32 FMA. Any of f16, bf16, f32 in and out; no tensor cores, no "
           "TF32."_s;
}

bool FmaTiledFamily::supports(const Task& task, const DeviceInfo& device) const {
    return task.op == u"gemm" && isType(task.a) && isType(task.b) && isType(task.c) &&
           task.accumulate == u"f32" && task.layoutA == u"row" && task.layoutB == u"row" &&
           task.layoutC == u"row" && device.ccMajor >= 7;
}

QVector<ParameterSpec> FmaTiledFamily::parameters() const {
    ParameterSpec tile{u"tile"_s, u"Rows and columns of C per block and the depth of one k-tile"_s,
                       ints({16, 32}), [](const Strategy& s) { return QJsonValue(s.blockM); },
                       [](Strategy& s, const QJsonValue& v) {
                           s.blockM = v.toInt();
                           s.blockN = s.blockM;
                           s.blockK = s.blockM;
                       }};
    return {tile, paramsParameter(u"thread_tile_n"_s,
                                  u"Outputs per thread along a row of C (tile / thread_tile_n "
                                  "columns apart)"_s,
                                  ints({1, 2, 4}))};
}

void FmaTiledFamily::normalize(Strategy& s) const {
    s.family = id();
    s.mma = u"fma"_s;
    s.blockN = s.blockM;
    s.blockK = s.blockM;
    s.warpM = 0;
    s.warpN = 0;
    s.vectorWidth = 1;
    s.stages = 1;
    s.smemLayout = u"padded"_s;
    s.smemPaddingBytes = 4;
    s.swizzleBytes = 0;
    s.splitK = 1;
    s.raster = u"row"_s;
    s.groupSize = 1;
    s.epilogue = u"direct"_s;
    const int t = threads(s);
    if (t > 0 && t % 32 == 0)
        s.warps = t / 32;
}

QStringList FmaTiledFamily::constraints(const Strategy& s, const Task& task,
                                        const DeviceInfo& device) const {
    QStringList problems;
    if (!supports(task, device))
        problems << u"family fma_tiled needs a row-major GEMM with f32, f16 or bf16 operands, "
                    "f32 accumulation and an sm_70 or newer GPU (task %1, device %2 sm_%3%4)"_s
                        .arg(task.summary(), device.name)
                        .arg(device.ccMajor)
                        .arg(device.ccMinor);
    if (s.family != id())
        problems << u"family: \"%1\" is not %2"_s.arg(s.family, id());
    if (s.blockM != 16 && s.blockM != 32)
        problems << u"tile=%1 (blockM): must be 16 or 32"_s.arg(s.blockM);
    if (s.blockN != s.blockM || s.blockK != s.blockM)
        problems << u"blockM=%1, blockN=%2, blockK=%3: the tile is square, all three equal"_s
                        .arg(s.blockM)
                        .arg(s.blockN)
                        .arg(s.blockK);
    const int r = outputsN(s);
    if (r != 1 && r != 2 && r != 4) {
        problems << u"params.thread_tile_n=%1: must be 1, 2 or 4"_s.arg(r);
        return problems;
    }
    const int t = threads(s);
    if (t < 32 || t > 1024 || t % 32 != 0)
        problems << u"%1 threads per block (tile %2, thread_tile_n %3): must be a multiple of 32 "
                    "in 32..1024"_s.arg(t)
                        .arg(s.blockM)
                        .arg(r);
    else if (s.warps != t / 32)
        problems << u"warps=%1 but tile %2 with thread_tile_n %3 makes %4"_s.arg(s.warps)
                        .arg(s.blockM)
                        .arg(r)
                        .arg(t / 32);
    if (smemBytes(s) > 48 * 1024)
        problems << u"static shared memory %1 B exceeds 49152 B (tile %2)"_s.arg(smemBytes(s))
                        .arg(s.blockM);
    const int regs = registerEstimate(s);
    if (t > 0 && qint64(regs) * t > device.regsPerSm)
        problems << u"about %1 registers x %2 threads exceeds the %3 registers of an SM"_s.arg(regs)
                        .arg(t)
                        .arg(device.regsPerSm);
    return problems;
}

ResourceEstimate FmaTiledFamily::resources(const Strategy& s, const Task&,
                                           const DeviceInfo& device) const {
    ResourceEstimate r = estimateResources(threads(s), smemBytes(s), registerEstimate(s), device);
    return r;
}

Strategy FmaTiledFamily::defaultStrategy(const Task& task, const DeviceInfo& device) const {
    Strategy s;
    s.family = id();
    const qint64 tiles32 = ((task.m + 31) / 32) * ((task.n + 31) / 32);
    const bool large = tiles32 >= 4LL * std::max(device.smCount, 1);
    s.blockM = large ? 32 : 16;
    s.params.insert(u"thread_tile_n"_s, large ? 4 : 1);
    normalize(s);
    s.rationale = large ? u"Baseline for a large output: 32x32 tiles (each staged element used 32 "
                          "times), 4 outputs per thread so 256 threads share one A value per k."_s
                        : u"Baseline for a small output: 16x16 tiles with one output per thread "
                          "(256 threads), so more blocks cover the GPU."_s;
    return s;
}

QString FmaTiledFamily::generate(const Strategy& s, const Task& task) const {
    using namespace gemmcodegen;
    QStringList header{
        u"Kevolve built-in kernel, family fma_tiled (generated; edit freely)."_s,
        u"Task: %1 (%2)."_s.arg(task.name, task.summary()),
        u"Strategy: %1x%1 tiles of A and B in shared memory (rows padded by one word), %2 "
        "output(s) per thread (%3 threads), FP32 FMA, C written as %4."_s.arg(s.blockM)
            .arg(outputsN(s))
            .arg(threads(s))
            .arg(task.c),
    };
    if (!s.rationale.isEmpty()) {
        header << u"Rationale:"_s;
        for (const QString& line : wrapText(s.rationale))
            header << u"  "_s + line;
    }
    return render(kTemplate, {
                                 {u"HEADER"_s, headerComment(header)},
                                 {u"INCLUDES"_s, dtypeIncludes(task)},
                                 {u"A_T"_s, cudaType(task.a)},
                                 {u"B_T"_s, cudaType(task.b)},
                                 {u"OUT_T"_s, cudaType(task.c)},
                                 {u"TILE"_s, QString::number(s.blockM)},
                                 {u"OUTPUTS_N"_s, QString::number(outputsN(s))},
                                 {u"A_TO_FLOAT"_s, toFloat(task.a, u"x"_s)},
                                 {u"B_TO_FLOAT"_s, toFloat(task.b, u"x"_s)},
                                 {u"C_TO_FLOAT"_s, toFloat(task.c, u"*p"_s)},
                                 {u"C_FROM_FLOAT"_s, fromFloat(task.c, u"v"_s)},
                                 {u"CHECKS"_s, launchChecks(task)},
                             });
}

} // namespace kev
