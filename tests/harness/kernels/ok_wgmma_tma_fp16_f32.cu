// expect: ok
// task: gemm_fp16_fp32_4096.json
//
// Hopper GEMM for row-major A (M x K, fp16), row-major B (K x N, fp16) and row-major C (M x N,
// fp32), accumulating in fp32: TMA loads into a 4-stage shared-memory ring with 128-byte swizzle,
// mbarrier completion, one producer warpgroup and two consumer warpgroups issuing
// wgmma.mma_async m64n256k16 from shared memory, a persistent grid walking tiles in grouped order.
//
// Shared-memory layouts (all stage buffers 1024-byte aligned, so the swizzle pattern starts at
// every buffer and the descriptors' base offset is 0):
//   A stage: 128 rows (M) of 64 fp16 (K) = 128 bytes per row, the TMA box {64, 128}. This is the
//            K-major 128B-swizzle canonical layout: 8-row groups 1024 bytes apart (SBO), LBO
//            unused. Consumer warpgroup w reads rows 64w .. 64w+63; a k16 step is +32 bytes in the
//            row.
//   B stage: four chunks of 64 K-rows x 64 fp16 (N), 8192 bytes each, one TMA box {64, 64} each.
//            Row-major B is N-major for wgmma (imm-trans-b = 1): in the MN-major 128B-swizzle
//            canonical layout LBO is the distance between 64-element N chunks (8192 bytes) and SBO
//            between 8-row K groups (1024 bytes); a k16 step is 16 rows = +2048 bytes.
// Tails: TMA fills out-of-bounds elements with zeros (so partial K blocks add nothing) and the
// epilogue stores only rows < M and columns < N; N is a multiple of 8 so a float2 never straddles.
#include <kevolve/abi.h>

#include <cuda_fp16.h>

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "this kernel needs sm_90a: compile with -gencode=arch=compute_90a,code=sm_90a"
#endif

