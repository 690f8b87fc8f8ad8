#include "builtin/family_fma.h"

#include "builtin/gemmcodegen.h"

#include <QJsonArray>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace kev {

namespace {

constexpr auto kTemplate = uR"CU(${HEADER}
#include <kevolve/abi.h>
${INCLUDES}#include <stdint.h>

namespace {

using Input = ${IN_T};
using Output = ${OUT_T};

constexpr int BLOCK_M = ${BLOCK_M};
constexpr int BLOCK_N = ${BLOCK_N};
constexpr int BLOCK_K = ${BLOCK_K};
constexpr int THREAD_M = ${THREAD_M}; // rows of C per thread, in groups of 4
constexpr int THREAD_N = ${THREAD_N}; // columns of C per thread, in groups of 4
constexpr int THREADS_N = BLOCK_N / THREAD_N;
constexpr int THREADS = (BLOCK_M / THREAD_M) * THREADS_N;
// A thread's 4-row groups lie GROUP_STRIDE_M rows apart (and its column groups GROUP_STRIDE_N
// apart), so a warp's float4 reads of one shared-memory row touch consecutive addresses.
constexpr int GROUP_STRIDE_M = BLOCK_M / (THREAD_M / 4);
constexpr int GROUP_STRIDE_N = BLOCK_N / (THREAD_N / 4);
constexpr int A_ROW = BLOCK_M + 4; // A is stored transposed (k, m); padding spreads the stores
constexpr int B_ROW = BLOCK_N;
constexpr int A_VECS = BLOCK_M * BLOCK_K / 4 / THREADS; // 4-element global loads per thread
constexpr int B_VECS = BLOCK_K * BLOCK_N / 4 / THREADS;
static_assert(BLOCK_M * BLOCK_K % (4 * THREADS) == 0, "A tile must split evenly over threads");
static_assert(BLOCK_K * BLOCK_N % (4 * THREADS) == 0, "B tile must split evenly over threads");

${LOAD4}
${OUTPUT_HELPERS}
// Reads the k-tile at k0 into registers: 4 consecutive elements per load, zeros outside M, N
// and K. K and N are multiples of 8, so a 4-element vector is wholly inside or wholly outside.
__device__ __forceinline__ void fetchTile(float (&a)[A_VECS][4], float (&b)[B_VECS][4],
                                          const Input* __restrict__ A,
                                          const Input* __restrict__ B, int M, int N, int K,
                                          long long lda, long long ldb, int rowBase, int colBase,
                                          int k0, int tid)
{
#pragma unroll
    for (int i = 0; i < A_VECS; ++i) {
        const int id = tid + i * THREADS;
        const int row = id / (BLOCK_K / 4);
        const int k = (id % (BLOCK_K / 4)) * 4;
        const int gRow = rowBase + row;
        const int gK = k0 + k;
        if (gRow < M && gK < K) {
            load4(A + gRow * lda + gK, a[i]);
        } else {
            a[i][0] = a[i][1] = a[i][2] = a[i][3] = 0.0f;
        }
    }
#pragma unroll
    for (int i = 0; i < B_VECS; ++i) {
        const int id = tid + i * THREADS;
        const int k = id / (BLOCK_N / 4);
        const int col = (id % (BLOCK_N / 4)) * 4;
        const int gK = k0 + k;
        const int gCol = colBase + col;
        if (gK < K && gCol < N) {
            load4(B + gK * ldb + gCol, b[i]);
        } else {
            b[i][0] = b[i][1] = b[i][2] = b[i][3] = 0.0f;
        }
    }
}

__device__ __forceinline__ void storeTile(float* sA, float* sB, const float (&a)[A_VECS][4],
                                          const float (&b)[B_VECS][4], int tid)
{
#pragma unroll
    for (int i = 0; i < A_VECS; ++i) {
        const int id = tid + i * THREADS;
        const int row = id / (BLOCK_K / 4);
        const int k = (id % (BLOCK_K / 4)) * 4;
#pragma unroll
        for (int j = 0; j < 4; ++j)
            sA[(k + j) * A_ROW + row] = a[i][j];
    }
#pragma unroll
    for (int i = 0; i < B_VECS; ++i) {
        const int id = tid + i * THREADS;
        const int k = id / (BLOCK_N / 4);
        const int col = (id % (BLOCK_N / 4)) * 4;
        *reinterpret_cast<float4*>(sB + k * B_ROW + col) =
            make_float4(b[i][0], b[i][1], b[i][2], b[i][3]);
    }
}

__global__ void __launch_bounds__(THREADS)
    gemmFmaRegBlock(const Input* __restrict__ A, const Input* __restrict__ B,
                    Output* __restrict__ C, int M, int N, int K, long long lda, long long ldb,
                    long long ldc, float alpha, float beta)
{
    __shared__ __align__(16) float sA[2][BLOCK_K * A_ROW];
    __shared__ __align__(16) float sB[2][BLOCK_K * B_ROW];

    const int rowBase = blockIdx.y * BLOCK_M;
    const int colBase = blockIdx.x * BLOCK_N;
    const int tid = threadIdx.x;
    const int ty = tid / THREADS_N;
    const int tx = tid % THREADS_N;

    float acc[THREAD_M][THREAD_N] = {};
    float a[A_VECS][4];
    float b[B_VECS][4];
    const int numKTiles = (K + BLOCK_K - 1) / BLOCK_K;

    fetchTile(a, b, A, B, M, N, K, lda, ldb, rowBase, colBase, 0, tid);
    storeTile(sA[0], sB[0], a, b, tid);
    __syncthreads();

    for (int t = 0; t < numKTiles; ++t) {
        const int buf = t & 1;
        // Fetch the next k-tile into registers while this one is multiplied; it goes to the
        // other buffer, which nobody reads since the barrier that ended the previous iteration.
        const bool more = t + 1 < numKTiles;
        if (more)
            fetchTile(a, b, A, B, M, N, K, lda, ldb, rowBase, colBase, (t + 1) * BLOCK_K, tid);
#pragma unroll
        for (int k = 0; k < BLOCK_K; ++k) {
            float ra[THREAD_M];
            float rb[THREAD_N];
#pragma unroll
            for (int g = 0; g < THREAD_M / 4; ++g) {
                const float4 v = *reinterpret_cast<const float4*>(
                    &sA[buf][k * A_ROW + g * GROUP_STRIDE_M + ty * 4]);
                ra[g * 4 + 0] = v.x;
                ra[g * 4 + 1] = v.y;
                ra[g * 4 + 2] = v.z;
                ra[g * 4 + 3] = v.w;
            }
#pragma unroll
            for (int g = 0; g < THREAD_N / 4; ++g) {
                const float4 v = *reinterpret_cast<const float4*>(
                    &sB[buf][k * B_ROW + g * GROUP_STRIDE_N + tx * 4]);
                rb[g * 4 + 0] = v.x;
                rb[g * 4 + 1] = v.y;
                rb[g * 4 + 2] = v.z;
                rb[g * 4 + 3] = v.w;
            }
#pragma unroll
            for (int i = 0; i < THREAD_M; ++i) {
#pragma unroll
                for (int j = 0; j < THREAD_N; ++j)
                    acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
            }
        }
        if (more)
            storeTile(sA[buf ^ 1], sB[buf ^ 1], a, b, tid);
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < THREAD_M; ++i) {
        const int row = rowBase + (i / 4) * GROUP_STRIDE_M + ty * 4 + (i % 4);
#pragma unroll
        for (int g = 0; g < THREAD_N / 4; ++g) {
            const int col = colBase + g * GROUP_STRIDE_N + tx * 4;
            epiloguePair(C, ldc, M, N, row, col, acc[i][g * 4], acc[i][g * 4 + 1], alpha,
                         beta);
            epiloguePair(C, ldc, M, N, row, col + 2, acc[i][g * 4 + 2], acc[i][g * 4 + 3], alpha,
                         beta);
        }
    }
}

} // namespace

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream)
{
${CHECKS}
    const int M = static_cast<int>(KEVOLVE_GEMM_M(args));
    const int N = static_cast<int>(KEVOLVE_GEMM_N(args));
    const int K = static_cast<int>(KEVOLVE_GEMM_K(args));
    const dim3 grid(static_cast<unsigned>((N + BLOCK_N - 1) / BLOCK_N),
                    static_cast<unsigned>((M + BLOCK_M - 1) / BLOCK_M));
    gemmFmaRegBlock<<<grid, THREADS, 0, stream>>>(
        static_cast<const Input*>(args->inputs[0].data),
        static_cast<const Input*>(args->inputs[1].data), static_cast<Output*>(args->outputs[0].data),
        M, N, K, KEVOLVE_GEMM_LDA(args), KEVOLVE_GEMM_LDB(args), KEVOLVE_GEMM_LDC(args),
        static_cast<float>(args->scalars[0]), static_cast<float>(args->scalars[1]));
    return cudaGetLastError() == cudaSuccess ? 0 : 5;
}
)CU";

