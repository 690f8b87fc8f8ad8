#include "builtin/family_mmasync.h"

#include "builtin/gemmcodegen.h"

#include <QJsonArray>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace kev {

namespace {

// The main template. The layout, tile mapping, K range, epilogue and launch are spliced in for
// the chosen configuration, so the file has no branches for others.
constexpr auto kKernelTemplate = uR"CU(${HEADER}
#include <kevolve/abi.h>
${INCLUDES}#include <stdint.h>

namespace {

using Input = ${IN_T};
using Output = ${OUT_T};

constexpr int BLOCK_M = ${BLOCK_M};
constexpr int BLOCK_N = ${BLOCK_N};
constexpr int BLOCK_K = ${BLOCK_K};
constexpr int WARP_M = ${WARP_M};
constexpr int WARP_N = ${WARP_N};
constexpr int STAGES = ${STAGES};
${EXTRA_CONSTANTS}
constexpr int WARPS_M = BLOCK_M / WARP_M;
constexpr int WARPS_N = BLOCK_N / WARP_N;
constexpr int THREADS = WARPS_M * WARPS_N * 32;
constexpr int MMA_TILES_M = WARP_M / 16; // m16n8k16 tiles per warp
constexpr int MMA_TILES_N = WARP_N / 8;

// Shared memory holds STAGES copies of an A tile (BLOCK_M x BLOCK_K) and a B tile
// (BLOCK_K x BLOCK_N), both row-major as in global memory, moved in 16-byte chunks of 8 elements.
constexpr int A_ROW = ${A_ROW}; // elements per A tile row in shared memory
constexpr int B_ROW = ${B_ROW}; // elements per B tile row in shared memory
constexpr int A_CHUNKS_PER_ROW = BLOCK_K / 8;
constexpr int B_CHUNKS_PER_ROW = BLOCK_N / 8;
constexpr int A_STAGE_BYTES = BLOCK_M * A_ROW * 2;
constexpr int B_STAGE_BYTES = BLOCK_K * B_ROW * 2;
constexpr int SMEM_BYTES = STAGES * (A_STAGE_BYTES + B_STAGE_BYTES);
constexpr int A_CHUNKS_PER_THREAD = BLOCK_M * A_CHUNKS_PER_ROW / THREADS;
constexpr int B_CHUNKS_PER_THREAD = BLOCK_K * B_CHUNKS_PER_ROW / THREADS;
static_assert(BLOCK_M * A_CHUNKS_PER_ROW % THREADS == 0, "A chunks must split evenly over threads");
static_assert(BLOCK_K * B_CHUNKS_PER_ROW % THREADS == 0, "B chunks must split evenly over threads");
static_assert(MMA_TILES_N % 2 == 0, "B fragments are loaded two n8 tiles at a time");

${LAYOUT}
__device__ __forceinline__ uint32_t sharedAddress(const void* p)
{
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// A 16-byte cp.async. When `valid` is false the source size is 0: nothing is read and the
// destination is zero-filled, so rows past M and k past K contribute zeros to the products.
__device__ __forceinline__ void cpAsync16(uint32_t dst, const void* src, bool valid)
{
    const int srcBytes = valid ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
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

__device__ __forceinline__ void ldmatrixX4(uint32_t (&r)[4], uint32_t address)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address)
                 : "memory");
}

__device__ __forceinline__ void ldmatrixX4Trans(uint32_t (&r)[4], uint32_t address)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address)
                 : "memory");
}

// d += a * b for one m16n8k16 tile with fp32 accumulators.
__device__ __forceinline__ void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                         uint32_t b1)
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.${MMA_TYPE}.${MMA_TYPE}.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

${OUTPUT_HELPERS}
// Issues the cp.async copies of the k-tile starting at k0 into one stage. Consecutive threads take
// consecutive 16-byte chunks of a row, so each warp reads whole 128-byte lines.
__device__ __forceinline__ void loadTile(uint32_t sA, uint32_t sB, const Input* __restrict__ A,
                                         const Input* __restrict__ B, int M, int N, int K,
                                         long long lda, long long ldb, int rowBase, int colBase,
                                         int k0, int tid)
{
#pragma unroll
    for (int i = 0; i < A_CHUNKS_PER_THREAD; ++i) {
        const int chunkId = tid + i * THREADS;
        const int row = chunkId / A_CHUNKS_PER_ROW;
        const int chunk = chunkId % A_CHUNKS_PER_ROW;
        const int gRow = rowBase + row;
        const int gK = k0 + chunk * 8;
        // K is a multiple of 8, so a chunk lies wholly inside K or wholly outside.
        const bool valid = gRow < M && gK < K;
        cpAsync16(sA + aOffsetBytes(row, chunk), valid ? A + gRow * lda + gK : A, valid);
    }
#pragma unroll
    for (int i = 0; i < B_CHUNKS_PER_THREAD; ++i) {
        const int chunkId = tid + i * THREADS;
        const int row = chunkId / B_CHUNKS_PER_ROW; // k within the tile
        const int chunk = chunkId % B_CHUNKS_PER_ROW;
        const int gK = k0 + row;
        const int gCol = colBase + chunk * 8;
        // N is a multiple of 8 as well.
        const bool valid = gK < K && gCol < N;
        cpAsync16(sB + bOffsetBytes(row, chunk), valid ? B + gK * ldb + gCol : B, valid);
    }
}

