// expect: ok
// task: gemm_bf16_m64_n4096_k4096.json
// Kevolve built-in kernel, family fma_regblock (generated; edit freely).
// Task: gemm_bf16_m64_n4096_k4096 (gemm 64x4096x4096 bf16*bf16->bf16).
// Strategy: block 64x64x16, 4x4 outputs per thread (256 threads), FP32 FMA, 
//   double-buffered shared memory, C written as bf16.
// Rationale:
//   Small output: 64x64 tiles with 4x4 per thread so more blocks run.

#include <kevolve/abi.h>
#include <cuda_bf16.h>
#include <stdint.h>

namespace {

using Input = __nv_bfloat16;
using Output = __nv_bfloat16;

constexpr int BLOCK_M = 64;
constexpr int BLOCK_N = 64;
constexpr int BLOCK_K = 16;
constexpr int THREAD_M = 4; // rows of C per thread, in groups of 4
constexpr int THREAD_N = 4; // columns of C per thread, in groups of 4
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

// Four consecutive inputs as floats (8-byte aligned: leading dimensions are multiples of 8).
__device__ __forceinline__ void load4(const Input* p, float (&v)[4])
{
    const uint2 raw = *reinterpret_cast<const uint2*>(p);
    const float2 lo = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw.x));
    const float2 hi = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw.y));
    v[0] = lo.x;
    v[1] = lo.y;
    v[2] = hi.x;
    v[3] = hi.y;
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
    const dim3 grid(static_cast<unsigned>((N + BLOCK_N - 1) / BLOCK_N),
                    static_cast<unsigned>((M + BLOCK_M - 1) / BLOCK_M));
    gemmFmaRegBlock<<<grid, THREADS, 0, stream>>>(
        static_cast<const Input*>(args->inputs[0].data),
        static_cast<const Input*>(args->inputs[1].data), static_cast<Output*>(args->outputs[0].data),
        M, N, K, KEVOLVE_GEMM_LDA(args), KEVOLVE_GEMM_LDB(args), KEVOLVE_GEMM_LDC(args),
        static_cast<float>(args->scalars[0]), static_cast<float>(args->scalars[1]));
    return cudaGetLastError() == cudaSuccess ? 0 : 5;
}
