${# memory/includes.cu: the CUDA headers of the storage types. Conditions: F16, BF16.}
${if F16}
#include <cuda_fp16.h>
${endif}
${if BF16}
#include <cuda_bf16.h>
${endif}