// One k-tile of this warp's MMAs. For each 16-wide k step the warp's A and B fragments come from
// shared memory through ldmatrix, then every (m16, n8) tile of the warp tile is updated.
__device__ __forceinline__ void computeTile(uint32_t sA, uint32_t sB,
                                            float (&acc)[MMA_TILES_M][MMA_TILES_N][4],
                                            int warpRow, int warpCol, int lane)
{
#pragma unroll
    for (int ks = 0; ks < BLOCK_K / 16; ++ks) {
        uint32_t a[MMA_TILES_M][4];
        uint32_t b[MMA_TILES_N][2];
#pragma unroll
        for (int mt = 0; mt < MMA_TILES_M; ++mt) {
            // Lanes 0-15 address rows 0-15 at k 0-7 of the step, lanes 16-31 the same rows at
            // k 8-15: the four 8x8 matrices arrive as registers a0..a3 of the A fragment.
            const int row = warpRow + mt * 16 + (lane & 15);
            const int chunk = ks * 2 + (lane >> 4);
            ldmatrixX4(a[mt], sA + aOffsetBytes(row, chunk));
        }
#pragma unroll
        for (int np = 0; np < MMA_TILES_N / 2; ++np) {
            // B is (k, n) row-major in shared memory; .trans gives each lane the k-pairs of one
            // column, as the "col" operand wants. Lanes 0-15 address k 0-15 of columns n..n+7,
            // lanes 16-31 those of columns n+8..n+15: two n8 tiles per ldmatrix.
            const int row = ks * 16 + (lane & 15);
            const int chunk = (warpCol + np * 16) / 8 + (lane >> 4);
            uint32_t r[4];
            ldmatrixX4Trans(r, sB + bOffsetBytes(row, chunk));
            b[2 * np][0] = r[0];
            b[2 * np][1] = r[1];
            b[2 * np + 1][0] = r[2];
            b[2 * np + 1][1] = r[3];
        }
#pragma unroll
        for (int mt = 0; mt < MMA_TILES_M; ++mt) {
#pragma unroll
            for (int nt = 0; nt < MMA_TILES_N; ++nt)
                mma16816(acc[mt][nt], a[mt], b[nt][0], b[nt][1]);
        }
    }
}

__global__ void __launch_bounds__(THREADS)
    gemmMmaSync(const Input* __restrict__ A, const Input* __restrict__ B, ${KERNEL_OUT_PARAMS})
{
    extern __shared__ __align__(128) unsigned char smem[];
    const uint32_t sA = sharedAddress(smem);
    const uint32_t sB = sA + STAGES * A_STAGE_BYTES;

${TILE_MAPPING}
    const int rowBase = tileM * BLOCK_M;
    const int colBase = tileN * BLOCK_N;
    const int tid = threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const int warpRow = (warp / WARPS_N) * WARP_M;
    const int warpCol = (warp % WARPS_N) * WARP_N;

${K_RANGE}
    float acc[MMA_TILES_M][MMA_TILES_N][4] = {};

    // Prologue: STAGES - 1 k-tiles in flight. A group is committed even when empty so that
    // wait_group counts the same number of groups on every iteration.
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < numKTiles)
            loadTile(sA + s * A_STAGE_BYTES, sB + s * B_STAGE_BYTES, A, B, M, N, K, lda, ldb,
                     rowBase, colBase, (kTileBegin + s) * BLOCK_K, tid);
        cpAsyncCommit();
    }

    int readStage = 0;
    int writeStage = STAGES - 1;
    for (int t = 0; t < numKTiles; ++t) {
        // This thread's copies of k-tile t have landed; the barrier makes everyone's visible and
        // frees the stage read in iteration t - 1, which is the one refilled now.
        cpAsyncWait<STAGES - 2>();
        __syncthreads();
        const int next = t + STAGES - 1;
        if (next < numKTiles)
            loadTile(sA + writeStage * A_STAGE_BYTES, sB + writeStage * B_STAGE_BYTES, A, B, M, N,
                     K, lda, ldb, rowBase, colBase, (kTileBegin + next) * BLOCK_K, tid);
        cpAsyncCommit();
        computeTile(sA + readStage * A_STAGE_BYTES, sB + readStage * B_STAGE_BYTES, acc, warpRow,
                    warpCol, lane);
        readStage = readStage + 1 == STAGES ? 0 : readStage + 1;
        writeStage = writeStage + 1 == STAGES ? 0 : writeStage + 1;
    }
    cpAsyncWait<0>();

    // Each lane holds, per m16n8 tile, columns 2 * (lane % 4) and +1 of rows lane / 4 and
    // lane / 4 + 8.
