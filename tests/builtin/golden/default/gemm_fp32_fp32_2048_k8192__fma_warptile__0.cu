// expect: ok
// task: gemm_fp32_fp32_2048_k8192.json
// Kevolve built-in kernel, family fma_warptile (generated; edit freely).
// Task: gemm_fp32_fp32_2048_k8192 (gemm 2048x2048x8192 f32*f32->f32).
// Strategy: block 128x256x32, warps of 64x64, 16x8 outputs per thread (256 threads), FP32 FMA,
//   cp.async into 4 shared-memory buffers, double-buffered fragments, C written as f32,
//   grouped (8 block rows) raster, serpentine FMA order.
// Rationale:
//   128x256x32 block tile, 8 warps of 64x64 (lanes 4x8 of 16x8 outputs: 128 FMAs per 6 float4
//   shared loads), k-tiles by cp.async into 4 buffers (no register staging), 8 k steps per loop
//   body, grouped raster; chosen for 128 output tiles on 132 SMs.

#include <kevolve/abi.h>
#include <stdint.h>

namespace {

using Output = float;

constexpr int BLOCK_M = 128;
constexpr int BLOCK_N = 256;
constexpr int BLOCK_K = 32;
constexpr int WARP_M = 64;
constexpr int WARP_N = 64;
constexpr int THREAD_M = 16; // rows of C per thread, in groups of 4
constexpr int THREAD_N = 8; // columns of C per thread, in groups of 4
constexpr int GROUP_M = 8;   // block rows per raster group (1: row-major raster)
constexpr bool SERPENTINE = true; // FMA order of the outer product (see the main loop)
constexpr int SPLIT_K = 1; // slices of K, each a block per tile (1: C written directly)
// k steps per unrolled loop body: BLOCK_K unrolls the whole k-tile; fewer keep the loop's code
// small (16x8 per thread at BLOCK_K 16 is 2048 FMAs, 32 KiB of instructions, per k-tile).
constexpr int K_UNROLL = 8;
static_assert(K_UNROLL % 2 == 0 && BLOCK_K % K_UNROLL == 0, "K_UNROLL: even, dividing BLOCK_K");
constexpr int WARPS_N = BLOCK_N / WARP_N;
constexpr int THREADS = (BLOCK_M / WARP_M) * WARPS_N * 32;
// Lanes of a warp form a LANES_M x LANES_N grid over the warp tile. A lane's 4-row groups lie
// GROUP_STRIDE_M rows apart (its column groups GROUP_STRIDE_N apart), so the lanes of a warp read
// consecutive float4s of a shared-memory row: LANES_N distinct 16-byte words for B (one 128-byte
// wavefront at 8 lanes), LANES_M for A, the rest broadcasts.
constexpr int LANES_M = WARP_M / THREAD_M;
constexpr int LANES_N = WARP_N / THREAD_N;
constexpr int GROUP_STRIDE_M = WARP_M / (THREAD_M / 4);
constexpr int GROUP_STRIDE_N = WARP_N / (THREAD_N / 4);
static_assert(LANES_M * LANES_N == 32, "a warp's lanes must tile the warp tile exactly");
static_assert(BLOCK_K % 8 == 0, "A's loads pair two float4s of a row (BLOCK_K a multiple of 8)");
// A is stored transposed (k, m) so a lane's rows are one float4; 4 floats of padding per row put
// the scalar stores of a warp's A vectors (16 rows x 2 k-quads) into 32 different banks.
constexpr int A_ROW = BLOCK_M + 4;
constexpr int B_ROW = BLOCK_N;
constexpr int A_STAGE = BLOCK_K * A_ROW; // floats of one shared-memory buffer of A
constexpr int B_STAGE = BLOCK_K * B_ROW;
constexpr int STAGES = 4; // shared-memory buffers, STAGES - 1 k-tiles in flight
constexpr int SMEM_BYTES = STAGES * (A_STAGE + B_STAGE) * 4;
constexpr int B_VECS = BLOCK_K * BLOCK_N / 4 / THREADS;
static_assert(BLOCK_M * BLOCK_K % (4 * THREADS) == 0, "A tile must split evenly over threads");
static_assert(BLOCK_K * BLOCK_N % (4 * THREADS) == 0, "B tile must split evenly over threads");

__device__ __forceinline__ float outputToFloat(Output x) { return x; }
__device__ __forceinline__ void storeOutputPair(Output* p, float v0, float v1)
{
    *reinterpret_cast<float2*>(p) = make_float2(v0, v1);
}

// C = alpha * (x0, x1) + beta * C at columns col and col + 1 of `row`. N is a multiple of 8 and col
// is even, so col < N means both columns are inside. C is read only when beta is non-zero: the
// harness poisons it, and 0 * NaN is NaN.
__device__ __forceinline__ void epiloguePair(Output* __restrict__ C, long long ldc, int M, int N,
                                             int row, int col, float x0, float x1, float alpha,
                                             float beta)
{
    if (row >= M || col >= N)
        return;
    Output* p = C + row * ldc + col;
    float v0 = alpha * x0;
    float v1 = alpha * x1;
    if (beta != 0.0f) {
        v0 += beta * outputToFloat(p[0]);
        v1 += beta * outputToFloat(p[1]);
    }
    storeOutputPair(p, v0, v1);
}

// C = alpha * x + beta * C at columns col .. col + 3 of `row`: one 128-bit store for f32 C. N is a
// multiple of 4 and col of 4, so col < N means all four columns are inside.
__device__ __forceinline__ void epilogueQuad(Output* __restrict__ C, long long ldc, int M, int N,
                                             int row, int col, const float* x, float alpha,
                                             float beta)
{
    if (row >= M || col >= N)
        return;
    if constexpr (sizeof(Output) == 4) {
        float* p = reinterpret_cast<float*>(C + row * ldc + col);
        float4 v = make_float4(alpha * x[0], alpha * x[1], alpha * x[2], alpha * x[3]);
        if (beta != 0.0f) {
            const float4 old = *reinterpret_cast<const float4*>(p);
            v.x += beta * old.x;
            v.y += beta * old.y;
            v.z += beta * old.z;
            v.w += beta * old.w;
        }
        *reinterpret_cast<float4*>(p) = v;
    } else {
        epiloguePair(C, ldc, M, N, row, col, x[0], x[1], alpha, beta);
        epiloguePair(C, ldc, M, N, row, col + 2, x[2], x[3], alpha, beta);
    }
}

__device__ __forceinline__ void bCoord(int i, int tid, int& k, int& col)
{
    const int id = tid + i * THREADS;
    k = id / (BLOCK_N / 4);
    col = (id % (BLOCK_N / 4)) * 4;
}

// The block's view of A and B for the k-tile loads. Addresses are recomputed per k-tile from
// these few values instead of kept as a pointer per vector: that costs a few integer instructions
// per k-tile and saves the registers that let 8x8 per thread fit 128 (two blocks per SM).
struct TileSource {
    const float* __restrict__ A;
    const float* __restrict__ B;
    int M;
    int N;
    int K;
    long long lda;
    long long ldb;
    int rowBase;
    int colBase;
};

// 4-byte copies of A per thread and k-tile. A lands transposed element by element: lanes take 8
// consecutive k of 4 rows (32 bytes of each row, one sector) and, with A_ROW = 4 mod 32 floats,
// write 32 different banks.
constexpr int A_COPIES = BLOCK_M * BLOCK_K / THREADS;
static_assert(BLOCK_M * BLOCK_K % THREADS == 0 && THREADS % 8 == 0, "A copies must split evenly");

// cp.async with a source size: 0 bytes read fill the destination with zeros (outside M, N, K).
__device__ __forceinline__ void copy4(float* dst, const float* src, bool inside)
{
    const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src),
                 "r"(inside ? 4 : 0));
}

