${# memory/conversion.cu: toFloat and fromFloat for one storage type (memorycodegen.h).}
${# Conditions: F16, BF16, F32, exactly one true.}
${if F16}
[[maybe_unused]] __device__ __forceinline__ float toFloat(__half x) { return __half2float(x); }
[[maybe_unused]] __device__ __forceinline__ void fromFloat(float v, __half& out) { out = __float2half_rn(v); }
// The two elements of a 32-bit word (the lower first); the pointer only picks the type.
[[maybe_unused]] __device__ __forceinline__ void toFloats(const __half*, unsigned int w, float& lo, float& hi)
{
    __half2 h;
    memcpy(&h, &w, sizeof(h));
    const float2 f = __half22float2(h);
    lo = f.x;
    hi = f.y;
}
${endif}
${if BF16}
[[maybe_unused]] __device__ __forceinline__ float toFloat(__nv_bfloat16 x) { return __bfloat162float(x); }
[[maybe_unused]] __device__ __forceinline__ void fromFloat(float v, __nv_bfloat16& out) { out = __float2bfloat16_rn(v); }
// The two elements of a 32-bit word (the lower first), exactly: a bf16 is the upper half of its
// float, so one shift or one mask each (the upper element converted on its own took a byte permute
// and a shift: about 10% more instructions in a layernorm row's loop than its f16 twin).
[[maybe_unused]] __device__ __forceinline__ void toFloats(const __nv_bfloat16*, unsigned int w, float& lo, float& hi)
{
    lo = __uint_as_float(w << 16);
    hi = __uint_as_float(w & 0xffff0000u);
}
${endif}
${if F32}
[[maybe_unused]] __device__ __forceinline__ float toFloat(float x) { return x; }
[[maybe_unused]] __device__ __forceinline__ void fromFloat(float v, float& out) { out = v; }
${endif}