#pragma unroll
    for (int mt = 0; mt < MMA_TILES_M; ++mt) {
#pragma unroll
        for (int nt = 0; nt < MMA_TILES_N; ++nt) {
            const int row = rowBase + warpRow + mt * 16 + (lane >> 2);
            const int col = colBase + warpCol + nt * 8 + (lane & 3) * 2;
${EPILOGUE_STORES}
        }
    }
}
${REDUCE_KERNEL}
} // namespace
${LAUNCH})CU";

constexpr auto kSwizzledLayout =
    uR"CU(// XOR swizzle: an ldmatrix phase reads one 16-byte chunk from each of 8 consecutive rows. Chunk c
// of a row is stored at position c ^ f(row), so those 8 chunks fall in 8 different 16-byte bank
// groups. A 128-byte bank line holds ${A_ROWS_PER_LINE} A row(s) of ${A_ROW_BYTES} bytes; a B row is
// whole lines. cp.async writes through the same mapping.
__device__ __forceinline__ uint32_t aOffsetBytes(int row, int chunk)
{
    return static_cast<uint32_t>((row * A_ROW + ((chunk ^ ${A_XOR}) << 3)) * 2);
}

__device__ __forceinline__ uint32_t bOffsetBytes(int row, int chunk)
{
    return static_cast<uint32_t>((row * B_ROW + ((chunk ^ (row & 7)) << 3)) * 2);
}
)CU";

constexpr auto kPaddedLayout =
    uR"CU(// Padded rows: each row is 16 bytes longer than its data, so the 8 rows an ldmatrix phase reads
// start in 8 different 16-byte bank groups.
__device__ __forceinline__ uint32_t aOffsetBytes(int row, int chunk)
{
    return static_cast<uint32_t>((row * A_ROW + (chunk << 3)) * 2);
}

__device__ __forceinline__ uint32_t bOffsetBytes(int row, int chunk)
{
    return static_cast<uint32_t>((row * B_ROW + (chunk << 3)) * 2);
}
)CU";

constexpr auto kRowRaster = uR"CU(    // Row-major raster over the output tiles.
    const int tilesN = (N + BLOCK_N - 1) / BLOCK_N;
    const int tileM = blockIdx.x / tilesN;
    const int tileN = blockIdx.x % tilesN;)CU";

constexpr auto kGroupedRaster =
    uR"CU(    // Grouped raster: consecutive blocks walk down a column of GROUP_M tiles before moving right,
    // so the A rows and B columns that concurrently running blocks share stay in L2.
    const int tilesM = (M + BLOCK_M - 1) / BLOCK_M;
    const int tilesN = (N + BLOCK_N - 1) / BLOCK_N;
    const int perGroup = GROUP_M * tilesN;
    const int firstM = (blockIdx.x / perGroup) * GROUP_M;
    const int groupRows = min(tilesM - firstM, GROUP_M);
    const int inGroup = blockIdx.x % perGroup;
    const int tileM = firstM + inGroup % groupRows;
    const int tileN = inGroup / groupRows;)CU";

constexpr auto kWholeK = uR"CU(    const int kTileBegin = 0;
    const int numKTiles = (K + BLOCK_K - 1) / BLOCK_K;
)CU";

constexpr auto kSplitK =
    uR"CU(    // This block's share of K: k-tiles [kTileBegin, kTileBegin + numKTiles) of split blockIdx.z.
    // A split left with no k-tiles still writes its zero partials, so the workspace needs no
    // clearing.
    const int kTiles = (K + BLOCK_K - 1) / BLOCK_K;
    const int tilesPerSplit = (kTiles + SPLIT_K - 1) / SPLIT_K;
    const int kTileBegin = static_cast<int>(blockIdx.z) * tilesPerSplit;
    const int numKTiles = max(0, min(kTiles - kTileBegin, tilesPerSplit));
)CU";