__device__ __forceinline__ void copy16(float* dst, const float* src, bool inside)
{
    const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src),
                 "r"(inside ? 16 : 0));
}

__device__ __forceinline__ void commitCopies()
{
    asm volatile("cp.async.commit_group;\n" ::);
}

// Waits until at most PENDING of this thread's copy groups are still in flight.
template <int PENDING>
__device__ __forceinline__ void waitCopies()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING));
}

// Starts the copies of the k-tile at k0 into one stage's buffers. Copies outside the matrix read
// nothing (a zero fill) from the matrix's first element, a valid address.
__device__ __forceinline__ void issueTile(const TileSource& src, float* sA, float* sB, int k0,
                                          int tid)
{
#pragma unroll
    for (int i = 0; i < A_COPIES; ++i) {
        const int id = tid + i * THREADS;
        const int rest = id >> 3;
        const int row = rest % BLOCK_M;
        const int k = (rest / BLOCK_M) * 8 + (id & 7);
        const int gRow = src.rowBase + row;
        const int gK = k0 + k;
        const bool inside = gRow < src.M && gK < src.K;
        copy4(sA + k * A_ROW + row, inside ? src.A + gRow * src.lda + gK : src.A, inside);
    }
#pragma unroll
    for (int i = 0; i < B_VECS; ++i) {
        int k, col;
        bCoord(i, tid, k, col);
        const int gK = k0 + k;
        const int gCol = src.colBase + col;
        const bool inside = gK < src.K && gCol < src.N;
        copy16(sB + k * B_ROW + col, inside ? src.B + gK * src.ldb + gCol : src.B, inside);
    }
}

