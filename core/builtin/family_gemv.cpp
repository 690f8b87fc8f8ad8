#include "builtin/family_gemv.h"

#include "builtin/gemmcodegen.h"
#include "builtin/memorycodegen.h"

#include <QJsonArray>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace kev {

namespace {

using namespace memorycodegen;

constexpr auto kPrelude = uR"CU(${HEADER}
#include <kevolve/abi.h>
${INCLUDES}#include <stdint.h>

namespace {

using ElemA = ${A_T};
using ElemX = ${X_T};
using ElemY = ${Y_T};
${ELEMENTS}
constexpr int WARPS = ${WARPS};
constexpr int THREADS = WARPS * 32;
constexpr int VPT = ${VPT}; // ${VPT_WHY}
${KERNEL}
} // namespace
${LAUNCH})CU";

constexpr auto kRows = uR"CU(constexpr int CHUNK = 32 * VEC * VPT; // columns a warp reads per step

// y = A x: one warp per row of A, lanes on neighbouring vectors of the row (coalesced), x read
// through the same vector width (it stays in L1/L2, every warp reads all of it).
__global__ void __launch_bounds__(THREADS)
    gemvRows(const ElemA* __restrict__ A, const ElemX* __restrict__ x, ElemY* __restrict__ y,
             long long M, long long N, long long lda)
{
    const int lane = threadIdx.x & 31;
    for (long long row = static_cast<long long>(blockIdx.x) * WARPS + threadIdx.x / 32; row < M;
         row += static_cast<long long>(gridDim.x) * WARPS) {
        const ElemA* a = A + row * lda;
        float acc = 0.0f;
        for (long long base = 0; base < N; base += CHUNK) {
            float av[VPT][VEC];
            float xv[VPT][VEC];
#pragma unroll
            for (int j = 0; j < VPT; ++j) {
                const long long col = base + (static_cast<long long>(j) * 32 + lane) * VEC;
                if (col + VEC <= N) {
                    loadVec(a + col, av[j]);
                    loadVec(x + col, xv[j]);
                } else {
                    loadTail(a + col, N - col, 0.0f, av[j]);
                    loadTail(x + col, N - col, 0.0f, xv[j]);
                }
            }
#pragma unroll
            for (int j = 0; j < VPT; ++j)
#pragma unroll
                for (int i = 0; i < VEC; ++i)
                    acc = fmaf(av[j][i], xv[j][i], acc);
        }
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1)
            acc += __shfl_down_sync(0xffffffffu, acc, offset);
        if (lane == 0)
            fromFloat(acc, y[row]);
    }
}
)CU";

constexpr auto kRowsLaunch = uR"CU(
extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream)
{
${CHECKS}    if (args->scalars[0] != 0.0)
        return 6; // generated for y = A x (transpose 0) only
    const long long M = KEVOLVE_ROWS(args);
    const long long N = KEVOLVE_COLS(args);
    const long long lda = KEVOLVE_LDX(args);
    // Vector accesses need every row of A (and x) to start on a VEC-element boundary.
    if (lda % VEC != 0 ||
        reinterpret_cast<uintptr_t>(args->inputs[0].data) % (VEC * sizeof(ElemA)) != 0 ||
        reinterpret_cast<uintptr_t>(args->inputs[1].data) % (VEC * sizeof(ElemX)) != 0)
        return 4;
    const long long grid = min((M + WARPS - 1) / WARPS, 2147483647LL);
    gemvRows<<<grid, THREADS, 0, stream>>>(static_cast<const ElemA*>(args->inputs[0].data),
                                           static_cast<const ElemX*>(args->inputs[1].data),
                                           static_cast<ElemY*>(args->outputs[0].data), M, N, lda);
    return cudaGetLastError() == cudaSuccess ? 0 : 5;
}
)CU";

constexpr auto kColumns =
    uR"CU(constexpr int COLS = 32 * VEC;    // columns of y per block: a warp's lanes side by side
constexpr int SPLIT = ${SPLIT};       // blocks along M per column range, summed ${SPLIT_WHY}

