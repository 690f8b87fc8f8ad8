${# rowwise/layernorm.cu: the layernorm kernels (rowwise_layernorm.cpp), the skeleton's KERNEL.}
${# Conditions: ONE_PASS (Welford), PREFETCH, ASYNC (cp.async ring), SHIFTED (shifted one-pass sums),}
${# KEEP_WEIGHTS (W and B packed in registers). Values: DEPTH (ring slots), PACKED (rowwise/packed.cu)}
${# and WEIGHTS_HELPERS (rowwise/layernorm_weights.cu or empty), both with PREFETCH or ASYNC.}
${if ONE_PASS}

// Welford/Chan statistics of a set of values: count, mean and sum of squared deviations. The
// merge is symmetric in its arguments, so every thread of a row computes the same bits.
struct Moments {
    float n;
    float mean;
    float m2;
};
__device__ __forceinline__ Moments shuffleDown(Moments v, int offset)
{
    return {shuffleDown(v.n, offset), shuffleDown(v.mean, offset), shuffleDown(v.m2, offset)};
}
[[maybe_unused]] __device__ __forceinline__ Moments shuffleFirst(Moments v)
{
    return {shuffleFirst(v.n), shuffleFirst(v.mean), shuffleFirst(v.m2)};
}
__device__ __forceinline__ Moments combineMoments(Moments a, Moments b)
{
    const float n = a.n + b.n;
    if (n == 0.0f)
        return {0.0f, 0.0f, 0.0f};
    const float delta = b.mean - a.mean;
    return {n, (a.n * a.mean + b.n * b.mean) / n, a.m2 + b.m2 + delta * delta * (a.n * b.n / n)};
}
// The moments of the valid elements of one chunk in registers, by two passes over registers.
__device__ __forceinline__ Moments chunkMoments(const float (&d)[VPT][VEC], long long N,
                                                long long base, int t)
{
    float n = 0.0f;
    float sum = 0.0f;
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        n += static_cast<float>(validIn(N, base, j, t));
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            sum += d[j][i]; // columns past N hold 0
    }
    if (n == 0.0f)
        return {0.0f, 0.0f, 0.0f};
    const float mean = sum / n;
    float m2 = 0.0f;
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const int valid = validIn(N, base, j, t);
#pragma unroll
        for (int i = 0; i < VEC; ++i) {
            const float e = i < valid ? d[j][i] - mean : 0.0f;
            m2 = fmaf(e, e, m2);
        }
    }
    return {n, mean, m2};
}
${endif}

// The normalised deviation (d - mean) * rstd as one FFMA, d * rstd + centre(mean, rstd), where a
// subtraction and a multiplication took two instructions an element (the prefetching and cp.async
// kernels). d is x - x[0] there, so |mean| * rstd <= sqrt(N) (no element lies further than sqrt(N)
// standard deviations from the mean) and is a few units on most rows: the rounding of -mean * rstd
// moves a normalised value by at most sqrt(N) * 2^-24 (1e-5 at N = 20000), mostly by a few float
// ulps, like the rounding of d - mean it replaces. (Without the shift, rows of 1e4 + noise would
// lose the noise in that rounding.)
[[maybe_unused]] __device__ __forceinline__ float centre(float mean, float rstd)
{
    return -mean * rstd;
}

// y = (x - mean) * rstd * w + b for one chunk; d holds x - shift and mean is that of d. W and B
// are read one vector at a time, so only the row stays live in registers (more rows in flight).
// (Not centre's one FFMA: the streaming kernel's extra live value spilled at 3 blocks per SM.)
__device__ __forceinline__ void normalizeChunk(const ElemW* __restrict__ W,
                                               const ElemB* __restrict__ B, long long N,
                                               long long base, int t, float mean, float rstd,
                                               float (&d)[VPT][VEC])
{
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const long long col = base + (static_cast<long long>(j) * ROW_THREADS + t) * VEC;
        float w[VEC];
        float b[VEC];
        if (col + VEC <= N) {
            loadVec(W + col, w);
            loadVec(B + col, b);
        } else {
            loadTail(W + col, N - col, 0.0f, w);
            loadTail(B + col, N - col, 0.0f, b);
        }
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            d[j][i] = fmaf((d[j][i] - mean) * rstd, w[i], b[i]);
    }
}

// Loads a chunk as x - shift (columns past N give 0).
__device__ __forceinline__ void loadShifted(const ElemX* x, long long N, long long base, int t,
                                            float shift, float (&d)[VPT][VEC])
{
    loadChunk(x, N, base, t, shift, d);
#pragma unroll
    for (int j = 0; j < VPT; ++j)
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            d[j][i] -= shift;
}

[[maybe_unused]] __global__ void __launch_bounds__(THREADS)
    layerNormRows(const ElemX* __restrict__ X, const ElemW* __restrict__ W,
                  const ElemB* __restrict__ B, ElemY* __restrict__ Y, long long M, long long N,
                  long long ldx, long long ldy, float epsilon)
{
    const int t = threadIdx.x % ROW_THREADS;
    int phase = 0; // the block reduction's buffer
    [[maybe_unused]] const auto sumOf = [](float a, float b) { return a + b; };
    const float count = static_cast<float>(N);
    for (long long row = static_cast<long long>(blockIdx.x) * ROWS_PER_CTA + threadIdx.x / ROW_THREADS;
         row < M; row += static_cast<long long>(gridDim.x) * ROWS_PER_CTA) {
        const ElemX* x = X + row * ldx;
        ElemY* y = Y + row * ldy;
        // Statistics of x - x[0]: a constant row has deviations of exactly 0 (output = B), and a
        // large common offset (1e4 + noise) leaves small numbers to sum, without cancellation.
        const float shift = toFloat(x[0]);
        if (N <= CHUNK) {
            // The row fits in registers: one read and one write, the DRAM floor.
            float d[VPT][VEC];
            loadShifted(x, N, 0, t, shift, d);
${if ONE_PASS}
            const Moments total = rowReduce(chunkMoments(d, N, 0, t), [](Moments a, Moments b) {
                return combineMoments(a, b);
            }, phase);
            const float mean = total.mean;
            const float variance = total.m2 / count;
${else}
            float sum = 0.0f;
#pragma unroll
            for (int j = 0; j < VPT; ++j)
#pragma unroll
                for (int i = 0; i < VEC; ++i)
                    sum += d[j][i];
            const float mean = rowReduce(sum, sumOf, phase) / count;
            float squares = 0.0f;
#pragma unroll
            for (int j = 0; j < VPT; ++j) {
                const int valid = validIn(N, 0, j, t);
#pragma unroll
                for (int i = 0; i < VEC; ++i) {
                    const float e = i < valid ? d[j][i] - mean : 0.0f;
                    squares = fmaf(e, e, squares);
                }
            }
            const float variance = rowReduce(squares, sumOf, phase) / count;
${endif}
            const float rstd = 1.0f / sqrtf(variance + epsilon);
            normalizeChunk(W, B, N, 0, t, mean, rstd, d);
            storeChunk(y, N, 0, t, d);
        } else {
${if ONE_PASS}
            // Longer than the register cache: Welford statistics in one read, then the output.
            Moments part{0.0f, 0.0f, 0.0f};
            for (long long base = 0; base < N; base += CHUNK) {
                float d[VPT][VEC];
                loadShifted(x, N, base, t, shift, d);
                part = combineMoments(part, chunkMoments(d, N, base, t));
            }
            const Moments total =
                rowReduce(part, [](Moments a, Moments b) { return combineMoments(a, b); }, phase);
            const float mean = total.mean;
            const float variance = total.m2 / count;
${else}
            // Longer than the register cache: mean, then variance around it, then the output.
            float sum = 0.0f;
            for (long long base = 0; base < N; base += CHUNK) {
                float d[VPT][VEC];
                loadShifted(x, N, base, t, shift, d);
#pragma unroll
                for (int j = 0; j < VPT; ++j)
#pragma unroll
                    for (int i = 0; i < VEC; ++i)
                        sum += d[j][i];
            }
            const float mean = rowReduce(sum, sumOf, phase) / count;
            float squares = 0.0f;
            for (long long base = 0; base < N; base += CHUNK) {
                float d[VPT][VEC];
                loadShifted(x, N, base, t, shift, d);
#pragma unroll
                for (int j = 0; j < VPT; ++j) {
                    const int valid = validIn(N, base, j, t);
#pragma unroll
                    for (int i = 0; i < VEC; ++i) {
                        const float e = i < valid ? d[j][i] - mean : 0.0f;
                        squares = fmaf(e, e, squares);
                    }
                }
            }
            const float variance = rowReduce(squares, sumOf, phase) / count;
${endif}
            const float rstd = 1.0f / sqrtf(variance + epsilon);
            for (long long base = 0; base < N; base += CHUNK) {
                float d[VPT][VEC];
                loadShifted(x, N, base, t, shift, d);
                normalizeChunk(W, B, N, base, t, mean, rstd, d);
                storeChunk(y, N, base, t, d);
            }
        }
    }
}
${if PREFETCH}
${PACKED}
// A thread's share of a row that fits in registers, still packed (converted on use, so two rows
// fit), and the row's first element, the shift of its statistics.
struct PackedRow {
    RawX v[VPT];
    ElemX first;
};

// Issues the loads of row x and returns without waiting for them. Columns past N become x[0] when
// the row is used (fillPastRow), so their deviation from the shift is exactly 0. INSIDE: the
// leading vectors of every thread that lie inside the row (loadVectors).
template <int INSIDE>
__device__ __forceinline__ void loadRow(const ElemX* x, long long N, int t, PackedRow& r)
{
    r.first = x[0];
    loadVectors<INSIDE>(x, N, t, r.v);
}

[[maybe_unused]] __device__ __forceinline__ void keepPacked(PackedRow& r)
{
#pragma unroll
    for (int j = 0; j < VPT; ++j)
        keepPacked(r.v[j]);
}

// x - shift of vector j.
__device__ __forceinline__ void deviations(const PackedRow& r, int j, float shift, float (&d)[VEC])
{
    unpackVec<ElemX>(r.v[j], d);
#pragma unroll
    for (int i = 0; i < VEC; ++i)
        d[i] -= shift;
}
${if SHIFTED}

// The sums of d and of d * d, reduced together (a struct of this file, so that rowReduce finds its
// shuffles by argument-dependent lookup, as it does for float).
struct ShiftedSums {
    float d;
    float dd;
};
__device__ __forceinline__ ShiftedSums shuffleDown(ShiftedSums v, int offset)
{
    return {shuffleDown(v.d, offset), shuffleDown(v.dd, offset)};
}
[[maybe_unused]] __device__ __forceinline__ ShiftedSums shuffleFirst(ShiftedSums v)
{
    return {shuffleFirst(v.d), shuffleFirst(v.dd)};
}
${endif}
${WEIGHTS_HELPERS}${if PACKED_PAIRS}
// y = n * w + b for one vector, stored, where W, B and Y share one 16-bit type: n is rounded to it
// and the multiply-add runs two elements an instruction (HFMA2) on W's and B's raw words, which
// are never converted. Per element that is half a pack and half an HFMA2 where the float path took
// two conversions and an FFMA (about 2.5 of 17 instructions an element in a row of f16). Each
// output carries two roundings, n's and the HFMA2's: at most one unit of the output type against
// |n * w| + |b| beyond the float path's, inside the harness's componentwise bound ((|x| rstd + 1)
// |w| + |b| per element, twice the unit roundoff at least).
__device__ __forceinline__ void storeAffine(ElemY* y, const float (&n)[VEC], const RawW& w,
                                            const RawB& b)
{
    static_assert(VEC % 2 == 0 && sizeof(RawW) == sizeof(RawOf<ElemY>), "packed pairs");
    ${PAIR} wp[VEC / 2];
    ${PAIR} bp[VEC / 2];
    ${PAIR} out[VEC / 2];
    memcpy(wp, &w, sizeof(wp));
    memcpy(bp, &b, sizeof(bp));
#pragma unroll
    for (int k = 0; k < VEC / 2; ++k)
        out[k] = __hfma2(${PACK_PAIR}(n[2 * k], n[2 * k + 1]), wp[k], bp[k]);
    RawOf<ElemY> raw;
    memcpy(&raw, out, sizeof(raw));
    *reinterpret_cast<RawOf<ElemY>*>(y) = raw;
}
${endif}
// INSIDE: the leading vectors of every thread that lie inside the row, so are read, used and stored
// without a bounds test (loadVectors; kevolve_launch picks VPT, VPT - 1 or 0 from N).
template <int INSIDE>
__global__ void __launch_bounds__(THREADS, CTAS_PER_SM)
    layerNormRowsPrefetch(const ElemX* __restrict__ X, const ElemW* __restrict__ W,
                          const ElemB* __restrict__ B, ElemY* __restrict__ Y, long long M,
                          long long N, long long ldx, long long ldy, float epsilon)
{
    const int t = threadIdx.x % ROW_THREADS;
    int phase = 0; // the block reduction's buffer
${if SHIFTED}
    const auto sumsOf = [](ShiftedSums a, ShiftedSums b) {
        return ShiftedSums{a.d + b.d, a.dd + b.dd};
    };
${else}
    [[maybe_unused]] const auto sumOf = [](float a, float b) { return a + b; };
${endif}
    const float count = static_cast<float>(N);
    const long long step = static_cast<long long>(gridDim.x) * ROWS_PER_CTA;
    long long row = static_cast<long long>(blockIdx.x) * ROWS_PER_CTA + threadIdx.x / ROW_THREADS;
${if KEEP_WEIGHTS}
    PackedWeights weights;
    loadWeights<INSIDE>(W, B, N, t, weights);
${else}

${endif}
    PackedRow current;
    if (row < M)
        loadRow<INSIDE>(X + row * ldx, N, t, current);
    for (; row < M; row += step) {
        // The next row's loads go out first and are waited for only when it becomes current.
        PackedRow next;
        if (row + step < M)
            loadRow<INSIDE>(X + (row + step) * ldx, N, t, next);
        // Statistics of x - x[0]: a constant row has deviations of exactly 0 (output = B), and a
        // large common offset (1e4 + noise) leaves small numbers to sum, without cancellation.
        const float shift = toFloat(current.first);
        fillPastRow<INSIDE>(current.v, N, t, current.first);
${if KEEP_WEIGHTS}
        keepPacked(weights);
${endif}
${if SHIFTED}
        float sumD[VEC];
        float sumDD[VEC];
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            sumD[i] = sumDD[i] = 0.0f;
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            float d[VEC];
            deviations(current, j, shift, d);
#pragma unroll
            for (int i = 0; i < VEC; ++i) {
                sumD[i] += d[i];
                sumDD[i] = fmaf(d[i], d[i], sumDD[i]);
            }
        }
        ShiftedSums sums{combineLanes(sumD, [](float a, float b) { return a + b; }),
                         combineLanes(sumDD, [](float a, float b) { return a + b; })};
        sums = rowReduce(sums, sumsOf, phase);
        const float mean = sums.d / count;
        const float variance = fmaxf(0.0f, (sums.dd - sums.d * mean) / count);
${else}
        float sum = 0.0f;
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            float d[VEC];
            deviations(current, j, shift, d);
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                sum += d[i];
        }
        const float mean = rowReduce(sum, sumOf, phase) / count;
        float squares = 0.0f;
        keepPacked(current);
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            const int valid = validIn(N, 0, j, t);
            float d[VEC];
            deviations(current, j, shift, d);
#pragma unroll
            for (int i = 0; i < VEC; ++i) {
                const float e = i < valid ? d[i] - mean : 0.0f;
                squares = fmaf(e, e, squares);
            }
        }
        const float variance = rowReduce(squares, sumOf, phase) / count;
