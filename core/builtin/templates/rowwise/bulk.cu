${# rowwise/bulk.cu: pipeline=bulk, softmax (the skeleton's BULK_KERNEL after the op's KERNEL, whose}
${# MaxSum, exp2Fast, rescale and combineMaxSum it uses, and after rowwise/split.cu's helpers, SPLIT,}
${# and rowwise/packed.cu's unpackVec); rowwise.cu's launch sizes its shared memory with bulkSlice.}
${# Values: PIECES, SLACK. Conditions: CLUSTER (SPLIT > 1).}

// pipeline=bulk: the block's slice of the row (the whole row with SPLIT = 1) is copied into shared
// memory by PIECES bulk asynchronous copies (TMA, cp.async.bulk), all issued at once, so the slice
// is read from DRAM once however long the row, with every byte of it in flight together. The
// statistics start on each piece as it lands (its mbarrier), the output is computed from shared
// memory. A row longer than the register cache otherwise streams twice (statistics, then output).
constexpr int PIECES = ${PIECES};

// Every bulk copy but a row's first starts on a 128-byte line of the row, and so does every
// warp's 512 bytes of output: slices are whole lines, counted from the row's first line boundary
// (so rank 0's slice is short by the row's lead, the elements before it, and the last one long by
// as much), and pieces too, counted from the slice's. Copies that started anywhere on 16 bytes
// (slices of N / SPLIT rounded to vectors) ran 0.3 to 8.2 points of the DRAM floor slower over
// the same splits of 10 row lengths (H200, session 25); before, rows of 128256 f16 in 6 slices
// (whole lines by chance) ran 83.4%, in 7 and 8 (off the line) 77.3 and 79.8, and now 83.3 and
// 82.1; rows of 151936 bf16 in 8 ran 79.5 (32 bytes off the line), now 83.3.
constexpr long long LINE = 128 / sizeof(ElemX); // elements per 128-byte line
constexpr int LINE_VECTORS = 128 / (VEC * sizeof(ElemX));

// Slice r of a row starts at element r stride - lead (r > 0; rank 0 at the row's start).
__host__ __device__ __forceinline__ long long bulkStride(long long N)
{
    return ((N + SPLIT - 1) / SPLIT + LINE - 1) / LINE * LINE;
}
// The elements of shared memory one block's slice may take (the launch sizes it with this): a
// stride, or the last slice with the longest lead (LINE - VEC) if that is longer.
__host__ __device__ __forceinline__ long long bulkSlice(long long N)
{
    if (SPLIT == 1)
        return (N + VEC - 1) / VEC * VEC;
    const long long stride = bulkStride(N);
    const long long last = N - (SPLIT - 1) * stride;
    return max(stride, (last + VEC - 1) / VEC * VEC + LINE - VEC);
}

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
// its barrier's transaction count. Piece p ends at vector head + (p + 1) perPiece (a line).
__device__ __forceinline__ void issueSlice(ElemX* buffer, const ElemX* x, int vectors, int head,
                                           int perPiece, unsigned long long* landed)
{
#pragma unroll
    for (int p = 0; p < PIECES; ++p) {
        const int first = p == 0 ? 0 : min(vectors, head + p * perPiece);
        const uint32_t bytes = static_cast<uint32_t>(
            (min(vectors, head + (p + 1) * perPiece) - first) * VEC * sizeof(ElemX));
        const uint32_t bar = sharedAddress(&landed[p]);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
                     : "memory");
        if (bytes > 0)
            bulkCopy(buffer + first * VEC, x + first * VEC, bytes, bar);
    }
}

// The block's (maximum, sum of exp(x - maximum)): the maximum first (a butterfly, so every lane
// has it), each thread's sum rescaled to it once, then the sums; the warps' results in a fixed
// order, so every thread gets the same bits. Pairwise online combines at every step (rowReduce)
// and the cluster's exchange took 239 instructions a warp, 13% of the kernel's 19.4 M on rows of
// 50257 bf16 (ncu source counters, H200, session 24); with this, the exchange and the reference
// below it runs 17.8 M.
__device__ __forceinline__ MaxSum blockMaxSum(MaxSum v, int& phase)
{
    __shared__ MaxSum partials[2][WARPS];
    float m = v.m;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    float s = v.s * rescale(v.m, m);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        s += __shfl_xor_sync(0xffffffffu, s, o);
    MaxSum* buffer = partials[phase];
    phase ^= 1;
    if ((threadIdx.x & 31) == 0)
        buffer[threadIdx.x / 32] = MaxSum{m, s};
    __syncthreads();
    float most = buffer[0].m;
#pragma unroll
    for (int w = 1; w < WARPS; ++w)
        most = fmaxf(most, buffer[w].m);
    float sum = 0.0f;
#pragma unroll
    for (int w = 0; w < WARPS; ++w)
        sum += buffer[w].s * rescale(buffer[w].m, most);
    return MaxSum{most, sum};
}
${if CLUSTER}

// The blocks of a cluster exchange their statistics without a cluster barrier: each stores its
// (maximum, sum) into slot `rank` of every other block's shared memory with st.async, a remote
// store that completes the bytes the receiver's mbarrier expects, and waits on its own mbarrier
// for the others'. clusterCombine's two cluster.sync (a release fence, MEMBAR.ALL.GPU, and a
// barrier each) held 16% of the warps' stall samples on rows of 50257 bf16; without them rows of
// 50257 bf16 ran at 78.2% of the DRAM floor where they ran at 72.5, 151936 bf16 at 72.1 (67.6),
// 128256 f16 at 75.7 (68.9) (H200, session 24). A block cannot leave before the others' stores
// reach it (it waits for them), and sends nothing to its own memory.
__device__ __forceinline__ uint32_t peerAddress(const void* p, uint32_t rank)
{
    uint32_t r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
                 : "=r"(r)
                 : "r"(sharedAddress(p)), "r"(rank));
    return r;
}
__device__ __forceinline__ void sendToPeers(MaxSum* slots, unsigned long long* bar, uint32_t rank,
                                            MaxSum v)
{
#pragma unroll
    for (uint32_t r = 0; r < SPLIT; ++r)
        if (r != rank)
            asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];"
                         ::"r"(peerAddress(&slots[rank], r)), "f"(v.m), "f"(v.s),
                         "r"(peerAddress(bar, r))
                         : "memory");
}
// Waits for the other blocks' stores: acquire at cluster scope, so their values are visible.
__device__ __forceinline__ void waitPeers(uint32_t bar, uint32_t parity)
{
    asm volatile("{\n\t.reg .pred p;\n\t"
                 "WAIT_PEERS:\n\t"
                 "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%0], %1, %2;\n\t"
                 "@!p bra WAIT_PEERS;\n\t}" ::"r"(bar),
                 "r"(parity), "r"(10000000u)
                 : "memory");
}
// Arrived after the barriers' init, waited on before the first remote store: by then every block
// of the cluster has initialised its barrier (the wait costs nothing, the arrive was long ago).
__device__ __forceinline__ void clusterArrive()
{
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
}
__device__ __forceinline__ void clusterWait()
{
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
}
${endif}

