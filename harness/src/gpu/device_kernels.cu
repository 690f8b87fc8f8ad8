#include "device_kernels.h"

#include <kevolve/abi.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math_constants.h>

#include <algorithm>

namespace kev::gpu {

const char* toString(Distribution d) {
    switch (d) {
    case Distribution::Normal:
        return "normal";
    case Distribution::Shifted:
        return "shifted";
    case Distribution::Large:
        return "large";
    }
    return "normal";
}

namespace {

__device__ __forceinline__ uint64_t splitmix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// A standard normal from a counter-based generator: the same (seed, index) gives the same value
// on every run, so a seed in the report reproduces the inputs exactly.
__device__ __forceinline__ float normalAt(uint64_t seed, uint64_t index) {
    const uint64_t r = splitmix64(seed ^ splitmix64(index));
    const float u1 = (static_cast<float>(r >> 40) + 1.0f) * (1.0f / 16777217.0f); // (0, 1]
    const float u2 = static_cast<float>((r >> 16) & 0xFFFFFFu) * (1.0f / 16777216.0f);
    return sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
}

__device__ __forceinline__ double loadAsDouble(const void* p, int dtype, int64_t i) {
    switch (dtype) {
    case KEVOLVE_F16:
        return static_cast<double>(__half2float(static_cast<const __half*>(p)[i]));
    case KEVOLVE_BF16:
        return static_cast<double>(__bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]));
    case KEVOLVE_F64:
        return static_cast<const double*>(p)[i];
    default:
        return static_cast<double>(static_cast<const float*>(p)[i]);
    }
}

__global__ void fillKernel(void* data, int dtype, int64_t rows, int64_t cols, int64_t ld,
                           float mean, float stddev, uint64_t seed) {
    const int64_t total = rows * cols;
    for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
         idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const int64_t r = idx / cols;
        const int64_t c = idx - r * cols;
        const float v = mean + stddev * normalAt(seed, static_cast<uint64_t>(idx));
        const int64_t off = r * ld + c;
        switch (dtype) {
        case KEVOLVE_F16:
            static_cast<__half*>(data)[off] = __float2half_rn(v);
            break;
        case KEVOLVE_BF16:
            static_cast<__nv_bfloat16*>(data)[off] = __float2bfloat16_rn(v);
            break;
        default:
            static_cast<float*>(data)[off] = v;
            break;
        }
    }
}

__global__ void upcastKernel(const void* src, int dtype, int64_t rows, int64_t cols, int64_t ld,
                             double* dst, bool absolute) {
    const int64_t total = rows * cols;
    for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
         idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const int64_t r = idx / cols;
        const int64_t c = idx - r * cols;
        const double v = loadAsDouble(src, dtype, r * ld + c);
        dst[idx] = absolute ? fabs(v) : v;
    }
}

template <typename T> __device__ T warpSum(T v) {
    for (int o = 16; o > 0; o >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, o);
    }
    return v;
}

__device__ double warpMax(double v) {
    for (int o = 16; o > 0; o >>= 1) {
        v = fmax(v, __shfl_xor_sync(0xffffffffu, v, o));
    }
    return v;
}

__global__ void errorKernel(const void* out, int dtype, int64_t rows, int64_t cols, int64_t ld,
                            const double* truth, const double* scale, ErrorAccumulator* acc) {
    double errSq = 0, truthSq = 0, sum = 0, maxScaled = 0;
    unsigned long long nans = 0, infs = 0;
    const int64_t total = rows * cols;
    for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
         idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const int64_t r = idx / cols;
        const int64_t c = idx - r * cols;
        const double v = loadAsDouble(out, dtype, r * ld + c);
        const double t = truth[idx];
        if (isnan(v)) {
            ++nans;
            continue;
        }
        if (isinf(v) && isfinite(t)) {
            ++infs;
            continue;
        }
        const double e = v - t;
        errSq += e * e;
        truthSq += t * t;
        sum += v;
        const double s = scale[idx];
        const double scaled = s > 0 ? fabs(e) / s : (e == 0 ? 0.0 : CUDART_INF);
        maxScaled = fmax(maxScaled, scaled);
    }
    errSq = warpSum(errSq);
    truthSq = warpSum(truthSq);
    sum = warpSum(sum);
    nans = warpSum(nans);
    infs = warpSum(infs);
    maxScaled = warpMax(maxScaled);
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&acc->errSq, errSq);
        atomicAdd(&acc->truthSq, truthSq);
        atomicAdd(&acc->checksum, sum);
        atomicAdd(&acc->nanCount, nans);
        atomicAdd(&acc->infCount, infs);
        atomicMax(&acc->maxScaledBits,
                  static_cast<unsigned long long>(__double_as_longlong(maxScaled)));
    }
}

