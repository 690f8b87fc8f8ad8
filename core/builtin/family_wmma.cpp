#include "builtin/family_wmma.h"

#include "builtin/gemmcodegen.h"

#include <QJsonArray>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace kev {

namespace {

constexpr auto kTemplate = uR"CU(${HEADER}
#include <kevolve/abi.h>
${INCLUDES}#include <mma.h>
#include <stdint.h>

namespace {

using namespace nvcuda;
using Input = ${IN_T};
using Output = ${OUT_T};

constexpr int BLOCK_M = ${BLOCK_M};
constexpr int BLOCK_N = ${BLOCK_N};
constexpr int BLOCK_K = ${BLOCK_K};
constexpr int WARPS_M = ${WARPS_M};
constexpr int WARPS_N = ${WARPS_N};
constexpr int STAGES = ${STAGES}; // shared-memory buffers of A and B k-tiles
constexpr int WARP_M = BLOCK_M / WARPS_M;
constexpr int WARP_N = BLOCK_N / WARPS_N;
constexpr int THREADS = WARPS_M * WARPS_N * 32;
constexpr int FRAGS_M = WARP_M / 16; // 16x16 accumulator fragments per warp
constexpr int FRAGS_N = WARP_N / 16;

// Tiles are row-major as in global memory, each row 8 elements (16 bytes) longer than its data so
// that the rows a fragment load reads start in different banks. The row lengths stay multiples of
// 8 elements (wmma's ldm rule) and every fragment starts 32-byte aligned (16-row and 16-column
// steps).
constexpr int A_ROW = BLOCK_K + 8;
constexpr int B_ROW = BLOCK_N + 8;
constexpr int A_STAGE = BLOCK_M * A_ROW; // elements
constexpr int B_STAGE = BLOCK_K * B_ROW;
constexpr int A_CHUNKS_PER_ROW = BLOCK_K / 8; // 16-byte chunks
constexpr int B_CHUNKS_PER_ROW = BLOCK_N / 8;
constexpr int A_CHUNKS = BLOCK_M * A_CHUNKS_PER_ROW / THREADS; // per thread
constexpr int B_CHUNKS = BLOCK_K * B_CHUNKS_PER_ROW / THREADS;
static_assert(BLOCK_M * A_CHUNKS_PER_ROW % THREADS == 0, "A chunks must split evenly");
static_assert(BLOCK_K * B_CHUNKS_PER_ROW % THREADS == 0, "B chunks must split evenly");

// After the main loop the tiles' memory becomes the epilogue's scratch: one 16x16 fp32 fragment
// per warp, rows padded by 4 floats.
constexpr int SCRATCH_ROW = 16 + 4;
constexpr int SCRATCH = 16 * SCRATCH_ROW; // floats per warp
constexpr int PIPE_BYTES = STAGES * (A_STAGE + B_STAGE) * 2;
constexpr int SCRATCH_BYTES = WARPS_M * WARPS_N * SCRATCH * 4;
constexpr int SMEM_BYTES = PIPE_BYTES > SCRATCH_BYTES ? PIPE_BYTES : SCRATCH_BYTES;
static_assert(SMEM_BYTES <= 48 * 1024, "static shared memory is limited to 48 KiB");

using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, Input, wmma::row_major>;
using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 16, Input, wmma::row_major>;
using FragC = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;

// A 16-byte cp.async. When `valid` is false the source size is 0: nothing is read and the
// destination is zero-filled, so rows past M, columns past N and k past K contribute zeros.
__device__ __forceinline__ void cpAsync16(void* dst, const void* src, bool valid)
{
    const uint32_t address = static_cast<uint32_t>(__cvta_generic_to_shared(dst));
    const int srcBytes = valid ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(address), "l"(src),
                 "r"(srcBytes)
                 : "memory");
}

__device__ __forceinline__ void cpAsyncCommit()
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

template <int Pending>
__device__ __forceinline__ void cpAsyncWait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

${OUTPUT_HELPERS}
// Issues the copies of the k-tile at k0 into one buffer. Consecutive threads take consecutive
// 16-byte chunks of a row, so a warp reads whole lines. K and N are multiples of 8, so a chunk is
// wholly inside or wholly outside.
__device__ __forceinline__ void loadTile(Input* sA, Input* sB, const Input* __restrict__ A,
                                         const Input* __restrict__ B, int M, int N, int K,
                                         long long lda, long long ldb, int rowBase, int colBase,
                                         int k0, int tid)
{
#pragma unroll
    for (int i = 0; i < A_CHUNKS; ++i) {
        const int id = tid + i * THREADS;
        const int row = id / A_CHUNKS_PER_ROW;
        const int chunk = id % A_CHUNKS_PER_ROW;
        const int gRow = rowBase + row;
        const int gK = k0 + chunk * 8;
        const bool valid = gRow < M && gK < K;
        cpAsync16(sA + row * A_ROW + chunk * 8, valid ? A + gRow * lda + gK : A, valid);
    }
#pragma unroll
    for (int i = 0; i < B_CHUNKS; ++i) {
        const int id = tid + i * THREADS;
        const int row = id / B_CHUNKS_PER_ROW; // k within the tile
        const int chunk = id % B_CHUNKS_PER_ROW;
        const int gK = k0 + row;
        const int gCol = colBase + chunk * 8;
        const bool valid = gK < K && gCol < N;
        cpAsync16(sB + row * B_ROW + chunk * 8, valid ? B + gK * ldb + gCol : B, valid);
    }
}

// One k-tile of the warp's MMAs: per 16-deep step, the warp's A fragments once, then each B
// fragment against all of them (so only one B fragment is live at a time).
__device__ __forceinline__ void computeTile(const Input* sA, const Input* sB,
                                            FragC (&acc)[FRAGS_M][FRAGS_N], int warpRow,
                                            int warpCol)
{
#pragma unroll
    for (int ks = 0; ks < BLOCK_K; ks += 16) {
        FragA a[FRAGS_M];
#pragma unroll
        for (int i = 0; i < FRAGS_M; ++i)
            wmma::load_matrix_sync(a[i], sA + (warpRow + i * 16) * A_ROW + ks, A_ROW);
#pragma unroll
        for (int j = 0; j < FRAGS_N; ++j) {
            FragB b;
            wmma::load_matrix_sync(b, sB + ks * B_ROW + warpCol + j * 16, B_ROW);
#pragma unroll
            for (int i = 0; i < FRAGS_M; ++i)
                wmma::mma_sync(acc[i][j], a[i], b, acc[i][j]);
        }
    }
}

__global__ void __launch_bounds__(THREADS)
    gemmWmma(const Input* __restrict__ A, const Input* __restrict__ B, Output* __restrict__ C,
             int M, int N, int K, long long lda, long long ldb, long long ldc, float alpha,
             float beta)
{
    __shared__ __align__(128) unsigned char smem[SMEM_BYTES];
    Input* sA = reinterpret_cast<Input*>(smem);
    Input* sB = sA + STAGES * A_STAGE;

    // Row-major raster over the output tiles on a 1-D grid (no 65535 limit on tall outputs).
    const int tilesN = (N + BLOCK_N - 1) / BLOCK_N;
    const int rowBase = (blockIdx.x / tilesN) * BLOCK_M;
    const int colBase = (blockIdx.x % tilesN) * BLOCK_N;
    const int tid = threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const int warpRow = (warp / WARPS_N) * WARP_M;
    const int warpCol = (warp % WARPS_N) * WARP_N;

    FragC acc[FRAGS_M][FRAGS_N];
#pragma unroll
    for (int i = 0; i < FRAGS_M; ++i) {
#pragma unroll
        for (int j = 0; j < FRAGS_N; ++j)
            wmma::fill_fragment(acc[i][j], 0.0f);
    }

    const int numKTiles = (K + BLOCK_K - 1) / BLOCK_K;
${MAIN_LOOP}
    // Epilogue: the last barrier of the loop ended every read of the tiles, so each warp reuses
    // its slice as scratch. A fragment's element layout is opaque: it is stored row-major to the
    // scratch, then lane l copies row l / 2, columns 8 * (l % 2) .. + 7 to C as four column pairs,
    // inside M and N only, converted to C's type.
    float* scratch = reinterpret_cast<float*>(smem) + warp * SCRATCH;
    const int r = lane >> 1;
    const int c = (lane & 1) * 8;
#pragma unroll
    for (int i = 0; i < FRAGS_M; ++i) {
#pragma unroll
        for (int j = 0; j < FRAGS_N; ++j) {
            wmma::store_matrix_sync(scratch, acc[i][j], SCRATCH_ROW, wmma::mem_row_major);
            __syncwarp();
            const int row = rowBase + warpRow + i * 16 + r;
            const int col = colBase + warpCol + j * 16 + c;
            const float* src = scratch + r * SCRATCH_ROW + c;
#pragma unroll
            for (int p = 0; p < 8; p += 2)
                epiloguePair(C, ldc, M, N, row, col + p, src[p], src[p + 1], alpha, beta);
            __syncwarp(); // the next fragment overwrites the scratch
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
    const unsigned tiles = static_cast<unsigned>(((M + BLOCK_M - 1) / BLOCK_M) *
                                                 ((N + BLOCK_N - 1) / BLOCK_N));
    gemmWmma<<<tiles, THREADS, 0, stream>>>(
        static_cast<const Input*>(args->inputs[0].data),
        static_cast<const Input*>(args->inputs[1].data), static_cast<Output*>(args->outputs[0].data),
        M, N, K, KEVOLVE_GEMM_LDA(args), KEVOLVE_GEMM_LDB(args), KEVOLVE_GEMM_LDC(args),
        static_cast<float>(args->scalars[0]), static_cast<float>(args->scalars[1]));
    return cudaGetLastError() == cudaSuccess ? 0 : 5;
}
)CU";

constexpr auto kSingleBuffer =
    uR"CU(    // One buffer: load a k-tile, wait for it, multiply, and let everyone finish reading before the
    // next load overwrites it.
    for (int t = 0; t < numKTiles; ++t) {
        loadTile(sA, sB, A, B, M, N, K, lda, ldb, rowBase, colBase, t * BLOCK_K, tid);
        cpAsyncCommit();
        cpAsyncWait<0>();
        __syncthreads();
        computeTile(sA, sB, acc, warpRow, warpCol);
        __syncthreads();
    }
)CU";

constexpr auto kDoubleBuffer =
    uR"CU(    // Two buffers: k-tile t + 1 is copied into one while k-tile t is multiplied from the other.
    if (numKTiles > 0)
        loadTile(sA, sB, A, B, M, N, K, lda, ldb, rowBase, colBase, 0, tid);
    cpAsyncCommit();
    for (int t = 0; t < numKTiles; ++t) {
        const int buf = t & 1;
        // The other buffer was last read in iteration t - 1, which ended with a barrier.
        if (t + 1 < numKTiles)
            loadTile(sA + (buf ^ 1) * A_STAGE, sB + (buf ^ 1) * B_STAGE, A, B, M, N, K, lda, ldb,
                     rowBase, colBase, (t + 1) * BLOCK_K, tid);
        // Committed even when empty, so that waiting for all but the newest group always means
        // "k-tile t has landed".
        cpAsyncCommit();
        cpAsyncWait<1>();
        __syncthreads();
        computeTile(sA + buf * A_STAGE, sB + buf * B_STAGE, acc, warpRow, warpCol);
        __syncthreads();
    }
)CU";