${endif}
        const float rstd = 1.0f / sqrtf(variance + epsilon);
        const float offset = centre(mean, rstd);
        ElemY* y = Y + row * ldy;
${if !SHIFTED}
        keepPacked(current);
${endif}
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            const int col = (j * ROW_THREADS + t) * VEC; // N <= CHUNK
            float d[VEC];
            deviations(current, j, shift, d);
${if PACKED_PAIRS}
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                d[i] = fmaf(d[i], rstd, offset);
${if KEEP_WEIGHTS}
            const RawW w = weights.w[j];
            const RawB b = weights.b[j];
${else}
            const RawW w = loadWeightRaw(W, col, N, j < INSIDE);
            const RawB b = loadWeightRaw(B, col, N, j < INSIDE);
${endif}
            if (j < INSIDE || col < static_cast<int>(N)) // N % VEC == 0: whole vectors
                storeAffine(y + col, d, w, b);
${else}
            float w[VEC];
            float b[VEC];
${if KEEP_WEIGHTS}
            unpackVec<ElemW>(weights.w[j], w);
            unpackVec<ElemB>(weights.b[j], b);
${else}
            loadWeightVec(W, col, N, j < INSIDE, w);
            loadWeightVec(B, col, N, j < INSIDE, b);
${endif}
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                d[i] = fmaf(fmaf(d[i], rstd, offset), w[i], b[i]);
            if (j < INSIDE || col < static_cast<int>(N)) // N % VEC == 0: whole vectors
                storeVec(y + col, d);