QString load4(const QString& dtype) {
    if (dtype == u"f32")
        return uR"CU(// Four consecutive inputs as floats (16-byte aligned: leading dimensions are multiples of 8).
__device__ __forceinline__ void load4(const Input* p, float (&v)[4])
{
    const float4 x = *reinterpret_cast<const float4*>(p);
    v[0] = x.x;
    v[1] = x.y;
    v[2] = x.z;
    v[3] = x.w;
}
)CU"_s;
    const QString pair = dtype == u"f16" ? u"__half2"_s : u"__nv_bfloat162"_s;
    const QString convert = dtype == u"f16" ? u"__half22float2"_s : u"__bfloat1622float2"_s;
    return gemmcodegen::render(
        uR"CU(// Four consecutive inputs as floats (8-byte aligned: leading dimensions are multiples of 8).
__device__ __forceinline__ void load4(const Input* p, float (&v)[4])
{
    const uint2 raw = *reinterpret_cast<const uint2*>(p);
    const float2 lo = ${CONVERT}(*reinterpret_cast<const ${PAIR}*>(&raw.x));
    const float2 hi = ${CONVERT}(*reinterpret_cast<const ${PAIR}*>(&raw.y));
    v[0] = lo.x;
    v[1] = lo.y;
    v[2] = hi.x;
    v[3] = hi.y;
}
)CU",
        {{u"PAIR"_s, pair}, {u"CONVERT"_s, convert}});
}

