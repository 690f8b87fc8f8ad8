#include "launch_hooks.h"

#include <dlfcn.h>
#include <pthread.h>

#include <atomic>
#include <cstdio>
#include <mutex>

namespace kev::gpu::hooks {
namespace {

std::mutex g_mutex;
bool g_armed = false;
bool g_sawHook = false;
cudaStream_t g_expected = nullptr;
std::vector<LaunchRecord> g_records;
std::vector<LaunchRecord> g_stray;
const pthread_t g_mainThread = pthread_self();

void record(LaunchRecord rec) {
    rec.harnessThread = pthread_equal(pthread_self(), g_mainThread) != 0;
    std::lock_guard<std::mutex> lock(g_mutex);
    g_sawHook = true;
    if (g_armed) {
        g_records.push_back(std::move(rec));
    } else if (!rec.harnessThread) {
        g_stray.push_back(std::move(rec));
    }
}

template <typename Fn> Fn real(const char* name) {
    // libcudart versions its symbols (libcudart.so.13); fall back to the unversioned lookup.
    char version[32];
    std::snprintf(version, sizeof version, "libcudart.so.%d", CUDART_VERSION / 1000);
    void* p = dlvsym(RTLD_NEXT, name, version);
    if (!p) {
        p = dlsym(RTLD_NEXT, name);
    }
    if (!p) {
        std::fprintf(stderr, "kevolve-harness: launch hook cannot find %s in libcudart\n", name);
    }
    return reinterpret_cast<Fn>(p);
}

void fromConfig(LaunchRecord& rec, const cudaLaunchConfig_t* config) {
    if (!config) {
        return;
    }
    rec.stream = config->stream;
    rec.grid = config->gridDim;
    rec.block = config->blockDim;
    rec.sharedBytes = config->dynamicSmemBytes;
    for (unsigned i = 0; i < config->numAttrs; ++i) {
        const cudaLaunchAttribute& a = config->attrs[i];
        if (a.id == cudaLaunchAttributeAccessPolicyWindow) {
            rec.accessPolicyWindow = true;
        } else if (a.id == cudaLaunchAttributeClusterDimension) {
            rec.clusterX = a.val.clusterDim.x;
            rec.clusterY = a.val.clusterDim.y;
            rec.clusterZ = a.val.clusterDim.z;
        }
    }
}

LaunchRecord simple(const char* api, const void* func, dim3 grid, dim3 block, size_t shared,
                    cudaStream_t stream) {
    LaunchRecord rec;
    rec.api = api;
    rec.func = func;
    rec.grid = grid;
    rec.block = block;
    rec.sharedBytes = shared;
    rec.stream = stream;
    return rec;
}

} // namespace

void arm(cudaStream_t expectedStream) {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_armed = true;
    g_expected = expectedStream;
    g_records.clear();
}

std::vector<LaunchRecord> disarm() {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_armed = false;
    return std::move(g_records);
}

std::vector<LaunchRecord> strayLaunches() {
    std::lock_guard<std::mutex> lock(g_mutex);
    return g_stray;
}

bool installed() {
    std::lock_guard<std::mutex> lock(g_mutex);
    return g_sawHook;
}

std::vector<std::string> violations(const std::vector<LaunchRecord>& records,
                                    cudaStream_t expectedStream) {
    std::vector<std::string> out;
    char buf[256];
    for (size_t i = 0; i < records.size(); ++i) {
        const LaunchRecord& r = records[i];
        if (r.stream != expectedStream) {
            std::snprintf(buf, sizeof buf,
                          "launch %zu (%s, grid %u,%u,%u) on stream %p, not the harness stream %p",
                          i, r.api.c_str(), r.grid.x, r.grid.y, r.grid.z,
                          static_cast<void*>(r.stream), static_cast<void*>(expectedStream));
            out.emplace_back(buf);
        }
        if (!r.harnessThread) {
            std::snprintf(buf, sizeof buf,
                          "launch %zu (%s) from a thread the harness did not start", i,
                          r.api.c_str());
            out.emplace_back(buf);
        }
        if (r.accessPolicyWindow) {
            std::snprintf(buf, sizeof buf,
                          "launch %zu (%s) sets an L2 access-policy window (refused: it changes "
                          "what the L2 flush measures)",
                          i, r.api.c_str());
            out.emplace_back(buf);
        }
    }
    return out;
}

} // namespace kev::gpu::hooks

using kev::gpu::hooks::LaunchRecord;