__global__ void matVecKernel(const void* x, int dtype, int64_t rows, int64_t cols, int64_t ld,
                             const double* v, double* y) {
    // One warp per row, grid-stride over rows: tall matrices (millions of rows) exceed any grid.
    const int lane = threadIdx.x & 31;
    const int64_t warps = static_cast<int64_t>(gridDim.x) * blockDim.x / 32;
    for (int64_t row = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) / 32;
         row < rows; row += warps) {
        double s = 0;
        for (int64_t c = lane; c < cols; c += 32) {
            s += loadAsDouble(x, dtype, row * ld + c) * v[c];
        }
        s = warpSum(s);
        if (lane == 0) {
            y[row] = s;
        }
    }
}

// matVecKernel for up to kMaxVectors right-hand sides: each lane keeps one partial sum per
// vector in registers (the loops unroll fully; `vectors` is uniform, so the guards never diverge).
constexpr int kMaxVectors = 32;

__global__ void matVecsKernel(const void* x, int dtype, int64_t rows, int64_t cols, int64_t ld,
                              const double* v, int vectors, double* y) {
    const int lane = threadIdx.x & 31;
    const int64_t warps = static_cast<int64_t>(gridDim.x) * blockDim.x / 32;
    for (int64_t row = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) / 32;
         row < rows; row += warps) {
        double s[kMaxVectors];
#pragma unroll
        for (int j = 0; j < kMaxVectors; ++j) {
            s[j] = 0;
        }
        for (int64_t c = lane; c < cols; c += 32) {
            const double xv = loadAsDouble(x, dtype, row * ld + c);
            const double* vc = v + c * vectors;
#pragma unroll
            for (int j = 0; j < kMaxVectors; ++j) {
                if (j < vectors) {
                    s[j] += xv * vc[j];
                }
            }
        }
#pragma unroll
        for (int j = 0; j < kMaxVectors; ++j) {
            if (j < vectors) {
                const double t = warpSum(s[j]);
                if (lane == 0) {
                    y[row * vectors + j] = t;
                }
            }
        }
    }
}

__global__ void signsKernel(double* v, int64_t n, uint64_t seed) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        v[i] = (splitmix64(seed ^ splitmix64(static_cast<uint64_t>(i))) >> 63) ? 1.0 : -1.0;
    }
}

__global__ void diffKernel(const double* a, const double* b, int64_t n, double* out) {
    double d = 0, r = 0, bad = 0;
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        if (!isfinite(a[i])) {
            bad += 1;
            continue;
        }
        const double e = a[i] - b[i];
        d += e * e;
        r += b[i] * b[i];
    }
    d = warpSum(d);
    r = warpSum(r);
    bad = warpSum(bad);
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&out[0], d);
        atomicAdd(&out[1], r);
        atomicAdd(&out[2], bad);
    }
}

__global__ void truthDiffKernel(const void* y, int dtype, int64_t rows, int64_t cols, int64_t ld,
                                const double* truth, int64_t rowShift, int64_t colShift,
                                double* out) {
    double d = 0, r = 0, bad = 0;
    const int64_t total = rows * cols;
    for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
         idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const int64_t row = idx / cols;
        const int64_t col = idx - row * cols;
        const double v = loadAsDouble(y, dtype, row * ld + col);
        int64_t tr = row + rowShift;
        int64_t tc = col + colShift;
        tr -= tr >= rows ? rows : 0;
        tc -= tc >= cols ? cols : 0;
        const double t = truth[tr * cols + tc];
        if (!isfinite(t) || !isfinite(v)) {
            // Infinities match when equal (same sign); a NaN matches only a NaN.
            bad += (isnan(t) ? isnan(v) : v == t) ? 0 : 1;
            continue;
        }
        const double e = v - t;
        d += e * e;
        r += t * t;
    }
    d = warpSum(d);
    r = warpSum(r);
    bad = warpSum(bad);
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&out[0], d);
        atomicAdd(&out[1], r);
        atomicAdd(&out[2], bad);
    }
}

__global__ void compareKernel(const unsigned char* a, const unsigned char* b, size_t bytes,
                              unsigned long long* differ) {
    const size_t words = bytes / 8;
    unsigned long long count = 0;
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    const size_t first = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    // cudaMalloc'd data regions are 256-byte aligned, so whole words load as 64-bit values.
    const auto* wa = reinterpret_cast<const unsigned long long*>(a);
    const auto* wb = reinterpret_cast<const unsigned long long*>(b);
    for (size_t i = first; i < words; i += stride) {
        count += wa[i] != wb[i] ? 1 : 0;
    }
    if (first == 0) {
        for (size_t i = words * 8; i < bytes; ++i) {
            if (a[i] != b[i]) {
                ++count;
                break;
            }
        }
    }
    for (int offset = 16; offset > 0; offset /= 2) {
        count += __shfl_down_sync(0xffffffffu, count, offset);
    }
    if ((threadIdx.x & 31) == 0 && count) {
        atomicAdd(differ, count);
    }
}

__global__ void touchKernel(const unsigned* data, size_t words, size_t step, unsigned* sink) {
    unsigned acc = 0;
    for (size_t i = (static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x) * step; i < words;
         i += static_cast<size_t>(gridDim.x) * blockDim.x * step) {
        acc ^= data[i];
    }
    if (acc == 0x9e3779b9u) {
        *sink = acc; // practically never: keeps the loads
    }
}

