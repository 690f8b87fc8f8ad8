// Sweep source for the Hopper corpus kernel (round 2, issue 6): the round-1 design (128x256x64
// tiles, 4 TMA stages, 2 consumer warpgroups of m64n256k16, persistent grouped raster) with three
// compile-time knobs that the self-test sweep sets with -D:
//   KEV_CLUSTER   1 or 2: 2 pairs CTAs along M in a thread-block cluster; each loads its own A
//                 tile and half of the shared B tile, multicast to both (L2->SMEM bytes per CTA and
//                 k-block 48 KiB -> 32 KiB).
//   KEV_TMA_STORE 0 or 1: 1 stages the fp32 tile through two 8 KiB 128B-swizzled buffers per
//                 consumer warpgroup and writes C with TMA bulk stores (full 128-byte lines, issued
//                 asynchronously), instead of 64 8-byte stores per thread that each touch 8 lines.
//   KEV_GROUP_M   tile rows per raster group.
//   KEV_BF16      1: A, B and C bf16 (the gemm_bf16_bf16_8192 task) instead of fp16 x fp16 -> fp32.
// Not a corpus file (no expect header): tests/hopper/sweep/run_sweep.sh builds it per variant.
#include <kevolve/abi.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "this kernel needs sm_90a: compile with -gencode=arch=compute_90a,code=sm_90a"
#endif

#ifndef KEV_CLUSTER
#define KEV_CLUSTER 1
#endif
#ifndef KEV_TMA_STORE
#define KEV_TMA_STORE 0
#endif
#ifndef KEV_GROUP_M
#define KEV_GROUP_M 8
#endif
#ifndef KEV_BF16
#define KEV_BF16 0
#endif
#if KEV_BF16
#define KEV_MMA_TYPES "f32.bf16.bf16"
#else
#define KEV_MMA_TYPES "f32.f16.f16"
#endif

namespace {

#if KEV_BF16
using OutT = __nv_bfloat16;
#else
using OutT = float;
#endif

constexpr int kTileM = 128;
constexpr int kTileN = 256;
constexpr int kTileK = 64;
constexpr int kStages = 4;
constexpr int kConsumerGroups = 2;
constexpr int kThreads = 128 * (kConsumerGroups + 1);
constexpr int kCluster = KEV_CLUSTER;
constexpr bool kTmaStore = KEV_TMA_STORE != 0;
constexpr int kGroupM = KEV_GROUP_M;
// The raster walks cluster units (kCluster tiles stacked along M); a group keeps kGroupM tile rows.
constexpr int kGroupUnits = kGroupM / kCluster > 0 ? kGroupM / kCluster : 1;
constexpr int kProducerRegs = 40;
constexpr int kConsumerRegs = 232;

constexpr uint32_t kABytes = kTileM * kTileK * 2;
constexpr uint32_t kBChunkBytes = kTileK * 64 * 2;
constexpr uint32_t kBChunks = kTileN / 64;
constexpr uint32_t kBBytes = kTileK * kTileN * 2;
constexpr uint32_t kStageBytes = kABytes + kBBytes;
// C staging: per consumer warpgroup two boxes of 64 rows x 128 bytes (one swizzle row).
constexpr uint32_t kCBoxCols = 128 / sizeof(OutT);
constexpr uint32_t kCBoxBytes = 64 * 128;
constexpr uint32_t kCBytes = kTmaStore ? kConsumerGroups * 2 * kCBoxBytes : 0;
constexpr uint32_t kBarrierBytes = 2 * kStages * 8;
constexpr size_t kSmemBytes = 1024 + size_t(kStages) * kStageBytes + kCBytes + kBarrierBytes;
static_assert(kSmemBytes <= 232448, "shared memory over the sm_90 opt-in limit");
static_assert(kConsumerGroups * 128 * kConsumerRegs + 128 * kProducerRegs <= 65536,
              "register file over budget");
static_assert(kCluster == 1 || kCluster == 2, "cluster of 1 or 2 CTAs along M");
static_assert(kBChunks % kCluster == 0, "B chunks split evenly over the cluster");

struct TileCoord {
    int m;
    int n;
};

// Grouped raster over cluster units: kGroupUnits unit rows sweep all tile columns before the next
// group starts, so the CTAs of one wave share B panels (and a few A panels) in L2.
__device__ inline TileCoord unitCoord(int unit, int unitsM, int tilesN) {
    const int perGroup = kGroupUnits * tilesN;
    const int group = unit / perGroup;
    const int firstM = group * kGroupUnits;
    const int rows = min(unitsM - firstM, kGroupUnits);
    const int inGroup = unit - group * perGroup;
    return {firstM + inGroup % rows, inGroup / rows};
}

__device__ inline uint32_t smemAddress(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ inline uint32_t clusterRank() {
    uint32_t rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    return rank;
}

__device__ inline void clusterSync() {
    asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
}

__device__ inline void mbarInit(uint32_t bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

__device__ inline bool mbarTryWait(uint32_t bar, uint32_t parity) {
    uint32_t done;
    asm volatile("{\n\t.reg .pred p;\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(done)
                 : "r"(bar), "r"(parity)
                 : "memory");
    return done != 0;
}

// Waits until the phase of `bar` with the given parity has completed.
__device__ inline void mbarWait(uint32_t bar, uint32_t parity) {
    while (!mbarTryWait(bar, parity)) {
    }
}

// Releases a stage, called by every consumer thread: one arrival per warp, with a cluster on the
// barrier of every CTA (lane i signals CTA i), since each CTA's producer multicasts into both CTAs'
// stage buffers. The default CTA-scope release suffices (wgmma reads, TMA writes: async proxy);
// a cluster-scope one put a MEMBAR.ALL.GPU into every k-block and ran at 0.59x cuBLAS.
__device__ inline void releaseStage(uint32_t bar) {
    const uint32_t lane = threadIdx.x % 32;
    if constexpr (kCluster == 1) {
        if (lane == 0) {
            asm volatile("{\n\t.reg .b64 state;\n\t"
                         "mbarrier.arrive.shared::cta.b64 state, [%0];\n\t}" ::"r"(bar)
                         : "memory");
        }
    } else if (lane < kCluster) {
        uint32_t remote;
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(bar), "r"(lane));
        asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
    }
}

__device__ inline void mbarArriveExpectTx(uint32_t bar, uint32_t bytes) {
    asm volatile("{\n\t.reg .b64 state;\n\t"
                 "mbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1;\n\t}" ::"r"(bar),
                 "r"(bytes)
                 : "memory");
}

__device__ inline void tmaLoad2d(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0,
                                 int c1) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar)
                 : "memory");
}