${endif}
        }
        current = next;
    }
}
${endif}
${if ASYNC}
${PACKED}
// Rows in flight per block; the ring has a slot for each, laid out [slot][vector j][thread] in
// units of one vector, so neighbouring threads touch neighbouring 16 bytes (no bank conflicts).
constexpr int DEPTH = ${DEPTH};
constexpr int RING_BYTES = DEPTH * VPT * THREADS * static_cast<int>(sizeof(RawX));

// One vector from global to shared memory without passing through registers. Of its bytes only
// the first `bytes` are read; the rest of the vector is written as zeros.
__device__ __forceinline__ void copyVecAsync(RawX* dst, const ElemX* src, int bytes)
{
    const unsigned int to = static_cast<unsigned int>(__cvta_generic_to_shared(dst));
    if constexpr (sizeof(RawX) == 16)
        // L2 only: the row is read once, so it should not evict W and B from L1.
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(to), "l"(src),
                     "r"(bytes)
                     : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(to), "l"(src),
                     "n"(static_cast<int>(sizeof(RawX))), "r"(bytes)
                     : "memory");
}

__device__ __forceinline__ void commitCopies() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// Waits until at most `Pending` of this thread's most recent copy groups are still in flight.
template <int Pending> __device__ __forceinline__ void waitCopies()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