// The copies of an interior k-tile (inside M, N and K) without bounds checks or per-copy address
// arithmetic. A thread's A copies lie LANE_ROWS rows apart (wrapping into the tile's next 8 k),
// its B copies B_K_STEP k-rows apart in one column, so one source address per matrix, advanced a
// k-tile at a time, and compile-time multiples of one 32-bit stride reach them all: per k-tile an
// address multiply-add per row and the copies themselves (issueTile spends a 64-bit multiply, a
// bounds test and a select on each copy: 260 of the main loop's 2430 instructions at 128x256x16).
constexpr int LANE_ROWS = THREADS / 8; // rows of A one pass of copies covers (8 k per row)
constexpr bool FAST_ISSUE =
    (BLOCK_M % LANE_ROWS == 0 || LANE_ROWS % BLOCK_M == 0) && THREADS % (BLOCK_N / 4) == 0;
constexpr int B_K_STEP = FAST_ISSUE ? THREADS / (BLOCK_N / 4) : 1;

struct FastSource {
    const float* a; // this thread's first A copy in the next k-tile to issue
    const float* b; // its first B copy
    int aRowStride; // LANE_ROWS * lda elements: between the thread's A rows
    int bRowStride; // B_K_STEP * ldb elements: between its B rows
};

// Where copy 0 of thread `tid` lands in a stage's buffers (the checked path's copy 0), in floats.
// Recomputed per k-tile from tid: a few integer instructions cost less than registers held
// across the main loop (the fast path's state is four registers of address and two strides).
__device__ __forceinline__ void fastDestinations(int tid, int& aRow, int& aK, int& bK, int& bCol)
{
    const int rest = tid >> 3;
    aRow = rest % BLOCK_M;
    aK = (rest / BLOCK_M) * 8 + (tid & 7);
    bCoord(0, tid, bK, bCol);
}

// The thread's first copy sources of the k-tile at kBegin.
__device__ __forceinline__ FastSource fastSource(const TileSource& src, int kBegin, int tid)
{
    int row, k, bk, bcol;
    fastDestinations(tid, row, k, bk, bcol);
    FastSource f;
    f.a = src.A + (src.rowBase + row) * src.lda + kBegin + k;
    f.b = src.B + (kBegin + bk) * src.ldb + src.colBase + bcol;
    f.aRowStride = static_cast<int>(LANE_ROWS * src.lda);
    f.bRowStride = static_cast<int>(B_K_STEP * src.ldb);
    return f;
}