// y = A^T x: block (bx, by) owns columns bx * COLS .. + COLS - 1 and the by-th of SPLIT row
// ranges. Each warp walks rows WARPS apart, VPT rows per step in flight, each lane accumulating
// VEC columns in fp32; the warps' sums meet in shared memory.
__global__ void __launch_bounds__(THREADS)
    gemvColumns(const ElemA* __restrict__ A, const ElemX* __restrict__ x, ${OUT_PARAM},
                long long M, long long N, long long lda)
{
    __shared__ float sums[WARPS][COLS]; // [warp][i * 32 + lane]: conflict-free writes
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x / 32;
    const long long col = static_cast<long long>(blockIdx.x) * COLS + lane * VEC;
    const long long rowsPerSplit = (M + SPLIT - 1) / SPLIT;
    const long long rowBegin = static_cast<long long>(blockIdx.y) * rowsPerSplit;
    const long long rowEnd = min(M, rowBegin + rowsPerSplit);
    float acc[VEC];
#pragma unroll
    for (int i = 0; i < VEC; ++i)
        acc[i] = 0.0f;
    // Threads past N still run the loop (reading nothing) so every thread reaches the barrier.
    for (long long r0 = rowBegin + warp; r0 < rowEnd; r0 += static_cast<long long>(WARPS) * VPT) {
        float av[VPT][VEC];
        float xv[VPT];
#pragma unroll
        for (int u = 0; u < VPT; ++u) {
            const long long r = r0 + static_cast<long long>(u) * WARPS;
            const ElemA* a = A + r * lda + col;
            if (r < rowEnd && col + VEC <= N)
                loadVec(a, av[u]);
            else
                loadTail(a, r < rowEnd ? N - col : 0, 0.0f, av[u]);
            xv[u] = r < rowEnd ? toFloat(x[r]) : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < VPT; ++u)
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                acc[i] = fmaf(av[u][i], xv[u], acc[i]);
    }
#pragma unroll
    for (int i = 0; i < VEC; ++i)
        sums[warp][i * 32 + lane] = acc[i];
    __syncthreads();
    for (int slot = threadIdx.x; slot < COLS; slot += THREADS) {
        float s = 0.0f;
#pragma unroll
        for (int w = 0; w < WARPS; ++w)
            s += sums[w][slot];
        const long long c = static_cast<long long>(blockIdx.x) * COLS + (slot % 32) * VEC + slot / 32;
        if (c < N)
            ${STORE}
    }
}
${FINISH})CU";

constexpr auto kFinish = uR"CU(
// y = the sum of the SPLIT partial rows, in a fixed order. Every partial element below N was
// written by gemvColumns (empty row ranges write 0), so the poisoned workspace is never read.
__global__ void __launch_bounds__(256)
    gemvFinish(const float* __restrict__ partial, ElemY* __restrict__ y, long long N)
{
    for (long long c = static_cast<long long>(blockIdx.x) * 256 + threadIdx.x; c < N;
         c += static_cast<long long>(gridDim.x) * 256) {
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < SPLIT; ++k)
            s += partial[k * N + c];
        fromFloat(s, y[c]);
    }
}
)CU";

constexpr auto kColumnsLaunch = uR"CU(
extern "C" KEVOLVE_EXPORT uint64_t kevolve_workspace_bytes(const KevolveArgs* args)
{
    return ${WORKSPACE};
}

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream)
{
${CHECKS}    if (args->scalars[0] != 1.0)
        return 6; // generated for y = A^T x (transpose 1) only
    const long long M = KEVOLVE_ROWS(args);
    const long long N = KEVOLVE_COLS(args);
    const long long lda = KEVOLVE_LDX(args);
    // Vector accesses need every row of A to start on a VEC-element boundary.
    if (lda % VEC != 0 ||
        reinterpret_cast<uintptr_t>(args->inputs[0].data) % (VEC * sizeof(ElemA)) != 0)
        return 4;
    const long long columnBlocks = (N + COLS - 1) / COLS;
    if (columnBlocks > 2147483647LL)
        return 4;
${LAUNCH_BODY}
    return cudaGetLastError() == cudaSuccess ? 0 : 5;
}
)CU";

