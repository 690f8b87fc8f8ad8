${# memory/conversion.cu: toFloat and fromFloat for one storage type (memorycodegen.h).}
${# Conditions: F16, BF16, F32, exactly one true.}
${if F16}
[[maybe_unused]] __device__ __forceinline__ float toFloat(__half x) { return __half2float(x); }
[[maybe_unused]] __device__ __forceinline__ void fromFloat(float v, __half& out) { out = __float2half_rn(v); }
${endif}
${if BF16}
[[maybe_unused]] __device__ __forceinline__ float toFloat(__nv_bfloat16 x) { return __bfloat162float(x); }
[[maybe_unused]] __device__ __forceinline__ void fromFloat(float v, __nv_bfloat16& out) { out = __float2bfloat16_rn(v); }
${endif}
${if F32}
[[maybe_unused]] __device__ __forceinline__ float toFloat(float x) { return x; }
[[maybe_unused]] __device__ __forceinline__ void fromFloat(float v, float& out) { out = v; }
${endif}
