// A candidate for the RMSNorm custom op (task.json): one warp per row, eight rows per block,
// loads of eight halves (16 bytes) where the row allows it and a scalar tail otherwise, the row
// cached in registers between the reduction and the scaling, warp shuffles instead of shared
// memory. Rows up to kMaxVectors * 256 elements stay in registers; longer rows are read twice.
#include <kevolve/abi.h>
#include <cuda_fp16.h>

namespace {

constexpr int kRowsPerBlock = 8;
constexpr int kMaxVectors = 16; // 16 x 8 halves per lane: rows of up to 4096 elements cached

__device__ float warpSum(float v) {
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

__device__ float sumSquares(const uint4& packed) {
    const __half2* h = reinterpret_cast<const __half2*>(&packed);
    float sum = 0.0f;
    for (int i = 0; i < 4; ++i) {
        const float2 f = __half22float2(h[i]);
        sum += f.x * f.x + f.y * f.y;
    }
    return sum;
}

__device__ uint4 scaled(const uint4& packed, const uint4& weights, float scale) {
    const __half2* h = reinterpret_cast<const __half2*>(&packed);
    const __half2* wh = reinterpret_cast<const __half2*>(&weights);
    uint4 result;
    __half2* r = reinterpret_cast<__half2*>(&result);
    for (int i = 0; i < 4; ++i) {
        const float2 f = __half22float2(h[i]);
        const float2 g = __half22float2(wh[i]);
        r[i] = __floats2half2_rn(f.x * scale * g.x, f.y * scale * g.y);
    }
    return result;
}

__global__ void rmsnormWarp(const __half* x, const __half* w, __half* y, int64_t m, int64_t n,
                            int64_t ldx, int64_t ldy, float epsilon) {
    const int lane = threadIdx.x % 32;
    const int64_t rowIndex = blockIdx.x * static_cast<int64_t>(kRowsPerBlock) + threadIdx.x / 32;
    if (rowIndex >= m)
        return;
    const __half* row = x + rowIndex * ldx;
    __half* out = y + rowIndex * ldy;
    // 16-byte loads need the row and W 16-byte aligned: ld a multiple of 8 halves (the task's
    // leading_dim_multiple) and base pointers 256-byte aligned (the harness's guarantee).
    const int64_t vectors = (ldx % 8 == 0 && ldy % 8 == 0) ? n / 8 : 0;
    const bool cached = vectors <= static_cast<int64_t>(kMaxVectors) * 32;

    // The cache is indexed by unrolled constants only, so it lives in registers.
    uint4 cache[kMaxVectors];
    float sum = 0.0f;
    if (cached) {
#pragma unroll
        for (int k = 0; k < kMaxVectors; ++k) {
            const int64_t v = lane + 32 * k;
            if (v < vectors) {
                cache[k] = reinterpret_cast<const uint4*>(row)[v];
                sum += sumSquares(cache[k]);
            }
        }
    } else {
        for (int64_t v = lane; v < vectors; v += 32)
            sum += sumSquares(reinterpret_cast<const uint4*>(row)[v]);
    }
    for (int64_t j = vectors * 8 + lane; j < n; j += 32) {
        const float f = __half2float(row[j]);
        sum += f * f;
    }
    const float scale = rsqrtf(warpSum(sum) / static_cast<float>(n) + epsilon);

    if (cached) {
#pragma unroll
        for (int k = 0; k < kMaxVectors; ++k) {
            const int64_t v = lane + 32 * k;
            if (v < vectors)
                reinterpret_cast<uint4*>(out)[v] =
                    scaled(cache[k], reinterpret_cast<const uint4*>(w)[v], scale);
        }
    } else {
        for (int64_t v = lane; v < vectors; v += 32)
            reinterpret_cast<uint4*>(out)[v] = scaled(reinterpret_cast<const uint4*>(row)[v],
                                                      reinterpret_cast<const uint4*>(w)[v], scale);
    }
    for (int64_t j = vectors * 8 + lane; j < n; j += 32)
        out[j] = __float2half_rn(__half2float(row[j]) * scale * __half2float(w[j]));
}

} // namespace

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    if (args->op != KEVOLVE_OP_CUSTOM || args->num_inputs != 2 || args->num_outputs != 1)
        return 1;
    const int64_t m = args->dims[0];
    const int64_t n = args->dims[1];
    const unsigned blocks = static_cast<unsigned>((m + kRowsPerBlock - 1) / kRowsPerBlock);
    rmsnormWarp<<<blocks, kRowsPerBlock * 32, 0, stream>>>(
        static_cast<const __half*>(args->inputs[0].data),
        static_cast<const __half*>(args->inputs[1].data), static_cast<__half*>(args->outputs[0].data),
        m, n, args->inputs[0].stride[0], args->outputs[0].stride[0],
        static_cast<float>(args->scalars[0]));
    return cudaPeekAtLastError() == cudaSuccess ? 0 : 2;
}