constexpr auto kDirectStores =
    uR"CU(            epiloguePair(C, ldc, M, N, row, col, acc[mt][nt][0], acc[mt][nt][1], alpha, beta);
            epiloguePair(C, ldc, M, N, row + 8, col, acc[mt][nt][2], acc[mt][nt][3], alpha,
                         beta);)CU";

constexpr auto kPartialStores =
    uR"CU(            partialPair(slice, M, N, row, col, acc[mt][nt][0], acc[mt][nt][1]);
            partialPair(slice, M, N, row + 8, col, acc[mt][nt][2], acc[mt][nt][3]);)CU";

constexpr auto kPartialHelper = uR"CU(
// Split-K: each split writes its fp32 partial product of every element of its tile into its own
// M x N slice of the workspace (row stride N).
__device__ __forceinline__ void partialPair(float* __restrict__ slice, int M, int N, int row,
                                            int col, float x0, float x1)
{
    if (row >= M || col >= N)
        return;
    *reinterpret_cast<float2*>(slice + static_cast<long long>(row) * N + col) = make_float2(x0, x1);
}
)CU";

constexpr auto kReduceKernel = uR"CU(
// Sums the SPLIT_K partials of each element and writes C = alpha * sum + beta * C, four elements
// per thread: N is a multiple of 8, so four consecutive elements never straddle a row.
__global__ void __launch_bounds__(256)
    reduceSplits(const float* __restrict__ partials, Output* __restrict__ C, int M, int N,
                 long long ldc, float alpha, float beta)
{
    const long long sliceElems = static_cast<long long>(M) * N;
    const long long first = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * 4;
    if (first >= sliceElems)
        return;
    float4 sum = *reinterpret_cast<const float4*>(partials + first);
#pragma unroll
    for (int s = 1; s < SPLIT_K; ++s) {
        const float4 p = *reinterpret_cast<const float4*>(partials + s * sliceElems + first);
        sum.x += p.x;
        sum.y += p.y;
        sum.z += p.z;
        sum.w += p.w;
    }
    const int row = static_cast<int>(first / N);
    const int col = static_cast<int>(first % N);
    epiloguePair(C, ldc, M, N, row, col, sum.x, sum.y, alpha, beta);
    epiloguePair(C, ldc, M, N, row, col + 2, sum.z, sum.w, alpha, beta);
}
)CU";

constexpr auto kDirectLaunch = uR"CU(
extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream)
{
${CHECKS}
    const int M = static_cast<int>(KEVOLVE_GEMM_M(args));
    const int N = static_cast<int>(KEVOLVE_GEMM_N(args));
    const int K = static_cast<int>(KEVOLVE_GEMM_K(args));
    const auto* A = static_cast<const Input*>(args->inputs[0].data);
    const auto* B = static_cast<const Input*>(args->inputs[1].data);
    auto* C = static_cast<Output*>(args->outputs[0].data);
    const float alpha = static_cast<float>(args->scalars[0]);
    const float beta = static_cast<float>(args->scalars[1]);
    const unsigned tiles = static_cast<unsigned>(((M + BLOCK_M - 1) / BLOCK_M) *
                                                 ((N + BLOCK_N - 1) / BLOCK_N));
    if (cudaFuncSetAttribute(gemmMmaSync, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             SMEM_BYTES) != cudaSuccess)
        return 4;
    gemmMmaSync<<<tiles, THREADS, SMEM_BYTES, stream>>>(A, B, C, M, N, K, KEVOLVE_GEMM_LDA(args),
                                                        KEVOLVE_GEMM_LDB(args),
                                                        KEVOLVE_GEMM_LDC(args), alpha, beta);
    return cudaGetLastError() == cudaSuccess ? 0 : 5;
}
)CU";

