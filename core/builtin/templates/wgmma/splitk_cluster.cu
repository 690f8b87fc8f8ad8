${# wgmma/splitk_cluster.cu: split-K summed inside the cluster (gemm.cu renders it where}
${# SPLIT_CLUSTER is set), through distributed shared memory: no workspace, no second kernel.}
// Split-K in a cluster: the kSplitK CTAs of a cluster compute the same tile, CTA r over k-blocks
// [r * kBlocks / kSplitK, (r + 1) * kBlocks / kSplitK). Then each consumer thread stores the
// chunks of its accumulators that the other CTAs sum (chunk c: acc[s][4j .. 4j + 3] with
// c = s * kMmaN / 8 + j, summed by CTA c % kSplitK) into its own CTA's stage ring, which no load
// uses until the tile is done, and CTA r sums its chunks from every CTA's ring in split order,
// the same thread's registers in each (ld.shared::cluster), and stores them to C. The sum is the
// same expression whichever CTAs finish first, so C has the same bits on every run.
// Three mbarriers per CTA order it: kPartialsReady (every consumer warp of the cluster has
// stored, release/acquire at cluster scope), kPartialsRead (every warp of the cluster has read
// this CTA's ring), kRingFree (this CTA's consumers hand the ring back to its producer).
constexpr int kChunks = kSlices * kMmaN / 8;
constexpr int kConsumerThreads = 128 * kConsumerGroups;
constexpr uint32_t kChunkStride = kConsumerThreads * 16; // a chunk of every thread: 16 bytes each
static_assert(size_t(kChunks) * kChunkStride <= size_t(kStages) * kStageBytes,
              "the fp32 partial tile fits in the stage ring");

// One arrival of this warp on the mbarrier at `bar` in every CTA of the cluster, released at
// cluster scope after the warp's shared-memory accesses.
__device__ inline void arriveCluster(uint32_t bar) {
    __syncwarp();
    arriveOnCtas<kCluster, true>(bar);
}

__device__ inline float4 loadCluster(uint32_t local, uint32_t rank) {
    const uint32_t remote = mapaRank(local, rank);
    float4 v;
    asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "r"(remote)
                 : "memory");
    return v;
}

// The whole exchange for the CTA of rank kRank (a compile-time rank, so that every chunk's
// owner is known and the loads of a chunk's partials are issued together).
template <int kRank>
__device__ inline void sumInClusterAs(float (&acc)[kSlices][kMmaN / 2], const Problem& p,
                                      TileCoord tc, int group, uint32_t ring, uint32_t bars,
                                      uint32_t parity) {
    const uint32_t mine = ring + (threadIdx.x - 128) * 16;
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
        if (c % kSplitK != kRank) {
            const int s = c / (kMmaN / 8);
            const int j = c % (kMmaN / 8);
            asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(mine + c * kChunkStride),
                         "f"(acc[s][4 * j]), "f"(acc[s][4 * j + 1]), "f"(acc[s][4 * j + 2]),
                         "f"(acc[s][4 * j + 3])
                         : "memory");
        }
    }
    arriveCluster(bars + 8 * kPartialsReady);
    mbarWait<true>(bars + 8 * kPartialsReady, parity);
#pragma unroll
    for (int c = kRank; c < kChunks; c += kSplitK) {
        const int s = c / (kMmaN / 8);
        const int j = c % (kMmaN / 8);
        float4 part[kSplitK];
#pragma unroll
        for (int q = 0; q < kSplitK; ++q) {
            part[q] = q == kRank ? make_float4(acc[s][4 * j], acc[s][4 * j + 1], acc[s][4 * j + 2],
                                               acc[s][4 * j + 3])
                                 : loadCluster(mine + c * kChunkStride, uint32_t(q));
        }
        float4 sum = part[0];
#pragma unroll
        for (int q = 1; q < kSplitK; ++q) {
            sum.x += part[q].x;
            sum.y += part[q].y;
            sum.z += part[q].z;
            sum.w += part[q].w;
        }
        acc[s][4 * j] = sum.x;
        acc[s][4 * j + 1] = sum.y;
        acc[s][4 * j + 2] = sum.z;
        acc[s][4 * j + 3] = sum.w;
    }
    arriveCluster(bars + 8 * kPartialsRead);
    storeTile<kRank, kSplitK>(acc, p, tc, group);
    // The others' reads of this ring are done before its producer may load into it again; the
    // next TMA writes (async proxy) follow this thread's generic accesses.
    mbarWait<true>(bars + 8 * kPartialsRead, parity);
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncwarp();
    arriveOnCtas<1, false>(bars + 8 * kRingFree);
}

template <int kRank = 0>
__device__ inline void sumInCluster(float (&acc)[kSlices][kMmaN / 2], const Problem& p,
                                    TileCoord tc, int group, uint32_t ring, uint32_t bars,
                                    uint32_t tileIndex, int rank) {
    if constexpr (kRank < kSplitK) {
        if (rank == kRank) {
            sumInClusterAs<kRank>(acc, p, tc, group, ring, bars, tileIndex & 1);
        } else {
            sumInCluster<kRank + 1>(acc, p, tc, group, ring, bars, tileIndex, rank);
        }
    }
}