// The statistics pass stores each exp(x - m) (m the thread's reference) over its x, and the output
// pass multiplies it by 2^(m log2(e) - M log2(e) - log2(s)): one exponential an element, not two.
// With the second exponential, a timeline of the blocks (globaltimer) put rows of 151936 bf16 at
// 32.4-33.7 us from the first block's start to the last one's end, and at 29.9-31.0 without
// either exponential: the floor is 30.9 (H200, session 26). Stored, rows of 128256-152064 f16
// ran at 86.1-86.4% of the DRAM floor where the second exponential ran them at 82.5-83.4, bf16
// rows of 50257-151936 at 85.3-85.6 (83.3-83.4), 100277 at 83.3 (80.7), 256000 at 78.1 (76.5),
// in one serve. The stored value is rounded to ElemX once more than a directly computed output
// (within one unit of the output's last place where the direct form is within half of one; the
// harness's bound was as far from both). SLACK keeps it in ElemX's range: 10 for f16 (e^10 <
// 65504, its largest), 20 for bf16 and f32 (8-bit exponents).
constexpr float SLACK = ${SLACK};
// A factor 2^d under 2^kFactorLog is applied as two, 2^kFactorLog and 2^(d - kFactorLog): one
// would flush to zero under 2^-126 where the product (an exponential up to e^20 times it) need
// not. With one factor, threads whose reference lay 87 or more under the row's maximum (the
// harness's rows of bf16 values spread by 24) wrote zeros where the output is 1e-35.
constexpr float kFactorLog = -120.0f;