int threadTile(const Strategy& s, const char16_t* name) {
    return s.params.value(QString::fromUtf16(name)).toInt(0);
}

int threads(const Strategy& s) {
    const int tm = threadTile(s, u"thread_tile_m");
    const int tn = threadTile(s, u"thread_tile_n");
    if (tm <= 0 || tn <= 0)
        return 0;
    return (s.blockM / tm) * (s.blockN / tn);
}

qint64 smemBytes(const Strategy& s) {
    return 2LL * s.blockK * ((s.blockM + 4) + s.blockN) * 4;
}

int registerEstimate(const Strategy& s) {
    const int tm = threadTile(s, u"thread_tile_m");
    const int tn = threadTile(s, u"thread_tile_n");
    const int t = std::max(threads(s), 1);
    const int prefetch = (s.blockM * s.blockK + s.blockK * s.blockN) / t;
    return tm * tn + tm + tn + prefetch + 32;
}

QJsonArray ints(std::initializer_list<int> values) {
    QJsonArray out;
    for (int v : values)
        out.append(v);
    return out;
}

} // namespace

QString FmaRegBlockFamily::id() const {
    return u"fma_regblock"_s;
}

QString FmaRegBlockFamily::description() const {
    return u"CUDA-core FP32 FMA GEMM (any input type converted to fp32; no tensor cores, no "
           "TF32): block tiles in shared memory with A transposed, a register block of "
           "thread_tile_m x thread_tile_n outputs per thread in 4-wide groups, 4-element vector "
           "loads, double-buffered shared memory with a register prefetch of the next k-tile."_s;
}

