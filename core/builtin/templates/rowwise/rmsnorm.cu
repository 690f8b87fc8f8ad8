${# rowwise/rmsnorm.cu: the rmsnorm kernels (rowwise_rmsnorm.cpp), the skeleton's KERNEL.}
${# Conditions: PREFETCH (persistent grid, the next row prefetched packed), KEEP_WEIGHTS (W packed}
${# in registers for all of a block's rows). Value: PACKED (rowwise/packed.cu, with PREFETCH).}

// y = x * rstd * w for one chunk in registers. W is read one vector at a time, so only the row
// stays live in registers (more rows in flight).
__device__ __forceinline__ void scaleChunk(const ElemW* __restrict__ W, long long N, long long base,
                                           int t, float rstd, float (&v)[VPT][VEC])
{
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const long long col = base + (static_cast<long long>(j) * ROW_THREADS + t) * VEC;
        float w[VEC];
        if (col + VEC <= N)
            loadVec(W + col, w);
        else
            loadTail(W + col, N - col, 0.0f, w);
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            v[j][i] = v[j][i] * rstd * w[i];
    }
}

// This thread's sum of squares of one chunk; columns past N hold 0 and add nothing. The terms are
// never negative, so nothing cancels: one pass in fp32 holds what the row needs.
__device__ __forceinline__ float chunkSquares(const float (&v)[VPT][VEC])
{
    float q[VEC];
#pragma unroll
    for (int i = 0; i < VEC; ++i)
        q[i] = 0.0f;
#pragma unroll
    for (int j = 0; j < VPT; ++j)
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            q[i] = fmaf(v[j][i], v[j][i], q[i]);
    return combineLanes(q, [](float a, float b) { return a + b; });
}

[[maybe_unused]] __global__ void __launch_bounds__(THREADS)
    rmsNormRows(const ElemX* __restrict__ X, const ElemW* __restrict__ W, ElemY* __restrict__ Y,
                long long M, long long N, long long ldx, long long ldy, float epsilon)
{
    const int t = threadIdx.x % ROW_THREADS;
    int phase = 0; // the block reduction's buffer
    const auto sumOf = [](float a, float b) { return a + b; };
    const float count = static_cast<float>(N);
    for (long long row = static_cast<long long>(blockIdx.x) * ROWS_PER_CTA + threadIdx.x / ROW_THREADS;
         row < M; row += static_cast<long long>(gridDim.x) * ROWS_PER_CTA) {
        const ElemX* x = X + row * ldx;
        ElemY* y = Y + row * ldy;
        if (N <= CHUNK) {
            // The row fits in registers: one read and one write, the DRAM floor.
            float v[VPT][VEC];
            loadChunk(x, N, 0, t, 0.0f, v);
            // A zero row gives 0 / sqrt(epsilon) = 0; epsilon > 0 is checked at launch.
            const float rstd = 1.0f / sqrtf(rowReduce(chunkSquares(v), sumOf, phase) / count + epsilon);
            scaleChunk(W, N, 0, t, rstd, v);
            storeChunk(y, N, 0, t, v);
        } else {
            // Longer than the register cache: the mean square in one read, then the output.
            float squares = 0.0f;
            for (long long base = 0; base < N; base += CHUNK) {
                float v[VPT][VEC];
                loadChunk(x, N, base, t, 0.0f, v);
                squares += chunkSquares(v);
            }
            const float rstd = 1.0f / sqrtf(rowReduce(squares, sumOf, phase) / count + epsilon);
            for (long long base = 0; base < N; base += CHUNK) {
                float v[VPT][VEC];
                loadChunk(x, N, base, t, 0.0f, v);
                scaleChunk(W, N, base, t, rstd, v);
                storeChunk(y, N, base, t, v);
            }
        }
    }
}
${if PREFETCH}
${PACKED}
// A thread's share of a row that fits in registers, still packed (converted on use, so two rows
// fit). Columns past N hold 0 once the row is used (fillPastRow).
struct PackedRow {
    RawX v[VPT];
};

// Issues the loads of row x and returns without waiting for them. INSIDE: the leading vectors of
// every thread that lie inside the row (loadVectors).
template <int INSIDE>
__device__ __forceinline__ void loadRow(const ElemX* x, long long N, int t, PackedRow& r)
{
    loadVectors<INSIDE>(x, N, t, r.v);
}

__device__ __forceinline__ void keepPacked(PackedRow& r)
{
#pragma unroll
    for (int j = 0; j < VPT; ++j)
        keepPacked(r.v[j]);
}
${if KEEP_WEIGHTS}

using RawW = Raw<VEC * sizeof(ElemW)>::type;

// W for this thread's columns, loaded once per block and kept packed for all its rows (columns
// past N read as 0).
struct PackedWeights {
    RawW w[VPT];
};
template <int INSIDE>
__device__ __forceinline__ void loadWeights(const ElemW* W, long long N, int t, PackedWeights& p)
{
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const long long col = (static_cast<long long>(j) * ROW_THREADS + t) * VEC;
        if (j < INSIDE)
            p.w[j] = *reinterpret_cast<const RawW*>(W + col);
        else
            loadPackedVec(W + col, N - col, ElemW(0.0f), p.w[j]);
    }
}

__device__ __forceinline__ void keepPacked(PackedWeights& p)
{
#pragma unroll
    for (int j = 0; j < VPT; ++j)
        keepPacked(p.w[j]);
}
${endif}

${if PACKED_PAIRS}

// y = n * w for one vector, stored, where W and Y share one 16-bit type: n is rounded to it and
// the product runs two elements an instruction (HMUL2) on W's raw words, never converted (half a
// pack and half an HMUL2 an element where the float path took a conversion and an FMUL). Two
// roundings relative to |y| itself: no cancellation, at most one unit of the output type more.
__device__ __forceinline__ void storeScaled(ElemY* y, const float (&n)[VEC], const RawOf<ElemW>& w)
{
    static_assert(VEC % 2 == 0 && sizeof(RawOf<ElemW>) == sizeof(RawOf<ElemY>), "packed pairs");
    ${PAIR} wp[VEC / 2];
    ${PAIR} out[VEC / 2];
    memcpy(wp, &w, sizeof(wp));
#pragma unroll
    for (int k = 0; k < VEC / 2; ++k)
        out[k] = __hmul2(${PACK_PAIR}(n[2 * k], n[2 * k + 1]), wp[k]);
    RawOf<ElemY> raw;
    memcpy(&raw, out, sizeof(raw));
    *reinterpret_cast<RawOf<ElemY>*>(y) = raw;
}
${endif}

// INSIDE: the leading vectors of every thread that lie inside the row, so are read, used and stored
// without a bounds test (loadVectors; kevolve_launch picks VPT, VPT - 1 or 0 from N).
template <int INSIDE>
__global__ void __launch_bounds__(THREADS, CTAS_PER_SM)
    rmsNormRowsPrefetch(const ElemX* __restrict__ X, const ElemW* __restrict__ W,
                        ElemY* __restrict__ Y, long long M, long long N, long long ldx,
                        long long ldy, float epsilon)
{
    const int t = threadIdx.x % ROW_THREADS;
    int phase = 0; // the block reduction's buffer
    const auto sumOf = [](float a, float b) { return a + b; };
    const float count = static_cast<float>(N);
    const long long step = static_cast<long long>(gridDim.x) * ROWS_PER_CTA;
    long long row = static_cast<long long>(blockIdx.x) * ROWS_PER_CTA + threadIdx.x / ROW_THREADS;
${if KEEP_WEIGHTS}
    PackedWeights weights;
    loadWeights<INSIDE>(W, N, t, weights);
${endif}
    PackedRow current;
    if (row < M)
        loadRow<INSIDE>(X + row * ldx, N, t, current);
    for (; row < M; row += step) {
        // The next row's loads go out first and are waited for only when it becomes current.
        PackedRow next;
        if (row + step < M)
            loadRow<INSIDE>(X + (row + step) * ldx, N, t, next);
${if KEEP_WEIGHTS}
        keepPacked(weights);
${endif}
        fillPastRow<INSIDE>(current.v, N, t, ElemX(0.0f));
        float q[VEC];
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            q[i] = 0.0f;
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            float v[VEC];
            unpackVec<ElemX>(current.v[j], v);
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                q[i] = fmaf(v[i], v[i], q[i]);
        }
        const float squares = rowReduce(combineLanes(q, sumOf), sumOf, phase);
        const float rstd = 1.0f / sqrtf(squares / count + epsilon);
        ElemY* y = Y + row * ldy;
        keepPacked(current);
${if !KEEP_WEIGHTS}
        // W's vectors of the row, all issued before the first is used: each passes an opaque asm,
        // so the compiler cannot sink its load into the store's test below (with bf16 words
        // converted in pairs it did, and every W load waited in turn: rows of 7000 and 20000
        // 85 -> 70% of the DRAM floor).
        RawOf<ElemW> wRaw[VPT];
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            wRaw[j] = loadWeightRaw(W, (j * ROW_THREADS + t) * VEC, N, j < INSIDE);
            keepPacked(wRaw[j]);
        }
${endif}
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            const int col = (j * ROW_THREADS + t) * VEC; // N <= CHUNK
            float v[VEC];
            unpackVec<ElemX>(current.v[j], v);
${if PACKED_PAIRS}
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                v[i] *= rstd;
            if (j < INSIDE || col < static_cast<int>(N)) // N % VEC == 0: whole vectors
${if KEEP_WEIGHTS}
                storeScaled(y + col, v, weights.w[j]);
${else}
                storeScaled(y + col, v, wRaw[j]);
${endif}
${else}
            float w[VEC];
${if KEEP_WEIGHTS}
            unpackVec<ElemW>(weights.w[j], w);
${else}
            unpackVec<ElemW>(wRaw[j], w);
${endif}
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                v[i] = v[i] * rstd * w[i];
            if (j < INSIDE || col < static_cast<int>(N)) // N % VEC == 0: whole vectors
                storeVec(y + col, v);
${endif}
        }
        current = next;
    }
}
${endif}