constexpr auto kSplitLaunch = uR"CU(
// fp32 partials: SPLIT_K slices of M x N.
extern "C" KEVOLVE_EXPORT uint64_t kevolve_workspace_bytes(const KevolveArgs* args)
{
    return static_cast<uint64_t>(SPLIT_K) * static_cast<uint64_t>(KEVOLVE_GEMM_M(args)) *
           static_cast<uint64_t>(KEVOLVE_GEMM_N(args)) * sizeof(float);
}

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream)
{
${CHECKS}
    if (args->workspace == nullptr || args->workspace_bytes < kevolve_workspace_bytes(args))
        return 6;
    const int M = static_cast<int>(KEVOLVE_GEMM_M(args));
    const int N = static_cast<int>(KEVOLVE_GEMM_N(args));
    const int K = static_cast<int>(KEVOLVE_GEMM_K(args));
    const auto* A = static_cast<const Input*>(args->inputs[0].data);
    const auto* B = static_cast<const Input*>(args->inputs[1].data);
    auto* C = static_cast<Output*>(args->outputs[0].data);
    auto* partials = static_cast<float*>(args->workspace);
    const float alpha = static_cast<float>(args->scalars[0]);
    const float beta = static_cast<float>(args->scalars[1]);
    const unsigned tiles = static_cast<unsigned>(((M + BLOCK_M - 1) / BLOCK_M) *
                                                 ((N + BLOCK_N - 1) / BLOCK_N));
    if (cudaFuncSetAttribute(gemmMmaSync, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             SMEM_BYTES) != cudaSuccess)
        return 4;
    gemmMmaSync<<<dim3(tiles, 1, SPLIT_K), THREADS, SMEM_BYTES, stream>>>(
        A, B, partials, M, N, K, KEVOLVE_GEMM_LDA(args), KEVOLVE_GEMM_LDB(args));
    const long long quads = static_cast<long long>(M) * N / 4;
    reduceSplits<<<static_cast<unsigned>((quads + 255) / 256), 256, 0, stream>>>(
        partials, C, M, N, KEVOLVE_GEMM_LDC(args), alpha, beta);
    return cudaGetLastError() == cudaSuccess ? 0 : 5;
}
)CU";

// Registers per thread: the accumulators, one k step of fragments, and about 40 for addresses,
// loop counters and the epilogue.
int registerEstimate(const Strategy& s) {
    if (s.warpM <= 0 || s.warpN <= 0)
        return 0;
    return s.warpM * s.warpN / 32 + (s.warpM / 16) * 4 + (s.warpN / 8) * 2 + 40;
}

int aRowElems(const Strategy& s) {
    return s.smemLayout == u"padded" ? s.blockK + 8 : s.blockK;
}

int bRowElems(const Strategy& s) {
    return s.smemLayout == u"padded" ? s.blockN + 8 : s.blockN;
}

qint64 smemBytes(const Strategy& s) {
    return qint64(s.stages) * (qint64(s.blockM) * aRowElems(s) + qint64(s.blockK) * bRowElems(s)) *
           2;
}

QString num(qint64 v) {
    return QString::number(v);
}

QJsonArray ints(std::initializer_list<int> values) {
    QJsonArray out;
    for (int v : values)
        out.append(v);
    return out;
}

} // namespace

MmaSyncFamily::MmaSyncFamily(bool splitK)
    : m_splitK(splitK) {}

QString MmaSyncFamily::id() const {
    return m_splitK ? u"mma_sync_splitk"_s : u"mma_sync"_s;
}

QString MmaSyncFamily::description() const {
    const QString base =
        u"Tensor cores through mma.sync.m16n8k16 (fp16/bf16 in, fp32 accumulate): each warp owns a "
        "warp tile of m16n8 accumulators in registers; A and B k-tiles stream into shared memory "
        "with a multi-stage cp.async pipeline (zero-filled outside M and K), in an XOR-swizzled "
        "or padded layout so ldmatrix (ldmatrix.trans for row-major B) is free of bank conflicts."_s;
    if (!m_splitK)
        return base;
    return base +
           u" Split-K: K is divided over split_k blocks per output tile that write fp32 partials "
           "to the workspace, summed by a second kernel; for shapes whose M x N tiles are too few "
           "to fill the GPU while K is long."_s;
}

bool MmaSyncFamily::supports(const Task& task, const DeviceInfo& device) const {
    const bool dtypes = (task.a == u"f16" || task.a == u"bf16") && task.b == task.a &&
                        (task.c == u"f32" || task.c == u"f16" || task.c == u"bf16") &&
                        task.accumulate == u"f32";
    return task.op == u"gemm" && dtypes && task.layoutA == u"row" && task.layoutB == u"row" &&
           task.layoutC == u"row" && device.ccMajor >= 8 && task.leadingDimMultiple % 8 == 0;
}