// The same box lands at the same shared offset in every CTA of `mask`, and completes on the
// mbarrier at the same offset in each.
__device__ inline void tmaLoad2dMulticast(uint32_t dst, const CUtensorMap* map, uint32_t bar,
                                          int c0, int c1, uint16_t mask) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
                 : "memory");
}

__device__ inline void tmaStore2d(const CUtensorMap* map, uint32_t src, int c0, int c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"(
            reinterpret_cast<uint64_t>(map)),
        "r"(c0), "r"(c1), "r"(src)
        : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

// Shared-memory matrix descriptor, 128-byte swizzle (layout type 1); addresses and offsets are
// encoded in 16-byte units.
__device__ inline uint64_t matrixDescriptor(uint32_t address, uint32_t lbo, uint32_t sbo) {
    return uint64_t((address & 0x3FFFF) >> 4) | (uint64_t(lbo >> 4) << 16) |
           (uint64_t(sbo >> 4) << 32) | (uint64_t(1) << 62);
}

__device__ inline void wgmmaFence() {
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ inline void wgmmaCommit() {
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int N> __device__ inline void wgmmaWait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

// D (64 x 256, fp32) = A (64 x 16, K-major) * B (16 x 256, N-major) + (scaleD ? D : 0).
__device__ inline void wgmma256(float (&d)[128], uint64_t descA, uint64_t descB, int scaleD) {
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "setp.ne.b32 p, %130, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n256k16." KEV_MMA_TYPES " {"
        "%0, %1, %2, %3, %4, %5, %6, %7, "
        "%8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, "
        "%24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, "
        "%40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, "
        "%56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, "
        "%72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, "
        "%88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, "
        "%104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, "
        "%120, %121, %122, %123, %124, %125, %126, %127}, "
        "%128, %129, p, 1, 1, 0, 1;\n\t}"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
          "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
          "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
          "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
          "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
          "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
          "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
          "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]),
          "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]),
          "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
          "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]),
          "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]),
          "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),
          "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),
          "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),
          "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(descA), "l"(descB), "r"(scaleD));
}

struct Problem {
    OutT* c;
    int m;
    int n;
    int k;
    int64_t ldc;
    float alpha;
    float beta;
};

struct Schedule {
    int unitsM; // cluster units along M
    int tilesN;
    int units;
    int kBlocks;
    int first;  // this CTA's cluster's first unit
    int stride; // clusters in the grid
    int rank;   // this CTA's row inside its unit
};

__device__ inline Schedule schedule(const Problem& p) {
    Schedule s;
    const int tilesM = (p.m + kTileM - 1) / kTileM;
    s.unitsM = (tilesM + kCluster - 1) / kCluster;
    s.tilesN = (p.n + kTileN - 1) / kTileN;
    s.units = s.unitsM * s.tilesN;
    s.kBlocks = (p.k + kTileK - 1) / kTileK;
    s.first = blockIdx.x / kCluster;
    s.stride = gridDim.x / kCluster;
    s.rank = kCluster == 1 ? 0 : int(clusterRank());
    return s;
}

__device__ inline void produce(const CUtensorMap* mapA, const CUtensorMap* mapB, uint32_t smemA,
                               uint32_t smemB, uint32_t fullBars, uint32_t emptyBars,
                               const Problem& p) {
    const Schedule sc = schedule(p);
    constexpr uint32_t kOwnChunks = kBChunks / kCluster;
    uint32_t it = 0;
    for (int unit = sc.first; unit < sc.units; unit += sc.stride) {
        const TileCoord uc = unitCoord(unit, sc.unitsM, sc.tilesN);
        const int tileM = uc.m * kCluster + sc.rank;
        for (int kb = 0; kb < sc.kBlocks; ++kb, ++it) {
            const uint32_t s = it % kStages;
            // The first pass over the ring finds every slot free: parity 1 is the phase
            // "before" the barrier's initial phase 0, which counts as complete.
            mbarWait(emptyBars + 8 * s, ((it / kStages) & 1) ^ 1);
            const uint32_t full = fullBars + 8 * s;
            // The whole stage lands here: the own A tile, the own B chunks and, in a cluster, the
            // peer's B chunks (its multicast completes on this barrier too).
            mbarArriveExpectTx(full, kStageBytes);
            tmaLoad2d(smemA + s * kABytes, mapA, full, kb * kTileK, tileM * kTileM);
#pragma unroll
            for (uint32_t i = 0; i < kOwnChunks; ++i) {
                const uint32_t j = sc.rank * kOwnChunks + i;
                const uint32_t dst = smemB + s * kBBytes + j * kBChunkBytes;
                const int col = uc.n * kTileN + 64 * int(j);
                if constexpr (kCluster == 1) {
                    tmaLoad2d(dst, mapB, full, col, kb * kTileK);
                } else {
                    tmaLoad2dMulticast(dst, mapB, full, col, kb * kTileK,
                                       uint16_t((1u << kCluster) - 1));
                }
            }
        }
    }
}

__device__ inline float2 scaled(float x0, float x1, const OutT* old, bool in, const Problem& p) {
    float2 v = make_float2(p.alpha * x0, p.alpha * x1);
    if (p.beta != 0.0f && in) {
#if KEV_BF16
        const float2 prev = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(old));
#else
        const float2 prev = *reinterpret_cast<const float2*>(old);
#endif
        v.x += p.beta * prev.x;
        v.y += p.beta * prev.y;
    }
    return v;
}

__device__ inline void storeGlobal(OutT* dst, float2 v) {
#if KEV_BF16
    *reinterpret_cast<__nv_bfloat162*>(dst) = __floats2bfloat162_rn(v.x, v.y);
#else
    *reinterpret_cast<float2*>(dst) = v;
#endif
}

__device__ inline void storeShared(uint32_t address, float2 v) {
#if KEV_BF16
    const __nv_bfloat162 h = __floats2bfloat162_rn(v.x, v.y);
    asm volatile("st.shared.b32 [%0], %1;" ::"r"(address),
                 "r"(*reinterpret_cast<const uint32_t*>(&h))
                 : "memory");
#else
    asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(address), "f"(v.x), "f"(v.y) : "memory");
#endif
}