namespace {

constexpr int kTileM = 128;
constexpr int kTileN = 256;
constexpr int kTileK = 64;
constexpr int kStages = 4;
constexpr int kConsumerGroups = 2;
constexpr int kThreads = 128 * (kConsumerGroups + 1);
constexpr int kGroupM = 8; // tile rows per raster group, for L2 reuse of B
constexpr int kProducerRegs = 40;
constexpr int kConsumerRegs = 232;

constexpr uint32_t kABytes = kTileM * kTileK * 2;
constexpr uint32_t kBChunkBytes = kTileK * 64 * 2;
constexpr uint32_t kBBytes = kTileK * kTileN * 2;
constexpr uint32_t kStageBytes = kABytes + kBBytes;
constexpr uint32_t kBarrierBytes = 2 * kStages * 8;
constexpr size_t kSmemBytes = 1024 + size_t(kStages) * kStageBytes + kBarrierBytes;
static_assert(kSmemBytes <= 232448, "shared memory over the sm_90 opt-in limit");
static_assert(kConsumerGroups * 128 * kConsumerRegs + 128 * kProducerRegs <= 65536,
              "register file over budget");

struct TileCoord {
    int m;
    int n;
};

// Grouped raster: kGroupM tile rows sweep all tile columns before the next group starts, so the
// CTAs of one wave share B panels (and a few A panels) in L2.
__device__ inline TileCoord tileCoord(int tile, int tilesM, int tilesN) {
    const int perGroup = kGroupM * tilesN;
    const int group = tile / perGroup;
    const int firstM = group * kGroupM;
    const int rows = min(tilesM - firstM, kGroupM);
    const int inGroup = tile - group * perGroup;
    return {firstM + inGroup % rows, inGroup / rows};
}

__device__ inline uint32_t smemAddress(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
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

__device__ inline void mbarArrive(uint32_t bar) {
    asm volatile("{\n\t.reg .b64 state;\n\t"
                 "mbarrier.arrive.shared::cta.b64 state, [%0];\n\t}" ::"r"(bar)
                 : "memory");
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
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {"
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
    float* c;
    int m;
    int n;
    int k;
    int64_t ldc;
    float alpha;
    float beta;
};

__device__ inline void produce(const CUtensorMap* mapA, const CUtensorMap* mapB, uint32_t smemA,
                               uint32_t smemB, uint32_t fullBars, uint32_t emptyBars,
                               const Problem& p) {
    const int tilesM = (p.m + kTileM - 1) / kTileM;
    const int tilesN = (p.n + kTileN - 1) / kTileN;
    const int kBlocks = (p.k + kTileK - 1) / kTileK;
    uint32_t it = 0;
    for (int tile = blockIdx.x; tile < tilesM * tilesN; tile += gridDim.x) {
        const TileCoord tc = tileCoord(tile, tilesM, tilesN);
        for (int kb = 0; kb < kBlocks; ++kb, ++it) {
            const uint32_t s = it % kStages;
            // The first pass over the ring finds every slot free: parity 1 is the phase
            // "before" the barrier's initial phase 0, which counts as complete.
            mbarWait(emptyBars + 8 * s, ((it / kStages) & 1) ^ 1);
            const uint32_t full = fullBars + 8 * s;
            mbarArriveExpectTx(full, kStageBytes);
            tmaLoad2d(smemA + s * kABytes, mapA, full, kb * kTileK, tc.m * kTileM);
#pragma unroll
            for (int j = 0; j < kTileN / 64; ++j) {
                tmaLoad2d(smemB + s * kBBytes + j * kBChunkBytes, mapB, full,
                          tc.n * kTileN + 64 * j, kb * kTileK);
            }
        }
    }
}

__device__ inline void storeTile(const float (&acc)[128], const Problem& p, TileCoord tc,
                                 int group) {
    const int warp = (threadIdx.x / 32) % 4;
    const int lane = threadIdx.x % 32;
    const int row = tc.m * kTileM + group * 64 + warp * 16 + lane / 4;
    const int colBase = tc.n * kTileN + 2 * (lane % 4);
    float* rowLo = p.c + int64_t(row) * p.ldc;
    float* rowHi = rowLo + 8 * p.ldc;
    const bool loIn = row < p.m;
    const bool hiIn = row + 8 < p.m;
#pragma unroll
    for (int j = 0; j < kTileN / 8; ++j) {
        const int col = colBase + 8 * j;
        if (col >= p.n) {
            continue;
        }
        float2 lo = make_float2(p.alpha * acc[4 * j], p.alpha * acc[4 * j + 1]);
        float2 hi = make_float2(p.alpha * acc[4 * j + 2], p.alpha * acc[4 * j + 3]);
        if (loIn) {
            float2* dst = reinterpret_cast<float2*>(rowLo + col);
            if (p.beta != 0.0f) {
                const float2 old = *dst;
                lo.x += p.beta * old.x;
                lo.y += p.beta * old.y;
            }
            *dst = lo;
        }
        if (hiIn) {
            float2* dst = reinterpret_cast<float2*>(rowHi + col);
            if (p.beta != 0.0f) {
                const float2 old = *dst;
                hi.x += p.beta * old.x;
                hi.y += p.beta * old.y;
            }
            *dst = hi;
        }
    }
}

__device__ inline void consume(uint32_t smemA, uint32_t smemB, uint32_t fullBars,
                               uint32_t emptyBars, const Problem& p) {
    const int group = threadIdx.x / 128 - 1;
    const bool warpLeader = threadIdx.x % 32 == 0;
    const int tilesM = (p.m + kTileM - 1) / kTileM;
    const int tilesN = (p.n + kTileN - 1) / kTileN;
    const int kBlocks = (p.k + kTileK - 1) / kTileK;
    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) {
        acc[i] = 0.0f;
    }
    uint32_t it = 0;
    for (int tile = blockIdx.x; tile < tilesM * tilesN; tile += gridDim.x) {
        const TileCoord tc = tileCoord(tile, tilesM, tilesN);
        for (int kb = 0; kb < kBlocks; ++kb, ++it) {
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
            // handed back to the producer (one arrival per consumer warp).
            wgmmaWait<1>();
            if (kb > 0 && warpLeader) {
                mbarArrive(emptyBars + 8 * ((it - 1) % kStages));
            }
        }
        wgmmaWait<0>();
        if (warpLeader) {
            mbarArrive(emptyBars + 8 * ((it - 1) % kStages));
        }
        storeTile(acc, p, tc, group);
    }
}

__global__ void __launch_bounds__(kThreads, 1)
    gemmKernel(const __grid_constant__ CUtensorMap mapA, const __grid_constant__ CUtensorMap mapB,
               Problem p) {
    extern __shared__ uint8_t smemRaw[];
    const uint32_t base = (smemAddress(smemRaw) + 1023) & ~1023u;
    const uint32_t smemA = base;
    const uint32_t smemB = base + kStages * kABytes;
    const uint32_t fullBars = base + kStages * kStageBytes;
    const uint32_t emptyBars = fullBars + kStages * 8;

    if (threadIdx.x == 0) {
        for (int s = 0; s < kStages; ++s) {
            mbarInit(fullBars + 8 * s, 1);
            mbarInit(emptyBars + 8 * s, kConsumerGroups * 4);
        }
        // Make the initialised barriers visible to the async proxy (TMA complete_tx).
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();

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
        consume(smemA, smemB, fullBars, emptyBars, p);
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
};

int encodeMap(const KevolveServices* services, CUtensorMap* map, void* data, int64_t inner,
              int64_t outer, int64_t ld, uint32_t boxInner, uint32_t boxOuter) {
    const cuuint64_t dims[2] = {cuuint64_t(inner), cuuint64_t(outer)};
    const cuuint64_t strides[1] = {cuuint64_t(ld) * sizeof(__half)};
    const cuuint32_t box[2] = {boxInner, boxOuter};
    const cuuint32_t elementStrides[2] = {1, 1};
    return services->encode_tensor_map_tiled(
        map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, data, dims, strides, box, elementStrides,
        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

} // namespace

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    if (args == nullptr || args->abi_version != KEVOLVE_ABI_VERSION ||
        args->op != KEVOLVE_OP_GEMM || args->num_inputs < 2 || args->num_outputs < 1) {
        return kBadArgs;
    }
    if (args->inputs[0].dtype != KEVOLVE_F16 || args->inputs[1].dtype != KEVOLVE_F16 ||
        args->outputs[0].dtype != KEVOLVE_F32 || args->device.cc_major != 9 ||
        args->services == nullptr || args->services->encode_tensor_map_tiled == nullptr) {
        return kUnsupported;
    }
    const int64_t m = KEVOLVE_GEMM_M(args);
    const int64_t n = KEVOLVE_GEMM_N(args);
    const int64_t k = KEVOLVE_GEMM_K(args);
    const int64_t lda = KEVOLVE_GEMM_LDA(args);
    const int64_t ldb = KEVOLVE_GEMM_LDB(args);
    const int64_t ldc = KEVOLVE_GEMM_LDC(args);
    // TMA needs 16-byte row pitches; the float2 epilogue needs even N and ldc.
    if (m < 1 || n < 1 || k < 1 || m > INT32_MAX || n > INT32_MAX || k > INT32_MAX || n % 8 != 0 ||
        lda % 8 != 0 || ldb % 8 != 0 || ldc % 2 != 0 || lda < k || ldb < n || ldc < n) {
        return kBadArgs;
    }

    CUtensorMap mapA;
    CUtensorMap mapB;
    if (encodeMap(args->services, &mapA, args->inputs[0].data, k, m, lda, kTileK, kTileM) != 0) {
        return kTensorMapA;
    }
    if (encodeMap(args->services, &mapB, args->inputs[1].data, n, k, ldb, 64, kTileK) != 0) {
        return kTensorMapB;
    }
    if (cudaFuncSetAttribute(gemmKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             int(kSmemBytes)) != cudaSuccess) {
        return kSmemAttribute;
    }

    Problem p;
    p.c = static_cast<float*>(args->outputs[0].data);
    p.m = int(m);
    p.n = int(n);
    p.k = int(k);
    p.ldc = ldc;
    p.alpha = float(args->scalars[0]);
    p.beta = float(args->scalars[1]);

    const int64_t tiles = ((m + kTileM - 1) / kTileM) * ((n + kTileN - 1) / kTileN);
    const int64_t sms = args->device.sm_count > 0 ? args->device.sm_count : 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(unsigned(tiles < sms ? tiles : sms));
    config.blockDim = dim3(kThreads);
    config.dynamicSmemBytes = kSmemBytes;
    config.stream = stream;
    return cudaLaunchKernelEx(&config, gemmKernel, mapA, mapB, p) == cudaSuccess ? 0 : kLaunch;
}
