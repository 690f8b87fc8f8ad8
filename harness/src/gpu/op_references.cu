#include "op_references.h"

#include "cuda_util.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>

namespace kev::gpu {

namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ float toFloat(float v) {
    return v;
}
__device__ __forceinline__ float toFloat(__half v) {
    return __half2float(v);
}
__device__ __forceinline__ float toFloat(__nv_bfloat16 v) {
    return __bfloat162float(v);
}

template <typename T> __device__ __forceinline__ T fromFloat(float v);
template <> __device__ __forceinline__ float fromFloat<float>(float v) {
    return v;
}
template <> __device__ __forceinline__ __half fromFloat<__half>(float v) {
    return __float2half_rn(v);
}
template <> __device__ __forceinline__ __nv_bfloat16 fromFloat<__nv_bfloat16>(float v) {
    return __float2bfloat16_rn(v);
}

struct Sum {
    __device__ float operator()(float a, float b) const { return a + b; }
};

// fmaxf drops a NaN operand; a row holding a NaN must reduce to NaN.
struct NanMax {
    __device__ float operator()(float a, float b) const {
        return isnan(a) || isnan(b) ? a + b : fmaxf(a, b);
    }
};

// The reduction of `v` over the block (kThreads threads), returned to every thread. Safe to call
// again right away: the shared slots are reread only after everyone has read the result.
template <typename Op> __device__ float blockReduce(float v, Op op, float identity) {
    __shared__ float partial[kThreads / 32];
    __shared__ float result;
    for (int o = 16; o > 0; o >>= 1) {
        v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
    }
    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (lane == 0) {
        partial[warp] = v;
    }
    __syncthreads();
    if (warp == 0) {
        v = lane < kThreads / 32 ? partial[lane] : identity;
        for (int o = 16; o > 0; o >>= 1) {
            v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
        }
        if (lane == 0) {
            result = v;
        }
    }
    __syncthreads();
    const float r = result;
    __syncthreads();
    return r;
}

// One block per row (grid-stride over rows). A row of -inf gives m = -inf and x - m = NaN, a NaN
// gives m = NaN: both rows come out NaN, as abi.h specifies.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    softmaxKernel(const T* x, T* y, int64_t rows, int64_t cols, int64_t ldx, int64_t ldy) {
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const T* xr = x + row * ldx;
        T* yr = y + row * ldy;
        float m = -INFINITY;
        for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
            m = NanMax{}(m, toFloat(xr[c]));
        }
        m = blockReduce(m, NanMax{}, -INFINITY);
        float s = 0.0f;
        for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
            s += expf(toFloat(xr[c]) - m);
        }
        s = blockReduce(s, Sum{}, 0.0f);
        for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
            yr[c] = fromFloat<T>(expf(toFloat(xr[c]) - m) / s);
        }
    }
}

// Two passes over the row: the mean, then the mean square deviation from it (never E[x^2] -
// mean^2, which cancels catastrophically on rows with a large offset).
template <typename T>
__global__ void __launch_bounds__(kThreads)
    layernormKernel(const T* x, const T* w, const T* b, T* y, int64_t rows, int64_t cols,
                    int64_t ldx, int64_t ldy, float epsilon) {
    const float n = static_cast<float>(cols);
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const T* xr = x + row * ldx;
        T* yr = y + row * ldy;
        float s = 0.0f;
        for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
            s += toFloat(xr[c]);
        }
        const float mean = blockReduce(s, Sum{}, 0.0f) / n;
        float q = 0.0f;
        for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
            const float d = toFloat(xr[c]) - mean;
            q += d * d;
        }
        const float rstd = 1.0f / sqrtf(blockReduce(q, Sum{}, 0.0f) / n + epsilon);
        for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
            yr[c] = fromFloat<T>((toFloat(xr[c]) - mean) * rstd * toFloat(w[c]) + toFloat(b[c]));
        }
    }
}

// One pass for the mean square (its terms are never negative, so nothing cancels), one for the
// output. A zero row gives 0 * rsqrt(epsilon) = 0; a NaN makes the row NaN; an infinite element
// gives rstd 0, as x / sqrt(inf) does.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    rmsnormKernel(const T* x, const T* w, T* y, int64_t rows, int64_t cols, int64_t ldx,
                  int64_t ldy, float epsilon) {
    const float n = static_cast<float>(cols);
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const T* xr = x + row * ldx;
        T* yr = y + row * ldy;
        float q = 0.0f;
        for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
            const float v = toFloat(xr[c]);
            q += v * v;
        }
        const float rstd = 1.0f / sqrtf(blockReduce(q, Sum{}, 0.0f) / n + epsilon);
        for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
            yr[c] = fromFloat<T>(toFloat(xr[c]) * rstd * toFloat(w[c]));
        }
    }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    reduceKernel(const T* x, float* y, int64_t rows, int64_t cols, int64_t ldx, bool max) {
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const T* xr = x + row * ldx;
        float r;
        if (max) {
            r = -INFINITY;
            for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
                r = NanMax{}(r, toFloat(xr[c]));
            }
            r = blockReduce(r, NanMax{}, -INFINITY);
        } else {
            r = 0.0f;
            for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
                r += toFloat(xr[c]);
            }
            r = blockReduce(r, Sum{}, 0.0f);
        }
        if (threadIdx.x == 0) {
            y[row] = r;
        }
    }
}

