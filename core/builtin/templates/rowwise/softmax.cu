${# rowwise/softmax.cu: the softmax kernels (rowwise_softmax.cpp), the skeleton's KERNEL.}
${# Conditions: ONE_PASS (online statistics), PREFETCH (a persistent kernel prefetching the next row).}
${# Values: PACKED (rowwise/packed.cu, with PREFETCH).}

// exp(x - m) for a row whose maximum is m. x = -inf contributes 0 whatever m is, so a row of -inf
// sums to 0 and ends as 0 * inf = NaN, as it must; a NaN stays NaN and spreads through the sum.
// Subtracting the maximum keeps exp from overflowing for rows of +-1e4.
//
// 2^y on the special-function unit (ex2.approx.ftz: 2 ulp, as exp2f, whose slow path only keeps
// results below 2^-126 that no output or sum of at least 1 can show). A maximum of -inf (a thread
// or row of only -inf) shifts by 0 instead, so x = -inf gives 2^-inf = 0 without a branch per
// element, and x - m stays exact for rows of 1e4 + noise.
__device__ __forceinline__ float exp2Fast(float y)
{
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(y));
    return r;
}
__device__ __forceinline__ float expShifted(float x, float m)
{
    return exp2Fast((x - (m == -INFINITY ? 0.0f : m)) * LOG2E);
}
${if ONE_PASS}

// Online softmax statistics: the running maximum m and the sum of exp(x - m).
struct MaxSum {
    float m;
    float s;
};
__device__ __forceinline__ MaxSum shuffleDown(MaxSum v, int offset)
{
    return {shuffleDown(v.m, offset), shuffleDown(v.s, offset)};
}
[[maybe_unused]] __device__ __forceinline__ MaxSum shuffleFirst(MaxSum v)
{
    return {shuffleFirst(v.m), shuffleFirst(v.s)};
}
// exp(mOld - mNew); a part that has seen only -inf (or NaN) keeps its sum, 0 or NaN, times 0.
__device__ __forceinline__ float rescale(float mOld, float mNew)
{
    return mOld == -INFINITY ? 0.0f : exp2Fast((mOld - mNew) * LOG2E);
}
__device__ __forceinline__ MaxSum combineMaxSum(MaxSum a, MaxSum b)
{
    const float m = fmaxf(a.m, b.m);
    return {m, a.s * rescale(a.m, m) + b.s * rescale(b.m, m)};
}
${endif}

[[maybe_unused]] __global__ void __launch_bounds__(THREADS)
    softmaxRows(const ElemX* __restrict__ X, ElemY* __restrict__ Y, long long M, long long N,
                long long ldx, long long ldy)
{
    const int t = threadIdx.x % ROW_THREADS;
    int phase = 0; // the block reduction's buffer
    const auto maxOf = [](float a, float b) { return fmaxf(a, b); };
    const auto sumOf = [](float a, float b) { return a + b; };
    for (long long row = static_cast<long long>(blockIdx.x) * ROWS_PER_CTA + threadIdx.x / ROW_THREADS;
         row < M; row += static_cast<long long>(gridDim.x) * ROWS_PER_CTA) {
        const ElemX* x = X + row * ldx;
        ElemY* y = Y + row * ldy;
        if (N <= CHUNK) {
            // The row fits in registers: one read and one write, the DRAM floor.
            float v[VPT][VEC];
            loadChunk(x, N, 0, t, -INFINITY, v);
${if ONE_PASS}
            // Maximum and sum of this thread's elements, then one combined reduction.
            MaxSum part;
            float lanes[VEC];
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                lanes[i] = -INFINITY;
#pragma unroll
            for (int j = 0; j < VPT; ++j)
#pragma unroll
                for (int i = 0; i < VEC; ++i)
                    lanes[i] = fmaxf(lanes[i], v[j][i]);
            part.m = combineLanes(lanes, maxOf);
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                lanes[i] = 0.0f;
#pragma unroll
            for (int j = 0; j < VPT; ++j)
#pragma unroll
                for (int i = 0; i < VEC; ++i)
                    lanes[i] += expShifted(v[j][i], part.m);
            part.s = combineLanes(lanes, sumOf);
            const MaxSum total =
                rowReduce(part, [](MaxSum a, MaxSum b) { return combineMaxSum(a, b); }, phase);
            const float inv = 1.0f / total.s;
#pragma unroll
            for (int j = 0; j < VPT; ++j)
#pragma unroll
                for (int i = 0; i < VEC; ++i)
                    v[j][i] = expShifted(v[j][i], total.m) * inv;
${else}
            float lanes[VEC];
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                lanes[i] = -INFINITY;
#pragma unroll
            for (int j = 0; j < VPT; ++j)
#pragma unroll
                for (int i = 0; i < VEC; ++i)
                    lanes[i] = fmaxf(lanes[i], v[j][i]);
            const float m = rowReduce(combineLanes(lanes, maxOf), maxOf, phase);
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                lanes[i] = 0.0f;
#pragma unroll
            for (int j = 0; j < VPT; ++j)
#pragma unroll
                for (int i = 0; i < VEC; ++i) {
                    v[j][i] = expShifted(v[j][i], m);
                    lanes[i] += v[j][i];
                }
            const float inv = 1.0f / rowReduce(combineLanes(lanes, sumOf), sumOf, phase);
#pragma unroll
            for (int j = 0; j < VPT; ++j)
#pragma unroll
                for (int i = 0; i < VEC; ++i)
                    v[j][i] *= inv;
${endif}
            storeChunk(y, N, 0, t, v);
        } else {
${if ONE_PASS}
            // Longer than the register cache: two reads (online statistics, output).
            MaxSum part{-INFINITY, 0.0f};
            for (long long base = 0; base < N; base += CHUNK) {
                float v[VPT][VEC];
                loadChunk(x, N, base, t, -INFINITY, v);
                float m = part.m;
#pragma unroll
                for (int j = 0; j < VPT; ++j)
#pragma unroll
                    for (int i = 0; i < VEC; ++i)
                        m = fmaxf(m, v[j][i]);
                float s = 0.0f;
#pragma unroll
                for (int j = 0; j < VPT; ++j)
#pragma unroll
                    for (int i = 0; i < VEC; ++i)
                        s += expShifted(v[j][i], m);
                part.s = part.s * rescale(part.m, m) + s;
                part.m = m;
            }
            const MaxSum total =
                rowReduce(part, [](MaxSum a, MaxSum b) { return combineMaxSum(a, b); }, phase);
            const float inv = 1.0f / total.s;
            for (long long base = 0; base < N; base += CHUNK) {
                float v[VPT][VEC];
                loadChunk(x, N, base, t, -INFINITY, v);
#pragma unroll
                for (int j = 0; j < VPT; ++j)
#pragma unroll
                    for (int i = 0; i < VEC; ++i)
                        v[j][i] = expShifted(v[j][i], total.m) * inv;
                storeChunk(y, N, base, t, v);
            }
${else}
            // Longer than the register cache: three reads (maximum, sum, output).
            float m = -INFINITY;
            for (long long base = 0; base < N; base += CHUNK) {
                float v[VPT][VEC];
                loadChunk(x, N, base, t, -INFINITY, v);
#pragma unroll
                for (int j = 0; j < VPT; ++j)
#pragma unroll
                    for (int i = 0; i < VEC; ++i)
                        m = fmaxf(m, v[j][i]);
            }
            m = rowReduce(m, maxOf, phase);
            float s = 0.0f;
            for (long long base = 0; base < N; base += CHUNK) {
                float v[VPT][VEC];
                loadChunk(x, N, base, t, -INFINITY, v);
#pragma unroll
                for (int j = 0; j < VPT; ++j)
#pragma unroll
                    for (int i = 0; i < VEC; ++i)
                        s += expShifted(v[j][i], m);
            }
            const float inv = 1.0f / rowReduce(s, sumOf, phase);
            for (long long base = 0; base < N; base += CHUNK) {
                float v[VPT][VEC];
                loadChunk(x, N, base, t, -INFINITY, v);
#pragma unroll
                for (int j = 0; j < VPT; ++j)
#pragma unroll
                    for (int i = 0; i < VEC; ++i)
                        v[j][i] = expShifted(v[j][i], m) * inv;
                storeChunk(y, N, base, t, v);
            }
${endif}
        }
    }
}
${if PREFETCH}
${PACKED}
// A thread's share of a row that fits in registers, still packed (converted on use, so two rows
// fit).
struct PackedRow {
    RawX v[VPT];
};

// Issues the loads of row x and returns without waiting for them. Columns past N become -inf when
// the row is used (fillPastRow), which adds nothing to the maximum or the sum. INSIDE: the leading
// vectors of every thread that lie inside the row (loadVectors).
template <int INSIDE>
__device__ __forceinline__ void loadRow(const ElemX* x, long long N, int t, PackedRow& r)
{
    loadVectors<INSIDE>(x, N, t, r.v);
}

[[maybe_unused]] __device__ __forceinline__ void keepPacked(PackedRow& r)
{
#pragma unroll
    for (int j = 0; j < VPT; ++j)
        keepPacked(r.v[j]);
}

// INSIDE: the leading vectors of every thread that lie inside the row, so are read, used and stored
// without a bounds test (loadVectors; kevolve_launch picks VPT, VPT - 1 or 0 from N).
template <int INSIDE>
__global__ void __launch_bounds__(THREADS, CTAS_PER_SM)
    softmaxRowsPrefetch(const ElemX* __restrict__ X, ElemY* __restrict__ Y, long long M,
                        long long N, long long ldx, long long ldy)
{
    const int t = threadIdx.x % ROW_THREADS;
    int phase = 0; // the block reduction's buffer
    const long long step = static_cast<long long>(gridDim.x) * ROWS_PER_CTA;
    long long row = static_cast<long long>(blockIdx.x) * ROWS_PER_CTA + threadIdx.x / ROW_THREADS;
    PackedRow current;
    if (row < M)
        loadRow<INSIDE>(X + row * ldx, N, t, current);
    for (; row < M; row += step) {
        // The next row's loads go out first and are waited for only when it becomes current.
        PackedRow next;
        if (row + step < M)
            loadRow<INSIDE>(X + (row + step) * ldx, N, t, next);
        fillPastRow<INSIDE>(current.v, N, t, ElemX(-INFINITY));
        // e holds exp(x - m) for a maximum m of the statistics; the output is e * scale.
        float e[VPT][VEC];
${if ONE_PASS}
        MaxSum part;
        float lanes[VEC];
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            lanes[i] = -INFINITY;
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            unpackVec<ElemX>(current.v[j], e[j]);
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                lanes[i] = fmaxf(lanes[i], e[j][i]);
        }
        part.m = combineLanes(lanes, [](float a, float b) { return fmaxf(a, b); });
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            lanes[i] = 0.0f;
#pragma unroll
        for (int j = 0; j < VPT; ++j)
#pragma unroll
            for (int i = 0; i < VEC; ++i) {
                e[j][i] = expShifted(e[j][i], part.m);
                lanes[i] += e[j][i];
            }
        part.s = combineLanes(lanes, [](float a, float b) { return a + b; });
        const MaxSum total =
            rowReduce(part, [](MaxSum a, MaxSum b) { return combineMaxSum(a, b); }, phase);
        const float scale = rescale(part.m, total.m) / total.s;
${else}
        float lanes[VEC];
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            lanes[i] = -INFINITY;
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            float v[VEC];
            unpackVec<ElemX>(current.v[j], v);
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                lanes[i] = fmaxf(lanes[i], v[i]);
        }
        const auto maxOf = [](float a, float b) { return fmaxf(a, b); };
        const auto sumOf = [](float a, float b) { return a + b; };
        const float m = rowReduce(combineLanes(lanes, maxOf), maxOf, phase);
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            lanes[i] = 0.0f;
        keepPacked(current);
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            unpackVec<ElemX>(current.v[j], e[j]);
#pragma unroll
            for (int i = 0; i < VEC; ++i) {
                e[j][i] = expShifted(e[j][i], m);
                lanes[i] += e[j][i];
            }
        }
        const float scale = 1.0f / rowReduce(combineLanes(lanes, sumOf), sumOf, phase);
${endif}
        ElemY* y = Y + row * ldy;
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            const int col = (j * ROW_THREADS + t) * VEC; // N <= CHUNK
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                e[j][i] *= scale;
            if (j < INSIDE || col < static_cast<int>(N)) // N % VEC == 0: whole vectors
                storeVec(y + col, e[j]);
        }
        current = next;
    }
}
${endif}