__global__ void blockKernel(const volatile int* flag, unsigned long long timeoutNs, int* expired) {
    unsigned long long start;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    while (*flag == 0) {
        unsigned long long now;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now - start > timeoutNs) {
            *expired = 1;
            break;
        }
        __nanosleep(200);
    }
}

unsigned gridFor(int64_t n, int block) {
    const int64_t blocks = (n + block - 1) / block;
    return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 65535 * 8 ? 65535 * 8 : blocks));
}

} // namespace

cudaError_t fillRandom(const MatrixView& m, const FillSpec& spec, cudaStream_t stream) {
    fillKernel<<<gridFor(m.rows * m.cols, 256), 256, 0, stream>>>(
        m.data, m.dtype, m.rows, m.cols, m.ld, static_cast<float>(spec.mean),
        static_cast<float>(spec.stddev), spec.seed);
    return cudaGetLastError();
}

cudaError_t upcast(const MatrixView& src, double* dst, bool absolute, cudaStream_t stream) {
    upcastKernel<<<gridFor(src.rows * src.cols, 256), 256, 0, stream>>>(
        src.data, src.dtype, src.rows, src.cols, src.ld, dst, absolute);
    return cudaGetLastError();
}

cudaError_t errorStats(const MatrixView& out, const double* truth, const double* scale,
                       ErrorAccumulator* acc, cudaStream_t stream) {
    errorKernel<<<gridFor(out.rows * out.cols, 256), 256, 0, stream>>>(
        out.data, out.dtype, out.rows, out.cols, out.ld, truth, scale, acc);
    return cudaGetLastError();
}

cudaError_t matVec(const MatrixView& x, const double* v, double* y, cudaStream_t stream) {
    matVecKernel<<<gridFor(x.rows * 32, 256), 256, 0, stream>>>(x.data, x.dtype, x.rows, x.cols,
                                                                x.ld, v, y);
    return cudaGetLastError();
}

cudaError_t matVecs(const MatrixView& x, const double* v, int vectors, double* y,
                    cudaStream_t stream) {
    if (vectors < 1 || vectors > kMaxVectors) {
        return cudaErrorInvalidValue;
    }
    matVecsKernel<<<gridFor(x.rows * 32, 256), 256, 0, stream>>>(x.data, x.dtype, x.rows, x.cols,
                                                                 x.ld, v, vectors, y);
    return cudaGetLastError();
}

cudaError_t matVecDense(const double* x, int64_t rows, int64_t cols, const double* v, double* y,
                        cudaStream_t stream) {
    return matVec(MatrixView{const_cast<double*>(x), KEVOLVE_F64, rows, cols, cols}, v, y, stream);
}

cudaError_t randomSigns(double* v, int64_t n, uint64_t seed, cudaStream_t stream) {
    signsKernel<<<gridFor(n, 256), 256, 0, stream>>>(v, n, seed);
    return cudaGetLastError();
}

cudaError_t diffNorms(const double* a, const double* b, int64_t n, double* out,
                      cudaStream_t stream) {
    diffKernel<<<gridFor(n, 256), 256, 0, stream>>>(a, b, n, out);
    return cudaGetLastError();
}

cudaError_t truthDiff(const MatrixView& y, const double* truth, int64_t rowShift, int64_t colShift,
                      double* out, cudaStream_t stream) {
    truthDiffKernel<<<gridFor(y.rows * y.cols, 256), 256, 0, stream>>>(
        y.data, y.dtype, y.rows, y.cols, y.ld, truth, rowShift, colShift, out);
    return cudaGetLastError();
}

cudaError_t compareBytes(const void* a, const void* b, size_t bytes, unsigned long long* differ,
                         cudaStream_t stream) {
    if (bytes == 0) {
        return cudaSuccess;
    }
    const size_t words = bytes / 8 + 1;
    const unsigned blocks = static_cast<unsigned>(std::min<size_t>((words + 255) / 256, 264 * 8));
    compareKernel<<<blocks, 256, 0, stream>>>(static_cast<const unsigned char*>(a),
                                              static_cast<const unsigned char*>(b), bytes, differ);
    return cudaGetLastError();
}

cudaError_t touchPages(const void* data, size_t bytes, unsigned* sink, cudaStream_t stream) {
    const size_t words = bytes / sizeof(unsigned);
    if (words == 0) {
        return cudaSuccess;
    }
    const size_t step = (64u << 10) / sizeof(unsigned);
    const size_t touches = (words + step - 1) / step;
    const unsigned blocks = static_cast<unsigned>(std::min<size_t>((touches + 255) / 256, 1024));
    touchKernel<<<blocks, 256, 0, stream>>>(static_cast<const unsigned*>(data), words, step, sink);
    return cudaGetLastError();
}

cudaError_t blockStream(const volatile int* flag, unsigned long long timeoutNs, int* expired,
                        cudaStream_t stream) {
    blockKernel<<<1, 1, 0, stream>>>(flag, timeoutNs, expired);
    return cudaGetLastError();
}

} // namespace kev::gpu
