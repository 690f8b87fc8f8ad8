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
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <typeinfo>
#include <vector>

using std::max;
using std::min;

namespace emu {
thread_local dim3 threadIdx, blockIdx, blockDim, gridDim;
inline int defer = 0; // cp.async and bulk copies: 0 land at issue, 1 at the wait

// One block's state: its barrier, its warps' barriers and shuffle slots, its dynamic shared memory
// (NaN-poisoned) and its __shared__ variables (one instance per block, NaN-poisoned too, so the
// blocks of a cluster, which run together, each have their own).
struct Block {
    explicit Block(int threads, size_t smemBytes, int clusterRank)
        : barrier(threads)
        , lanes(size_t(threads), 0)
        , dynamicShared(smemBytes + 16, 0xff)
        , dynamicBytes(smemBytes)
        , rank(clusterRank) {
        for (int w = 0; w < threads / 32; ++w)
            warps.push_back(std::make_unique<std::barrier<>>(32));
    }
    struct Var {
        int id;
        const std::type_info* type;
        size_t size;
        std::unique_ptr<unsigned char[]> bytes;
    };
    std::barrier<> barrier;
    std::vector<std::unique_ptr<std::barrier<>>> warps;
    std::vector<uint64_t> lanes; // one shuffle slot per thread of the block
    std::vector<unsigned char> dynamicShared;
    size_t dynamicBytes; // what the launch asked for (the bulk copies' bound)
    std::vector<Var> vars;
    std::mutex varsMutex;
    int rank;
};
// The blocks of a cluster run together; sync() is a barrier of all their threads.
struct Cluster {
    explicit Cluster(int threads)
        : barrier(threads) {}
    std::barrier<> barrier;
    std::vector<Block*> blocks;
};
thread_local Block* block;
thread_local Cluster* cluster;

inline unsigned char* dynamicShared() {
    return block->dynamicShared.data();
}

// A __shared__ variable of the calling block (`id`: its declaration), created on first use.
template <typename T> T& sharedVar(int id) {
    Block& b = *block;
    std::lock_guard<std::mutex> lock(b.varsMutex);
    for (auto& v : b.vars)
        if (v.id == id && *v.type == typeid(T))
            return *reinterpret_cast<T*>(v.bytes.get());
    Block::Var v{id, &typeid(T), sizeof(T), std::make_unique<unsigned char[]>(sizeof(T))};
    std::memset(v.bytes.get(), 0xff, sizeof(T));
    b.vars.push_back(std::move(v));
    return *reinterpret_cast<T*>(b.vars.back().bytes.get());
}

// The address in cluster block `rank` of what p addresses in the calling block's shared memory.
template <typename T> T* mapSharedRank(T* p, int rank) {
    auto* a = reinterpret_cast<unsigned char*>(p);
    Block& mine = *block;
    Block& other = *cluster->blocks.at(size_t(rank));
    if (a >= mine.dynamicShared.data() && a < mine.dynamicShared.data() + mine.dynamicShared.size())
        return reinterpret_cast<T*>(other.dynamicShared.data() + (a - mine.dynamicShared.data()));
    // The variable and offset under the calling block's lock, then the other block's (one lock
    // at a time: two blocks mapping each other's variables must not wait on each other).
    int id = 0;
    const std::type_info* type = nullptr;
    ptrdiff_t offset = 0;
    {
        std::lock_guard<std::mutex> lock(mine.varsMutex);
        for (auto& v : mine.vars)
            if (a >= v.bytes.get() && a < v.bytes.get() + v.size) {
                id = v.id;
                type = v.type;
                offset = a - v.bytes.get();
            }
    }
    if (type) {
        std::lock_guard<std::mutex> lock(other.varsMutex);
        for (auto& w : other.vars)
            if (w.id == id && *w.type == *type)
                return reinterpret_cast<T*>(w.bytes.get() + offset);
    }
    std::fprintf(stderr, "map_shared_rank of an address that is not shared memory\n");
    std::abort();
}

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
    const std::vector<unsigned char>& smem = block->dynamicShared;
    const bool inside = d >= smem.data() && d + bytes <= smem.data() + block->dynamicBytes;
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

// st.async of a split row's statistics (two floats) into another block's slot: lands at once and
// completes bytes of that block's barrier (`key`, its address as sharedAddress gives it). peerWait
// blocks until the barrier's expected bytes have landed; a store that never comes (a block that
// sends nothing, or to the wrong barrier) stops the kernel after 20 s instead of hanging it.
inline uint32_t keyOf(const void* bar) {
    return uint32_t(reinterpret_cast<uintptr_t>(bar));
}
inline void storeToPeer(void* slot, float a, float b, uint32_t key) {
    std::lock_guard<std::mutex> lock(bulkMutex);
    const float pair[2] = {a, b};
    std::memcpy(slot, pair, sizeof(pair));
    bulkBarrier(key).landed += static_cast<long long>(sizeof(pair));
}
inline void peerWait(uint32_t key, uint32_t parity) {
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
        {
            std::lock_guard<std::mutex> lock(bulkMutex);
            BulkBarrier& b = bulkBarrier(key);
            if (b.completed > int(parity))
                return;
            if (b.landed > b.expected) {
                std::fprintf(stderr, "mbarrier %#x: %lld bytes from peers, %lld expected\n", key,
                             b.landed, b.expected);
                std::abort();
            }
            if (b.landed == b.expected) {
                b.completed = int(parity) + 1;
                return;
            }
        }
        if (std::chrono::steady_clock::now() - start > std::chrono::seconds(20)) {
            std::fprintf(stderr, "mbarrier %#x: the peers' statistics never arrived\n", key);
            std::abort();
        }
        std::this_thread::yield();
    }
}