QVector<ParameterSpec> MmaSyncFamily::parameters() const {
    QVector<ParameterSpec> specs{
        fieldParameter(u"blockM"_s, u"Rows of C per thread block"_s, ints({64, 128, 256}),
                       &Strategy::blockM),
        fieldParameter(u"blockN"_s, u"Columns of C per thread block"_s, ints({64, 128, 256}),
                       &Strategy::blockN),
        fieldParameter(u"blockK"_s, u"Depth of one pipelined k-tile"_s, ints({16, 32, 64}),
                       &Strategy::blockK),
        fieldParameter(u"warpM"_s, u"Rows of C per warp (multiples of the m16 MMA)"_s,
                       ints({16, 32, 64, 128}), &Strategy::warpM),
        fieldParameter(u"warpN"_s, u"Columns of C per warp (multiples of two n8 MMAs)"_s,
                       ints({16, 32, 64, 128}), &Strategy::warpN),
        fieldParameter(u"stages"_s, u"k-tiles in flight in the cp.async pipeline"_s,
                       ints({2, 3, 4, 5, 6}), &Strategy::stages),
        fieldParameter(u"smemLayout"_s, u"Bank-conflict avoidance for ldmatrix"_s,
                       QJsonArray{u"padded"_s, u"swizzled"_s}, &Strategy::smemLayout),
        fieldParameter(u"raster"_s, u"Order of output tiles over the grid"_s,
                       QJsonArray{u"row"_s, u"grouped"_s}, &Strategy::raster),
    };
    if (m_splitK)
        specs.append(fieldParameter(u"splitK"_s, u"Blocks sharing one output tile along K"_s,
                                    ints({2, 3, 4, 6, 8, 12, 16}), &Strategy::splitK));
    return specs;
}

void MmaSyncFamily::normalize(Strategy& s) const {
    s.family = id();
    s.mma = u"mma.sync"_s;
    s.vectorWidth = 8;
    s.epilogue = u"direct"_s;
    if (s.warpM > 0 && s.warpN > 0 && s.blockM % s.warpM == 0 && s.blockN % s.warpN == 0)
        s.warps = (s.blockM / s.warpM) * (s.blockN / s.warpN);
    s.smemPaddingBytes = s.smemLayout == u"padded" ? 16 : 0;
    s.swizzleBytes = s.smemLayout == u"swizzled" ? 128 : 0;
    if (s.raster == u"grouped" && s.groupSize <= 1)
        s.groupSize = 8;
    if (s.raster == u"row")
        s.groupSize = 1;
    if (!m_splitK)
        s.splitK = 1;
}

QStringList MmaSyncFamily::constraints(const Strategy& s, const Task& task,
                                       const DeviceInfo& device) const {
    QStringList problems;
    if (!supports(task, device))
        problems << u"family %1 needs a row-major GEMM with f16 or bf16 A and B of the same type, "
                    "f32 accumulation, leading dimensions a multiple of 8 and an sm_80 or newer "
                    "GPU (task %2, device %3 sm_%4%5)"_s.arg(id(), task.summary(), device.name)
                        .arg(device.ccMajor)
                        .arg(device.ccMinor);
    if (s.family != id())
        problems << u"family: \"%1\" is not %2"_s.arg(s.family, id());
    if (s.warpM <= 0 || s.warpN <= 0 || s.warpM % 16 != 0 || s.warpN % 16 != 0)
        problems << u"warpM=%1, warpN=%2: each must be a positive multiple of 16"_s.arg(s.warpM)
                        .arg(s.warpN);
    else if (s.blockM % s.warpM != 0 || s.blockN % s.warpN != 0)
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
    if (threads > 1024 || threads < 32)
        problems << u"%1 threads per block: must be 32..1024"_s.arg(threads);
    if (s.smemLayout == u"swizzled") {
        if (s.blockK != 32 && s.blockK != 64)
            problems << u"blockK=%1: the swizzled layout needs 32 or 64 (4 or 8 chunks per A "
                        "row)"_s.arg(s.blockK);
        if (s.blockN % 64 != 0)
            problems << u"blockN=%1: the swizzled layout needs a multiple of 64 (B rows of whole "
                        "128-byte lines)"_s.arg(s.blockN);
    } else if (s.smemLayout == u"padded") {
        if (s.blockK % 16 != 0)
            problems << u"blockK=%1: must be a multiple of 16 (the MMA k)"_s.arg(s.blockK);
    } else {
        problems << u"smemLayout=\"%1\": this family uses \"swizzled\" or \"padded\""_s.arg(
            s.smemLayout);
    }
    if (threads > 0 && threads <= 1024) {
        const qint64 aChunks = qint64(s.blockM) * s.blockK / 8;
        const qint64 bChunks = qint64(s.blockK) * s.blockN / 8;
        if (aChunks % threads != 0 || bChunks % threads != 0)
            problems << u"tile loads: %1 A chunks and %2 B chunks of 16 bytes do not split evenly "
                        "over %3 threads"_s.arg(aChunks)
                            .arg(bChunks)
                            .arg(threads);
    }
    if (s.stages < 2)
        problems << u"stages=%1: a cp.async pipeline needs at least 2"_s.arg(s.stages);
    const qint64 smem = smemBytes(s);
    if (smem > device.smemPerBlockOptin)
        problems << u"shared memory %1 B per block exceeds the device's opt-in limit %2 B "
                    "(blockM=%3, blockN=%4, blockK=%5, stages=%6)"_s.arg(smem)
                        .arg(device.smemPerBlockOptin)
                        .arg(s.blockM)
                        .arg(s.blockN)
                        .arg(s.blockK)
                        .arg(s.stages);
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
    if (m_splitK && s.splitK < 2)
        problems << u"splitK=%1: the split-K family needs at least 2"_s.arg(s.splitK);
    if (!m_splitK && s.splitK != 1)
        problems << u"splitK=%1: use family mma_sync_splitk to split K"_s.arg(s.splitK);
    if (s.raster != u"row" && s.raster != u"grouped")
        problems << u"raster=\"%1\": this family has \"row\" and \"grouped\""_s.arg(s.raster);
    if (s.raster == u"grouped" && s.groupSize < 1)
        problems << u"groupSize=%1: must be at least 1"_s.arg(s.groupSize);
    return problems;
}

