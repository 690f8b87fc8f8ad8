// The CUDA a generated row-wise kernel uses, on the CPU (rowwise_emulate.py): one std::thread per
// CUDA thread of a block, blocks one after another, std::barrier for __syncthreads and for each
// warp's shuffles, the real cuda_fp16.h / cuda_bf16.h conversions (host code since CUDA 9), and
// cp.async emulated at either end of its window (the copy lands at issue, or at the wait that
// needs it: a missing wait then reads the slot's previous row).
#ifndef KEV_TESTS_EMULATE_ROWWISE_SHIM_H
#define KEV_TESTS_EMULATE_ROWWISE_SHIM_H
#define __launch_bounds__(...)
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

using std::max;
using std::min;

namespace emu {
thread_local dim3 threadIdx, blockIdx, blockDim, gridDim;
inline std::barrier<>* blockBarrier;
inline std::vector<std::unique_ptr<std::barrier<>>> warpBarriers;
inline std::vector<uint64_t> laneSlots;          // one per thread of the block
inline std::vector<unsigned char> dynamicShared; // extern __shared__, NaN-poisoned per block
inline int defer = 0;                            // cp.async: 0 lands at issue, 1 at the wait

struct Copy {
    unsigned char* dst;
    const unsigned char* src;
    int bytes, srcBytes;
};
thread_local std::vector<Copy> openCopies;
thread_local std::vector<std::vector<Copy>> copyGroups;

inline void land(const Copy& c) {
    for (int i = 0; i < c.bytes; ++i)
        c.dst[i] = i < c.srcBytes ? c.src[i] : 0;
}

// Runs grid blocks of `threads` threads one after another.
inline void launch(long long grid, int threads, size_t smemBytes,
                   const std::function<void()>& body) {
    if (threads % 32 != 0)
        std::abort(); // the row-wise kernels launch whole warps
    for (long long b = 0; b < grid; ++b) {
        std::barrier<> block(threads);
        blockBarrier = &block;
        warpBarriers.clear();
        for (int w = 0; w < threads / 32; ++w)
            warpBarriers.push_back(std::make_unique<std::barrier<>>(32));
        laneSlots.assign(threads, 0);
        dynamicShared.assign(smemBytes + 16, 0xff); // 0xffff... is a NaN in every float type
        std::vector<std::thread> pool;
        pool.reserve(threads);
        for (int t = 0; t < threads; ++t)
            pool.emplace_back([&, t, b] {
                threadIdx = dim3(unsigned(t), 1, 1);
                blockIdx = dim3(unsigned(b), 1, 1);
                blockDim = dim3(unsigned(threads), 1, 1);
                gridDim = dim3(unsigned(grid), 1, 1);
                openCopies.clear();
                copyGroups.clear();
                body();
            });
        for (auto& t : pool)
            t.join();
    }
}

// A warp's exchange: every lane publishes its value, then reads lane `src`'s.
template <typename T> T shuffle(T v, int src) {
    static_assert(sizeof(T) <= sizeof(uint64_t), "one slot a lane");
    const int t = int(threadIdx.x);
    const int warp = t / 32;
    std::barrier<>& bar = *warpBarriers[warp];
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof(T));
    laneSlots[t] = bits;
    bar.arrive_and_wait();
    T r;
    std::memcpy(&r, &laneSlots[warp * 32 + src], sizeof(T));
    bar.arrive_and_wait();
    return r;
}
} // namespace emu

using emu::blockDim;
using emu::blockIdx;
using emu::gridDim;
using emu::threadIdx;

inline void __syncthreads() {
    emu::blockBarrier->arrive_and_wait();
}
template <typename T> T __shfl_down_sync(unsigned, T v, int offset) {
    const int lane = int(threadIdx.x) % 32;
    return emu::shuffle(v, lane + offset < 32 ? lane + offset : lane);
}
template <typename T> T __shfl_sync(unsigned, T v, int src) {
    return emu::shuffle(v, src & 31);
}
template <typename T> T __shfl_xor_sync(unsigned, T v, int mask) {
    return emu::shuffle(v, (int(threadIdx.x) % 32) ^ mask);
}
// The runtime calls a row-wise launch makes (no CUDA runtime library is linked).
extern "C" cudaError_t cudaGetLastError(void) {
    return cudaSuccess;
}
template <typename F> cudaError_t cudaFuncSetAttribute(F*, cudaFuncAttribute, int) {
    return cudaSuccess;
}
#ifndef __CUDA_ARCH__
inline float emuUintAsFloat(unsigned u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
inline unsigned emuFloatAsUint(float f) {
    unsigned u;
    std::memcpy(&u, &f, 4);
    return u;
}
#define __uint_as_float emuUintAsFloat
#define __float_as_uint emuFloatAsUint
// HFMA2, a device intrinsic (cuda_fp16.h defines HMUL2 on the host too): a * b + c of each pair,
// computed exactly in double (products of 16-bit values are exact there) and rounded to the element
// type.
inline __half2 __hfma2(__half2 a, __half2 b, __half2 c) {
    const auto one = [](float x, float y, float z) {
        return __double2half(double(x) * double(y) + double(z));
    };
    return __halves2half2(one(__low2float(a), __low2float(b), __low2float(c)),
                          one(__high2float(a), __high2float(b), __high2float(c)));
}
inline __nv_bfloat162 __hfma2(__nv_bfloat162 a, __nv_bfloat162 b, __nv_bfloat162 c) {
    const auto one = [](float x, float y, float z) {
        return __double2bfloat16(double(x) * double(y) + double(z));
    };
    __nv_bfloat162 r;
    r.x = one(__low2float(a), __low2float(b), __low2float(c));
    r.y = one(__high2float(a), __high2float(b), __high2float(c));
    return r;
}
#endif

#endif // KEV_TESTS_EMULATE_ROWWISE_SHIM_H