bool FmaRegBlockFamily::supports(const Task& task, const DeviceInfo& device) const {
    const QStringList types{u"f32"_s, u"f16"_s, u"bf16"_s};
    return task.op == u"gemm" && types.contains(task.a) && task.b == task.a &&
           types.contains(task.c) && task.accumulate == u"f32" && task.layoutA == u"row" &&
           task.layoutB == u"row" && task.layoutC == u"row" && device.ccMajor >= 7 &&
           task.leadingDimMultiple % 4 == 0;
}

QVector<ParameterSpec> FmaRegBlockFamily::parameters() const {
    return {
        fieldParameter(u"blockM"_s, u"Rows of C per thread block"_s, ints({32, 64, 128}),
                       &Strategy::blockM),
        fieldParameter(u"blockN"_s, u"Columns of C per thread block"_s, ints({32, 64, 128}),
                       &Strategy::blockN),
        fieldParameter(u"blockK"_s, u"Depth of one k-tile"_s, ints({8, 16, 32}), &Strategy::blockK),
        paramsParameter(u"thread_tile_m"_s, u"Rows of C per thread (groups of 4)"_s, ints({4, 8})),
        paramsParameter(u"thread_tile_n"_s, u"Columns of C per thread (groups of 4)"_s,
                        ints({4, 8})),
    };
}

void FmaRegBlockFamily::normalize(Strategy& s) const {
    s.family = id();
    s.mma = u"fma"_s;
    s.vectorWidth = 4;
    s.stages = 2;
    s.warpM = 0;
    s.warpN = 0;
    s.smemLayout = u"padded"_s;
    s.smemPaddingBytes = 16;
    s.swizzleBytes = 0;
    s.splitK = 1;
    s.raster = u"row"_s;
    s.groupSize = 1;
    s.epilogue = u"direct"_s;
    const int t = threads(s);
    if (t > 0 && t % 32 == 0)
        s.warps = t / 32;
}

QStringList FmaRegBlockFamily::constraints(const Strategy& s, const Task& task,
                                           const DeviceInfo& device) const {
    QStringList problems;
    if (!supports(task, device))
        problems << u"family fma_regblock needs a row-major GEMM with A and B of the same type "
                    "(f32, f16 or bf16) and f32 accumulation (task %1)"_s.arg(task.summary());
    if (s.family != id())
        problems << u"family: \"%1\" is not %2"_s.arg(s.family, id());
    const int tm = threadTile(s, u"thread_tile_m");
    const int tn = threadTile(s, u"thread_tile_n");
    if ((tm != 4 && tm != 8) || (tn != 4 && tn != 8)) {
        problems << u"params.thread_tile_m=%1, params.thread_tile_n=%2: each must be 4 or 8"_s
                        .arg(tm)
                        .arg(tn);
        return problems;
    }
    if (s.blockM % tm != 0 || s.blockN % tn != 0 || s.blockK % 4 != 0)
        problems << u"block tile %1x%2x%3 must be a multiple of the thread tile %4x%5 (and "
                    "blockK of 4)"_s.arg(s.blockM)
                        .arg(s.blockN)
                        .arg(s.blockK)
                        .arg(tm)
                        .arg(tn);
    const int t = threads(s);
    if (t < 32 || t > 1024 || t % 32 != 0)
        problems << u"%1 threads per block: must be a multiple of 32 in 32..1024"_s.arg(t);
    else if ((s.blockM * s.blockK) % (4 * t) != 0 || (s.blockK * s.blockN) % (4 * t) != 0)
        problems << u"tile loads: %1x%2 A and %2x%3 B elements do not split into 4-element "
                    "loads over %4 threads"_s.arg(s.blockM)
                        .arg(s.blockK)
                        .arg(s.blockN)
                        .arg(t);
    else if (s.warps != t / 32)
        problems << u"warps=%1 but the tiles make %2"_s.arg(s.warps).arg(t / 32);
    if (smemBytes(s) > 48 * 1024)
        problems << u"static shared memory %1 B exceeds 49152 B (blockK=%2)"_s.arg(smemBytes(s))
                        .arg(s.blockK);
    const int regs = registerEstimate(s);
    if (regs > 255)
        problems << u"about %1 registers per thread: more than 255"_s.arg(regs);
    else if (t > 0 && qint64(regs) * t > device.regsPerSm)
        problems << u"about %1 registers x %2 threads exceeds the %3 registers of an SM"_s.arg(regs)
                        .arg(t)
                        .arg(device.regsPerSm);
    return problems;
}