ResourceEstimate MmaSyncFamily::resources(const Strategy& s, const Task& task,
                                          const DeviceInfo& device) const {
    ResourceEstimate r = estimateResources(s.warps * 32, smemBytes(s), registerEstimate(s), device);
    r.workspaceBytes = m_splitK ? qint64(s.splitK) * task.m * task.n * 4 : 0;
    return r;
}

Strategy MmaSyncFamily::defaultStrategy(const Task& task, const DeviceInfo& device) const {
    Strategy s;
    s.family = id();
    s.blockK = 32;
    s.stages = 4;
    s.smemLayout = u"swizzled"_s;
    s.raster = u"grouped"_s;
    s.groupSize = 8;
    const int sms = std::max(device.smCount, 1);
    const auto tiles = [&task](int bm, int bn) {
        return ((task.m + bm - 1) / bm) * ((task.n + bn - 1) / bn);
    };
    if (m_splitK) {
        s.blockM = 128;
        s.blockN = 128;
        s.warpM = 64;
        s.warpN = 64;
        const qint64 outputTiles = tiles(128, 128);
        const qint64 kTiles = (task.k + 31) / 32;
        // Enough splits for two blocks per SM, but each split keeps at least 8 k-tiles.
        const qint64 wanted = (2 * sms + outputTiles - 1) / outputTiles;
        s.splitK = int(std::clamp<qint64>(std::min(wanted, kTiles / 8), 2, 16));
        s.rationale = u"Split-K start: %1 output tiles of 128x128 cannot fill %2 SMs, so K "
                      "(%3) is split %4 ways into fp32 partials summed by a second kernel; 4 "
                      "warps of 64x64 on mma.sync m16n8k16, 4-stage cp.async pipeline, swizzled "
                      "shared memory."_s.arg(outputTiles)
                          .arg(sms)
                          .arg(task.k)
                          .arg(s.splitK);
    } else if (tiles(128, 256) >= 2 * sms) {
        s.blockM = 128;
        s.blockN = 256;
        s.warpM = 64;
        s.warpN = 64;
        s.rationale = u"Large output (%1 tiles of 128x256 for %2 SMs): 8 warps of 64x64 give the "
                      "most reuse per byte of shared memory; mma.sync m16n8k16 fed by ldmatrix "
                      "from XOR-swizzled tiles, a 4-stage cp.async pipeline with BK=32, grouped "
                      "raster for L2 reuse."_s.arg(tiles(128, 256))
                          .arg(sms);
    } else if (tiles(128, 128) >= sms) {
        s.blockM = 128;
        s.blockN = 128;
        s.warpM = 64;
        s.warpN = 64;
        s.rationale = u"Medium output (%1 tiles of 128x128 for %2 SMs): 4 warps of 64x64, "
                      "mma.sync m16n8k16 with ldmatrix from swizzled tiles, 4-stage cp.async "
                      "pipeline."_s.arg(tiles(128, 128))
                          .arg(sms);
    } else {
        s.blockM = 64;
        s.blockN = 64;
        s.warpM = 32;
        s.warpN = 32;
        s.rationale = u"Small output (%1 tiles of 128x128 for %2 SMs): 64x64 tiles with 4 warps of "
                      "32x32 to put more blocks in flight."_s.arg(tiles(128, 128))
                          .arg(sms);
    }
    normalize(s);
    return s;
}