// Runs grid blocks of `threads` threads, a cluster of `clusterSize` blocks at a time (their threads
// together), clusters one after another.
inline void launch(long long grid, int threads, size_t smemBytes, const std::function<void()>& body,
                   int clusterSize = 1) {
    if (threads % 32 != 0 || clusterSize < 1 || grid % clusterSize != 0)
        std::abort(); // the row-wise kernels launch whole warps and whole clusters
    for (long long first = 0; first < grid; first += clusterSize) {
        Cluster group(threads * clusterSize);
        std::vector<std::unique_ptr<Block>> blocks;
        for (int r = 0; r < clusterSize; ++r) {
            blocks.push_back(std::make_unique<Block>(threads, smemBytes, r));
            group.blocks.push_back(blocks.back().get());
        }
        bulkBarriers.clear();
        std::vector<std::thread> pool;
        pool.reserve(size_t(threads) * size_t(clusterSize));
        for (int r = 0; r < clusterSize; ++r)
            for (int t = 0; t < threads; ++t)
                pool.emplace_back([&, t, r] {
                    block = blocks[size_t(r)].get();
                    cluster = &group;
                    threadIdx = dim3(unsigned(t), 1, 1);
                    blockIdx = dim3(unsigned(first + r), 1, 1);
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
    std::barrier<>& bar = *block->warps[size_t(warp)];
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof(T));
    block->lanes[size_t(t)] = bits;
    bar.arrive_and_wait();
    T r;
    std::memcpy(&r, &block->lanes[size_t(warp * 32 + src)], sizeof(T));
    bar.arrive_and_wait();
    return r;
}
} // namespace emu

using emu::blockDim;
using emu::blockIdx;
using emu::gridDim;
using emu::threadIdx;

inline void __syncthreads() {
    emu::block->barrier.arrive_and_wait();
}
// The cluster API the split kernels use (cooperative_groups.h is device code).
namespace cooperative_groups {
struct cluster_group {
    void sync() const { emu::cluster->barrier.arrive_and_wait(); }
    unsigned block_rank() const { return unsigned(emu::block->rank); }
    template <typename T> T* map_shared_rank(T* p, unsigned rank) const {
        return emu::mapSharedRank(p, int(rank));
    }
};
inline cluster_group this_cluster() {
    return {};
}
} // namespace cooperative_groups
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
inline int __all_sync(unsigned, int predicate) {
    const int t = int(threadIdx.x);
    const int warp = t / 32;
    std::barrier<>& bar = *emu::block->warps[size_t(warp)];
    emu::block->lanes[size_t(t)] = predicate ? 1 : 0;
    bar.arrive_and_wait();
    int all = 1;
    for (int lane = 0; lane < 32; ++lane)
        all &= emu::block->lanes[size_t(warp * 32 + lane)] != 0 ? 1 : 0;
    bar.arrive_and_wait();
    return all;
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
