${# rowwise/bulk.cu: pipeline=bulk, softmax (the skeleton's BULK_KERNEL after the op's KERNEL, whose}
${# MaxSum, exp2Fast, rescale and rowReduce it uses, and after rowwise/split.cu's helpers, SPLIT,}
${# sliceLength, clusterCombine, and rowwise/packed.cu's unpackVec). Values: PIECES. Conditions:}
${# CLUSTER (SPLIT > 1).}

// pipeline=bulk: the block's slice of the row (the whole row with SPLIT = 1) is copied into shared
// memory by PIECES bulk asynchronous copies (TMA, cp.async.bulk), all issued at once, so the slice
// is read from DRAM once however long the row, with every byte of it in flight together. The
// statistics start on each piece as it lands (its mbarrier), the output is computed from shared
// memory. A row longer than the register cache otherwise streams twice (statistics, then output).
constexpr int PIECES = ${PIECES};

__device__ __forceinline__ uint32_t sharedAddress(const void* p)
{
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// The piece's bytes land in shared memory and complete the transaction count of `bar`.
__device__ __forceinline__ void bulkCopy(void* dst, const void* src, uint32_t bytes, uint32_t bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(sharedAddress(dst)), "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}

// Waits for the phase of `bar` with `parity` to complete. The suspend-time hint lets a warp whose
// piece has not landed sleep on the barrier (NANOSLEEP.SYNCS) instead of polling it.
__device__ __forceinline__ void waitPhase(uint32_t bar, uint32_t parity)
{
    asm volatile("{\n\t.reg .pred p;\n\t"
                 "WAIT_AGAIN:\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1, %2;\n\t"
                 "@!p bra WAIT_AGAIN;\n\t}" ::"r"(bar),
                 "r"(parity), "r"(10000000u)
                 : "memory");
}

// Thread 0 issues the copies of one slice (whole vectors) into `buffer`, each piece completing
// its barrier's transaction count.
__device__ __forceinline__ void issueSlice(ElemX* buffer, const ElemX* x, long long vectors,
                                           long long perPiece, unsigned long long* landed)
{
#pragma unroll
    for (int p = 0; p < PIECES; ++p) {
        const long long first = min(vectors, p * perPiece);
        const uint32_t bytes =
            static_cast<uint32_t>((min(vectors, first + perPiece) - first) * VEC * sizeof(ElemX));
        const uint32_t bar = sharedAddress(&landed[p]);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
                     : "memory");
        if (bytes > 0)
            bulkCopy(buffer + first * VEC, x + first * VEC, bytes, bar);
    }
}

// One row per cluster (per block with SPLIT = 1), no loop over rows: a persistent grid of clusters
// with two slice buffers, the next row's copies in flight while the current row was reduced and
// written, ran at 25-57% of the DRAM floor where this kernel ran at 60-78% (H200, session 16; with
// this kernel's instruction count, 1 or 2 blocks of 8 or 16 warps per SM, 33-67% where it ran
// 65-85%, session 23). An unsplit row still launches as a cluster, of one block: the blocks of a
// cluster launch are placed otherwise than a plain launch's, and 1048 rows of 32000 f16 ran at
// 86.8% of the floor where the same kernel without the attribute ran at 80.7% (85.6 against 81.2
// for a second form, in the same serve; H200, session 23). Storing exp(x - the piece's maximum)
// over x, one exponential an element instead of two, lost (72.6 and 61.8 where this ran 80.7 and
// 72.1: the maximum's pass and the stores cost more than the exponentials saved).
__global__ void __cluster_dims__(SPLIT, 1, 1) __launch_bounds__(THREADS)
    softmaxRowsBulk(const ElemX* __restrict__ X, ElemY* __restrict__ Y, long long N,
                    long long ldx, long long ldy)
{
    extern __shared__ __align__(128) unsigned char slab[];
    __shared__ __align__(8) unsigned long long landed[PIECES];
${if CLUSTER}
    __shared__ MaxSum published;
    const long long rank = cooperative_groups::this_cluster().block_rank();
${else}
    const long long rank = 0;
${endif}
    const ElemX* s = reinterpret_cast<const ElemX*>(slab);
    const int t = threadIdx.x;
    int phase = 0; // the block reduction's buffer
    const auto combine = [](MaxSum a, MaxSum b) { return combineMaxSum(a, b); };
    const long long slice = sliceLength(N);
    const long long begin = min(N, rank * slice);
    const long long n = min(slice, N - begin);
    const long long row = blockIdx.x / SPLIT;
    const ElemX* x = X + row * ldx + begin;
    ElemY* y = Y + row * ldy + begin;
    // Whole vectors (16 bytes, 16-byte aligned: the launch checks ldx and the pointers) are
    // copied; the row's last few elements, fewer than a vector, are read directly.
    const long long vectors = n / VEC;
    const long long perPiece = (vectors + PIECES - 1) / PIECES;
    const long long tail = n - vectors * VEC;
    if (t == 0) {
#pragma unroll
        for (int p = 0; p < PIECES; ++p)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sharedAddress(&landed[p]))
                         : "memory");
        // The initialised barriers visible to the copies (the async proxy).
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        issueSlice(reinterpret_cast<ElemX*>(slab), x, vectors, perPiece, landed);
    }
    __syncthreads(); // the barriers are initialised before anyone waits on them
    // One pass over each piece: the thread's running maximum m and sum of exp(x - m), the sum
    // rescaled only when a vector raises the maximum (4% faster than a maximum pass, then a sum
    // pass, over each piece: H200, session 17). Each exponential is 2^(x log2(e) - m log2(e)), one
    // FFMA: m log2(e) is rounded once, a relative error of at most 2^-24 |m log2(e)| in every term
    // of a row, far inside the harness's scale for softmax (it grows with |x|). Indices within the
    // slice are 32-bit, the raw words converted a pair at a time (unpackVec): with the two
    // subtractions and 64-bit indices of the first form this loop and the output's ran 26.4 M warp
    // instructions on 664 rows of 50257 bf16, now 19.5 M; the kernel was issue-bound (H200,
    // session 23).
    const int count = static_cast<int>(vectors);
    const int per = static_cast<int>(perPiece);
    float m = -INFINITY; // the thread's running maximum
    float ml = 0.0f;     // m log2(e); 0 while m is -inf, so x = -inf gives 2^-inf = 0
    float acc = 0.0f;    // the sum of exp(x - m)
    int i = t;
    for (int p = 0; p < PIECES; ++p) {
        const int last = min(count, (p + 1) * per);
        waitPhase(sharedAddress(&landed[p]), 0);
#pragma unroll VPT
        for (; i < last; i += THREADS) {
            float v[VEC];
            unpackVec<ElemX>(*reinterpret_cast<const RawOf<ElemX>*>(s + i * VEC), v);
            float lanes[VEC];
#pragma unroll
            for (int e = 0; e < VEC; ++e)
                lanes[e] = v[e];
            const float most = combineLanes(lanes, [](float a, float b) { return fmaxf(a, b); });
            if (most > m) {
                acc *= rescale(m, most);
                m = most;
                ml = m * LOG2E;
            }
#pragma unroll
            for (int e = 0; e < VEC; ++e)
                v[e] = exp2Fast(fmaf(v[e], LOG2E, -ml));
            acc += combineLanes(v, [](float a, float b) { return a + b; });
        }
    }
    MaxSum part{m, acc};
    float end[VEC];
    if (tail > 0 && t == THREADS - 1) {
        loadTail(x + vectors * VEC, tail, -INFINITY, end);
        float most = part.m;
#pragma unroll
        for (int e = 0; e < VEC; ++e)
            most = fmaxf(most, end[e]);
        float sum = 0.0f;
#pragma unroll
        for (int e = 0; e < VEC; ++e)
            sum += expShifted(end[e], most);
        part.s = part.s * rescale(part.m, most) + sum;
        part.m = most;
    }
    const MaxSum block = rowReduce(part, combine, phase);
${if CLUSTER}
    if (t == 0)
        published = block;
    const MaxSum total = clusterCombine(&published, combine);
${else}
    const MaxSum total = block;
${endif}
    // exp(x - m) / s as one exponential, 2^(x log2(e) - (m log2(e) + log2(s))): one FFMA.
    const float shift = total.m == -INFINITY ? 0.0f : total.m;
    const float logSum = __log2f(total.s);
    const float shiftL = fmaf(shift, LOG2E, logSum);
#pragma unroll VPT
    for (int j = t; j < count; j += THREADS) {
        float v[VEC];
        unpackVec<ElemX>(*reinterpret_cast<const RawOf<ElemX>*>(s + j * VEC), v);
#pragma unroll
        for (int e = 0; e < VEC; ++e)
            v[e] = exp2Fast(fmaf(v[e], LOG2E, -shiftL));
        storeVec(y + j * VEC, v);
    }
    if (tail > 0 && t == THREADS - 1) {
#pragma unroll
        for (int e = 0; e < VEC; ++e)
            end[e] = exp2Fast(fmaf(end[e] - shift, LOG2E, -logSum));
        storeTail(y + vectors * VEC, tail, end);
    }
}