bool transposed(const Task& task) {
    return task.params.value(u"transpose"_s).toBool();
}

int vpt(const Strategy& s) {
    return intParam(s, u"vectors_per_thread"_s);
}

int split(const Strategy& s) {
    return intParam(s, u"split_m"_s);
}

QStringList tensorDtypes(const Task& task) {
    return {task.dtypeOf(u"A"_s), task.dtypeOf(u"x"_s), task.dtypeOf(u"y"_s)};
}

// Tensors read with vectors: A always, x too for y = A x.
QStringList vectorDtypes(const Task& task) {
    if (transposed(task))
        return {task.dtypeOf(u"A"_s)};
    return {task.dtypeOf(u"A"_s), task.dtypeOf(u"x"_s)};
}

int registerEstimate(const Strategy& s, const Task& task) {
    const int loaded = transposed(task) ? vpt(s) * (s.vectorWidth + 1) + s.vectorWidth
                                        : 2 * vpt(s) * s.vectorWidth;
    return loaded + 32;
}

} // namespace

QString GemvFamily::id() const {
    return u"gemv"_s;
}

QString GemvFamily::description() const {
    return u"Matrix-vector product, fp32 accumulation, both orientations. y = A x: one warp per "
           "row of A, lanes on neighbouring vectors (vectorWidth elements) of A and x, "
           "vectors_per_thread vectors in flight. y = A^T x: each block owns 32 x vectorWidth "
           "columns and one of split_m row ranges; warps walk rows, vectors_per_thread rows in "
           "flight, and sum in shared memory; split_m > 1 writes fp32 partials to the workspace "
           "and a second kernel adds them (no atomics, no zeroed memory)."_s;
}

bool GemvFamily::supports(const Task& task, const DeviceInfo& device) const {
    if (task.op != u"gemv" || device.ccMajor < 7)
        return false;
    const QStringList dtypes = tensorDtypes(task);
    return std::all_of(dtypes.begin(), dtypes.end(),
                       [](const QString& d) { return d == u"f32" || d == u"f16" || d == u"bf16"; });
}

QVector<ParameterSpec> GemvFamily::parameters() const {
    return {
        fieldParameter(u"warps"_s, u"Warps per block"_s, ints({1, 2, 4, 8, 16}), &Strategy::warps),
        fieldParameter(u"vectorWidth"_s, u"Elements of A per load"_s, ints({1, 2, 4, 8}),
                       &Strategy::vectorWidth),
        paramsParameter(u"vectors_per_thread"_s,
                        u"Loads a thread has in flight per step (vectors of a row, or rows for "
                        "A^T x)"_s,
                        ints({1, 2, 4, 8})),
        paramsParameter(u"split_m"_s,
                        u"A^T x only: row ranges per column block, summed by a second kernel"_s,
                        ints({1, 2, 4, 8, 16, 32})),
    };
}

void GemvFamily::normalize(Strategy& s) const {
    s.family = id();
    s.mma = u"fma"_s;
    s.blockM = s.warps;
    s.blockN = 32 * s.vectorWidth;
    setTileFieldsUnused(s);
}

QStringList GemvFamily::constraints(const Strategy& s, const Task& task,
                                    const DeviceInfo& device) const {
    QStringList problems;
    if (!supports(task, device))
        problems << u"family gemv needs a gemv task with f32, f16 or bf16 tensors on an sm_70 or "
                    "newer GPU (task %1, device %2 sm_%3%4)"_s.arg(task.summary(), device.name)
                        .arg(device.ccMajor)
                        .arg(device.ccMinor);
    if (s.family != id())
        problems << u"family: \"%1\" is not %2"_s.arg(s.family, id());
    if (s.warps < 1 || s.warps > 16 || (s.warps & (s.warps - 1)) != 0)
        problems << u"warps=%1: must be a power of two in 1..16"_s.arg(s.warps);
    problems << vectorWidthProblems(s.vectorWidth, task, vectorDtypes(task));
    const int v = vpt(s);
    if (v != 1 && v != 2 && v != 4 && v != 8)
        problems << u"params.vectors_per_thread=%1: must be 1, 2, 4 or 8"_s.arg(v);
    const int k = split(s);
    if (k != 1 && k != 2 && k != 4 && k != 8 && k != 16 && k != 32)
        problems << u"params.split_m=%1: must be 1, 2, 4, 8, 16 or 32"_s.arg(k);
    else if (!transposed(task) && k != 1)
        problems << u"split_m=%1: y = A x gives each row to one warp; split_m is for A^T x "
                    "(transpose true) only"_s.arg(k);
    const int regs = registerEstimate(s, task);
    if (regs > 128)
        problems << u"about %1 registers per thread (vectorWidth %2 x vectors_per_thread %3): "
                    "more than 128 risks spills"_s.arg(regs)
                        .arg(s.vectorWidth)
                        .arg(v);
    return problems;
}