constexpr int kBlockK = 32;

int warpsN(int warps, int blockM, int blockN) {
    return warps == 8 && blockN >= blockM ? 4 : 2;
}

int fragsM(const Strategy& s) {
    return s.warpM > 0 ? s.warpM / 16 : 0;
}

int fragsN(const Strategy& s) {
    return s.warpN > 0 ? s.warpN / 16 : 0;
}

// Accumulators (8 floats per fragment and lane), the warp's A fragments and one B fragment (8
// registers each), and about 40 for addresses, loop counters and the epilogue.
int registerEstimate(const Strategy& s) {
    return fragsM(s) * fragsN(s) * 8 + fragsM(s) * 8 + 8 + 40;
}

qint64 smemBytes(const Strategy& s) {
    const qint64 pipe = qint64(s.stages) *
                        (qint64(s.blockM) * (s.blockK + 8) + qint64(s.blockK) * (s.blockN + 8)) * 2;
    const qint64 scratch = qint64(s.warps) * 16 * 20 * 4;
    return std::max(pipe, scratch);
}

QJsonArray ints(std::initializer_list<int> values) {
    QJsonArray out;
    for (int v : values)
        out.append(v);
    return out;
}

} // namespace

QString WmmaFamily::id() const {
    return u"wmma"_s;
}

