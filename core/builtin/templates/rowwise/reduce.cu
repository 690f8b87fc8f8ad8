${# rowwise/reduce.cu: the row reduction kernel (rowwise_reduce.cpp), the skeleton's KERNEL.}
${# Condition: MAX (a NaN-propagating maximum, else a sum).}
${if MAX}

// The larger of a and b, NaN when either is (fmaxf would drop the NaN).
__device__ __forceinline__ float maxPropagatingNaN(float a, float b)
{
    return (a != a || a > b) ? a : b;
}
${endif}

[[maybe_unused]] __global__ void __launch_bounds__(THREADS)
    reduceRows(const ElemX* __restrict__ X, ElemY* __restrict__ Y, long long M, long long N,
               long long ldx)
{
    const int t = threadIdx.x % ROW_THREADS;
    int phase = 0; // the block reduction's buffer
    const auto combine = [](float a, float b) { return ${if MAX}maxPropagatingNaN(a, b)${else}a + b${endif}; };
    for (long long row = static_cast<long long>(blockIdx.x) * ROWS_PER_CTA + threadIdx.x / ROW_THREADS;
         row < M; row += static_cast<long long>(gridDim.x) * ROWS_PER_CTA) {
        const ElemX* x = X + row * ldx;
        // One accumulator per register slot: VPT * VEC independent chains, short enough that the
        // fp32 rounding error stays small for long rows.
        float acc[VPT][VEC];
#pragma unroll
        for (int j = 0; j < VPT; ++j)
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                acc[j][i] = ${if MAX}-INFINITY${else}0.0f${endif};
        for (long long base = 0; base < N; base += CHUNK) {
            float v[VPT][VEC];
            loadChunk(x, N, base, t, ${if MAX}-INFINITY${else}0.0f${endif}, v);
#pragma unroll
            for (int j = 0; j < VPT; ++j)
#pragma unroll
                for (int i = 0; i < VEC; ++i)
                    acc[j][i] = combine(acc[j][i], v[j][i]);
        }
        float r = ${if MAX}-INFINITY${else}0.0f${endif};
#pragma unroll
        for (int j = 0; j < VPT; ++j)
#pragma unroll
            for (int i = 0; i < VEC; ++i)
                r = combine(r, acc[j][i]);
        r = rowReduce(r, combine, phase);
        if (t == 0)
            fromFloat(r, Y[row]);
    }
}
