#pragma once
// The roofline of a task on one device: the task's FLOPs and minimum bytes against the device's
// measured peaks give a floor time (the faster of compute and memory can never beat it) and
// whether the task is compute- or memory-bound. Peaks are measured once per device and driver by
// the GPU child (gpu/peaks.cu) and cached as JSON; everything here is host-only arithmetic and
// file handling, so it is tested without a GPU.
#include "json.h"
#include "task.h"

#include <optional>
#include <string>
#include <vector>

namespace kev::roofline {

// Peaks as measured on one device: dense tensor throughput through a large cuBLAS GEMM (fp32
// accumulate), fp32 FMA throughput of an FMA-bound kernel, DRAM bandwidth of a large
// device-to-device copy counting read and write.
struct Peaks {
    std::string gpuUuid;
    std::string gpuName;
    std::string driverVersion;
    double tensorF16Tflops = 0;
    double tensorBf16Tflops = 0;
    double fp32Tflops = 0;
    double dramGbps = 0;
    double measuredUnix = 0; // seconds since the epoch
    double measureSeconds = 0;
    json::Value method; // how each peak was measured (sizes, repetitions)
    std::string source; // "measured" or "cache", not stored
};

json::Value toJson(const Peaks& peaks);
// Throws std::runtime_error naming the missing or malformed field.
Peaks peaksFromJson(const json::Value& value);

// $KEVOLVE_CACHE_DIR, else $XDG_CACHE_HOME/kevolve, else $HOME/.cache/kevolve; empty when none
// of them is set.
std::string cacheDir();
// `dir`/peaks-<uuid>-<driver>.json with every character outside [A-Za-z0-9._-] replaced by '_'.
std::string cachePath(const std::string& dir, const std::string& gpuUuid,
                      const std::string& driverVersion);
// What a device can do at most, from its properties (0: unknown): bounds a peak read from a cache
// any process may have written (THREAT_MODEL.md, class 6).
struct DeviceLimits {
    int smCount = 0;
    double smClockMhz = 0;  // the maximum SM clock
    double memClockMhz = 0; // the maximum memory clock
    int memBusBits = 0;
};

// Empty when every peak is finite and plausible; otherwise names the first that is not. Always:
// DRAM 1..50000 GB/s, tensor 0.1..20000 TFLOP/s, fp32 0.01..2000 TFLOP/s. With the device's
// limits: DRAM at most twice the bus's theoretical bandwidth (2 transfers per memory clock; HBM
// clocks are reported loosely), tensor at most 16384 and fp32 at most 1024 FLOP per SM per clock
// (4x and 4x Blackwell's), so a DRAM bandwidth of 1e7 GB/s is refused and measured again.
std::string implausible(const Peaks& peaks, const DeviceLimits& limits = {});

json::Value toJson(const DeviceLimits& limits);
// Missing or malformed fields stay 0 (unknown): the absolute bounds still apply.
DeviceLimits limitsFromJson(const json::Value& value);

// Stores `peaks` (storeCached) only when they are plausible for `limits`: how trusted code (the
// supervisor, from a trusted child's result) fills the cache. False with `error` otherwise.
bool storePlausible(const std::string& path, const Peaks& peaks, const DeviceLimits& limits,
                    std::string* error);

// The cached peaks when the file exists, parses, was measured on this device and driver and is
// plausible (implausible()); otherwise nullopt with `why` saying which.
std::optional<Peaks> loadCached(const std::string& path, const std::string& gpuUuid,
                                const std::string& driverVersion, std::string* why,
                                const DeviceLimits& limits = {});
// Writes atomically (temporary file, then rename), creating the directory; false with `error`.
bool storeCached(const std::string& path, const Peaks& peaks, std::string* error);

// The compute peak that bounds a task whose inputs have `inputs` dtype: the tensor peak of f16
// and bf16, the FMA peak of f32 (the f32 reference runs with pedantic math, no TF32). 0 when
// the dtype has no measured peak.
double computePeakTflops(const Peaks& peaks, Dtype inputs);

struct Row {
    std::string who; // "candidate" or "reference"
    double ms = 0;
    double percentOfFloor = 0; // floor / ms, in percent: 100 means at the roof
    double achievedTflops = 0;
    double achievedGbps = 0; // of the minimum bytes
};

struct Result {
    double flops = 0;
    double minBytes = 0;
    double peakTflops = 0;
    double peakGbps = 0;
    double computeMs = 0;
    double memoryMs = 0;
    double floorMs = 0;
    double intensity = 0; // flops per minimum byte
    double ridge = 0;     // intensity at which compute and memory floors meet
    std::string bound;    // "compute" or "memory"
    std::vector<Row> rows;
};

// Throws std::invalid_argument when a count or a peak is not positive and finite.
Result compute(double flops, double minBytes, double peakTflops, double peakGbps);
// Adds a measured row; a non-positive time adds nothing.
void addRow(Result& result, const std::string& who, double ms);
// Whether a speed-up of more than 10% over a library reference is `suspicious` once the roofline
// is known: only where the reference reaches at least 80% of its floor (near the roof a 10% win is
// implausible), or where the candidate runs above 110% of the floor (impossible). Below 80% the
// library leaves room, and beating it by more is what a tuned kernel does (H200: cuBLAS at 47-70%
// of the DRAM floor on small-M GEMMs, built-in kernels 1.10-1.16x faster). Rows: candidate then
// reference (addRow); without both the ratio rule stands.
bool ratioSuspicionStands(const Result& result);

// {flops, min_bytes, peak_tflops, peak_gbps, compute_floor_ms, memory_floor_ms, floor_ms,
//  arithmetic_intensity, ridge_intensity, bound, percent_of_floor (the candidate's, when
//  measured), rows: [{who, ms, percent_of_floor, tflops, gbps, bound}]}
json::Value toJson(const Result& result);

} // namespace kev::roofline
