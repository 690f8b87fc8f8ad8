${# fmawarp/fma_warptile.cu: the fma_warptile family (family_fmawarp.cpp). Values: HEADER, INCLUDES,}
${# OUT_T, BLOCK_M/N/K, WARP_M/N, THREAD_M/N, MIN_BLOCKS, OUTPUT_HELPERS, CHECKS.}
${HEADER}
#include <kevolve/abi.h>
${INCLUDES}#include <stdint.h>

namespace {

using Output = ${OUT_T};

constexpr int BLOCK_M = ${BLOCK_M};
constexpr int BLOCK_N = ${BLOCK_N};
constexpr int BLOCK_K = ${BLOCK_K};
constexpr int WARP_M = ${WARP_M};
constexpr int WARP_N = ${WARP_N};
constexpr int THREAD_M = ${THREAD_M}; // rows of C per thread, in groups of 4
constexpr int THREAD_N = ${THREAD_N}; // columns of C per thread, in groups of 4
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
// A is stored transposed (k, m) so a lane's rows are one float4; 4 floats of padding per row put
// the 4 scalar stores of a loaded A vector into different banks.
constexpr int A_ROW = BLOCK_M + 4;
constexpr int B_ROW = BLOCK_N;
constexpr int A_VECS = BLOCK_M * BLOCK_K / 4 / THREADS; // float4 global loads per thread
constexpr int B_VECS = BLOCK_K * BLOCK_N / 4 / THREADS;
static_assert(BLOCK_M * BLOCK_K % (4 * THREADS) == 0, "A tile must split evenly over threads");
static_assert(BLOCK_K * BLOCK_N % (4 * THREADS) == 0, "B tile must split evenly over threads");

${OUTPUT_HELPERS}
// Reads the k-tile at k0 into registers, one float4 per load, zeros outside M, N and K. K and N
// are multiples of 4 (the alignment rule), so a vector is wholly inside or wholly outside.
__device__ __forceinline__ void fetchTile(float4 (&a)[A_VECS], float4 (&b)[B_VECS],
                                          const float* __restrict__ A,
                                          const float* __restrict__ B, int M, int N, int K,
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
        a[i] = gRow < M && gK < K ? __ldg(reinterpret_cast<const float4*>(A + gRow * lda + gK))
                                  : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
#pragma unroll
    for (int i = 0; i < B_VECS; ++i) {
        const int id = tid + i * THREADS;
        const int k = id / (BLOCK_N / 4);
        const int col = (id % (BLOCK_N / 4)) * 4;
        const int gK = k0 + k;
        const int gCol = colBase + col;
        b[i] = gK < K && gCol < N ? __ldg(reinterpret_cast<const float4*>(B + gK * ldb + gCol))
                                  : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
}

__device__ __forceinline__ void storeTile(float* sA, float* sB, const float4 (&a)[A_VECS],
                                          const float4 (&b)[B_VECS], int tid)
{
#pragma unroll
    for (int i = 0; i < A_VECS; ++i) {
        const int id = tid + i * THREADS;
        const int row = id / (BLOCK_K / 4);
        const int k = (id % (BLOCK_K / 4)) * 4;
        sA[(k + 0) * A_ROW + row] = a[i].x;
        sA[(k + 1) * A_ROW + row] = a[i].y;
        sA[(k + 2) * A_ROW + row] = a[i].z;
        sA[(k + 3) * A_ROW + row] = a[i].w;
    }
#pragma unroll
    for (int i = 0; i < B_VECS; ++i) {
        const int id = tid + i * THREADS;
        const int k = id / (BLOCK_N / 4);
        const int col = (id % (BLOCK_N / 4)) * 4;
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

__global__ void __launch_bounds__(THREADS, ${MIN_BLOCKS})
    gemmFmaWarpTile(const float* __restrict__ A, const float* __restrict__ B,
                    Output* __restrict__ C, int M, int N, int K, long long lda, long long ldb,
                    long long ldc, float alpha, float beta)
{
    __shared__ __align__(16) float sA[2][BLOCK_K * A_ROW];
    __shared__ __align__(16) float sB[2][BLOCK_K * B_ROW];

    const int rowBase = blockIdx.y * BLOCK_M;
    const int colBase = blockIdx.x * BLOCK_N;
    const int tid = threadIdx.x;
    const int warp = tid >> 5;
    const int lane = tid & 31;
    // Offsets of this lane's first 4-group inside the block tile.
    const int aBase = (warp / WARPS_N) * WARP_M + (lane / LANES_N) * 4;
    const int bBase = (warp % WARPS_N) * WARP_N + (lane % LANES_N) * 4;

    float acc[THREAD_M][THREAD_N] = {};
    float4 a[A_VECS];
    float4 b[B_VECS];
    // Register double buffering: the fragments of step k + 1 are read from shared memory while
    // the FMAs of step k run.
    float ra[2][THREAD_M];
    float rb[2][THREAD_N];
    const int numKTiles = (K + BLOCK_K - 1) / BLOCK_K;

    fetchTile(a, b, A, B, M, N, K, lda, ldb, rowBase, colBase, 0, tid);
    storeTile(sA[0], sB[0], a, b, tid);
    __syncthreads();

    for (int t = 0; t < numKTiles; ++t) {
        const int buf = t & 1;
        // The next k-tile goes to registers now and to the other buffer after the FMAs; nobody
        // reads that buffer since the barrier that ended the previous iteration.
        const bool more = t + 1 < numKTiles;
        if (more)
            fetchTile(a, b, A, B, M, N, K, lda, ldb, rowBase, colBase, (t + 1) * BLOCK_K, tid);
        loadFragments(sA[buf], sB[buf], 0, aBase, bBase, ra[0], rb[0]);
#pragma unroll
        for (int k = 0; k < BLOCK_K; ++k) {
            if (k + 1 < BLOCK_K)
                loadFragments(sA[buf], sB[buf], k + 1, aBase, bBase, ra[(k + 1) & 1],
                              rb[(k + 1) & 1]);
#pragma unroll
            for (int i = 0; i < THREAD_M; ++i) {
#pragma unroll
                for (int j = 0; j < THREAD_N; ++j)
                    acc[i][j] = fmaf(ra[k & 1][i], rb[k & 1][j], acc[i][j]);
            }
        }
        if (more)
            storeTile(sA[buf ^ 1], sB[buf ^ 1], a, b, tid);
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < THREAD_M; ++i) {
        const int row = rowBase + aBase + (i / 4) * GROUP_STRIDE_M + (i % 4);
#pragma unroll
        for (int g = 0; g < THREAD_N / 4; ++g) {
            const int col = colBase + bBase + g * GROUP_STRIDE_N;
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
    gemmFmaWarpTile<<<grid, THREADS, 0, stream>>>(
        static_cast<const float*>(args->inputs[0].data),
        static_cast<const float*>(args->inputs[1].data), static_cast<Output*>(args->outputs[0].data),
        M, N, K, KEVOLVE_GEMM_LDA(args), KEVOLVE_GEMM_LDB(args), KEVOLVE_GEMM_LDC(args),
        static_cast<float>(args->scalars[0]), static_cast<float>(args->scalars[1]));
    return cudaGetLastError() == cudaSuccess ? 0 : 5;
}