QString WmmaFamily::description() const {
    return u"Tensor cores through nvcuda::wmma 16x16x16 fragments (f16 or bf16 in, fp32 "
           "accumulate), A and B row-major: block tiles of 64 or 128 rows and columns with BK 32, "
           "staged by cp.async into shared memory with rows padded by 16 bytes (zero-filled "
           "outside M, N and K), single or double buffered; 4 or 8 warps, each holding a warp "
           "tile of accumulator fragments; an epilogue through a per-warp shared scratch that "
           "writes only inside M x N, converting to C's type. Not for f32 inputs."_s;
}

bool WmmaFamily::supports(const Task& task, const DeviceInfo& device) const {
    const bool dtypes = (task.a == u"f16" || task.a == u"bf16") && task.b == task.a &&
                        (task.c == u"f32" || task.c == u"f16" || task.c == u"bf16") &&
                        task.accumulate == u"f32";
    return task.op == u"gemm" && dtypes && task.layoutA == u"row" && task.layoutB == u"row" &&
           task.layoutC == u"row" && device.ccMajor >= 8 && task.leadingDimMultiple % 8 == 0;
}

QVector<ParameterSpec> WmmaFamily::parameters() const {
    return {
        fieldParameter(u"blockM"_s, u"Rows of C per thread block"_s, ints({64, 128}),
                       &Strategy::blockM),
        fieldParameter(u"blockN"_s, u"Columns of C per thread block"_s, ints({64, 128}),
                       &Strategy::blockN),
        fieldParameter(u"warps"_s, u"Warps per block (the warp tile follows)"_s, ints({4, 8}),
                       &Strategy::warps),
        fieldParameter(u"stages"_s, u"Shared-memory buffers: 1 or 2 (double buffering)"_s,
                       ints({1, 2}), &Strategy::stages),
    };
}