// Issues this thread's copies of row x into ring slot `slot` and returns without waiting. Bytes
// past N arrive as zeros (the statistics mask them by each vector's valid count); vectors wholly
// past N read nothing.
__device__ __forceinline__ void copyRow(RawX* ring, int slot, const ElemX* x, long long N, int t)
{
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const long long col = (static_cast<long long>(j) * ROW_THREADS + t) * VEC;
        const int valid = static_cast<int>(min(max(N - col, 0LL), static_cast<long long>(VEC)));
        copyVecAsync(ring + (slot * VPT + j) * THREADS + threadIdx.x, valid > 0 ? x + col : x,
                     valid * static_cast<int>(sizeof(ElemX)));
    }
}

// x - shift of vector j of this thread's share of a ring slot.
__device__ __forceinline__ void slotDeviations(const RawX* mine, int j, float shift, float (&d)[VEC])
{
    const RawX raw = mine[j * THREADS]; // one 16-byte shared load, not one per element pair
    unpackVec<ElemX>(raw, d);
#pragma unroll
    for (int i = 0; i < VEC; ++i)
        d[i] -= shift;
}
${WEIGHTS_HELPERS}
__global__ void __launch_bounds__(THREADS, CTAS_PER_SM)
    layerNormRowsAsync(const ElemX* __restrict__ X, const ElemW* __restrict__ W,
                       const ElemB* __restrict__ B, ElemY* __restrict__ Y, long long M,
                       long long N, long long ldx, long long ldy, float epsilon)
{
    extern __shared__ __align__(16) unsigned char ringMemory[];
    RawX* ring = reinterpret_cast<RawX*>(ringMemory);
    const int t = threadIdx.x % ROW_THREADS;
    int phase = 0; // the block reduction's buffer
    [[maybe_unused]] const auto sumOf = [](float a, float b) { return a + b; };
    const float count = static_cast<float>(N);
    const long long step = static_cast<long long>(gridDim.x) * ROWS_PER_CTA;
    long long row = static_cast<long long>(blockIdx.x) * ROWS_PER_CTA + threadIdx.x / ROW_THREADS;
${if KEEP_WEIGHTS}
    PackedWeights weights;
    loadWeights<0>(W, B, N, t, weights);
${else}

${endif}
    // The first DEPTH - 1 rows go out before any is used. Every step commits one group, empty
    // when there is no row, so group k is always row k and the wait count stays fixed.
#pragma unroll
    for (int k = 0; k < DEPTH - 1; ++k) {
        if (row + k * step < M)
            copyRow(ring, k, X + (row + k * step) * ldx, N, t);
        commitCopies();
    }
    // x[0], the shift of a row's statistics, is wanted by every thread before its sum: a scalar
    // load issued one row ahead, so its latency hides behind the previous row.
    ElemX first = row < M ? X[row * ldx] : ElemX(0.0f);
    int slot = 0;
    for (; row < M; row += step) {
        // Row + DEPTH - 1 steps goes into the previous row's slot. Only this thread ever touches
        // its vectors of a slot, and it has read them and stored that row's output in the
        // previous iteration (keep the store before these copies), so no barrier is needed.
        const long long ahead = row + (DEPTH - 1) * step;
        if (ahead < M)
            copyRow(ring, slot == 0 ? DEPTH - 1 : slot - 1, X + ahead * ldx, N, t);
        commitCopies();
        const ElemX nextFirst = row + step < M ? X[(row + step) * ldx] : ElemX(0.0f);
        // Issuing before waiting keeps DEPTH rows in flight here; this row's group is complete
        // once no more than the DEPTH - 1 younger ones are pending.
        waitCopies<DEPTH - 1>();
        const RawX* mine = ring + slot * VPT * THREADS + threadIdx.x;
        // Statistics of x - x[0]: a constant row has deviations of exactly 0 (output = B), and a
        // large common offset (1e4 + noise) leaves small numbers to sum, without cancellation.
        const float shift = toFloat(first);
${if KEEP_WEIGHTS}
        keepPacked(weights);
${endif}
        float sum = 0.0f;
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            const int valid = validIn(N, 0, j, t);
            float d[VEC];
            slotDeviations(mine, j, shift, d);
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                sum += i < valid ? d[i] : 0.0f; // zero-filled columns past N would give -shift
        }
        const float mean = rowReduce(sum, sumOf, phase) / count;
        float squares = 0.0f;
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            const int valid = validIn(N, 0, j, t);
            float d[VEC];
            slotDeviations(mine, j, shift, d);
#pragma unroll
            for (int i = 0; i < VEC; ++i) {
                const float e = i < valid ? d[i] - mean : 0.0f;
                squares = fmaf(e, e, squares);
            }
        }
        const float variance = rowReduce(squares, sumOf, phase) / count;
        const float rstd = 1.0f / sqrtf(variance + epsilon);
        const float offset = centre(mean, rstd);
        ElemY* y = Y + row * ldy;
#pragma unroll
        for (int j = 0; j < VPT; ++j) {
            const long long col = (static_cast<long long>(j) * ROW_THREADS + t) * VEC;
            float d[VEC];
            slotDeviations(mine, j, shift, d);
            float w[VEC];
            float b[VEC];
${if KEEP_WEIGHTS}
            unpackVec<ElemW>(weights.w[j], w);
            unpackVec<ElemB>(weights.b[j], b);
${else}
            if (col + VEC <= N) {
                loadVec(W + col, w);
                loadVec(B + col, b);
            } else {
                loadTail(W + col, N - col, 0.0f, w);
                loadTail(B + col, N - col, 0.0f, b);
            }
${endif}
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                d[i] = fmaf(fmaf(d[i], rstd, offset), w[i], b[i]);
            if (col + VEC <= N)
                storeVec(y + col, d);
            else
                storeTail(y + col, N - col, d);
        }
        first = nextFirst;
        slot = slot == DEPTH - 1 ? 0 : slot + 1;
    }
}
${endif}
