${# rowwise/split.cu: one row split over the SPLIT blocks of a thread block cluster (sm_90), the}
${# skeleton's SPLIT_KERNEL after the op's KERNEL (whose MaxSum / Moments / reduction helpers it uses:}
${# softmax and layernorm with stats=one_pass). Conditions: SOFTMAX, LAYERNORM, RMSNORM, REDUCE, MAX.}

// Too few rows to fill the GPU: each row is split over the SPLIT blocks of a cluster. Block r of the
// cluster takes the r-th slice of the row (a whole number of vectors, so its accesses stay aligned;
// the last slices of a short row may be empty), computes its slice's statistics, and publishes them
// in its shared memory. After the cluster's barrier every block reads the SPLIT partials through
// distributed shared memory in rank order, so all blocks combine the same values in the same order:
// the same bits in every block and in every run (no atomics). A slice that fits the registers is
// read once; a longer one is read again for the output, from L2. One row per cluster, no loop over
// rows: ptxas spilled the loop's state around the reductions (reduce max, f16).
constexpr int SPLIT = ${SPLIT};

// The elements of a slice: N / SPLIT rounded up to whole vectors (pipeline=bulk has its own,
// bulkSlice, and leaves this unused).
[[maybe_unused]] __host__ __device__ __forceinline__ long long sliceLength(long long N)
{
    const long long perBlock = (N + SPLIT - 1) / SPLIT;
    return (perBlock + VEC - 1) / VEC * VEC;
}

// The cluster's partials combined in rank order (every block gets the same bits). The second
// barrier keeps each block's partial alive (and unchanged) until every block has read it.
template <typename T, typename F> __device__ __forceinline__ T clusterCombine(T* mine, F combine)
{
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    cluster.sync();
    T total = *cluster.map_shared_rank(mine, 0);
#pragma unroll
    for (int r = 1; r < SPLIT; ++r)
        total = combine(total, *cluster.map_shared_rank(mine, r));
    cluster.sync();
    return total;
}
${if SOFTMAX}

__global__ void __cluster_dims__(SPLIT, 1, 1) __launch_bounds__(THREADS)
    softmaxRowsSplit(const ElemX* __restrict__ X, ElemY* __restrict__ Y, long long N,
                     long long ldx, long long ldy)
{
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    __shared__ MaxSum published;
    const int t = threadIdx.x;
    int phase = 0; // the block reduction's buffer
    const auto combine = [](MaxSum a, MaxSum b) { return combineMaxSum(a, b); };
    const long long slice = sliceLength(N);
    const long long begin = min(N, static_cast<long long>(cluster.block_rank()) * slice);
    const long long n = min(slice, N - begin);
    // One row per cluster; the launch covers the rows (in batches of at most 2^28 rows).
    const long long row = blockIdx.x / SPLIT;
    const ElemX* x = X + row * ldx + begin;
    ElemY* y = Y + row * ldy + begin;
    float v[VPT][VEC];
    MaxSum part{-INFINITY, 0.0f};
    for (long long base = 0; base < n; base += CHUNK) {
        loadChunk(x, n, base, t, -INFINITY, v);
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
    const MaxSum block = rowReduce(part, combine, phase);
    if (t == 0)
        published = block;
    const MaxSum total = clusterCombine(&published, combine);
    const float inv = 1.0f / total.s;
    if (n <= CHUNK) {
        // The slice is still in registers: the row was read once.
#pragma unroll
        for (int j = 0; j < VPT; ++j)
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                v[j][i] = expShifted(v[j][i], total.m) * inv;
        storeChunk(y, n, 0, t, v);
        return;
    }
    for (long long base = 0; base < n; base += CHUNK) {
        loadChunk(x, n, base, t, -INFINITY, v);
#pragma unroll
        for (int j = 0; j < VPT; ++j)
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                v[j][i] = expShifted(v[j][i], total.m) * inv;
        storeChunk(y, n, base, t, v);
    }
}
${endif}
${if LAYERNORM}

__global__ void __cluster_dims__(SPLIT, 1, 1) __launch_bounds__(THREADS)
    layerNormRowsSplit(const ElemX* __restrict__ X, const ElemW* __restrict__ W,
                       const ElemB* __restrict__ B, ElemY* __restrict__ Y, long long N,
                       long long ldx, long long ldy, float epsilon)
{
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    __shared__ Moments published;
    const int t = threadIdx.x;
    int phase = 0; // the block reduction's buffer
    const auto combine = [](Moments a, Moments b) { return combineMoments(a, b); };
    const long long slice = sliceLength(N);
    const long long begin = min(N, static_cast<long long>(cluster.block_rank()) * slice);
    const long long n = min(slice, N - begin);
    // One row per cluster; the launch covers the rows (in batches of at most 2^28 rows).
    const long long row = blockIdx.x / SPLIT;
    // Every block shifts by the row's first element (the same value in all of them), so a
    // constant row has deviations of exactly 0 and a large common offset cancels exactly.
    const float shift = toFloat(X[row * ldx]);
    const ElemX* x = X + row * ldx + begin;
    ElemY* y = Y + row * ldy + begin;
    float d[VPT][VEC];
    Moments part{0.0f, 0.0f, 0.0f};
    for (long long base = 0; base < n; base += CHUNK) {
        loadShifted(x, n, base, t, shift, d);
        part = combineMoments(part, chunkMoments(d, n, base, t));
    }
    const Moments block = rowReduce(part, combine, phase);
    if (t == 0)
        published = block;
    const Moments total = clusterCombine(&published, combine);
    const float rstd = 1.0f / sqrtf(total.m2 / static_cast<float>(N) + epsilon);
    if (n <= CHUNK) {
        // The slice is still in registers: the row was read once.
        normalizeChunk(W + begin, B + begin, n, 0, t, total.mean, rstd, d);
        storeChunk(y, n, 0, t, d);
        return;
    }
    for (long long base = 0; base < n; base += CHUNK) {
        loadShifted(x, n, base, t, shift, d);
        normalizeChunk(W + begin, B + begin, n, base, t, total.mean, rstd, d);
        storeChunk(y, n, base, t, d);
    }
}
${endif}
${if RMSNORM}

__global__ void __cluster_dims__(SPLIT, 1, 1) __launch_bounds__(THREADS)
    rmsNormRowsSplit(const ElemX* __restrict__ X, const ElemW* __restrict__ W,
                     ElemY* __restrict__ Y, long long N, long long ldx, long long ldy,
                     float epsilon)
{
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    __shared__ float published;
    const int t = threadIdx.x;
    int phase = 0; // the block reduction's buffer
    const auto sumOf = [](float a, float b) { return a + b; };
    const long long slice = sliceLength(N);
    const long long begin = min(N, static_cast<long long>(cluster.block_rank()) * slice);
    const long long n = min(slice, N - begin);
    // One row per cluster; the launch covers the rows (in batches of at most 2^28 rows).
    const long long row = blockIdx.x / SPLIT;
    const ElemX* x = X + row * ldx + begin;
    ElemY* y = Y + row * ldy + begin;
    float v[VPT][VEC];
    float squares = 0.0f;
    for (long long base = 0; base < n; base += CHUNK) {
        loadChunk(x, n, base, t, 0.0f, v);
        squares += chunkSquares(v);
    }
    const float block = rowReduce(squares, sumOf, phase);
    if (t == 0)
        published = block;
    // A zero row gives 0 / sqrt(epsilon) = 0; epsilon > 0 is checked at launch.
    const float rstd =
        1.0f / sqrtf(clusterCombine(&published, sumOf) / static_cast<float>(N) + epsilon);
    if (n <= CHUNK) {
        // The slice is still in registers: the row was read once.
        scaleChunk(W + begin, n, 0, t, rstd, v);
        storeChunk(y, n, 0, t, v);
        return;
    }
    for (long long base = 0; base < n; base += CHUNK) {
        loadChunk(x, n, base, t, 0.0f, v);
        scaleChunk(W + begin, n, base, t, rstd, v);
        storeChunk(y, n, base, t, v);
    }
}
${endif}
${if REDUCE}

__global__ void __cluster_dims__(SPLIT, 1, 1) __launch_bounds__(THREADS)
    reduceRowsSplit(const ElemX* __restrict__ X, ElemY* __restrict__ Y, long long N,
                    long long ldx)
{
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    __shared__ float published;
    const int t = threadIdx.x;
    int phase = 0; // the block reduction's buffer
    const auto combine = [](float a, float b) { return ${if MAX}maxPropagatingNaN(a, b)${else}a + b${endif}; };
    const long long slice = sliceLength(N);
    const long long begin = min(N, static_cast<long long>(cluster.block_rank()) * slice);
    const long long n = min(slice, N - begin);
    // One row per cluster; the launch covers the rows (in batches of at most 2^28 rows).
    const long long row = blockIdx.x / SPLIT;
    const ElemX* x = X + row * ldx + begin;
    // One accumulator per register slot, as reduceRows.
    float acc[VPT][VEC];
#pragma unroll
    for (int j = 0; j < VPT; ++j)
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            acc[j][i] = ${if MAX}-INFINITY${else}0.0f${endif};
    for (long long base = 0; base < n; base += CHUNK) {
        float v[VPT][VEC];
        loadChunk(x, n, base, t, ${if MAX}-INFINITY${else}0.0f${endif}, v);
#pragma unroll
        for (int j = 0; j < VPT; ++j)
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                acc[j][i] = combine(acc[j][i], v[j][i]);
    }
    float r = ${if MAX}-INFINITY${else}0.0f${endif};
#pragma unroll
    for (int j = 0; j < VPT; ++j)
#pragma unroll
        for (int i = 0; i < VEC; ++i)
            r = combine(r, acc[j][i]);
    r = rowReduce(r, combine, phase);
    if (t == 0)
        published = r;
    r = clusterCombine(&published, combine);
    if (t == 0 && cluster.block_rank() == 0)
        fromFloat(r, Y[row]);
}
${endif}