ResourceEstimate GemvFamily::resources(const Strategy& s, const Task& task,
                                       const DeviceInfo& device) const {
    const bool t = transposed(task);
    const qint64 smem = t ? qint64(s.warps) * 32 * s.vectorWidth * 4 : 0;
    ResourceEstimate r = estimateResources(s.warps * 32, smem, registerEstimate(s, task), device);
    if (t && split(s) > 1)
        r.workspaceBytes = qint64(split(s)) * task.n * 4;
    return r;
}

Strategy GemvFamily::defaultStrategy(const Task& task, const DeviceInfo& device) const {
    Strategy s;
    s.family = id();
    s.vectorWidth = 8;
    for (const QString& d : vectorDtypes(task))
        s.vectorWidth = std::min(s.vectorWidth, maxVectorWidth(task, d));
    if (!transposed(task)) {
        s.warps = 4;
        s.params.insert(u"vectors_per_thread"_s, 2);
        s.params.insert(u"split_m"_s, 1);
        normalize(s);
        s.rationale = u"y = A x is a stream over A: one warp per row with %1-element vector "
                      "loads of A and x, two vectors per lane in flight, 4 rows per block."_s.arg(
                          s.vectorWidth);
        return s;
    }
    s.warps = 8;
    s.params.insert(u"vectors_per_thread"_s, 4);
    // Enough blocks for about four waves of 8-warp blocks.
    const qint64 columnBlocks =
        std::max<qint64>(1, (task.n + 32 * s.vectorWidth - 1) / (32 * s.vectorWidth));
    int k = 1;
    while (k < 32 && columnBlocks * k < 4LL * std::max(device.smCount, 1) &&
           task.m / (k * 2) >= 256)
        k *= 2;
    s.params.insert(u"split_m"_s, k);
    normalize(s);
    s.rationale = u"y = A^T x: lanes on neighbouring %1-element vectors of a row of A "
                  "(coalesced), 8 warps walking rows with 4 rows in flight; %2 column blocks x "
                  "split_m %3 row ranges fill the GPU, partial sums added by a second kernel."_s
                      .arg(s.vectorWidth)
                      .arg(columnBlocks)
                      .arg(k);
    return s;
}