// The thread's stored exponentials (vectors t, t + THREADS, ... before `end`) times 2^logFactor,
// into dst: the output, or the slice itself where the reference rose. With TWO the factor is
// applied as two (kFactorLog); without, it must be at least 2^kFactorLog.
template <bool TWO, typename T>
__device__ __forceinline__ void writeScaled(T* dst, const ElemX* stored, int t, int end,
                                            float logFactor)
{
    const float f1 = exp2Fast(TWO ? fmaxf(logFactor, kFactorLog) : logFactor);
    const float f2 = TWO ? exp2Fast(logFactor - fmaxf(logFactor, kFactorLog)) : 1.0f;
#pragma unroll VPT
    for (int j = t; j < end; j += THREADS) {
        float v[VEC];
        unpackVec<ElemX>(*reinterpret_cast<const RawOf<ElemX>*>(stored + j * VEC), v);
#pragma unroll
        for (int e = 0; e < VEC; ++e)
            v[e] = TWO ? v[e] * f1 * f2 : v[e] * f1;
        storeVec(dst + j * VEC, v);
    }
}

// Where the thread's reference rose: its exponentials stored so far rescaled to the new one (rare,
// so out of line).
__device__ __noinline__ void rescaleStored(unsigned char* slab, int t, int end, float logFactor)
{
    ElemX* stored = reinterpret_cast<ElemX*>(slab);
    writeScaled<true>(stored, stored, t, end, logFactor);
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
    __shared__ __align__(8) unsigned long long fromPeers;
    __shared__ __align__(8) MaxSum peerSlots[SPLIT];
    const long long rank = cooperative_groups::this_cluster().block_rank();
${else}
    const long long rank = 0;
${endif}
    const ElemX* s = reinterpret_cast<const ElemX*>(slab);
    const int t = threadIdx.x;
    int phase = 0; // the block reduction's buffer
    const long long row = blockIdx.x / SPLIT;
    // The row's lead: its elements before its first 128-byte line (16-byte aligned: the launch
    // checks ldx and the pointers, so a whole number of vectors).
    const long long lead =
        static_cast<long long>(reinterpret_cast<uintptr_t>(X + row * ldx) % 128) / sizeof(ElemX);
    const long long stride = bulkStride(N); // unused with SPLIT = 1: rank 0 takes the row
    const long long begin = rank == 0 ? 0 : min(N, rank * stride - lead);
    const long long n = (rank == SPLIT - 1 ? N : min(N, (rank + 1) * stride - lead)) - begin;
    const ElemX* x = X + row * ldx + begin;
    ElemY* y = Y + row * ldy + begin;
    // Whole vectors (16 bytes) are copied; the row's last few elements, fewer than a vector, are
    // read directly. `head`: the vectors before the slice's first line (rank 0's, with a lead).
    const int vectors = static_cast<int>(n / VEC);
    const int head = rank == 0 ? static_cast<int>((LINE - lead) % LINE / VEC) : 0;
    const int perPiece =
        (max(0, vectors - head) + PIECES * LINE_VECTORS - 1) / (PIECES * LINE_VECTORS) *
        LINE_VECTORS;
    const long long tail = n - static_cast<long long>(vectors) * VEC;
    if (t == 0) {
#pragma unroll
        for (int p = 0; p < PIECES; ++p)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sharedAddress(&landed[p]))
                         : "memory");
${if CLUSTER}
        // One arrival (this one) and the other blocks' statistics complete it.
        const uint32_t peers = sharedAddress(&fromPeers);
        const uint32_t peerBytes = static_cast<uint32_t>(sizeof(MaxSum) * (SPLIT - 1));
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(peers) : "memory");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(peers),
                     "r"(peerBytes)
                     : "memory");
${endif}
        // The initialised barriers visible to the copies (the async proxy) and the cluster.
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        issueSlice(reinterpret_cast<ElemX*>(slab), x, vectors, head, perPiece, landed);
    }
    __syncthreads(); // the barriers are initialised before anyone waits on them
${if CLUSTER}
    clusterArrive();
