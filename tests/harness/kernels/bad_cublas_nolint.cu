// expect: rule_violation
// lint: off
// Calls cuBLAS with the lint off: no launch goes through the audited launch calls, so the audit
// refuses the result.
#include <kevolve/abi.h>
#include <cublas_v2.h>

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    static cublasHandle_t handle = nullptr;
    if (!handle) {
        cublasCreate(&handle);
    }
    cublasSetStream(handle, stream);
    const float alpha = 1.0f, beta = 0.0f;
    const int m = static_cast<int>(KEVOLVE_GEMM_M(args)),
              n = static_cast<int>(KEVOLVE_GEMM_N(args)),
              k = static_cast<int>(KEVOLVE_GEMM_K(args));
    return cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, args->inputs[1].data,
                        CUDA_R_16F, n, args->inputs[0].data, CUDA_R_16F, k, &beta,
                        args->outputs[0].data, CUDA_R_32F, n, CUBLAS_COMPUTE_32F,
                        CUBLAS_GEMM_DEFAULT);
}