// Issues the copies of the next k-tile (at k0, in order) into one stage's buffers and moves the
// sources on a k-tile. Unchecked (interior k-tiles): 32-bit strides, no tests. CHECKED (the
// rest): the same addresses with 64-bit row offsets (strides of any size), zeros outside M, N
// and K read from nothing (a zero fill from the matrix's first element); the edge tiles then hold
// no more registers than the interior ones.
template <bool CHECKED>
__device__ __forceinline__ void issueCopies(FastSource& f, const TileSource& src, float* sA,
                                            float* sB, int k0, int tid)
{
    int row, k, bk, bcol;
    fastDestinations(tid, row, k, bk, bcol);
    float* const aDst = sA + k * A_ROW + row;
    float* const bDst = sB + bk * B_ROW + bcol;
    // The checked copies' limits (unused, and so not computed, by the unchecked ones).
    const int rowsLeft = src.M - src.rowBase - row;
    const int aKLeft = src.K - k0 - k;
    const bool colInside = src.colBase + bcol < src.N;
    const int bKLeft = src.K - k0 - bk;
#pragma unroll
    for (int i = 0; i < A_COPIES; ++i) {
        // Copy i lands LANE_ROWS * i rows further, wrapping into the next 8 k of the tile.
        const int rowStep = (LANE_ROWS * i) % BLOCK_M / LANE_ROWS;
        const int kStep = LANE_ROWS * i / BLOCK_M * 8;
        float* const dst = aDst + rowStep * LANE_ROWS + kStep * A_ROW;
        if constexpr (CHECKED) {
            const bool inside = rowStep * LANE_ROWS < rowsLeft && kStep < aKLeft;
            const float* from =
                f.a + static_cast<long long>(rowStep * LANE_ROWS) * src.lda + kStep;
            copy4(dst, inside ? from : src.A, inside);
        } else {
            copy4(dst, f.a + rowStep * f.aRowStride + kStep, true);
        }
    }
#pragma unroll
    for (int i = 0; i < B_VECS; ++i) {
        float* const dst = bDst + i * B_K_STEP * B_ROW;
        if constexpr (CHECKED) {
            const bool inside = colInside && i * B_K_STEP < bKLeft;
            const float* from = f.b + static_cast<long long>(i * B_K_STEP) * src.ldb;
            copy16(dst, inside ? from : src.B, inside);
        } else {
            copy16(dst, f.b + i * f.bRowStride, true);
        }
    }
    f.a += BLOCK_K;
    if constexpr (CHECKED)
        f.b += BLOCK_K * src.ldb;
    else
        f.b += (BLOCK_K / B_K_STEP) * f.bRowStride;
}

// The next k-tile (at k0) by the copy path its tile takes: unchecked for the first fastTiles,
// checked after them, issueTile where the fast pattern does not apply to the block shape.
template <bool FAST>
__device__ __forceinline__ void issueNext(FastSource& f, const TileSource& src, float* sA,
                                          float* sB, int k0, int tid)
{
    if constexpr (FAST_ISSUE)
        issueCopies<!FAST>(f, src, sA, sB, k0, tid);
    else
        issueTile(src, sA, sB, k0, tid);
}

// The fragments of one k step: this lane's THREAD_M values of A and THREAD_N values of B, one
// float4 shared load per 4-group.
__device__ __forceinline__ void loadFragments(const float* sA, const float* sB, int k, int aBase,
                                              int bBase, float (&ra)[THREAD_M],
                                              float (&rb)[THREAD_N])
{
#pragma unroll
    for (int g = 0; g < THREAD_M / 4; ++g) {
        const float4 v =
            *reinterpret_cast<const float4*>(&sA[k * A_ROW + aBase + g * GROUP_STRIDE_M]);
        ra[g * 4 + 0] = v.x;
        ra[g * 4 + 1] = v.y;
        ra[g * 4 + 2] = v.z;
        ra[g * 4 + 3] = v.w;
    }
#pragma unroll
    for (int g = 0; g < THREAD_N / 4; ++g) {
        const float4 v =
            *reinterpret_cast<const float4*>(&sB[k * B_ROW + bBase + g * GROUP_STRIDE_N]);
        rb[g * 4 + 0] = v.x;
        rb[g * 4 + 1] = v.y;
        rb[g * 4 + 2] = v.z;
        rb[g * 4 + 3] = v.w;
    }
}

