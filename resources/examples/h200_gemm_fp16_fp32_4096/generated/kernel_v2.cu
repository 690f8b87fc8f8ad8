// Kevolve built-in kernel, family mma_sync (generated; edit freely).
// Task: gemm_fp16_fp32_4096 (gemm 4096x4096x4096 f16*f16->f32).
// Strategy: block 128x256x32, 16 warps of 64x32, mma.sync m16n8k16 f16 -> f32,
//   4-stage cp.async pipeline, shared memory 128-byte XOR swizzle,
//   grouped raster (group 8), split-K 1, C written as f32.
// Rationale:
//   Review found low_occupancy (Occupancy 0.12 with 234 registers per thread.); remedy: fewer
//   registers per thread, so warpN 64 -> 32 from the parent mma_sync 128x256x32 w8 s4 warp=64x64
//   vec=8 swizzled swizzle=128 grouped/8. Differs from the family's default in: warpN 32
//   (default 64).

#include <kevolve/abi.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace {

using Input = __half;
using Output = float;

constexpr int BLOCK_M = 128;
constexpr int BLOCK_N = 256;
constexpr int BLOCK_K = 32;
constexpr int WARP_M = 64;
constexpr int WARP_N = 32;
constexpr int STAGES = 4;
constexpr int GROUP_M = 8; // tile rows per raster group

constexpr int WARPS_M = BLOCK_M / WARP_M;
constexpr int WARPS_N = BLOCK_N / WARP_N;
constexpr int THREADS = WARPS_M * WARPS_N * 32;
constexpr int MMA_TILES_M = WARP_M / 16; // m16n8k16 tiles per warp
constexpr int MMA_TILES_N = WARP_N / 8;

// Shared memory holds STAGES copies of an A tile (BLOCK_M x BLOCK_K) and a B tile
// (BLOCK_K x BLOCK_N), both row-major as in global memory, moved in 16-byte chunks of 8 elements.
constexpr int A_ROW = BLOCK_K; // elements per A tile row in shared memory
constexpr int B_ROW = BLOCK_N; // elements per B tile row in shared memory
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

// XOR swizzle: an ldmatrix phase reads one 16-byte chunk from each of 8 consecutive rows. Chunk c
// of a row is stored at position c ^ f(row), so those 8 chunks fall in 8 different 16-byte bank
// groups. A 128-byte bank line holds 2 A row(s) of 64 bytes; a B row is
// whole lines. cp.async writes through the same mapping.
__device__ __forceinline__ uint32_t aOffsetBytes(int row, int chunk)
{
    return static_cast<uint32_t>((row * A_ROW + ((chunk ^ ((row >> 1) & 3)) << 3)) * 2);
}

__device__ __forceinline__ uint32_t bOffsetBytes(int row, int chunk)
{
    return static_cast<uint32_t>((row * B_ROW + ((chunk ^ (row & 7)) << 3)) * 2);
}

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
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

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
    gemmMmaSync(const Input* __restrict__ A, const Input* __restrict__ B, Output* __restrict__ C, int M, int N, int K, long long lda, long long ldb, long long ldc, float alpha, float beta)
{
    extern __shared__ __align__(128) unsigned char smem[];
    const uint32_t sA = sharedAddress(smem);
    const uint32_t sB = sA + STAGES * A_STAGE_BYTES;

    // Grouped raster: consecutive blocks walk down a column of GROUP_M tiles before moving right,
    // so the A rows and B columns that concurrently running blocks share stay in L2.
    const int tilesM = (M + BLOCK_M - 1) / BLOCK_M;
    const int tilesN = (N + BLOCK_N - 1) / BLOCK_N;
    const int perGroup = GROUP_M * tilesN;
    const int firstM = (blockIdx.x / perGroup) * GROUP_M;
    const int groupRows = min(tilesM - firstM, GROUP_M);
    const int inGroup = blockIdx.x % perGroup;
    const int tileM = firstM + inGroup % groupRows;
    const int tileN = inGroup / groupRows;
    const int rowBase = tileM * BLOCK_M;
    const int colBase = tileN * BLOCK_N;
    const int tid = threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const int warpRow = (warp / WARPS_N) * WARP_M;
    const int warpCol = (warp % WARPS_N) * WARP_N;

    const int kTileBegin = 0;
    const int numKTiles = (K + BLOCK_K - 1) / BLOCK_K;

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
            epiloguePair(C, ldc, M, N, row, col, acc[mt][nt][0], acc[mt][nt][1], alpha, beta);
            epiloguePair(C, ldc, M, N, row + 8, col, acc[mt][nt][2], acc[mt][nt][3], alpha,
                         beta);
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
    if (args->inputs[0].dtype != KEVOLVE_F16 || args->inputs[1].dtype != KEVOLVE_F16 ||
        args->outputs[0].dtype != KEVOLVE_F32)
        return 2;
    if (args->inputs[0].stride[1] != 1 || args->inputs[1].stride[1] != 1 ||
        args->outputs[0].stride[1] != 1)
        return 3;

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