QString MmaSyncFamily::generate(const Strategy& s, const Task& task) const {
    using namespace gemmcodegen;
    QStringList header{
        u"Kevolve built-in kernel, family %1 (generated; edit freely)."_s.arg(id()),
        u"Task: %1 (%2)."_s.arg(task.name, task.summary()),
        u"Strategy: block %1x%2x%3, %4 warps of %5x%6, mma.sync m16n8k16 %7 -> f32,"_s.arg(s.blockM)
            .arg(s.blockN)
            .arg(s.blockK)
            .arg(s.warps)
            .arg(s.warpM)
            .arg(s.warpN)
            .arg(task.a),
        u"  %1-stage cp.async pipeline, shared memory %2,"_s.arg(s.stages).arg(
            s.smemLayout == u"padded" ? u"rows padded by 16 bytes"_s : u"128-byte XOR swizzle"_s),
        u"  %1 raster%2, split-K %3, C written as %4."_s.arg(s.raster)
            .arg(s.raster == u"grouped" ? u" (group %1)"_s.arg(s.groupSize) : QString())
            .arg(s.splitK)
            .arg(task.c),
    };
    if (!s.rationale.isEmpty()) {
        header << u"Rationale:"_s;
        for (const QString& line : wrapText(s.rationale))
            header << u"  "_s + line;
    }

    QString extra;
    if (s.raster == u"grouped")
        extra += u"constexpr int GROUP_M = %1; // tile rows per raster group\n"_s.arg(s.groupSize);
    if (m_splitK)
        extra += u"constexpr int SPLIT_K = %1; // blocks per output tile along K\n"_s.arg(s.splitK);

    QString layout;
    if (s.smemLayout == u"swizzled") {
        const int aRowBytes = s.blockK * 2;
        layout = render(kSwizzledLayout,
                        {{u"A_ROWS_PER_LINE"_s, num(128 / aRowBytes)},
                         {u"A_ROW_BYTES"_s, num(aRowBytes)},
                         {u"A_XOR"_s, s.blockK == 64 ? u"(row & 7)"_s : u"((row >> 1) & 3)"_s}});
    } else {
        layout = QString::fromUtf16(kPaddedLayout);
    }

    const QString outParams =
        m_splitK ? u"float* __restrict__ partials, int M, int N, int K, long long lda, "
                   "long long ldb"_s
                 : u"Output* __restrict__ C, int M, int N, int K, long long lda, long long ldb, "
                   "long long ldc, float alpha, float beta"_s;
    QString stores = QString::fromUtf16(m_splitK ? kPartialStores : kDirectStores);
    QString kRange = QString::fromUtf16(m_splitK ? kSplitK : kWholeK);
    if (m_splitK)
        kRange += u"    float* slice = partials + static_cast<long long>(blockIdx.z) * M * N;\n"_s;

    const QMap<QString, QString> vars{
        {u"HEADER"_s, headerComment(header)},
        {u"INCLUDES"_s, dtypeIncludes(task)},
        {u"IN_T"_s, cudaType(task.a)},
        {u"OUT_T"_s, cudaType(task.c)},
        {u"BLOCK_M"_s, num(s.blockM)},
        {u"BLOCK_N"_s, num(s.blockN)},
        {u"BLOCK_K"_s, num(s.blockK)},
        {u"WARP_M"_s, num(s.warpM)},
        {u"WARP_N"_s, num(s.warpN)},
        {u"STAGES"_s, num(s.stages)},
        {u"EXTRA_CONSTANTS"_s, extra},
        {u"A_ROW"_s, s.smemLayout == u"padded" ? u"BLOCK_K + 8"_s : u"BLOCK_K"_s},
        {u"B_ROW"_s, s.smemLayout == u"padded" ? u"BLOCK_N + 8"_s : u"BLOCK_N"_s},
        {u"LAYOUT"_s, layout},
        {u"MMA_TYPE"_s, task.a},
        {u"OUTPUT_HELPERS"_s,
         outputHelpers(task.c) + (m_splitK ? QString::fromUtf16(kPartialHelper) : QString())},
        {u"KERNEL_OUT_PARAMS"_s, outParams},
        {u"TILE_MAPPING"_s,
         QString::fromUtf16(s.raster == u"grouped" ? kGroupedRaster : kRowRaster)},
        {u"K_RANGE"_s, kRange},
        {u"EPILOGUE_STORES"_s, stores},
        {u"REDUCE_KERNEL"_s, m_splitK ? QString::fromUtf16(kReduceKernel) : QString()},
        {u"LAUNCH"_s,
         render(m_splitK ? kSplitLaunch : kDirectLaunch, {{u"CHECKS"_s, launchChecks(task)}})},
    };
    return render(kKernelTemplate, vars);
}

} // namespace kev
