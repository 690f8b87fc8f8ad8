// expect: ok
// task: gemm_bf16_m1_n14336_k4096.json
// Kevolve built-in kernel, family fma_tiled (generated; edit freely).
// Task: gemm_bf16_m1_n14336_k4096 (gemm 1x14336x4096 bf16*bf16->bf16).
// Strategy: 16x16 tiles of A and B in shared memory (rows padded by one word), 1 output(s) per thread (256 threads), FP32 FMA, C written as bf16.
// Rationale:
//   Baseline for a small output: 16x16 tiles with one output per thread (256 threads), so more
//   blocks cover the GPU.

#include <kevolve/abi.h>
#include <cuda_bf16.h>

namespace {

using InputA = __nv_bfloat16;
using InputB = __nv_bfloat16;
using Output = __nv_bfloat16;

constexpr int TILE = 16;           // rows and columns of C per block, and the k-tile depth
constexpr int OUTPUTS_N = 1; // columns of C per thread, THREADS_N columns apart
constexpr int THREADS_N = TILE / OUTPUTS_N;
constexpr int THREADS = TILE * THREADS_N;
// A warp covers 32 / THREADS_N rows of the A tile and reads one k of each: one extra word per
// row puts those rows in different banks (without it, rows TILE words apart share a bank).
constexpr int ROW = TILE + 1;
constexpr int LOADS = TILE * TILE / THREADS; // elements of each tile a thread stages
static_assert(TILE * TILE % THREADS == 0, "tiles must split evenly over the threads");

__device__ __forceinline__ float aToFloat(InputA x) { return __bfloat162float(x); }
__device__ __forceinline__ float bToFloat(InputB x) { return __bfloat162float(x); }

// C = alpha * x + beta * C at (row, col), inside M x N only. C is read only when beta is non-zero:
// the harness poisons it, and 0 * NaN is NaN.
__device__ __forceinline__ void storeOutput(Output* __restrict__ C, long long ldc, int M, int N,
                                            int row, int col, float x, float alpha, float beta)
{
    if (row >= M || col >= N)
        return;
    Output* p = C + row * ldc + col;
    float v = alpha * x;
    if (beta != 0.0f)
        v += beta * __bfloat162float(*p);
    *p = __float2bfloat16_rn(v);
}

__global__ void __launch_bounds__(THREADS)
    gemmFmaTiled(const InputA* __restrict__ A, const InputB* __restrict__ B,
                 Output* __restrict__ C, int M, int N, int K, long long lda, long long ldb,
                 long long ldc, float alpha, float beta)
{
    __shared__ float sA[TILE * ROW]; // (m, k), converted to fp32
    __shared__ float sB[TILE * ROW]; // (k, n), converted to fp32

    // Row tiles run along blockIdx.x, which has no 65535 limit, so very tall outputs launch.
    const int rowBase = blockIdx.x * TILE;
    const int colBase = blockIdx.y * TILE;
    const int tid = threadIdx.x;
    const int ty = tid / THREADS_N;
    const int tx = tid % THREADS_N;

    float acc[OUTPUTS_N] = {};
    for (int k0 = 0; k0 < K; k0 += TILE) {
        // Consecutive threads take consecutive columns of a tile row, so global reads coalesce.
        // Elements outside M, N or K are staged as zeros and add nothing to the sums.
#pragma unroll
        for (int i = 0; i < LOADS; ++i) {
            const int id = tid + i * THREADS;
            const int r = id / TILE;
            const int c = id % TILE;
            const int aRow = rowBase + r;
            const int aK = k0 + c;
            sA[r * ROW + c] = aRow < M && aK < K ? aToFloat(A[aRow * lda + aK]) : 0.0f;
            const int bK = k0 + r;
            const int bCol = colBase + c;
            sB[r * ROW + c] = bK < K && bCol < N ? bToFloat(B[bK * ldb + bCol]) : 0.0f;
        }
        __syncthreads();
        // sA[ty][k] is one word per row of the warp (broadcast within a row); sB[k][col] is
        // THREADS_N consecutive words, the same for every row of the warp.
#pragma unroll
        for (int k = 0; k < TILE; ++k) {
            const float a = sA[ty * ROW + k];
#pragma unroll
            for (int j = 0; j < OUTPUTS_N; ++j)
                acc[j] = fmaf(a, sB[k * ROW + tx + j * THREADS_N], acc[j]);
        }
        __syncthreads();
    }

#pragma unroll
    for (int j = 0; j < OUTPUTS_N; ++j)
        storeOutput(C, ldc, M, N, rowBase + ty, colBase + tx + j * THREADS_N, acc[j], alpha, beta);
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
    const int tilesN = (N + TILE - 1) / TILE;
    if (tilesN > 65535)
        return 4; // gridDim.y limit
    const dim3 grid(static_cast<unsigned>((M + TILE - 1) / TILE), static_cast<unsigned>(tilesN));
    gemmFmaTiled<<<grid, THREADS, 0, stream>>>(
        static_cast<const InputA*>(args->inputs[0].data),
        static_cast<const InputB*>(args->inputs[1].data),
        static_cast<Output*>(args->outputs[0].data), M, N, K, KEVOLVE_GEMM_LDA(args),
        KEVOLVE_GEMM_LDB(args), KEVOLVE_GEMM_LDC(args), static_cast<float>(args->scalars[0]),
        static_cast<float>(args->scalars[1]));
    return cudaGetLastError() == cudaSuccess ? 0 : 5;
}