__device__ inline void storeTileDirect(const float (&acc)[128], const Problem& p, int tileM,
                                       int tileN, int group) {
    const int warp = (threadIdx.x / 32) % 4;
    const int lane = threadIdx.x % 32;
    const int row = tileM * kTileM + group * 64 + warp * 16 + lane / 4;
    const int colBase = tileN * kTileN + 2 * (lane % 4);
    OutT* rowLo = p.c + int64_t(row) * p.ldc;
    OutT* rowHi = rowLo + 8 * p.ldc;
    const bool loIn = row < p.m;
    const bool hiIn = row + 8 < p.m;
#pragma unroll
    for (int j = 0; j < kTileN / 8; ++j) {
        const int col = colBase + 8 * j;
        if (col >= p.n) {
            continue;
        }
        if (loIn) {
            storeGlobal(rowLo + col, scaled(acc[4 * j], acc[4 * j + 1], rowLo + col, true, p));
        }
        if (hiIn) {
            storeGlobal(rowHi + col, scaled(acc[4 * j + 2], acc[4 * j + 3], rowHi + col, true, p));
        }
    }
}

__device__ inline void namedBarrier(int id) {
    asm volatile("bar.sync %0, 128;" ::"r"(id) : "memory");
}

// Writes this warpgroup's 64 x 256 fp32 block through two 8 KiB staging boxes (64 rows x 32
// columns, 128B swizzle: the 16-byte chunk index is XORed with row % 8, so a warp's 8-row store
// touches every bank group twice, the minimum), each sent with a TMA bulk store that clips rows
// >= M and columns >= N. Thread 0 of the warpgroup issues the stores and, before a buffer is
// rewritten, waits until the store issued from it two boxes earlier has read it.
__device__ inline void storeTileTma(const float (&acc)[128], const CUtensorMap* mapC,
                                    uint32_t smemC, const Problem& p, int tileM, int tileN,
                                    int group) {
    const int local = threadIdx.x % 128;
    const int warp = local / 32;
    const int lane = local % 32;
    const int r = warp * 16 + lane / 4;
    const uint32_t buffers = smemC + group * 2 * kCBoxBytes;
    const int rowLo = tileM * kTileM + group * 64 + r;
    const bool loIn = rowLo < p.m;
    const bool hiIn = rowLo + 8 < p.m;
    const OutT* cLo = p.c + int64_t(rowLo) * p.ldc;
    const OutT* cHi = cLo + 8 * p.ldc;
#pragma unroll
    for (int q = 0; q < kTileN / int(kCBoxCols); ++q) {
        const uint32_t buf = buffers + (q & 1) * kCBoxBytes;
        if (local == 0) {
            asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
        }
        namedBarrier(1 + group);
#pragma unroll
        for (int jj = 0; jj < int(kCBoxCols) / 8; ++jj) {
            const int j = q * int(kCBoxCols) / 8 + jj;
            const uint32_t byteInRow = (8 * jj + 2 * (lane % 4)) * sizeof(OutT);
            const uint32_t swz = (((byteInRow >> 4) ^ (r % 8)) << 4) | (byteInRow & 15);
            const int col = tileN * kTileN + 8 * j + 2 * (lane % 4);
            const bool colIn = col < p.n;
            const float2 lo = scaled(acc[4 * j], acc[4 * j + 1], cLo + col, loIn && colIn, p);
            const float2 hi = scaled(acc[4 * j + 2], acc[4 * j + 3], cHi + col, hiIn && colIn, p);
            storeShared(buf + r * 128 + swz, lo);
            storeShared(buf + (r + 8) * 128 + swz, hi);
        }
        // The bulk store reads the buffer through the async proxy.
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        namedBarrier(1 + group);
        if (local == 0) {
            tmaStore2d(mapC, buf, tileN * kTileN + q * int(kCBoxCols), tileM * kTileM + group * 64);
        }
    }
}