QString GemvFamily::generate(const Strategy& s, const Task& task) const {
    using gemmcodegen::render;
    const bool t = transposed(task);
    const int k = split(s);
    QStringList header{
        u"Kevolve built-in kernel, family gemv (generated; edit freely)."_s,
        u"Task: %1 (%2)."_s.arg(task.name, task.summary()),
        t ? u"Strategy: y = A^T x; blocks of %1 warps own %2 columns and one of %3 row ranges; "
            "%4-element loads of A, %5 rows in flight per warp; %6."_s.arg(s.warps)
                .arg(32 * s.vectorWidth)
                .arg(k)
                .arg(s.vectorWidth)
                .arg(vpt(s))
                .arg(k > 1 ? u"fp32 partials in the workspace, summed by gemvFinish"_s
                           : u"each block writes its columns of y"_s)
          : u"Strategy: y = A x; one warp per row (%1 per block), %2-element loads of A and x, "
            "%3 vectors per lane in flight, fp32 accumulation and a shuffle reduction."_s
                .arg(s.warps)
                .arg(s.vectorWidth)
                .arg(vpt(s)),
    };
    if (!s.rationale.isEmpty()) {
        header << u"Rationale:"_s;
        for (const QString& line : gemmcodegen::wrapText(s.rationale))
            header << u"  "_s + line;
    }
    QString kernel;
    QString launch;
    const QString checks = launchChecks(task, u"KEVOLVE_OP_GEMV"_s);
    if (!t) {
        kernel = QString::fromUtf16(kRows);
        launch = render(kRowsLaunch, {{u"CHECKS"_s, checks}});
    } else {
        kernel = render(
            kColumns,
            {{u"SPLIT"_s, QString::number(k)},
             {u"SPLIT_WHY"_s, k > 1 ? u"by gemvFinish"_s : u"(one range: no second kernel)"_s},
             {u"OUT_PARAM"_s,
              k > 1 ? u"float* __restrict__ partial"_s : u"ElemY* __restrict__ y"_s},
             {u"STORE"_s, k > 1 ? u"partial[blockIdx.y * N + c] = s;"_s : u"fromFloat(s, y[c]);"_s},
             {u"FINISH"_s, k > 1 ? QString::fromUtf16(kFinish) : QString()}});
        const QString body =
            k > 1
                ? u"    if (args->workspace_bytes < kevolve_workspace_bytes(args) || "
                  u"!args->workspace)\n"
                  "        return 7;\n"
                  "    float* partial = static_cast<float*>(args->workspace);\n"
                  "    gemvColumns<<<dim3(static_cast<unsigned>(columnBlocks), SPLIT), THREADS, 0, "
                  "stream>>>(\n"
                  "        static_cast<const ElemA*>(args->inputs[0].data),\n"
                  "        static_cast<const ElemX*>(args->inputs[1].data), partial, M, N, lda);\n"
                  "    const long long finishBlocks = min((N + 255) / 256, 65536LL);\n"
                  "    gemvFinish<<<finishBlocks, 256, 0, stream>>>(\n"
                  "        partial, static_cast<ElemY*>(args->outputs[0].data), N);"_s
                : u"    gemvColumns<<<dim3(static_cast<unsigned>(columnBlocks), SPLIT), THREADS, "
                  u"0, stream>>>(\n"
                  "        static_cast<const ElemA*>(args->inputs[0].data),\n"
                  "        static_cast<const ElemX*>(args->inputs[1].data),\n"
                  "        static_cast<ElemY*>(args->outputs[0].data), M, N, lda);"_s;
        launch = render(
            kColumnsLaunch,
            {{u"CHECKS"_s, checks},
             {u"WORKSPACE"_s, k > 1 ? u"static_cast<uint64_t>(SPLIT) * static_cast<uint64_t>("
                                      "KEVOLVE_COLS(args)) * sizeof(float)"_s
                                    : u"0; // one row range: no partial sums"_s},
             {u"LAUNCH_BODY"_s, body}});
    }
    const QStringList dtypes = tensorDtypes(task);
    return render(kPrelude,
                  {{u"HEADER"_s, gemmcodegen::headerComment(header)},
                   {u"INCLUDES"_s, dtypeIncludes(dtypes)},
                   {u"A_T"_s, gemmcodegen::cudaType(task.dtypeOf(u"A"_s))},
                   {u"X_T"_s, gemmcodegen::cudaType(task.dtypeOf(u"x"_s))},
                   {u"Y_T"_s, gemmcodegen::cudaType(task.dtypeOf(u"y"_s))},
                   {u"ELEMENTS"_s, elementHelpers(dtypes, s.vectorWidth)},
                   {u"WARPS"_s, QString::number(s.warps)},
                   {u"VPT"_s, QString::number(vpt(s))},
                   {u"VPT_WHY"_s, t ? u"rows of A each warp has in flight per step"_s
                                    : u"vectors of A and x per lane in flight per step"_s},
                   {u"KERNEL"_s, kernel},
                   {u"LAUNCH"_s, launch}});
}

} // namespace kev