void WmmaFamily::normalize(Strategy& s) const {
    s.family = id();
    s.mma = u"wmma"_s;
    s.blockK = kBlockK;
    s.vectorWidth = 8;
    s.smemLayout = u"padded"_s;
    s.smemPaddingBytes = 16;
    s.swizzleBytes = 0;
    s.splitK = 1;
    s.raster = u"row"_s;
    s.groupSize = 1;
    s.epilogue = u"smem"_s;
    if (s.warps == 4 || s.warps == 8) {
        const int wn = warpsN(s.warps, s.blockM, s.blockN);
        s.warpM = s.blockM / (s.warps / wn);
        s.warpN = s.blockN / wn;
    }
}

QStringList WmmaFamily::constraints(const Strategy& s, const Task& task,
                                    const DeviceInfo& device) const {
    QStringList problems;
    if (!supports(task, device))
        problems
            << u"family wmma needs a row-major GEMM with f16 or bf16 A and B of the same type, "
               "f32 accumulation, leading dimensions a multiple of 8 and an sm_80 or newer "
               "GPU (task %1, device %2 sm_%3%4)"_s.arg(task.summary(), device.name)
                   .arg(device.ccMajor)
                   .arg(device.ccMinor);
    if (s.family != id())
        problems << u"family: \"%1\" is not %2"_s.arg(s.family, id());
    if ((s.blockM != 64 && s.blockM != 128) || (s.blockN != 64 && s.blockN != 128))
        problems << u"block tile %1x%2: blockM and blockN must each be 64 or 128"_s.arg(s.blockM)
                        .arg(s.blockN);
    if (s.blockK != kBlockK)
        problems << u"blockK=%1: this family stages k-tiles of 32"_s.arg(s.blockK);
    if (s.warps != 4 && s.warps != 8)
        problems << u"warps=%1: must be 4 or 8"_s.arg(s.warps);
    if (s.stages != 1 && s.stages != 2)
        problems << u"stages=%1: 1 (single buffer) or 2 (double buffering)"_s.arg(s.stages);
    if (s.warpM <= 0 || s.warpN <= 0 || s.warpM % 16 != 0 || s.warpN % 16 != 0) {
        problems << u"warpM=%1, warpN=%2: each must be a positive multiple of the 16x16 "
                    "fragment"_s.arg(s.warpM)
                        .arg(s.warpN);
        return problems;
    }
    if (s.blockM % s.warpM != 0 || s.blockN % s.warpN != 0)
        problems << u"warp tile %1x%2 does not divide block tile %3x%4"_s.arg(s.warpM)
                        .arg(s.warpN)
                        .arg(s.blockM)
                        .arg(s.blockN);
    else if (s.warps != (s.blockM / s.warpM) * (s.blockN / s.warpN))
        problems << u"warps=%1 but block tile %2x%3 over warp tile %4x%5 makes %6 warps"_s
                        .arg(s.warps)
                        .arg(s.blockM)
                        .arg(s.blockN)
                        .arg(s.warpM)
                        .arg(s.warpN)
                        .arg((s.blockM / s.warpM) * (s.blockN / s.warpN));
    const int threads = s.warps * 32;
    if (threads > 0 && threads <= 1024) {
        const qint64 aChunks = qint64(s.blockM) * s.blockK / 8;
        const qint64 bChunks = qint64(s.blockK) * s.blockN / 8;
        if (aChunks % threads != 0 || bChunks % threads != 0)
            problems << u"tile loads: %1 A chunks and %2 B chunks of 16 bytes do not split evenly "
                        "over %3 threads"_s.arg(aChunks)
                            .arg(bChunks)
                            .arg(threads);
    }
    const qint64 smem = smemBytes(s);
    if (smem > 48 * 1024)
        problems << u"static shared memory %1 B exceeds 49152 B (blockM=%2, blockN=%3, stages=%4)"_s
                        .arg(smem)
                        .arg(s.blockM)
                        .arg(s.blockN)
                        .arg(s.stages);
    else if (smem > device.smemPerBlockOptin)
        problems << u"shared memory %1 B per block exceeds the device's limit %2 B"_s.arg(smem).arg(
            device.smemPerBlockOptin);
    const int regs = registerEstimate(s);
    if (regs > 255)
        problems << u"about %1 registers per thread for warp tile %2x%3: more than 255, it would "
                    "spill"_s.arg(regs)
                        .arg(s.warpM)
                        .arg(s.warpN);
    else if (qint64(regs) * threads > device.regsPerSm)
        problems << u"about %1 registers x %2 threads exceeds the %3 registers of an SM"_s.arg(regs)
                        .arg(threads)
                        .arg(device.regsPerSm);
    return problems;
}

