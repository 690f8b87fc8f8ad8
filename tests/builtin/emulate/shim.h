// The CUDA a generated SIMT kernel uses, on the CPU (emulate.py): one std::thread per CUDA
// thread of a block, blocks one after another, std::barrier for __syncthreads, a shared buffer
// per block poisoned with NaN, and cp.async emulated at either end of its window.
#ifndef KEV_TESTS_EMULATE_SHIM_H
#define KEV_TESTS_EMULATE_SHIM_H
#include <algorithm>
#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>
struct float4 {
    float x, y, z, w;
};
struct float2 {
    float x, y;
};
inline float4 make_float4(float a, float b, float c, float d) {
    return {a, b, c, d};
}
inline float2 make_float2(float a, float b) {
    return {a, b};
}
struct dim3 {
    unsigned x = 1, y = 1, z = 1;
};
thread_local dim3 threadIdx, blockIdx, blockDim;
std::barrier<>* g_barrier;
float4* g_smem;
inline void __syncthreads() {
    g_barrier->arrive_and_wait();
}
inline float4 __ldg(const float4* p) {
    return *p;
}
using std::max;
using std::min;
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__
// cp.async emulation. EMU_DEFER=0: the copy lands at issue (earliest); 1: at the wait that
// requires it (latest), so reads before the wait see stale data.
struct EmuCopy {
    float* dst;
    const float* src;
    int bytes, srcBytes;
};
thread_local std::vector<EmuCopy> emuOpen;
thread_local std::vector<std::vector<EmuCopy>> emuGroups;
extern int EMU_DEFER;
inline void emuDo(const EmuCopy& c) {
    for (int i = 0; i < c.bytes / 4; ++i)
        c.dst[i] = i * 4 < c.srcBytes ? c.src[i] : 0.0f;
}
inline void emuCopy(float* dst, const float* src, int bytes, int srcBytes) {
    EmuCopy c{dst, src, bytes, srcBytes};
    if (EMU_DEFER)
        emuOpen.push_back(c);
    else
        emuDo(c);
}
inline void emuCommit() {
    emuGroups.push_back(emuOpen);
    emuOpen.clear();
}
inline void emuWait(int pending) {
    while (int(emuGroups.size()) > pending) {
        for (auto& c : emuGroups.front())
            emuDo(c);
        emuGroups.erase(emuGroups.begin());
    }
}

#endif // KEV_TESTS_EMULATE_SHIM_H
