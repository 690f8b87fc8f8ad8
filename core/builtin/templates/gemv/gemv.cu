${# gemv/gemv.cu: the gemv family (family_gemv.cpp). Values: HEADER, A_T, X_T, Y_T, ELEMENTS, WARPS,}
${# VPT, SPLIT, CHECKS. Conditions: F16, BF16, TRANSPOSED (y = A^T x), PARTIALS (split_m > 1).}
${HEADER}
#include <kevolve/abi.h>
${if F16}
#include <cuda_fp16.h>
${endif}
${if BF16}
#include <cuda_bf16.h>
${endif}
#include <stdint.h>

namespace {

using ElemA = ${A_T};
using ElemX = ${X_T};
using ElemY = ${Y_T};
${ELEMENTS}
constexpr int WARPS = ${WARPS};
constexpr int THREADS = WARPS * 32;
constexpr int VPT = ${VPT}; // ${if TRANSPOSED}rows of A each warp has in flight per step${else}vectors of A and x per lane in flight per step${endif}
${if TRANSPOSED}
constexpr int COLS = 32 * VEC;    // columns of y per block: a warp's lanes side by side
constexpr int SPLIT = ${SPLIT};       // blocks along M per column range, summed ${if PARTIALS}by gemvFinish${else}(one range: no second kernel)${endif}

// y = A^T x: block (bx, by) owns columns bx * COLS .. + COLS - 1 and the by-th of SPLIT row
// ranges. Each warp walks rows WARPS apart, VPT rows per step in flight, each lane accumulating
// VEC columns in fp32; the warps' sums meet in shared memory.
__global__ void __launch_bounds__(THREADS)
    gemvColumns(const ElemA* __restrict__ A, const ElemX* __restrict__ x, ${if PARTIALS}float* __restrict__ partial${else}ElemY* __restrict__ y${endif},
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
            ${if PARTIALS}partial[blockIdx.y * N + c] = s;${else}fromFloat(s, y[c]);${endif}
    }
}
${if PARTIALS}

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
${endif}
${else}
constexpr int CHUNK = 32 * VEC * VPT; // columns a warp reads per step

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
${endif}

} // namespace
${if TRANSPOSED}

extern "C" KEVOLVE_EXPORT uint64_t kevolve_workspace_bytes(const KevolveArgs* args)
{
    return ${if PARTIALS}static_cast<uint64_t>(SPLIT) * static_cast<uint64_t>(KEVOLVE_COLS(args)) * sizeof(float)${else}0; // one row range: no partial sums${endif};
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
${if PARTIALS}
    if (args->workspace_bytes < kevolve_workspace_bytes(args) || !args->workspace)
        return 7;
    float* partial = static_cast<float*>(args->workspace);
    gemvColumns<<<dim3(static_cast<unsigned>(columnBlocks), SPLIT), THREADS, 0, stream>>>(
        static_cast<const ElemA*>(args->inputs[0].data),
        static_cast<const ElemX*>(args->inputs[1].data), partial, M, N, lda);
    const long long finishBlocks = min((N + 255) / 256, 65536LL);
    gemvFinish<<<finishBlocks, 256, 0, stream>>>(
        partial, static_cast<ElemY*>(args->outputs[0].data), N);
${else}
    gemvColumns<<<dim3(static_cast<unsigned>(columnBlocks), SPLIT), THREADS, 0, stream>>>(
        static_cast<const ElemA*>(args->inputs[0].data),
        static_cast<const ElemX*>(args->inputs[1].data),
        static_cast<ElemY*>(args->outputs[0].data), M, N, lda);
${endif}
    return cudaGetLastError() == cudaSuccess ? 0 : 5;
}
${else}

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
${endif}