__device__ inline void consume(uint32_t smemA, uint32_t smemB, uint32_t smemC, uint32_t fullBars,
                               uint32_t emptyBars, const CUtensorMap* mapC, const Problem& p) {
    const int group = threadIdx.x / 128 - 1;
    const Schedule sc = schedule(p);
    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) {
        acc[i] = 0.0f;
    }
    uint32_t it = 0;
    for (int unit = sc.first; unit < sc.units; unit += sc.stride) {
        const TileCoord uc = unitCoord(unit, sc.unitsM, sc.tilesN);
        const int tileM = uc.m * kCluster + sc.rank;
        for (int kb = 0; kb < sc.kBlocks; ++kb, ++it) {
            const uint32_t s = it % kStages;
            mbarWait(fullBars + 8 * s, (it / kStages) & 1);
            const uint32_t a = smemA + s * kABytes + group * 64 * 128;
            const uint32_t b = smemB + s * kBBytes;
            wgmmaFence();
#pragma unroll
            for (int kk = 0; kk < kTileK / 16; ++kk) {
                wgmma256(acc, matrixDescriptor(a + kk * 32, 16, 1024),
                         matrixDescriptor(b + kk * 2048, kBChunkBytes, 1024),
                         (kb > 0 || kk > 0) ? 1 : 0);
            }
            wgmmaCommit();
            // Keep this block's MMAs in flight; the previous block's are done, so its slot is
            // handed back to the producer(s) (one arrival per consumer warp and CTA).
            wgmmaWait<1>();
            if (kb > 0) {
                releaseStage(emptyBars + 8 * ((it - 1) % kStages));
            }
        }
        wgmmaWait<0>();
        releaseStage(emptyBars + 8 * ((it - 1) % kStages));
        if constexpr (kTmaStore) {
            storeTileTma(acc, mapC, smemC, p, tileM, uc.n, group);
        } else {
            storeTileDirect(acc, p, tileM, uc.n, group);
        }
    }
    if constexpr (kTmaStore) {
        // Shared memory must outlive the bulk stores that read it.
        if (threadIdx.x % 128 == 0) {
            asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
        }
    }
}