extern "C" {

cudaError_t cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args, size_t shared,
                             cudaStream_t stream) {
    using Fn = cudaError_t (*)(const void*, dim3, dim3, void**, size_t, cudaStream_t);
    static const Fn fn = kev::gpu::hooks::real<Fn>("cudaLaunchKernel");
    kev::gpu::hooks::record(
        kev::gpu::hooks::simple("cudaLaunchKernel", func, grid, block, shared, stream));
    return fn ? fn(func, grid, block, args, shared, stream) : cudaErrorNotSupported;
}

cudaError_t cudaLaunchKernel_ptsz(const void* func, dim3 grid, dim3 block, void** args,
                                  size_t shared, cudaStream_t stream) {
    using Fn = cudaError_t (*)(const void*, dim3, dim3, void**, size_t, cudaStream_t);
    static const Fn fn = kev::gpu::hooks::real<Fn>("cudaLaunchKernel_ptsz");
    kev::gpu::hooks::record(
        kev::gpu::hooks::simple("cudaLaunchKernel_ptsz", func, grid, block, shared, stream));
    return fn ? fn(func, grid, block, args, shared, stream) : cudaErrorNotSupported;
}

cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 grid, dim3 block, void** args,
                                        size_t shared, cudaStream_t stream) {
    using Fn = cudaError_t (*)(const void*, dim3, dim3, void**, size_t, cudaStream_t);
    static const Fn fn = kev::gpu::hooks::real<Fn>("cudaLaunchCooperativeKernel");
    kev::gpu::hooks::record(
        kev::gpu::hooks::simple("cudaLaunchCooperativeKernel", func, grid, block, shared, stream));
    return fn ? fn(func, grid, block, args, shared, stream) : cudaErrorNotSupported;
}

cudaError_t cudaLaunchCooperativeKernel_ptsz(const void* func, dim3 grid, dim3 block, void** args,
                                             size_t shared, cudaStream_t stream) {
    using Fn = cudaError_t (*)(const void*, dim3, dim3, void**, size_t, cudaStream_t);
    static const Fn fn = kev::gpu::hooks::real<Fn>("cudaLaunchCooperativeKernel_ptsz");
    kev::gpu::hooks::record(kev::gpu::hooks::simple("cudaLaunchCooperativeKernel_ptsz", func, grid,
                                                    block, shared, stream));
    return fn ? fn(func, grid, block, args, shared, stream) : cudaErrorNotSupported;
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void** args) {
    using Fn = cudaError_t (*)(const cudaLaunchConfig_t*, const void*, void**);
    static const Fn fn = kev::gpu::hooks::real<Fn>("cudaLaunchKernelExC");
    LaunchRecord rec;
    rec.api = "cudaLaunchKernelExC";
    rec.func = func;
    kev::gpu::hooks::fromConfig(rec, config);
    kev::gpu::hooks::record(rec);
    return fn ? fn(config, func, args) : cudaErrorNotSupported;
}

cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t* config, const void* func,
                                     void** args) {
    using Fn = cudaError_t (*)(const cudaLaunchConfig_t*, const void*, void**);
    static const Fn fn = kev::gpu::hooks::real<Fn>("cudaLaunchKernelExC_ptsz");
    LaunchRecord rec;
    rec.api = "cudaLaunchKernelExC_ptsz";
    rec.func = func;
    kev::gpu::hooks::fromConfig(rec, config);
    kev::gpu::hooks::record(rec);
    return fn ? fn(config, func, args) : cudaErrorNotSupported;
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void** args,
                               size_t shared, cudaStream_t stream) {
    using Fn = cudaError_t (*)(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t);
    static const Fn fn = kev::gpu::hooks::real<Fn>("__cudaLaunchKernel");
    kev::gpu::hooks::record(kev::gpu::hooks::simple("<<<>>>", reinterpret_cast<const void*>(kernel),
                                                    grid, block, shared, stream));
    return fn ? fn(kernel, grid, block, args, shared, stream) : cudaErrorNotSupported;
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void** args,
                                    size_t shared, cudaStream_t stream) {
    using Fn = cudaError_t (*)(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t);
    static const Fn fn = kev::gpu::hooks::real<Fn>("__cudaLaunchKernel_ptsz");
    kev::gpu::hooks::record(kev::gpu::hooks::simple(
        "<<<>>> (per-thread)", reinterpret_cast<const void*>(kernel), grid, block, shared, stream));
    return fn ? fn(kernel, grid, block, args, shared, stream) : cudaErrorNotSupported;
}

} // extern "C"
