${# gemm/output_helpers.cu: C's conversions and the alpha/beta pair store (gemmcodegen.h).}
${# Conditions: F16, BF16, F32, exactly one true.}
${if F16}
__device__ __forceinline__ float outputToFloat(Output x) { return __half2float(x); }
__device__ __forceinline__ void storeOutputPair(Output* p, float v0, float v1)
{
    *reinterpret_cast<__half2*>(p) = __floats2half2_rn(v0, v1);
}
${endif}
${if BF16}
__device__ __forceinline__ float outputToFloat(Output x) { return __bfloat162float(x); }
__device__ __forceinline__ void storeOutputPair(Output* p, float v0, float v1)
{
    *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(v0, v1);
}
${endif}
${if F32}
__device__ __forceinline__ float outputToFloat(Output x) { return x; }
__device__ __forceinline__ void storeOutputPair(Output* p, float v0, float v1)
{
    *reinterpret_cast<float2*>(p) = make_float2(v0, v1);
}
${endif}

// C = alpha * (x0, x1) + beta * C at columns col and col + 1 of `row`. N is a multiple of 8 and col
// is even, so col < N means both columns are inside. C is read only when beta is non-zero: the
// harness poisons it, and 0 * NaN is NaN.
__device__ __forceinline__ void epiloguePair(Output* __restrict__ C, long long ldc, int M, int N,
                                             int row, int col, float x0, float x1, float alpha,
                                             float beta)
{
    if (row >= M || col >= N)
        return;
    Output* p = C + row * ldc + col;
    float v0 = alpha * x0;
    float v1 = alpha * x1;
    if (beta != 0.0f) {
        v0 += beta * outputToFloat(p[0]);
        v1 += beta * outputToFloat(p[1]);
    }
    storeOutputPair(p, v0, v1);
}