__global__ void __launch_bounds__(kThreads, 1)
    gemmKernel(const __grid_constant__ CUtensorMap mapA, const __grid_constant__ CUtensorMap mapB,
               const __grid_constant__ CUtensorMap mapC, Problem p) {
    extern __shared__ uint8_t smemRaw[];
    const uint32_t base = (smemAddress(smemRaw) + 1023) & ~1023u;
    const uint32_t smemA = base;
    const uint32_t smemB = base + kStages * kABytes;
    const uint32_t smemC = base + kStages * kStageBytes;
    const uint32_t fullBars = smemC + kCBytes;
    const uint32_t emptyBars = fullBars + kStages * 8;

    if (threadIdx.x == 0) {
        for (int s = 0; s < kStages; ++s) {
            mbarInit(fullBars + 8 * s, 1);
            mbarInit(emptyBars + 8 * s, kConsumerGroups * 4 * kCluster);
        }
        // Make the initialised barriers visible to the async proxy (TMA complete_tx) and to the
        // other CTA of the cluster.
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    // No CTA multicasts into, or arrives on, a peer before the peer's barriers exist.
    if constexpr (kCluster > 1) {
        clusterSync();
    } else {
        __syncthreads();
    }

    if (threadIdx.x < 128) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kProducerRegs));
        if (threadIdx.x == 0) {
            asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(&mapA))
                         : "memory");
            asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(&mapB))
                         : "memory");
            produce(&mapA, &mapB, smemA, smemB, fullBars, emptyBars, p);
        }
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kConsumerRegs));
        consume(smemA, smemB, smemC, fullBars, emptyBars, &mapC, p);
    }
    // A CTA's shared memory (stage buffers, barriers) must outlive the peer's multicasts and
    // remote arrivals.
    if constexpr (kCluster > 1) {
        __syncwarp();
        clusterSync();
    }
}

// Error codes returned by kevolve_launch, so a runtime_error report says what was refused.
enum LaunchError {
    kBadArgs = 1,
    kUnsupported = 2,
    kTensorMapA = 3,
    kTensorMapB = 4,
    kSmemAttribute = 5,
    kLaunch = 6,
    kTensorMapC = 7,
    kNoClusterFits = 8,
};

