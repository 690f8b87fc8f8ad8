#include "peaks.h"

#include "cuda_util.h"
#include "device_kernels.h"
#include "metrics_kernels.h"

#include <kevolve/abi.h>

#include <cublas_v2.h>

#include <algorithm>
#include <chrono>

namespace kev::gpu {

namespace {

constexpr int kGemmSize = 8192;
constexpr int kGemmRuns = 5;
constexpr int kFmaIterations = 16384;
constexpr int kCopyRuns = 3;

// Times `launch` `runs` times after one untimed warm-up run; returns the fastest run in ms.
template <typename F> float fastestMs(cudaStream_t stream, int runs, F launch) {
    cudaEvent_t start = nullptr, stop = nullptr;
    KEV_CUDA(cudaEventCreate(&start));
    KEV_CUDA(cudaEventCreate(&stop));
    launch();
    float best = 0;
    for (int i = 0; i < runs; ++i) {
        KEV_CUDA(cudaEventRecord(start, stream));
        launch();
        KEV_CUDA(cudaEventRecord(stop, stream));
        KEV_CUDA(cudaEventSynchronize(stop));
        float ms = 0;
        KEV_CUDA(cudaEventElapsedTime(&ms, start, stop));
        if (i == 0 || ms < best) {
            best = ms;
        }
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return best;
}

double gemmTflops(cublasHandle_t cublas, cudaStream_t stream, int dtype, cudaDataType_t type) {
    const int n = kGemmSize;
    const size_t elems = static_cast<size_t>(n) * n;
    DeviceBuffer a(elems * 2), b(elems * 2), c(elems * 4);
    FillSpec spec;
    spec.seed = 7;
    KEV_CUDA(fillRandom({a.data(), dtype, n, n, n}, spec, stream));
    spec.seed = 8;
    KEV_CUDA(fillRandom({b.data(), dtype, n, n, n}, spec, stream));
    const float alpha = 1.0f, beta = 0.0f;
    const float ms = fastestMs(stream, kGemmRuns, [&] {
        KEV_CUDA(cublasGemmEx(cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, b.data(), type, n,
                              a.data(), type, n, &beta, c.data(), CUDA_R_32F, n, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT));
    });
    return 2.0 * n * static_cast<double>(n) * n / (ms * 1e-3) / 1e12;
}

} // namespace

roofline::Peaks measurePeaks(const cudaDeviceProp& props, cudaStream_t stream) {
    const auto t0 = std::chrono::steady_clock::now();
    roofline::Peaks p;
    p.gpuName = props.name;
    p.source = "measured";
    json::Value method = json::Value::object();

    cublasHandle_t cublas = nullptr;
    KEV_CUDA(cublasCreate(&cublas));
    KEV_CUDA(cublasSetStream(cublas, stream));
    p.tensorF16Tflops = gemmTflops(cublas, stream, KEVOLVE_F16, CUDA_R_16F);
    p.tensorBf16Tflops = gemmTflops(cublas, stream, KEVOLVE_BF16, CUDA_R_16BF);
    cublasDestroy(cublas);
    method["tensor"] = "cublasGemmEx " + std::to_string(kGemmSize) +
                       "^3, row-major, f16 or bf16 in, "
                       "f32 out, CUBLAS_COMPUTE_32F; fastest of " +
                       std::to_string(kGemmRuns) + " after a warm-up";

    const int blocks = props.multiProcessorCount * 16;
    DeviceBuffer out(static_cast<size_t>(blocks) * 256 * sizeof(float));
    double flops = 0;
    const float fmaMs = fastestMs(stream, kGemmRuns, [&] {
        KEV_CUDA(launchFmaPeak(out.as<float>(), blocks, kFmaIterations, stream, &flops));
    });
    p.fp32Tflops = flops / (fmaMs * 1e-3) / 1e12;
    method["fp32"] = std::to_string(blocks) + " blocks x 256 threads x 8 chains x " +
                     std::to_string(kFmaIterations) + " FMAs; fastest of " +
                     std::to_string(kGemmRuns);

    // Two buffers of 4 GiB, or a quarter of the memory each on a smaller device.
    const size_t copyBytes = std::min<size_t>(size_t(4) << 30, props.totalGlobalMem / 4);
    DeviceBuffer src(copyBytes), dst(copyBytes);
    KEV_CUDA(cudaMemsetAsync(src.data(), 1, copyBytes, stream));
    const float copyMs = fastestMs(stream, kCopyRuns, [&] {
        KEV_CUDA(
            cudaMemcpyAsync(dst.data(), src.data(), copyBytes, cudaMemcpyDeviceToDevice, stream));
    });
    p.dramGbps = 2.0 * static_cast<double>(copyBytes) / (copyMs * 1e-3) / 1e9;
    method["dram"] = "cudaMemcpyAsync device to device of " + std::to_string(copyBytes) +
                     " bytes, read + write counted; fastest of " + std::to_string(kCopyRuns);
    p.method = method;
    p.measuredUnix = static_cast<double>(std::chrono::duration_cast<std::chrono::seconds>(
                                             std::chrono::system_clock::now().time_since_epoch())
                                             .count());
    p.measureSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return p;
}

roofline::DeviceLimits deviceLimits(const cudaDeviceProp& props) {
    roofline::DeviceLimits limits;
    int device = 0, smKhz = 0, memKhz = 0, busBits = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&smKhz, cudaDevAttrClockRate, device);
    cudaDeviceGetAttribute(&memKhz, cudaDevAttrMemoryClockRate, device);
    cudaDeviceGetAttribute(&busBits, cudaDevAttrGlobalMemoryBusWidth, device);
    cudaGetLastError();
    limits.smCount = props.multiProcessorCount;
    limits.smClockMhz = smKhz / 1000.0;
    limits.memClockMhz = memKhz / 1000.0;
    limits.memBusBits = busBits;
    return limits;
}

roofline::Peaks devicePeaks(const cudaDeviceProp& props, cudaStream_t stream,
                            const std::string& gpuUuid, const std::string& driverVersion,
                            std::string* note, bool store) {
    const std::string dir = roofline::cacheDir();
    std::string why;
    // A cache any process could have written is checked against what this device can do, and so
    // is a fresh measurement before it is stored.
    const roofline::DeviceLimits limits = deviceLimits(props);
    const std::string path =
        dir.empty() ? std::string() : roofline::cachePath(dir, gpuUuid, driverVersion);
    if (!path.empty()) {
        if (std::optional<roofline::Peaks> cached =
                roofline::loadCached(path, gpuUuid, driverVersion, &why, limits)) {
            *note = "cached in " + path;
            return *cached;
        }
    } else {
        why = "no cache directory (KEVOLVE_CACHE_DIR, XDG_CACHE_HOME and HOME are unset)";
    }
    roofline::Peaks p = measurePeaks(props, stream);
    p.gpuUuid = gpuUuid;
    p.driverVersion = driverVersion;
    *note = "measured now (" + why + ")";
    std::string error;
    if (!store) {
        *note += "; left to the supervisor to cache";
    } else if (const std::string bad = roofline::implausible(p, limits); !bad.empty()) {
        *note += "; not cached, the measurement is not plausible: " + bad;
    } else if (!path.empty() && !roofline::storeCached(path, p, &error)) {
        *note += "; not cached: " + error;
    } else if (!path.empty()) {
        *note += "; cached in " + path;
    }
    return p;
}

} // namespace kev::gpu
