// The kernel of fixture.sass (tests/builtin/sass/test_sass_listing.py): a loop of HMMAs nested in
// an outer loop, and a longer loop of FFMAs with no tensor instruction. Recorded with
//   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -cubin fixture.cu
//   nvdisasm -c fixture.cubin > fixture.sass   (nvcc 13.0, nvdisasm 13.5)
#include <cstdint>
__global__ void fixture(const uint32_t* a, const uint32_t* b, float* c, int n, int m) {
    float d[4] = {0, 0, 0, 0};
#pragma unroll 1
    for (int o = 0; o < m; ++o) {
#pragma unroll 1
        for (int i = 0; i < n; ++i) {
            const uint32_t a0 = a[i * 4 + threadIdx.x % 4], a1 = a[i * 4 + 1], a2 = a[i * 4 + 2],
                           a3 = a[i * 4 + 3];
            const uint32_t b0 = b[i * 2 + threadIdx.x % 2], b1 = b[i * 2 + 1];
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
                         "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                         : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                         : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
        }
        d[0] += o;
    }
    float x[16];
#pragma unroll
    for (int j = 0; j < 16; ++j)
        x[j] = d[j % 4] + j;
#pragma unroll 1
    for (int i = 0; i < n; ++i) {
#pragma unroll
        for (int j = 0; j < 16; ++j)
            x[j] = fmaf(x[j], c[i], x[(j + 1) % 16]);
    }
    float s = 0;
#pragma unroll
    for (int j = 0; j < 16; ++j)
        s += x[j];
    c[threadIdx.x] = s;
}