int encodeMap(const KevolveServices* services, CUtensorMap* map, CUtensorMapDataType type,
              size_t elementBytes, void* data, int64_t inner, int64_t outer, int64_t ld,
              uint32_t boxInner, uint32_t boxOuter) {
    const cuuint64_t dims[2] = {cuuint64_t(inner), cuuint64_t(outer)};
    const cuuint64_t strides[1] = {cuuint64_t(ld) * elementBytes};
    const cuuint32_t box[2] = {boxInner, boxOuter};
    const cuuint32_t elementStrides[2] = {1, 1};
    return services->encode_tensor_map_tiled(
        map, type, 2, data, dims, strides, box, elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
        CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

} // namespace

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    if (args == nullptr || args->abi_version != KEVOLVE_ABI_VERSION ||
        args->op != KEVOLVE_OP_GEMM || args->num_inputs < 2 || args->num_outputs < 1) {
        return kBadArgs;
    }
#if KEV_BF16
    constexpr KevolveDtype kIn = KEVOLVE_BF16;
    constexpr KevolveDtype kOut = KEVOLVE_BF16;
    constexpr CUtensorMapDataType kInMap = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    constexpr CUtensorMapDataType kOutMap = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
#else
    constexpr KevolveDtype kIn = KEVOLVE_F16;
    constexpr KevolveDtype kOut = KEVOLVE_F32;
    constexpr CUtensorMapDataType kInMap = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    constexpr CUtensorMapDataType kOutMap = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
#endif
    if (args->inputs[0].dtype != kIn || args->inputs[1].dtype != kIn ||
        args->outputs[0].dtype != kOut || args->device.cc_major != 9 || args->services == nullptr ||
        args->services->encode_tensor_map_tiled == nullptr) {
        return kUnsupported;
    }
    const int64_t m = KEVOLVE_GEMM_M(args);
    const int64_t n = KEVOLVE_GEMM_N(args);
    const int64_t k = KEVOLVE_GEMM_K(args);
    const int64_t lda = KEVOLVE_GEMM_LDA(args);
    const int64_t ldb = KEVOLVE_GEMM_LDB(args);
    const int64_t ldc = KEVOLVE_GEMM_LDC(args);
    // TMA needs 16-byte row pitches for A, B and C; the column-pair stores need even N.
    if (m < 1 || n < 1 || k < 1 || m > INT32_MAX || n > INT32_MAX || k > INT32_MAX || n % 8 != 0 ||
        lda % 8 != 0 || ldb % 8 != 0 || (ldc * sizeof(OutT)) % 16 != 0 || lda < k || ldb < n ||
        ldc < n) {
        return kBadArgs;
    }

    CUtensorMap mapA;
    CUtensorMap mapB;
    CUtensorMap mapC;
    if (encodeMap(args->services, &mapA, kInMap, 2, args->inputs[0].data, k, m, lda, kTileK,
                  kTileM) != 0) {
        return kTensorMapA;
    }
    if (encodeMap(args->services, &mapB, kInMap, 2, args->inputs[1].data, n, k, ldb, 64, kTileK) !=
        0) {
        return kTensorMapB;
    }
    if (encodeMap(args->services, &mapC, kOutMap, sizeof(OutT), args->outputs[0].data, n, m, ldc,
                  kCBoxCols, 64) != 0) {
        return kTensorMapC;
    }
    if (cudaFuncSetAttribute(gemmKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             int(kSmemBytes)) != cudaSuccess) {
        return kSmemAttribute;
    }

    Problem p;
    p.c = static_cast<OutT*>(args->outputs[0].data);
    p.m = int(m);
    p.n = int(n);
    p.k = int(k);
    p.ldc = ldc;
    p.alpha = float(args->scalars[0]);
    p.beta = float(args->scalars[1]);

    const int64_t units =
        ((m + kTileM * kCluster - 1) / (kTileM * kCluster)) * ((n + kTileN - 1) / kTileN);
    cudaLaunchAttribute attribute;
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = kCluster;
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = 1;
    cudaLaunchConfig_t config = {};
    config.blockDim = dim3(kThreads);
    config.dynamicSmemBytes = kSmemBytes;
    config.stream = stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
    // Persistent grid: as many clusters as can be resident at once (one CTA per SM), computed
    // once per process since the answer depends only on the kernel and the device.
    static int residentClusters = 0;
    if (residentClusters == 0) {
        config.gridDim = dim3(kCluster);
        int clusters = 0;
        if (cudaOccupancyMaxActiveClusters(&clusters, gemmKernel, &config) != cudaSuccess ||
            clusters < 1) {
            return kNoClusterFits;
        }
        residentClusters = clusters;
    }
    const int64_t clusters = units < residentClusters ? units : residentClusters;
    config.gridDim = dim3(unsigned(clusters * kCluster));
    return cudaLaunchKernelEx(&config, gemmKernel, mapA, mapB, mapC, p) == cudaSuccess ? 0
                                                                                       : kLaunch;
}
