${if F16}
#include <cuda_fp16.h>
${endif}
${if BF16}
#include <cuda_bf16.h>
${endif}