// acc += ra x rb. SERPENTINE walks odd rows backwards, so consecutive FMAs share an operand across
// row changes too (more operand-reuse-cache hits; ptxas allocates registers differently).
__device__ __forceinline__ void outerProduct(float (&acc)[THREAD_M][THREAD_N],
                                             const float (&ra)[THREAD_M],
                                             const float (&rb)[THREAD_N])
{
#pragma unroll
    for (int i = 0; i < THREAD_M; ++i) {
#pragma unroll
        for (int jj = 0; jj < THREAD_N; ++jj) {
            const int j = SERPENTINE && (i & 1) ? THREAD_N - 1 - jj : jj;
            acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
        }
    }
}

// One k-tile of the cp.async pipeline: issue k-tile t + STAGES - 1 (FAST: unchecked copies), then
// the FMAs of k-tile t with the fragments of each next step read during the current one.
template <bool FAST>
__device__ __forceinline__ void kTileStep(int t, int numKTiles, const TileSource& src,
                                          FastSource& fast, float* sA, float* sB, int& readStage,
                                          int& writeStage, int kBegin, int tid, int aBase,
                                          int bBase, float (&acc)[THREAD_M][THREAD_N],
                                          float (&ra)[2][THREAD_M], float (&rb)[2][THREAD_N])
{
    const float* const curA = sA + readStage * A_STAGE;
    const float* const curB = sB + readStage * B_STAGE;
    // k-tile t + STAGES - 1 goes to the buffer k-tile t - 1 used: every read of it came before
    // the barrier that made k-tile t visible.
    if (FAST || t + STAGES - 1 < numKTiles)
        issueNext<FAST>(fast, src, sA + writeStage * A_STAGE, sB + writeStage * B_STAGE,
                        kBegin + (t + STAGES - 1) * BLOCK_K, tid);
    commitCopies();
    writeStage = writeStage + 1 == STAGES ? 0 : writeStage + 1;
    readStage = readStage + 1 == STAGES ? 0 : readStage + 1;
    // `more` is uniform, so the barrier below is reached by all threads or none.
    const bool more = t + 1 < numKTiles;
    // K_UNROLL steps per loop body (even, so a step's fragment buffer is known at compile time);
    // the body's last step reads the next body's first fragments, or at the k-tile's end those
    // of the next k-tile.
#pragma unroll 1
    for (int k0 = 0; k0 < BLOCK_K; k0 += K_UNROLL) {
#pragma unroll
        for (int kk = 0; kk < K_UNROLL; ++kk) {
            const int k = k0 + kk;
            if (kk + 1 < K_UNROLL || k + 1 < BLOCK_K) {
                loadFragments(curA, curB, k + 1, aBase, bBase, ra[(kk + 1) & 1], rb[(kk + 1) & 1]);
            } else if (more) {
                waitCopies<STAGES - 2>();
                __syncthreads();
                loadFragments(sA + readStage * A_STAGE, sB + readStage * B_STAGE, 0, aBase, bBase,
                              ra[0], rb[0]);
            }
            outerProduct(acc, ra[kk & 1], rb[kk & 1]);
        }
    }
}

