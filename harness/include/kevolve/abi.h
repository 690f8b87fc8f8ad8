// Kevolve candidate ABI, version 1.
//
// A candidate is one CUDA source file that includes this header and exports
//
//     extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream);
//
// and optionally
//
//     extern "C" KEVOLVE_EXPORT uint64_t kevolve_workspace_bytes(const KevolveArgs* args);
//
// kevolve_launch enqueues the candidate's kernel(s) on `stream` and returns 0, or a non-zero code
// that the harness reports as a runtime error. It must not allocate, copy, synchronise, create
// streams or threads, or call any library: the harness allocates every buffer (the workspace too)
// and checks the rules (see harness/PROTOCOL.md, "Rules"). kevolve_workspace_bytes is called once
// per shape with null data pointers, before allocation; the workspace's contents are undefined
// (poisoned) on every call.
//
// Host code may build TMA tensor maps through args->services, raise a kernel's shared-memory limit
// with cudaFuncSetAttribute, and launch clusters with cudaLaunchKernelEx.
#ifndef KEVOLVE_ABI_H
#define KEVOLVE_ABI_H

#include <cuda.h>
#include <cuda_runtime.h>
#include <stdint.h>

#define KEVOLVE_ABI_VERSION 1
#define KEVOLVE_MAX_TENSORS 8
#define KEVOLVE_MAX_DIMS 8
#define KEVOLVE_MAX_SCALARS 4

#if defined(__GNUC__)
#define KEVOLVE_EXPORT __attribute__((visibility("default")))
#else
#define KEVOLVE_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum KevolveDtype {
    KEVOLVE_F32 = 0,
    KEVOLVE_F16 = 1,
    KEVOLVE_BF16 = 2,
    KEVOLVE_F64 = 3,
    KEVOLVE_I32 = 4,
    KEVOLVE_I8 = 5
} KevolveDtype;

typedef enum KevolveOp {
    KEVOLVE_OP_GEMM = 1,
    KEVOLVE_OP_GEMV = 2,
    KEVOLVE_OP_SOFTMAX = 3,
    KEVOLVE_OP_LAYERNORM = 4,
    KEVOLVE_OP_REDUCE = 5,
    KEVOLVE_OP_ELEMENTWISE = 6,
    KEVOLVE_OP_RMSNORM = 7,
    KEVOLVE_OP_CUSTOM = 100
} KevolveOp;

// A dense tensor. `stride` is in elements; a row-major M x K matrix has shape {M, K} and stride
// {ld, 1} with ld >= K. The harness guarantees the task's alignment (for GEMM: ld a multiple of 8
// elements and every base pointer 256-byte aligned).
typedef struct KevolveTensor {
    void* data;
    int32_t dtype; // KevolveDtype
    int32_t rank;
    int64_t shape[4];
    int64_t stride[4];
} KevolveTensor;

typedef struct KevolveDevice {
    int32_t ordinal;
    int32_t cc_major;
    int32_t cc_minor;
    int32_t sm_count;
    int32_t max_smem_per_block_optin; // bytes, what cudaFuncSetAttribute may raise a kernel to
    int32_t smem_per_sm;              // bytes
    int32_t regs_per_sm;
    int32_t l2_bytes;
} KevolveDevice;

// Services the harness offers to host code, so that candidates need no driver entry points.
typedef struct KevolveServices {
    // Same arguments and result (a CUresult) as the driver's cuTensorMapEncodeTiled.
    int (*encode_tensor_map_tiled)(CUtensorMap* map, CUtensorMapDataType dtype, cuuint32_t rank,
                                   void* global_address, const cuuint64_t* global_dim,
                                   const cuuint64_t* global_strides, const cuuint32_t* box_dim,
                                   const cuuint32_t* element_strides,
                                   CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                   CUtensorMapL2promotion l2_promotion,
                                   CUtensorMapFloatOOBfill oob_fill);
} KevolveServices;

typedef struct KevolveArgs {
    uint32_t abi_version; // KEVOLVE_ABI_VERSION
    uint32_t op;          // KevolveOp
    int32_t num_inputs;
    int32_t num_outputs;
    KevolveTensor inputs[KEVOLVE_MAX_TENSORS];  // gemm: [0] = A (M x K), [1] = B (K x N)
    KevolveTensor outputs[KEVOLVE_MAX_TENSORS]; // gemm: [0] = C (M x N)
    int64_t dims[KEVOLVE_MAX_DIMS];             // gemm: M, N, K
    double scalars[KEVOLVE_MAX_SCALARS];        // gemm: alpha (1), beta (0)
    void* workspace;
    uint64_t workspace_bytes;
    KevolveDevice device;
    const KevolveServices* services;
} KevolveArgs;

#ifdef __cplusplus
} // extern "C"
#endif

// Per-op conventions (dims in the order of the task's shape; tensors row-major, stride in elements;
// accumulation in fp32 whatever the storage type). Ops other than GEMM take their task "params"
// through scalars[]:
//
//   gemm        dims {M, N, K}; inputs A (M x K), B (K x N); outputs C (M x N);
//               scalars {alpha = 1, beta = 0}.
//   gemv        dims {M, N}; inputs A (M x N), x; outputs y; scalars {transpose}: 0 gives
//               y (M) = A x with x of length N, 1 gives y (N) = A^T x with x of length M.
//   softmax     dims {M, N}; inputs X (M x N); outputs Y (M x N); row i of Y is the softmax of
//               row i of X (a row of -inf gives NaN, a NaN in a row makes the row NaN).
//   layernorm   dims {M, N}; inputs X (M x N), W (N), B (N); outputs Y (M x N); scalars {epsilon}:
//               Y = (X - mean) / sqrt(var + epsilon) * W + B per row, var the biased variance.
//   reduce      dims {M, N}; inputs X (M x N); outputs Y (M); scalars {reduction}: 0 sum, 1 max,
//               over each row.
//   elementwise dims {N}; inputs X (N); outputs Y (N); scalars {function}: 0 GELU (erf form),
//               1 SiLU.
//   rmsnorm     dims {M, N}; inputs X (M x N), W (N); outputs Y (M x N); scalars {epsilon}:
//               Y = X / sqrt(mean(X^2) + epsilon) * W per row (no mean subtracted, no bias).
//   custom      dims, inputs, outputs and scalars as the task declares them, in its order.
//
// Vectors and rows have stride {ld, 1} (matrices) or {1} (vectors); ld is a multiple of the task's
// leading_dim_multiple and every base pointer is 256-byte aligned.

// Convenience accessors for the GEMM op (C = alpha * A * B + beta * C, row-major).
#define KEVOLVE_GEMM_M(a) ((a)->dims[0])
#define KEVOLVE_GEMM_N(a) ((a)->dims[1])
#define KEVOLVE_GEMM_K(a) ((a)->dims[2])
#define KEVOLVE_GEMM_LDA(a) ((a)->inputs[0].stride[0])
#define KEVOLVE_GEMM_LDB(a) ((a)->inputs[1].stride[0])
#define KEVOLVE_GEMM_LDC(a) ((a)->outputs[0].stride[0])

// Accessors for the row-wise ops (softmax, layernorm, rmsnorm, reduce) and GEMV: M rows of N
// elements.
#define KEVOLVE_ROWS(a) ((a)->dims[0])
#define KEVOLVE_COLS(a) ((a)->dims[1])
#define KEVOLVE_LDX(a) ((a)->inputs[0].stride[0])
#define KEVOLVE_LDY(a) ((a)->outputs[0].stride[0])

#endif // KEVOLVE_ABI_H