ResourceEstimate FmaRegBlockFamily::resources(const Strategy& s, const Task&,
                                              const DeviceInfo& device) const {
    ResourceEstimate r = estimateResources(threads(s), smemBytes(s), registerEstimate(s), device);
    return r;
}

Strategy FmaRegBlockFamily::defaultStrategy(const Task& task, const DeviceInfo& device) const {
    Strategy s;
    s.family = id();
    const qint64 tiles128 = ((task.m + 127) / 128) * ((task.n + 127) / 128);
    const bool large = tiles128 >= std::max(device.smCount, 1);
    s.blockM = large ? 128 : 64;
    s.blockN = large ? 128 : 64;
    s.blockK = 8;
    s.params.insert(u"thread_tile_m"_s, large ? 8 : 4);
    s.params.insert(u"thread_tile_n"_s, large ? 8 : 4);
    normalize(s);
    s.rationale = large ? u"Large output: 128x128 tiles, 8x8 outputs per thread (256 threads) for "
                          "64 FMAs per 16 shared-memory bytes loaded; double-buffered."_s
                        : u"Small output: 64x64 tiles with 4x4 per thread so more blocks run."_s;
    return s;
}

QString FmaRegBlockFamily::generate(const Strategy& s, const Task& task) const {
    using namespace gemmcodegen;
    const int tm = threadTile(s, u"thread_tile_m");
    const int tn = threadTile(s, u"thread_tile_n");
    QStringList header{
        u"Kevolve built-in kernel, family fma_regblock (generated; edit freely)."_s,
        u"Task: %1 (%2)."_s.arg(task.name, task.summary()),
        u"Strategy: block %1x%2x%3, %4x%5 outputs per thread (%6 threads), FP32 FMA, "_s
            .arg(s.blockM)
            .arg(s.blockN)
            .arg(s.blockK)
            .arg(tm)
            .arg(tn)
            .arg(threads(s)),
        u"  double-buffered shared memory, C written as %1."_s.arg(task.c),
    };
    if (!s.rationale.isEmpty()) {
        header << u"Rationale:"_s;
        for (const QString& line : wrapText(s.rationale))
            header << u"  "_s + line;
    }
    return render(kTemplate, {
                                 {u"HEADER"_s, headerComment(header)},
                                 {u"INCLUDES"_s, dtypeIncludes(task)},
                                 {u"IN_T"_s, cudaType(task.a)},
                                 {u"OUT_T"_s, cudaType(task.c)},
                                 {u"BLOCK_M"_s, QString::number(s.blockM)},
                                 {u"BLOCK_N"_s, QString::number(s.blockN)},
                                 {u"BLOCK_K"_s, QString::number(s.blockK)},
                                 {u"THREAD_M"_s, QString::number(tm)},
                                 {u"THREAD_N"_s, QString::number(tn)},
                                 {u"LOAD4"_s, load4(task.a)},
                                 {u"OUTPUT_HELPERS"_s, outputHelpers(task.c)},
                                 {u"CHECKS"_s, launchChecks(task)},
                             });
}

} // namespace kev
