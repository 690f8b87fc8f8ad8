// expect: ok
// task: gemm_fp32_fp32_4096.json
// Kevolve built-in kernel, family fma_warptile (generated; edit freely).
// Task: gemm_fp32_fp32_4096 (gemm 4096x4096x4096 f32*f32->f32).
// Strategy: block 128x128x8, warps of 32x64, 8x8 outputs per thread (256 threads), FP32 FMA,
//   double-buffered shared memory and fragments, C written as f32,
//   grouped (8 block rows) raster, row-major FMA order.
// Rationale:
//   Large output: 128x128x8 block tile, 8 warps of 32x64 (lanes 4x8 of 8x8 outputs: 64 FMAs per
//   4 float4 shared loads), fragments double-buffered in registers so shared loads overlap the
//   FMAs, 128 registers for two blocks per SM, grouped raster (provisional default).

#include <kevolve/abi.h>
#include <stdint.h>

namespace {

using Output = float;

constexpr int BLOCK_M = 128;
constexpr int BLOCK_N = 128;
constexpr int BLOCK_K = 8;
constexpr int WARP_M = 32;
constexpr int WARP_N = 64;
constexpr int THREAD_M = 8; // rows of C per thread, in groups of 4
constexpr int THREAD_N = 8; // columns of C per thread, in groups of 4
constexpr int GROUP_M = 8;   // block rows per raster group (1: row-major raster)
constexpr bool SERPENTINE = false; // FMA order of the outer product (see the main loop)
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
constexpr int STAGES = 2;
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

constexpr int A_VECS = BLOCK_M * BLOCK_K / 4 / THREADS; // float4 global loads per thread

// Where the i-th A vector of thread `tid` lies in the block tile. Lane pairs read the two halves
// of 32 bytes of one row (one full sector), 16 rows per warp; further k-quads come from further
// passes. The transposed shared stores of a warp then hit 16 rows x 2 quads = 32 banks.
__device__ __forceinline__ void aCoord(int i, int tid, int& row, int& kq)
{
    const int id = tid + i * THREADS;
    const int rest = id >> 1;
    row = rest % BLOCK_M;
    kq = ((id & 1) + 2 * (rest / BLOCK_M)) * 4;
}

// Reads the k-tile at k0 into registers, one float4 per load, zeros outside M, N and K. K and N
// are multiples of 4 (the alignment rule), so a vector is wholly inside or wholly outside.
__device__ __forceinline__ void fetchTile(const TileSource& src, float4 (&a)[A_VECS],
                                          float4 (&b)[B_VECS], int k0, int tid)
{
    const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
    for (int i = 0; i < A_VECS; ++i) {
        int row, kq;
        aCoord(i, tid, row, kq);
        const int gRow = src.rowBase + row;
        const int gK = k0 + kq;
        a[i] = gRow < src.M && gK < src.K
                   ? __ldg(reinterpret_cast<const float4*>(src.A + gRow * src.lda + gK))
                   : zero;
    }
#pragma unroll
    for (int i = 0; i < B_VECS; ++i) {
        int k, col;
        bCoord(i, tid, k, col);
        const int gK = k0 + k;
        const int gCol = src.colBase + col;
        b[i] = gK < src.K && gCol < src.N
                   ? __ldg(reinterpret_cast<const float4*>(src.B + gK * src.ldb + gCol))
                   : zero;
    }
}

__device__ __forceinline__ void storeTile(float* sA, float* sB, const float4 (&a)[A_VECS],
                                          const float4 (&b)[B_VECS], int tid)
{
#pragma unroll
    for (int i = 0; i < A_VECS; ++i) {
        int row, kq;
        aCoord(i, tid, row, kq);
        sA[(kq + 0) * A_ROW + row] = a[i].x;
        sA[(kq + 1) * A_ROW + row] = a[i].y;
        sA[(kq + 2) * A_ROW + row] = a[i].z;
        sA[(kq + 3) * A_ROW + row] = a[i].w;
    }
#pragma unroll
    for (int i = 0; i < B_VECS; ++i) {
        int k, col;
        bCoord(i, tid, k, col);
        *reinterpret_cast<float4*>(sB + k * B_ROW + col) = b[i];
    }
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

__global__ void __launch_bounds__(THREADS, 2)
    gemmFmaWarpTile(const float* __restrict__ A, const float* __restrict__ B,
                    Output* __restrict__ C, int M, int N, int K, long long lda, long long ldb,
                    long long ldc, float alpha, float beta)
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
    const int numKTiles = (K + BLOCK_K - 1) / BLOCK_K;
    float4 a[A_VECS];
    float4 b[B_VECS];

    fetchTile(src, a, b, 0, tid);
    storeTile(sA, sB, a, b, tid);
    __syncthreads();
    loadFragments(sA, sB, 0, aBase, bBase, ra[0], rb[0]);

    for (int t = 0; t < numKTiles; ++t) {
        const int cur = t & 1;
        const float* const curA = sA + cur * A_STAGE;
        const float* const curB = sB + cur * B_STAGE;
        // The next k-tile goes to registers now and to the other buffer at the last step. Nobody
        // reads that buffer any more: its last reads came before the barrier of the previous
        // k-tile's last step. `more` is uniform, so the barrier below is reached by all or none.
        const bool more = t + 1 < numKTiles;
        if (more)
            fetchTile(src, a, b, (t + 1) * BLOCK_K, tid);
#pragma unroll
        for (int k = 0; k < BLOCK_K; ++k) {
            if (k + 1 < BLOCK_K) {
                loadFragments(curA, curB, k + 1, aBase, bBase, ra[(k + 1) & 1], rb[(k + 1) & 1]);
            } else if (more) {
                float* const nextA = sA + (cur ^ 1) * A_STAGE;
                float* const nextB = sB + (cur ^ 1) * B_STAGE;
                storeTile(nextA, nextB, a, b, tid);
                __syncthreads();
                loadFragments(nextA, nextB, 0, aBase, bBase, ra[0], rb[0]);
            }
            outerProduct(acc, ra[k & 1], rb[k & 1]);
        }
    }

#pragma unroll
    for (int i = 0; i < THREAD_M; ++i) {
        const int row = rowBase + aBase + (i / 4) * GROUP_STRIDE_M + (i % 4);
#pragma unroll
        for (int g = 0; g < THREAD_N / 4; ++g) {
            const int col = colBase + bBase + g * GROUP_STRIDE_N;
            epilogueQuad(C, ldc, M, N, row, col, &acc[i][g * 4], alpha, beta);
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
    gemmFmaWarpTile<<<static_cast<unsigned>(tiles), THREADS, SMEM_BYTES, stream>>>(
        static_cast<const float*>(args->inputs[0].data),
        static_cast<const float*>(args->inputs[1].data), static_cast<Output*>(args->outputs[0].data),
        M, N, K, KEVOLVE_GEMM_LDA(args), KEVOLVE_GEMM_LDB(args), KEVOLVE_GEMM_LDC(args),
        static_cast<float>(args->scalars[0]), static_cast<float>(args->scalars[1]));
    return cudaGetLastError() == cudaSuccess ? 0 : 5;
}