// GELU as x Phi(x) = x/2 erfc(-x/sqrt 2): erfc keeps its relative accuracy where 1 + erf(x/sqrt 2)
// cancels (x << 0). SiLU as x / (1 + e^-x): e^-x overflows to +inf for x << 0 and gives -0, not
// NaN.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    elementwiseKernel(const T* x, T* y, int64_t n, bool silu) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(kThreads) + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * kThreads) {
        const float v = toFloat(x[i]);
        const float r = silu ? v / (1.0f + expf(-v)) : 0.5f * v * erfcf(-v * 0.70710678118654752f);
        y[i] = fromFloat<T>(r);
    }
}

unsigned blocksFor(int64_t units) {
    return static_cast<unsigned>(std::clamp<int64_t>(units, 1, 1 << 20));
}

// Calls f with a value of the storage type of `dtype`.
template <typename F> void byDtype(int dtype, F&& f) {
    switch (dtype) {
    case KEVOLVE_F32:
        f(float{});
        return;
    case KEVOLVE_F16:
        f(__half{});
        return;
    case KEVOLVE_BF16:
        f(__nv_bfloat16{});
        return;
    default:
        throw std::runtime_error("no reference for tensors of dtype " + std::to_string(dtype));
    }
}

cudaDataType_t cudaType(int dtype) {
    switch (dtype) {
    case KEVOLVE_F16:
        return CUDA_R_16F;
    case KEVOLVE_BF16:
        return CUDA_R_16BF;
    default:
        return CUDA_R_32F;
    }
}

int cublasDim(int64_t v) {
    if (v > INT_MAX) {
        throw std::runtime_error("GEMV dimension " + std::to_string(v) +
                                 " exceeds what cuBLAS takes (int)");
    }
    return static_cast<int>(v);
}

// Row-major A (M x N, ld) is column-major A^T (N x M, ld): y = A x is op T on it, y = A^T x is
// op N.
void gemv(const KevolveArgs& a, cublasHandle_t cublas) {
    const bool transpose = a.scalars[0] != 0.0;
    const int rows = cublasDim(a.dims[0]);
    const int cols = cublasDim(a.dims[1]);
    const int m = transpose ? cols : rows;
    const int k = transpose ? rows : cols;
    const KevolveTensor& A = a.inputs[0];
    const KevolveTensor& x = a.inputs[1];
    const KevolveTensor& y = a.outputs[0];
    const float alpha = 1.0f, beta = 0.0f;
    KEV_CUDA(cublasGemmEx(cublas, transpose ? CUBLAS_OP_N : CUBLAS_OP_T, CUBLAS_OP_N, m, 1, k,
                          &alpha, A.data, cudaType(A.dtype), cublasDim(A.stride[0]), x.data,
                          cudaType(x.dtype), k, &beta, y.data, cudaType(y.dtype), m,
                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

} // namespace

void launchOpReference(const KevolveArgs& a, cublasHandle_t cublas, cudaStream_t stream) {
    const KevolveTensor& x = a.inputs[0];
    const KevolveTensor& y = a.outputs[0];
    const int64_t rows = a.dims[0];
    switch (a.op) {
    case KEVOLVE_OP_GEMV:
        gemv(a, cublas);
        return;
    case KEVOLVE_OP_SOFTMAX:
        byDtype(x.dtype, [&](auto tag) {
            using T = decltype(tag);
            softmaxKernel<T><<<blocksFor(rows), kThreads, 0, stream>>>(
                static_cast<const T*>(x.data), static_cast<T*>(y.data), rows, a.dims[1],
                x.stride[0], y.stride[0]);
        });
        break;
    case KEVOLVE_OP_LAYERNORM:
        byDtype(x.dtype, [&](auto tag) {
            using T = decltype(tag);
            layernormKernel<T><<<blocksFor(rows), kThreads, 0, stream>>>(
                static_cast<const T*>(x.data), static_cast<const T*>(a.inputs[1].data),
                static_cast<const T*>(a.inputs[2].data), static_cast<T*>(y.data), rows, a.dims[1],
                x.stride[0], y.stride[0], static_cast<float>(a.scalars[0]));
        });
        break;
    case KEVOLVE_OP_RMSNORM:
        byDtype(x.dtype, [&](auto tag) {
            using T = decltype(tag);
            rmsnormKernel<T><<<blocksFor(rows), kThreads, 0, stream>>>(
                static_cast<const T*>(x.data), static_cast<const T*>(a.inputs[1].data),
                static_cast<T*>(y.data), rows, a.dims[1], x.stride[0], y.stride[0],
                static_cast<float>(a.scalars[0]));
        });
        break;
    case KEVOLVE_OP_REDUCE:
        byDtype(x.dtype, [&](auto tag) {
            using T = decltype(tag);
            reduceKernel<T><<<blocksFor(rows), kThreads, 0, stream>>>(
                static_cast<const T*>(x.data), static_cast<float*>(y.data), rows, a.dims[1],
                x.stride[0], a.scalars[0] != 0.0);
        });
        break;
    case KEVOLVE_OP_ELEMENTWISE:
        byDtype(x.dtype, [&](auto tag) {
            using T = decltype(tag);
            elementwiseKernel<T>
                <<<blocksFor((rows + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
                    static_cast<const T*>(x.data), static_cast<T*>(y.data), rows,
                    a.scalars[0] != 0.0);
        });
        break;
    default:
        throw std::runtime_error("the harness has no reference for op " + std::to_string(a.op));
    }
    KEV_CUDA(cudaGetLastError());
}

} // namespace kev::gpu
