${# wgmma/launch.cu: the host side of the wgmma_tma kernel (gemm.cu renders it as LAUNCH, with}
${# gemm.cu's values): error codes, tensor maps, the workspace, the balanced persistent launch.}
${# It ends without a newline: gemm.cu's LAUNCH line supplies the kernel's last one.}
// Error codes of kevolve_launch, so that a runtime_error report says what was refused.
enum LaunchError {
    kBadArgs = 1,
    kUnsupported = 2,
    kTensorMapA = 3,
    kTensorMapB = 4,
    kSmemAttribute = 5,
    kLaunch = 6,
    kTensorMapC = 7,
    kNoClusterFits = 8,
${if SPLIT_KERNEL}
    kWorkspace = 9,
${endif}
};

int encodeMap(const KevolveServices* services, CUtensorMap* map, CUtensorMapDataType type,
              size_t elementBytes, void* data, int64_t inner, int64_t outer, int64_t ld,
              uint32_t boxInner, uint32_t boxOuter) {
    const cuuint64_t dims[2] = {cuuint64_t(inner), cuuint64_t(outer)};
    const cuuint64_t strides[1] = {cuuint64_t(ld) * elementBytes};
    const cuuint32_t box[2] = {boxInner, boxOuter};
    const cuuint32_t elementStrides[2] = {1, 1};
    return services->encode_tensor_map_tiled(
        map, type, 2, data, dims, strides, box, elementStrides,
        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

} // namespace
${if SPLIT_KERNEL}

// Split-K partials: kSplitK fp32 slices of M x N.
extern "C" KEVOLVE_EXPORT uint64_t kevolve_workspace_bytes(const KevolveArgs* args) {
    return uint64_t(kSplitK) * uint64_t(KEVOLVE_GEMM_M(args)) * uint64_t(KEVOLVE_GEMM_N(args)) *
           sizeof(float);
}
${endif}

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    if (args == nullptr || args->abi_version != KEVOLVE_ABI_VERSION ||
        args->op != KEVOLVE_OP_GEMM || args->num_inputs < 2 || args->num_outputs < 1) {
        return kBadArgs;
    }
    if (args->inputs[0].dtype != ${ABI_A} || args->inputs[1].dtype != ${ABI_B} ||
        args->outputs[0].dtype != ${ABI_C} || args->device.cc_major != 9 ||
        args->services == nullptr || args->services->encode_tensor_map_tiled == nullptr) {
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
    if (encodeMap(args->services, &mapA, ${TMAP_TYPE}, sizeof(InT), args->inputs[0].data, k, m,
                  lda, kTileK, kARows) != 0) {
        return kTensorMapA;
    }
    if (encodeMap(args->services, &mapB, ${TMAP_TYPE}, sizeof(InT), args->inputs[1].data, n, k,
${if B_SLABBED}
                  ldb, 64, kBSlabRows) != 0) {
${else}
                  ldb, 64, kTileK) != 0) {
${endif}
        return kTensorMapB;
    }
    if (encodeMap(args->services, &mapC, ${TMAP_C_TYPE}, sizeof(OutT), args->outputs[0].data, n,
                  m, ldc, kCBoxCols, 64) != 0) {
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
${if SPLIT_KERNEL}
    const int64_t kBlocks = (k + kTileK - 1) / kTileK;
    p.splits = int(kBlocks < kSplitK ? kBlocks : kSplitK);
    if (args->workspace == nullptr || args->workspace_bytes < kevolve_workspace_bytes(args)) {
        return kWorkspace;
    }
    p.partials = static_cast<float*>(args->workspace);
${endif}

    // Persistent grid: at most one CTA per SM; each cluster walks units (kClusterM x kClusterN
    // tiles) gridDim.x / kCluster apart.
    const int64_t clusterRows = int64_t(kTileM) * kClusterM;
    const int64_t clusterCols = int64_t(kTileN) * kClusterN;
${if SPLIT_KERNEL}
    const int64_t units = ((m + clusterRows - 1) / clusterRows) *
                          ((n + clusterCols - 1) / clusterCols) * p.splits;
${endif}
${if !SPLIT_KERNEL}
    const int64_t units = ((m + clusterRows - 1) / clusterRows) * ((n + clusterCols - 1) / clusterCols);
${endif}
    cudaLaunchConfig_t config = {};
    config.blockDim = dim3(kThreads);
    config.dynamicSmemBytes = kSmemBytes;
    config.stream = stream;
    int64_t clusters = args->device.sm_count > 0 ? args->device.sm_count : 1;
    cudaLaunchAttribute attribute;
    if constexpr (kCluster > 1) {
        attribute.id = cudaLaunchAttributeClusterDimension;
        attribute.val.clusterDim.x = kCluster;
        attribute.val.clusterDim.y = 1;
        attribute.val.clusterDim.z = 1;
        config.attrs = &attribute;
        config.numAttrs = 1;
        // Clusters must fit inside one GPC, so fewer than sm_count / kCluster may be resident;
        // the answer depends only on the kernel and the device, so it is asked once.
        static int resident = 0;
        if (resident == 0) {
            config.gridDim = dim3(kCluster);
            if (cudaOccupancyMaxActiveClusters(&resident, gemmKernel, &config) != cudaSuccess ||
                resident < 1) {
                resident = 0;
                return kNoClusterFits;
            }
        }
        clusters = resident;
    }
    // Balanced: as many rounds of units as the resident clusters need, spread over as few clusters
    // as finish in that many rounds (4096^3 in 128x256 tiles: 512 units in 4 rounds on 128 CTAs,
    // not 3.88 on 132). The last round then is full, the grouped raster's rounds cover whole
    // halves of a group (L2 reuse), and on a power-limited card the idle SMs' budget raises the
    // clock of the busy ones: +1.0% on the H200 against all 132 SMs (2026-11-30).
    if (units < clusters) {
        clusters = units;
    }
    const int64_t rounds = (units + clusters - 1) / clusters;
    clusters = (units + rounds - 1) / rounds;
    config.gridDim = dim3(unsigned(clusters * kCluster));
${if SPLIT_KERNEL}
    if (cudaLaunchKernelEx(&config, gemmKernel, mapA, mapB, mapC, p) != cudaSuccess) {
        return kLaunch;
    }
    // The reduction as a programmatic dependent launch (reduceSplits waits for the GEMM).
    cudaLaunchConfig_t reduce = {};
    const int64_t quads = m * n / 4;
    const int64_t maxBlocks = 8 * (args->device.sm_count > 0 ? args->device.sm_count : 1);
    const int64_t blocks = (quads + 255) / 256;
    reduce.gridDim = dim3(unsigned(blocks < maxBlocks ? blocks : maxBlocks));
    reduce.blockDim = dim3(256);
    reduce.stream = stream;
    cudaLaunchAttribute dependent;
    dependent.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    dependent.val.programmaticStreamSerializationAllowed = 1;
    reduce.attrs = &dependent;
    reduce.numAttrs = 1;
    return cudaLaunchKernelEx(&reduce, reduceSplits, p) == cudaSuccess ? 0 : kLaunch;
${else}
    return cudaLaunchKernelEx(&config, gemmKernel, mapA, mapB, mapC, p) == cudaSuccess ? 0
                                                                                      : kLaunch;
${endif}
}