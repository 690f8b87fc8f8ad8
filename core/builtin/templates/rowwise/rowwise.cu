${# rowwise/rowwise.cu: the file skeleton of the row-wise family (family_rowwise.cpp): includes, knobs}
${# as constants, the row reduction, chunk loads and stores, and kevolve_launch for softmax, layernorm,}
${# rmsnorm and reduce. Values: HEADER, ELEM_X/Y/W/B (CUDA types), ELEMENTS (memory/conversion.cu and}
${# memory/vectors.cu), WARPS, VPT, CTAS, KERNEL (the op template), CHECKS (memory/launch_checks.cu).}
${# Conditions: F16, BF16, BLOCK (a block per row), PERSISTENT, SOFTMAX, LAYERNORM, RMSNORM, REDUCE, MAX,}
${# PREFETCH, TAIL_TESTED (with PREFETCH: the instantiation testing only a thread's last vector),}
${# ASYNC, ONE_ROW (pipeline none), SPLIT (a row over a cluster of blocks: SPLIT_KERNEL,}
${# rowwise/split.cu), BULK (pipeline=bulk, softmax: BULK_KERNEL, rowwise/split.cu's helpers and}
${# rowwise/bulk.cu), COOPERATIVE_GROUPS (SPLIT or BULK).}
${HEADER}
#include <kevolve/abi.h>
${if F16}
#include <cuda_fp16.h>
${endif}
${if BF16}
#include <cuda_bf16.h>
${endif}
#include <stdint.h>
${if COOPERATIVE_GROUPS}
#include <cooperative_groups.h>
${endif}

namespace {

using ElemX = ${ELEM_X};
using ElemY = ${ELEM_Y};
${if LAYERNORM}
using ElemW = ${ELEM_W};
using ElemB = ${ELEM_B};
${endif}
${if RMSNORM}
using ElemW = ${ELEM_W};
${endif}

${ELEMENTS}
constexpr int WARPS = ${WARPS};
constexpr int THREADS = WARPS * 32;
// Threads that share one row: ${if BLOCK}the whole block (one row per block).${else}one warp (WARPS rows per block).${endif}
constexpr int ROW_THREADS = ${if BLOCK}THREADS${else}32${endif};
constexpr int ROWS_PER_CTA = THREADS / ROW_THREADS;
constexpr int VPT = ${VPT};                     // vectors per thread held in registers
constexpr int CHUNK = ROW_THREADS * VEC * VPT; // row elements one register load covers
// ${if PERSISTENT}Blocks per SM of the persistent grid.${else}0: one block per ROWS_PER_CTA rows (no persistent grid).${endif}
[[maybe_unused]] constexpr int CTAS_PER_SM = ${CTAS};
[[maybe_unused]] constexpr float LOG2E = 1.4426950408889634f;

__device__ __forceinline__ float shuffleDown(float v, int offset)
{
    return __shfl_down_sync(0xffffffffu, v, offset);
}
[[maybe_unused]] __device__ __forceinline__ float shuffleFirst(float v) { return __shfl_sync(0xffffffffu, v, 0); }

${if BLOCK}
// The block combines its values: within each warp by shuffles, then the warps' results in a fixed
// order, so every thread gets the same bits. The warps' results alternate between two buffers
// (phase flips on every call), so one barrier per reduction suffices: a warp can write the next
// reduction's buffer only after every warp has passed this one's barrier, and the reduction after
// that, which reuses this buffer, only after every warp has finished reading it.
template <typename T, typename F>
__device__ __forceinline__ T rowReduce(T v, F combine, int& phase)
{
    __shared__ T partial[2][WARPS];
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        v = combine(v, shuffleDown(v, offset));
    T* buffer = partial[phase];
    phase ^= 1;
    if ((threadIdx.x & 31) == 0)
        buffer[threadIdx.x / 32] = v;
    __syncthreads();
    T r = buffer[0];
#pragma unroll
    for (int w = 1; w < WARPS; ++w)
        r = combine(r, buffer[w]);
    return r;
}
${else}
// A row's warp combines its values; every lane gets lane 0's result, so all agree bit for bit.
// (phase is the block reduction's; a warp needs no buffer.)
template <typename T, typename F> __device__ __forceinline__ T rowReduce(T v, F combine, int&)
{
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        v = combine(v, shuffleDown(v, offset));
    return shuffleFirst(v);
}
${endif}

// Vector j of thread t covers columns base + (j * ROW_THREADS + t) * VEC onwards, so neighbouring
// threads read neighbouring vectors (coalesced). Columns at or past N read as `fill`.
template <typename T>
__device__ __forceinline__ void loadChunk(const T* row, long long N, long long base, int t,
                                          float fill, float (&v)[VPT][VEC])
{
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const long long col = base + (static_cast<long long>(j) * ROW_THREADS + t) * VEC;
        if (col + VEC <= N)
            loadVec(row + col, v[j]);
        else
            loadTail(row + col, N - col, fill, v[j]);
    }
}

template <typename T>
__device__ __forceinline__ void storeChunk(T* row, long long N, long long base, int t,
                                           const float (&v)[VPT][VEC])
{
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const long long col = base + (static_cast<long long>(j) * ROW_THREADS + t) * VEC;
        if (col + VEC <= N)
            storeVec(row + col, v[j]);
        else
            storeTail(row + col, N - col, v[j]);
    }
}

// a[0..VEC) combined pairwise: log2(VEC) dependent steps instead of VEC - 1. Per-lane
// accumulators of this shape keep the hot loops' chains of dependent adds short.
template <typename F> __device__ __forceinline__ float combineLanes(float (&a)[VEC], F combine)
{
#pragma unroll
    for (int w = VEC / 2; w > 0; w /= 2)
#pragma unroll
        for (int i = 0; i < w; ++i)
            a[i] = combine(a[i], a[i + w]);
    return a[0];
}

// Elements of vector j of thread t that lie inside the row (0..VEC).
[[maybe_unused]] __device__ __forceinline__ int validIn(long long N, long long base, int j, int t)
{
    const long long col = base + (static_cast<long long>(j) * ROW_THREADS + t) * VEC;
    return static_cast<int>(min(max(N - col, 0LL), static_cast<long long>(VEC)));
}
${KERNEL}
${if SPLIT}
${SPLIT_KERNEL}
${endif}
${if BULK}
${BULK_KERNEL}
${endif}
} // namespace

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream)
{
${CHECKS}${if LAYERNORM}    if (!(args->scalars[0] > 0.0))
        return 6; // epsilon
${endif}
${if RMSNORM}
    if (!(args->scalars[0] > 0.0))
        return 6; // epsilon
${endif}
${if REDUCE}
    if (args->scalars[0] != ${if MAX}1${else}0${endif})
        return 6; // generated for reduction "${if MAX}max${else}sum${endif}" only
${endif}

    const long long M = KEVOLVE_ROWS(args);
    const long long N = KEVOLVE_COLS(args);
    const long long ldx = KEVOLVE_LDX(args);
    // Vector accesses need every row to start on a VEC-element boundary.
${if REDUCE}
    if (ldx % VEC != 0 ||
        reinterpret_cast<uintptr_t>(args->inputs[0].data) % (VEC * sizeof(ElemX)) != 0)
${else}
    if (ldx % VEC != 0 || KEVOLVE_LDY(args) % VEC != 0 ||
        reinterpret_cast<uintptr_t>(args->inputs[0].data) % (VEC * sizeof(ElemX)) != 0 ||
${if LAYERNORM}
        reinterpret_cast<uintptr_t>(args->inputs[1].data) % (VEC * sizeof(ElemW)) != 0 ||
        reinterpret_cast<uintptr_t>(args->inputs[2].data) % (VEC * sizeof(ElemB)) != 0 ||
${endif}
${if RMSNORM}
        reinterpret_cast<uintptr_t>(args->inputs[1].data) % (VEC * sizeof(ElemW)) != 0 ||
${endif}
        reinterpret_cast<uintptr_t>(args->outputs[0].data) % (VEC * sizeof(ElemY)) != 0)
${endif}
        return 4;
${if BULK}
    {
        // A block's slice of the row in shared memory; a slice over what a block may have, less
        // 1 KB for the barriers and the reduction's partials, streams (the one-row kernel below).
        const long long bytes = bulkSlice(N) * static_cast<long long>(sizeof(ElemX));
        if (bytes <= static_cast<long long>(args->device.max_smem_per_block_optin) - 1024) {
            // Over 48 KB of dynamic shared memory per block must be asked for.
            if (bytes > 48 * 1024 &&
                cudaFuncSetAttribute(softmaxRowsBulk, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(bytes)) != cudaSuccess)
                return 5;
            // One row per cluster of SPLIT blocks, in launches of at most 2^28 rows.
            for (long long first = 0; first < M; first += (1LL << 28)) {
                const long long grid = min(M - first, 1LL << 28) * SPLIT;
                softmaxRowsBulk<<<grid, THREADS, bytes, stream>>>(
                    static_cast<const ElemX*>(args->inputs[0].data) + first * ldx,
                    static_cast<ElemY*>(args->outputs[0].data) + first * KEVOLVE_LDY(args), N,
                    ldx, KEVOLVE_LDY(args));
            }
            return cudaGetLastError() == cudaSuccess ? 0 : 5;
        }
    }
${endif}
${if SPLIT}
    // A cluster of SPLIT blocks per row, in launches of at most 2^28 rows (the grid's limit).
    for (long long first = 0; first < M; first += (1LL << 28)) {
        const long long grid = min(M - first, 1LL << 28) * SPLIT;
${if SOFTMAX}
        softmaxRowsSplit<<<grid, THREADS, 0, stream>>>(
            static_cast<const ElemX*>(args->inputs[0].data) + first * ldx,
            static_cast<ElemY*>(args->outputs[0].data) + first * KEVOLVE_LDY(args), N, ldx,
            KEVOLVE_LDY(args));
${endif}
${if LAYERNORM}
        layerNormRowsSplit<<<grid, THREADS, 0, stream>>>(
            static_cast<const ElemX*>(args->inputs[0].data) + first * ldx,
            static_cast<const ElemW*>(args->inputs[1].data),
            static_cast<const ElemB*>(args->inputs[2].data),
            static_cast<ElemY*>(args->outputs[0].data) + first * KEVOLVE_LDY(args), N, ldx,
            KEVOLVE_LDY(args), static_cast<float>(args->scalars[0]));
${endif}
${if RMSNORM}
        rmsNormRowsSplit<<<grid, THREADS, 0, stream>>>(
            static_cast<const ElemX*>(args->inputs[0].data) + first * ldx,
            static_cast<const ElemW*>(args->inputs[1].data),
            static_cast<ElemY*>(args->outputs[0].data) + first * KEVOLVE_LDY(args), N, ldx,
            KEVOLVE_LDY(args), static_cast<float>(args->scalars[0]));
${endif}
${if REDUCE}
        reduceRowsSplit<<<grid, THREADS, 0, stream>>>(
            static_cast<const ElemX*>(args->inputs[0].data) + first * ldx,
            static_cast<ElemY*>(args->outputs[0].data) + first, N, ldx);
${endif}
    }
${else}
    const long long rowGroups = (M + ROWS_PER_CTA - 1) / ROWS_PER_CTA;
${if PERSISTENT}
    // Persistent: at most CTAS_PER_SM blocks per SM (all resident) loop over the rows,
    // as few as finish in the same number of rounds, so the last round is full
    // (16384 rows on 4 x 132 blocks: 32 rows on each of 512, not 31 or 32 on 528).
    const long long slots = max(1LL, min(rowGroups, static_cast<long long>(CTAS_PER_SM) *
                                                     args->device.sm_count));
    const long long rounds = max(1LL, (rowGroups + slots - 1) / slots);
    const long long grid = (rowGroups + rounds - 1) / rounds;
${else}
    const long long grid = min(rowGroups, 2147483647LL);
${endif}
${if SOFTMAX}
${if PREFETCH}
    // Rows that fit in registers take the prefetching kernel (rows of exactly CHUNK
    // elements without bounds tests, rows that only the last vector of a thread can pass with
    // that vector's tests only); longer rows, and rows of a part vector (N % VEC != 0: short
    // validation rows), stream.
    if (N == CHUNK)
        softmaxRowsPrefetch<VPT><<<grid, THREADS, 0, stream>>>(
            static_cast<const ElemX*>(args->inputs[0].data),
            static_cast<ElemY*>(args->outputs[0].data), M, N, ldx, KEVOLVE_LDY(args));
${if TAIL_TESTED}
    else if (N < CHUNK && N > CHUNK - ROW_THREADS * VEC && N % VEC == 0) // last vector tested
        softmaxRowsPrefetch<VPT - 1><<<grid, THREADS, 0, stream>>>(
            static_cast<const ElemX*>(args->inputs[0].data),
            static_cast<ElemY*>(args->outputs[0].data), M, N, ldx, KEVOLVE_LDY(args));
${endif}
    else if (N <= CHUNK && N % VEC == 0)
        softmaxRowsPrefetch<0><<<grid, THREADS, 0, stream>>>(
            static_cast<const ElemX*>(args->inputs[0].data),
            static_cast<ElemY*>(args->outputs[0].data), M, N, ldx, KEVOLVE_LDY(args));
    else
        softmaxRows<<<grid, THREADS, 0, stream>>>(
            static_cast<const ElemX*>(args->inputs[0].data),
            static_cast<ElemY*>(args->outputs[0].data), M, N, ldx, KEVOLVE_LDY(args));
${else}
    softmaxRows<<<grid, THREADS, 0, stream>>>(
        static_cast<const ElemX*>(args->inputs[0].data),
        static_cast<ElemY*>(args->outputs[0].data), M, N, ldx, KEVOLVE_LDY(args));
${endif}
${endif}
${if LAYERNORM}
${if PREFETCH}
    // Rows that fit in registers take the prefetching kernel (rows of exactly CHUNK
    // elements without bounds tests, rows that only the last vector of a thread can pass with
    // that vector's tests only); longer rows, and rows of a part vector (N % VEC != 0: short
    // validation rows), stream.
    if (N == CHUNK)
        layerNormRowsPrefetch<VPT><<<grid, THREADS, 0, stream>>>(
            static_cast<const ElemX*>(args->inputs[0].data),
            static_cast<const ElemW*>(args->inputs[1].data),
            static_cast<const ElemB*>(args->inputs[2].data),
            static_cast<ElemY*>(args->outputs[0].data), M, N, ldx, KEVOLVE_LDY(args),
            static_cast<float>(args->scalars[0]));
${if TAIL_TESTED}
    else if (N < CHUNK && N > CHUNK - ROW_THREADS * VEC && N % VEC == 0) // last vector tested
        layerNormRowsPrefetch<VPT - 1><<<grid, THREADS, 0, stream>>>(
            static_cast<const ElemX*>(args->inputs[0].data),
            static_cast<const ElemW*>(args->inputs[1].data),
            static_cast<const ElemB*>(args->inputs[2].data),
            static_cast<ElemY*>(args->outputs[0].data), M, N, ldx, KEVOLVE_LDY(args),
            static_cast<float>(args->scalars[0]));
${endif}
    else if (N <= CHUNK && N % VEC == 0)
        layerNormRowsPrefetch<0><<<grid, THREADS, 0, stream>>>(
            static_cast<const ElemX*>(args->inputs[0].data),
            static_cast<const ElemW*>(args->inputs[1].data),
            static_cast<const ElemB*>(args->inputs[2].data),
            static_cast<ElemY*>(args->outputs[0].data), M, N, ldx, KEVOLVE_LDY(args),
            static_cast<float>(args->scalars[0]));
    else
        layerNormRows<<<grid, THREADS, 0, stream>>>(
            static_cast<const ElemX*>(args->inputs[0].data),
            static_cast<const ElemW*>(args->inputs[1].data),
            static_cast<const ElemB*>(args->inputs[2].data),
            static_cast<ElemY*>(args->outputs[0].data), M, N, ldx, KEVOLVE_LDY(args),
            static_cast<float>(args->scalars[0]));
${endif}
${if ASYNC}
    // Rows that fit the ring take the cp.async kernel; longer rows stream.
    if (N <= CHUNK) {
        // Over 48 KB of shared memory per block must be asked for; the static
        // part (the reduction's partials, under 1 KB) counts too.
        if (RING_BYTES + 1024 > 48 * 1024 &&
            cudaFuncSetAttribute(layerNormRowsAsync,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 RING_BYTES) != cudaSuccess)
            return 5;
        layerNormRowsAsync<<<grid, THREADS, RING_BYTES, stream>>>(
            static_cast<const ElemX*>(args->inputs[0].data),
            static_cast<const ElemW*>(args->inputs[1].data),
            static_cast<const ElemB*>(args->inputs[2].data),
            static_cast<ElemY*>(args->outputs[0].data), M, N, ldx, KEVOLVE_LDY(args),
            static_cast<float>(args->scalars[0]));
    } else {
        layerNormRows<<<grid, THREADS, 0, stream>>>(
            static_cast<const ElemX*>(args->inputs[0].data),
            static_cast<const ElemW*>(args->inputs[1].data),
            static_cast<const ElemB*>(args->inputs[2].data),
            static_cast<ElemY*>(args->outputs[0].data), M, N, ldx, KEVOLVE_LDY(args),
            static_cast<float>(args->scalars[0]));
    }
${endif}
${if ONE_ROW}
    layerNormRows<<<grid, THREADS, 0, stream>>>(
        static_cast<const ElemX*>(args->inputs[0].data),
        static_cast<const ElemW*>(args->inputs[1].data),
        static_cast<const ElemB*>(args->inputs[2].data),
        static_cast<ElemY*>(args->outputs[0].data), M, N, ldx, KEVOLVE_LDY(args),
        static_cast<float>(args->scalars[0]));
${endif}
${endif}
${if RMSNORM}
${if PREFETCH}
    // Rows that fit in registers take the prefetching kernel (rows of exactly CHUNK
    // elements without bounds tests, rows that only the last vector of a thread can pass with
    // that vector's tests only); longer rows, and rows of a part vector (N % VEC != 0: short
    // validation rows), stream.
    if (N == CHUNK)
        rmsNormRowsPrefetch<VPT><<<grid, THREADS, 0, stream>>>(
            static_cast<const ElemX*>(args->inputs[0].data),
            static_cast<const ElemW*>(args->inputs[1].data),
            static_cast<ElemY*>(args->outputs[0].data), M, N, ldx, KEVOLVE_LDY(args),
            static_cast<float>(args->scalars[0]));
${if TAIL_TESTED}
    else if (N < CHUNK && N > CHUNK - ROW_THREADS * VEC && N % VEC == 0) // last vector tested
        rmsNormRowsPrefetch<VPT - 1><<<grid, THREADS, 0, stream>>>(
            static_cast<const ElemX*>(args->inputs[0].data),
            static_cast<const ElemW*>(args->inputs[1].data),
            static_cast<ElemY*>(args->outputs[0].data), M, N, ldx, KEVOLVE_LDY(args),
            static_cast<float>(args->scalars[0]));
${endif}
    else if (N <= CHUNK && N % VEC == 0)
        rmsNormRowsPrefetch<0><<<grid, THREADS, 0, stream>>>(
            static_cast<const ElemX*>(args->inputs[0].data),
            static_cast<const ElemW*>(args->inputs[1].data),
            static_cast<ElemY*>(args->outputs[0].data), M, N, ldx, KEVOLVE_LDY(args),
            static_cast<float>(args->scalars[0]));
    else
        rmsNormRows<<<grid, THREADS, 0, stream>>>(
            static_cast<const ElemX*>(args->inputs[0].data),
            static_cast<const ElemW*>(args->inputs[1].data),
            static_cast<ElemY*>(args->outputs[0].data), M, N, ldx, KEVOLVE_LDY(args),
            static_cast<float>(args->scalars[0]));
${else}
    rmsNormRows<<<grid, THREADS, 0, stream>>>(
        static_cast<const ElemX*>(args->inputs[0].data),
        static_cast<const ElemW*>(args->inputs[1].data),
        static_cast<ElemY*>(args->outputs[0].data), M, N, ldx, KEVOLVE_LDY(args),
        static_cast<float>(args->scalars[0]));
${endif}
${endif}
${if REDUCE}
    reduceRows<<<grid, THREADS, 0, stream>>>(
        static_cast<const ElemX*>(args->inputs[0].data),
        static_cast<ElemY*>(args->outputs[0].data), M, N, ldx);
${endif}
${endif}
    return cudaGetLastError() == cudaSuccess ? 0 : 5;
}
