// expect: ok
// task: gemm_bf16_m1_n14336_k4096.json
// Kevolve built-in kernel, family wmma (generated; edit freely).
// Task: gemm_bf16_m1_n14336_k4096 (gemm 1x14336x4096 bf16*bf16->bf16).
// Strategy: block 64x64x32, 4 warps (2x2) of 32x32, wmma 16x16x16 bf16 -> f32,
//   double-buffered cp.async, rows padded by 16 bytes, epilogue through shared memory, C written as bf16.
// Rationale:
//   Small output (112 tiles of 128x128 for 132 SMs): 64x64 tiles with 4 warps of 32x32 so more
//   blocks run; BK 32 double-buffered.

#include <kevolve/abi.h>
#include <cuda_bf16.h>
#include <mma.h>
#include <stdint.h>

namespace {

using namespace nvcuda;
using Input = __nv_bfloat16;
using Output = __nv_bfloat16;

constexpr int BLOCK_M = 64;
constexpr int BLOCK_N = 64;
constexpr int BLOCK_K = 32;
constexpr int WARPS_M = 2;
constexpr int WARPS_N = 2;
constexpr int STAGES = 2; // shared-memory buffers of A and B k-tiles
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

__device__ __forceinline__ float outputToFloat(Output x) { return __bfloat162float(x); }
__device__ __forceinline__ void storeOutputPair(Output* p, float v0, float v1)
{
    *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(v0, v1);
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
    // Two buffers: k-tile t + 1 is copied into one while k-tile t is multiplied from the other.
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
    // This file was generated for one task; refuse any other so a mismatch is an error.
    if (args->abi_version != KEVOLVE_ABI_VERSION || args->op != KEVOLVE_OP_GEMM ||
        args->num_inputs != 2 || args->num_outputs != 1)
        return 1;
    if (args->inputs[0].dtype != KEVOLVE_BF16 || args->inputs[1].dtype != KEVOLVE_BF16 ||
        args->outputs[0].dtype != KEVOLVE_BF16)
        return 2;
    if (args->inputs[0].stride[1] != 1 || args->inputs[1].stride[1] != 1 ||
        args->outputs[0].stride[1] != 1)
        return 3;

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