ResourceEstimate WmmaFamily::resources(const Strategy& s, const Task&,
                                       const DeviceInfo& device) const {
    ResourceEstimate r = estimateResources(s.warps * 32, smemBytes(s), registerEstimate(s), device);
    return r;
}

Strategy WmmaFamily::defaultStrategy(const Task& task, const DeviceInfo& device) const {
    Strategy s;
    s.family = id();
    s.stages = 2;
    const int sms = std::max(device.smCount, 1);
    const qint64 tiles128 = ((task.m + 127) / 128) * ((task.n + 127) / 128);
    if (tiles128 >= sms) {
        s.blockM = 128;
        s.blockN = 128;
        s.warps = 8;
        s.rationale = u"Large output (%1 tiles of 128x128 for %2 SMs): 8 warps of 64x32 wmma "
                      "16x16x16 fragments, BK 32 double-buffered with cp.async into padded "
                      "shared memory."_s.arg(tiles128)
                          .arg(sms);
    } else {
        s.blockM = 64;
        s.blockN = 64;
        s.warps = 4;
        s.rationale = u"Small output (%1 tiles of 128x128 for %2 SMs): 64x64 tiles with 4 warps "
                      "of 32x32 so more blocks run; BK 32 double-buffered."_s.arg(tiles128)
                          .arg(sms);
    }
    normalize(s);
    return s;
}

QString WmmaFamily::generate(const Strategy& s, const Task& task) const {
    using namespace gemmcodegen;
    const int wm = s.blockM / s.warpM;
    const int wn = s.blockN / s.warpN;
    QStringList header{
        u"Kevolve built-in kernel, family wmma (generated; edit freely)."_s,
        u"Task: %1 (%2)."_s.arg(task.name, task.summary()),
        u"Strategy: block %1x%2x%3, %4 warps (%5x%6) of %7x%8, wmma 16x16x16 %9 -> f32,"_s
            .arg(s.blockM)
            .arg(s.blockN)
            .arg(s.blockK)
            .arg(s.warps)
            .arg(wm)
            .arg(wn)
            .arg(s.warpM)
            .arg(s.warpN)
            .arg(task.a),
        u"  %1, rows padded by 16 bytes, epilogue through shared memory, C written as %2."_s.arg(
            s.stages == 2 ? u"double-buffered cp.async"_s : u"single-buffered cp.async"_s, task.c),
    };
    if (!s.rationale.isEmpty()) {
        header << u"Rationale:"_s;
        for (const QString& line : wrapText(s.rationale))
            header << u"  "_s + line;
    }
    return render(
        kTemplate,
        {
            {u"HEADER"_s, headerComment(header)},
            {u"INCLUDES"_s, dtypeIncludes(task)},
            {u"IN_T"_s, cudaType(task.a)},
            {u"OUT_T"_s, cudaType(task.c)},
            {u"BLOCK_M"_s, QString::number(s.blockM)},
            {u"BLOCK_N"_s, QString::number(s.blockN)},
            {u"BLOCK_K"_s, QString::number(s.blockK)},
            {u"WARPS_M"_s, QString::number(wm)},
            {u"WARPS_N"_s, QString::number(wn)},
            {u"STAGES"_s, QString::number(s.stages)},
            {u"OUTPUT_HELPERS"_s, outputHelpers(task.c)},
            {u"MAIN_LOOP"_s, QString::fromUtf16(s.stages == 2 ? kDoubleBuffer : kSingleBuffer)},
            {u"CHECKS"_s, launchChecks(task)},
        });
}

} // namespace kev