// The block's tile of C. With GROUP_M > 1, consecutive blocks walk down GROUP_M block rows before
// moving one block column right, so the blocks resident at once share their A and B panels in L2.
__device__ __forceinline__ void tileOf(int M, int N, int& tileM, int& tileN)
{
    const int tilesN = (N + BLOCK_N - 1) / BLOCK_N;
    const int id = static_cast<int>(blockIdx.x);
    if constexpr (GROUP_M == 1) {
        tileM = id / tilesN;
        tileN = id % tilesN;
    } else {
        const int tilesM = (M + BLOCK_M - 1) / BLOCK_M;
        const int perGroup = GROUP_M * tilesN;
        const int firstM = (id / perGroup) * GROUP_M;
        const int rows = min(tilesM - firstM, GROUP_M);
        const int r = id % perGroup;
        tileM = firstM + r % rows;
        tileN = r / rows;
    }
}

__global__ void __launch_bounds__(THREADS, 1)
    gemmFmaWarpTile(const float* __restrict__ A, const float* __restrict__ B,
                    Output* __restrict__ C, float* __restrict__ partials, int M, int N, int K,
                    long long lda, long long ldb, long long ldc, float alpha, float beta)
{
    extern __shared__ float4 smem[];
    float* const sA = reinterpret_cast<float*>(smem); // [STAGES][A_STAGE]
    float* const sB = sA + STAGES * A_STAGE;           // [STAGES][B_STAGE]

    int tileM, tileN;
    tileOf(M, N, tileM, tileN);
    const int rowBase = tileM * BLOCK_M;
    const int colBase = tileN * BLOCK_N;
    const int tid = threadIdx.x;
    const int warp = tid >> 5;
    const int lane = tid & 31;
    // Offsets of this lane's first 4-group inside the block tile.
    const int aBase = (warp / WARPS_N) * WARP_M + (lane / LANES_N) * 4;
    const int bBase = (warp % WARPS_N) * WARP_N + (lane % LANES_N) * 4;

    const TileSource src{A, B, M, N, K, lda, ldb, rowBase, colBase};
    float acc[THREAD_M][THREAD_N] = {};
    // Register double buffering: the fragments of step k + 1 are read from shared memory while
    // the FMAs of step k run; the last step of a k-tile reads the first fragments of the next one.
    float ra[2][THREAD_M];
    float rb[2][THREAD_N];
    // This block's slice of K: whole k-tiles, so only the last slice has a K tail (a slice past
    // the end has no k-tiles and writes zero partials).
    const int kTilesAll = (K + BLOCK_K - 1) / BLOCK_K;
    const int kTilesPer = (kTilesAll + SPLIT_K - 1) / SPLIT_K;
    const int split = SPLIT_K > 1 ? static_cast<int>(blockIdx.y) : 0;
    const int numKTiles = max(0, min(kTilesAll - split * kTilesPer, kTilesPer));
    const int kBegin = split * kTilesPer * BLOCK_K;

    // The first fastTiles k-tiles take the unchecked copies: all of them when the block's tile lies inside
    // M and N and its strides fit 32 bits, all but a K tail. The condition is uniform.
    FastSource fast = fastSource(src, kBegin, tid);
    int fastTiles = 0;
    if (FAST_ISSUE && rowBase + BLOCK_M <= M && colBase + BLOCK_N <= N &&
        BLOCK_M * lda < 0x7fffffffLL && BLOCK_K * ldb < 0x7fffffffLL)
        fastTiles = min(numKTiles, (K - kBegin) / BLOCK_K);
    // STAGES - 1 k-tiles in flight. Every thread commits one group per k-tile (empty past the
    // end), so "k-tile t + 1 has landed" is always "at most STAGES - 2 groups pending".
#pragma unroll
    for (int st = 0; st < STAGES - 1; ++st) {
        if (st < fastTiles)
            issueNext<true>(fast, src, sA + st * A_STAGE, sB + st * B_STAGE, 0, tid);
        else if (st < numKTiles)
            issueNext<false>(fast, src, sA + st * A_STAGE, sB + st * B_STAGE,
                             kBegin + st * BLOCK_K, tid);
        commitCopies();
    }
    waitCopies<STAGES - 2>();
    __syncthreads();
    loadFragments(sA, sB, 0, aBase, bBase, ra[0], rb[0]);

    int readStage = 0;
    int writeStage = STAGES - 1;
    // Two loops of the same body: the first while the k-tile it issues takes the unchecked copies, so its
    // code holds no bounds checks; the second for the rest (the K tail, edge blocks, the last
    // STAGES - 1 k-tiles, which issue nothing).
    int t = 0;
    for (; t + STAGES - 1 < fastTiles; ++t)
        kTileStep<true>(t, numKTiles, src, fast, sA, sB, readStage, writeStage, kBegin, tid,
                        aBase, bBase, acc, ra, rb);
    for (; t < numKTiles; ++t)
        kTileStep<false>(t, numKTiles, src, fast, sA, sB, readStage, writeStage, kBegin, tid,
                         aBase, bBase, acc, ra, rb);
    // No copy is in flight past the end (the groups past the last k-tile are empty).

#pragma unroll
    for (int i = 0; i < THREAD_M; ++i) {
        const int row = rowBase + aBase + (i / 4) * GROUP_STRIDE_M + (i % 4);
#pragma unroll
        for (int g = 0; g < THREAD_N / 4; ++g) {
            const int col = colBase + bBase + g * GROUP_STRIDE_N;
            if constexpr (SPLIT_K > 1) {
                // The slice's partial sums, M x N floats per slice (N is a multiple of 4).
                if (row < M && col < N) {
                    float* const p = partials + (static_cast<long long>(split) * M + row) * N + col;
                    *reinterpret_cast<float4*>(p) = make_float4(
                        acc[i][g * 4], acc[i][g * 4 + 1], acc[i][g * 4 + 2], acc[i][g * 4 + 3]);
                }
            } else {
                epilogueQuad(C, ldc, M, N, row, col, &acc[i][g * 4], alpha, beta);
            }
        }
    }
}

} // namespace

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream)
{
    // This file was generated for one task; refuse any other so a mismatch is an error.
    if (args->abi_version != KEVOLVE_ABI_VERSION || args->op != KEVOLVE_OP_GEMM ||
        args->num_inputs != 2 || args->num_outputs != 1)
        return 1;
    if (args->inputs[0].dtype != KEVOLVE_F32 || args->inputs[1].dtype != KEVOLVE_F32 ||
        args->outputs[0].dtype != KEVOLVE_F32)
        return 2;
    if (args->inputs[0].stride[1] != 1 || args->inputs[1].stride[1] != 1 ||
        args->outputs[0].stride[1] != 1)
        return 3;

    const int M = static_cast<int>(KEVOLVE_GEMM_M(args));
    const int N = static_cast<int>(KEVOLVE_GEMM_N(args));
    const int K = static_cast<int>(KEVOLVE_GEMM_K(args));
    const long long tiles =
        static_cast<long long>((M + BLOCK_M - 1) / BLOCK_M) * ((N + BLOCK_N - 1) / BLOCK_N);
    if (tiles > 0x7fffffffLL)
        return 6;
    // Above 48 KiB the kernel must opt in to the larger dynamic shared memory.
    if (SMEM_BYTES > 48 * 1024 &&
        cudaFuncSetAttribute(gemmFmaWarpTile, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             SMEM_BYTES) != cudaSuccess)
        return 4;
    auto* C = static_cast<Output*>(args->outputs[0].data);
    const float alpha = static_cast<float>(args->scalars[0]);
    const float beta = static_cast<float>(args->scalars[1]);
    float* partials = nullptr;
    gemmFmaWarpTile<<<dim3(static_cast<unsigned>(tiles), SPLIT_K), THREADS, SMEM_BYTES, stream>>>(
        static_cast<const float*>(args->inputs[0].data),
        static_cast<const float*>(args->inputs[1].data), C, partials, M, N, K,
        KEVOLVE_GEMM_LDA(args), KEVOLVE_GEMM_LDB(args), KEVOLVE_GEMM_LDC(args), alpha, beta);
    return cudaGetLastError() == cudaSuccess ? 0 : 5;
}
