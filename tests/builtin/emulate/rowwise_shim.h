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
#include <mutex>
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

// pipeline=bulk's mbarriers and bulk copies (cp.async.bulk), keyed by the barrier's shared
// address: a copy lands at issue (defer 0) or at the first wait on its barrier (defer 1, so a
// piece read before its wait reads the NaN poison). A wait whose barrier's landed bytes differ
// from those it expects, or a copy the hardware refuses (not 16-byte aligned or sized, or outside
// the block's dynamic shared memory), stops the kernel.
struct BulkBarrier {
    long long expected = 0, landed = 0;
    int completed = 0; // phases completed
    std::vector<Copy> pending;
};
inline std::mutex bulkMutex;
inline std::vector<std::pair<uint32_t, BulkBarrier>> bulkBarriers;

inline BulkBarrier& bulkBarrier(uint32_t key) {
    for (auto& [k, b] : bulkBarriers)
        if (k == key)
            return b;
    std::fprintf(stderr, "mbarrier %#x used before its init\n", key);
    std::abort();
}
inline void bulkInit(uint32_t key) {
    std::lock_guard<std::mutex> lock(bulkMutex);
    bulkBarriers.emplace_back(key, BulkBarrier{});
}
inline void bulkExpect(uint32_t key, uint32_t bytes) {
    std::lock_guard<std::mutex> lock(bulkMutex);
    bulkBarrier(key).expected += bytes;
}
inline void bulkCopy(void* dst, const void* src, uint32_t bytes, uint32_t key) {
    std::lock_guard<std::mutex> lock(bulkMutex);
    auto* d = static_cast<unsigned char*>(dst);
    const bool inside =
        d >= dynamicShared.data() && d + bytes <= dynamicShared.data() + dynamicShared.size();
    if (bytes % 16 || reinterpret_cast<uintptr_t>(dst) % 16 ||
        reinterpret_cast<uintptr_t>(src) % 16 || !inside) {
        std::fprintf(stderr, "cp.async.bulk of %u bytes refused (alignment or bounds)\n", bytes);
        std::abort();
    }
    const Copy c{d, static_cast<const unsigned char*>(src), int(bytes), int(bytes)};
    BulkBarrier& b = bulkBarrier(key);
    if (defer) {
        b.pending.push_back(c);
    } else {
        land(c);
        b.landed += bytes;
    }
}
inline void bulkWait(uint32_t key, uint32_t parity) {
    std::lock_guard<std::mutex> lock(bulkMutex);
    BulkBarrier& b = bulkBarrier(key);
    if (b.completed > int(parity))
        return;
    for (const Copy& c : b.pending) {
        land(c);
        b.landed += c.bytes;
    }
    b.pending.clear();
    if (b.landed != b.expected) {
        std::fprintf(stderr, "mbarrier %#x: %lld bytes landed, %lld expected\n", key, b.landed,
                     b.expected);
        std::abort();
    }
    b.completed = int(parity) + 1;
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
        bulkBarriers.clear();
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
inline float emuLog2f(float x) {
    return std::log2(x);
}
#define __log2f emuLog2f
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