${endif}
    // One pass over each piece: the thread's reference m and sum of exp(x - m), the sum rescaled
    // only when a vector's maximum passes m + SLACK (4% faster than a maximum pass, then a sum
    // pass, over each piece: H200, session 17). With m the running maximum itself, some thread of
    // a warp raised it on 95% of the vectors (each thread holds a dozen), and the rescale's branch,
    // 10 instructions and an exponential, ran on nearly all of them; a reference up to 20 (SLACK;
    // 10 for f16) under the maximum keeps every term under e^20 (no overflow for a slice of under
    // 10^29 elements) and the sum's relative error as before: +1.1 points of the DRAM floor (H200,
    // session 24). Each
    // exponential is 2^(x log2(e) - m log2(e)), one FFMA: m log2(e) is rounded once, a relative
    // error of at most 2^-24 |m log2(e)| in every term of a row, far inside the harness's scale for
    // softmax (it grows with |x|). Indices within the slice are 32-bit, the raw words converted a
    // pair at a time (unpackVec): with the two subtractions and 64-bit indices of the first form
    // this loop and the output's ran 26.4 M warp instructions on 664 rows of 50257 bf16, then
    // 19.5 M; the kernel was issue-bound (H200, session 23).
    //   Each exponential is stored over its x in shared memory (in ElemX), so the output pass
    // multiplies instead of computing a second one (writeScaled). Where the reference rises, the
    // thread's stored exponentials are rescaled to it (rescaleStored; rare: a jump over SLACK).
    float m = -INFINITY; // the thread's reference: its maximum so far, or up to SLACK under it
    float ml = 0.0f;     // m log2(e); 0 while m is -inf, so x = -inf gives 2^-inf = 0
    float acc = 0.0f;    // the sum of exp(x - m)
    int i = t;
    for (int p = 0; p < PIECES; ++p) {
        const int last = min(vectors, head + (p + 1) * perPiece);
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
            if (most > m + SLACK) { // -inf + SLACK = -inf: a thread's first finite vector sets m
                acc *= rescale(m, most);
                const float mostL = most * LOG2E;
                if (m != -INFINITY) // the exponentials stored so far (all 0 while m is -inf)
                    rescaleStored(slab, t, i, ml - mostL);
                m = most;
                ml = mostL;
            }
#pragma unroll
            for (int e = 0; e < VEC; ++e)
                v[e] = exp2Fast(fmaf(v[e], LOG2E, -ml));
            storeVec(reinterpret_cast<ElemX*>(slab) + i * VEC, v); // before combineLanes folds v
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
    const MaxSum block = blockMaxSum(part, phase);
${if CLUSTER}
    clusterWait();
    if (t == 0)
        sendToPeers(peerSlots, &fromPeers, static_cast<uint32_t>(rank), block);
    waitPeers(sharedAddress(&fromPeers), 0);
    // The blocks' statistics in rank order, so every block of the cluster gets the same bits.
    MaxSum total = rank == 0 ? block : peerSlots[0];
#pragma unroll
    for (int r = 1; r < SPLIT; ++r)
        total = combineMaxSum(total, r == rank ? block : peerSlots[r]);
${else}
    const MaxSum total = block;
${endif}
    // exp(x - M) / s = exp(x - m) 2^(m log2(e) - (M log2(e) + log2(s))): the stored exponential
    // times the thread's factor, in two where one would flush to zero (kFactorLog).
    const float shift = total.m == -INFINITY ? 0.0f : total.m;
    const float logSum = __log2f(total.s);
    const float shiftL = fmaf(shift, LOG2E, logSum);
    // A thread that saw only -inf stored zeros: its outputs are 0, or NaN where the row's are.
    const float logScale =
        m != -INFINITY || total.m == -INFINITY || shiftL != shiftL ? ml - shiftL : -INFINITY;
    if (__all_sync(0xffffffffu, logScale >= kFactorLog)) // the warp's threads near the maximum
        writeScaled<false>(y, s, t, vectors, logScale);
    else
        writeScaled<true>(y, s, t, vectors, logScale);
    if (tail > 0 && t == THREADS - 1) {
#pragma unroll
        for (int e = 0; e < VEC; ++e)
            end[e] = exp2Fast(fmaf(end[e] - shift, LOG2E, -logSum));
        storeTail(y + vectors * VEC, tail, end);
    }
}
