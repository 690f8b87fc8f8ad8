#include "roofline.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace kev::roofline {

namespace {

constexpr int kCacheSchema = 1;

double requirePositive(const json::Value& v, const char* key) {
    const json::Value* f = v.find(key);
    if (!f || !f->isNumber()) {
        throw std::runtime_error(std::string("peaks.") + key + ": missing or not a number");
    }
    const double d = f->asDouble();
    if (!(d > 0) || !std::isfinite(d)) {
        throw std::runtime_error(std::string("peaks.") + key + ": must be positive, got " +
                                 std::to_string(d));
    }
    return d;
}

std::string requireString(const json::Value& v, const char* key) {
    const json::Value* f = v.find(key);
    if (!f || !f->isString()) {
        throw std::runtime_error(std::string("peaks.") + key + ": missing or not a string");
    }
    return f->asString();
}

std::string envOrEmpty(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

bool makeDirs(const std::string& path, std::string* error) {
    std::string partial;
    std::stringstream ss(path);
    std::string part;
    if (!path.empty() && path[0] == '/') {
        partial = "/";
    }
    while (std::getline(ss, part, '/')) {
        if (part.empty()) {
            continue;
        }
        partial += part;
        if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
            *error = "cannot create " + partial + ": " + std::strerror(errno);
            return false;
        }
        partial += '/';
    }
    return true;
}

bool checkPositive(double v) {
    return v > 0 && std::isfinite(v);
}

} // namespace

json::Value toJson(const Peaks& p) {
    json::Value v = json::Value::object();
    v["schema_version"] = kCacheSchema;
    v["gpu_uuid"] = p.gpuUuid;
    v["gpu_name"] = p.gpuName;
    v["driver_version"] = p.driverVersion;
    v["tensor_f16_tflops"] = p.tensorF16Tflops;
    v["tensor_bf16_tflops"] = p.tensorBf16Tflops;
    v["fp32_tflops"] = p.fp32Tflops;
    v["dram_gbps"] = p.dramGbps;
    v["measured_unix"] = p.measuredUnix;
    v["measure_seconds"] = p.measureSeconds;
    if (!p.method.isNull()) {
        v["method"] = p.method;
    }
    return v;
}

Peaks peaksFromJson(const json::Value& v) {
    if (!v.isObject()) {
        throw std::runtime_error("peaks: not a JSON object");
    }
    const json::Value* schema = v.find("schema_version");
    if (!schema || !schema->isInt() || schema->asInt() != kCacheSchema) {
        throw std::runtime_error("peaks.schema_version: expected " + std::to_string(kCacheSchema));
    }
    Peaks p;
    p.gpuUuid = requireString(v, "gpu_uuid");
    p.gpuName = requireString(v, "gpu_name");
    p.driverVersion = requireString(v, "driver_version");
    p.tensorF16Tflops = requirePositive(v, "tensor_f16_tflops");
    p.tensorBf16Tflops = requirePositive(v, "tensor_bf16_tflops");
    p.fp32Tflops = requirePositive(v, "fp32_tflops");
    p.dramGbps = requirePositive(v, "dram_gbps");
    if (const json::Value* t = v.find("measured_unix"); t && t->isNumber()) {
        p.measuredUnix = t->asDouble();
    }
    if (const json::Value* t = v.find("measure_seconds"); t && t->isNumber()) {
        p.measureSeconds = t->asDouble();
    }
    if (const json::Value* m = v.find("method")) {
        p.method = *m;
    }
    return p;
}

std::string cacheDir() {
    std::string dir = envOrEmpty("KEVOLVE_CACHE_DIR");
    if (!dir.empty()) {
        return dir;
    }
    dir = envOrEmpty("XDG_CACHE_HOME");
    if (!dir.empty()) {
        return dir + "/kevolve";
    }
    dir = envOrEmpty("HOME");
    if (!dir.empty()) {
        return dir + "/.cache/kevolve";
    }
    return {};
}

std::string cachePath(const std::string& dir, const std::string& gpuUuid,
                      const std::string& driverVersion) {
    std::string name = "peaks-" + gpuUuid + "-" + driverVersion;
    for (char& c : name) {
        const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                        (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
        if (!ok) {
            c = '_';
        }
    }
    return dir + "/" + name + ".json";
}

std::string implausible(const Peaks& p, const DeviceLimits& limits) {
    const auto outside = [](const char* what, double v, double lo, double hi,
                            const std::string& bound) -> std::string {
        if (std::isfinite(v) && v >= lo && v <= hi)
            return {};
        std::ostringstream s;
        s << what << " " << v << " is outside " << lo << ".." << hi << " (" << bound << ")";
        return s.str();
    };
    double dramMax = 50000, tensorMax = 20000, fp32Max = 2000;
    std::string dramWhy = "no device has that", tensorWhy = dramWhy, fp32Why = dramWhy;
    if (limits.memClockMhz > 0 && limits.memBusBits > 0) {
        const double theoretical = 2.0 * limits.memClockMhz * 1e6 * limits.memBusBits / 8 / 1e9;
        dramMax = std::min(dramMax, 2.0 * theoretical);
        dramWhy =
            "twice the memory bus's " + std::to_string(static_cast<int>(theoretical)) + " GB/s";
    }
    if (limits.smCount > 0 && limits.smClockMhz > 0) {
        const double perClock = limits.smCount * limits.smClockMhz * 1e6 / 1e12;
        tensorMax = std::min(tensorMax, 16384 * perClock);
        fp32Max = std::min(fp32Max, 1024 * perClock);
        tensorWhy = fp32Why = std::to_string(limits.smCount) + " SMs at " +
                              std::to_string(static_cast<int>(limits.smClockMhz)) + " MHz";
    }
    for (const std::string& problem :
         {outside("dram_gbps", p.dramGbps, 1, dramMax, dramWhy),
          outside("tensor_f16_tflops", p.tensorF16Tflops, 0.1, tensorMax, tensorWhy),
          outside("tensor_bf16_tflops", p.tensorBf16Tflops, 0.1, tensorMax, tensorWhy),
          outside("fp32_tflops", p.fp32Tflops, 0.01, fp32Max, fp32Why)}) {
        if (!problem.empty())
            return problem;
    }
    return {};
}

std::optional<Peaks> loadCached(const std::string& path, const std::string& gpuUuid,
                                const std::string& driverVersion, std::string* why,
                                const DeviceLimits& limits) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        *why = "no cached peaks at " + path;
        return std::nullopt;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    std::string error;
    const std::optional<json::Value> v = json::tryParse(ss.str(), &error);
    if (!v) {
        *why = path + " is not valid JSON (" + error + ")";
        return std::nullopt;
    }
    try {
        Peaks p = peaksFromJson(*v);
        if (p.gpuUuid != gpuUuid || p.driverVersion != driverVersion) {
            *why = path + " was measured on " + p.gpuUuid + " with driver " + p.driverVersion +
                   ", not " + gpuUuid + " with driver " + driverVersion;
            return std::nullopt;
        }
        if (const std::string bad = implausible(p, limits); !bad.empty()) {
            *why = path + " is not plausible: " + bad;
            return std::nullopt;
        }
        p.source = "cache";
        return p;
    } catch (const std::exception& e) {
        *why = path + ": " + e.what();
        return std::nullopt;
    }
}

bool storeCached(const std::string& path, const Peaks& peaks, std::string* error) {
    const size_t slash = path.rfind('/');
    if (slash != std::string::npos && slash > 0 && !makeDirs(path.substr(0, slash), error)) {
        return false;
    }
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) {
            *error = "cannot write " + tmp + ": " + std::strerror(errno);
            return false;
        }
        out << toJson(peaks).dump(2) << '\n';
        if (!out.flush()) {
            *error = "cannot write " + tmp;
            return false;
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        *error = "cannot rename " + tmp + " to " + path + ": " + std::strerror(errno);
        std::remove(tmp.c_str());
        return false;
    }
    return true;
}

json::Value toJson(const DeviceLimits& limits) {
    json::Value v = json::Value::object();
    v["sm_count"] = limits.smCount;
    v["sm_clock_mhz"] = limits.smClockMhz;
    v["mem_clock_mhz"] = limits.memClockMhz;
    v["mem_bus_bits"] = limits.memBusBits;
    return v;
}

DeviceLimits limitsFromJson(const json::Value& value) {
    DeviceLimits l;
    const auto number = [&](const char* key) {
        const json::Value* v = value.isObject() ? value.find(key) : nullptr;
        return v && v->isNumber() && std::isfinite(v->asDouble()) && v->asDouble() > 0
                   ? v->asDouble()
                   : 0.0;
    };
    l.smCount = static_cast<int>(std::min(number("sm_count"), 1e6));
    l.smClockMhz = number("sm_clock_mhz");
    l.memClockMhz = number("mem_clock_mhz");
    l.memBusBits = static_cast<int>(std::min(number("mem_bus_bits"), 1e6));
    return l;
}

bool storePlausible(const std::string& path, const Peaks& peaks, const DeviceLimits& limits,
                    std::string* error) {
    if (const std::string bad = implausible(peaks, limits); !bad.empty()) {
        *error = "not plausible: " + bad;
        return false;
    }
    return storeCached(path, peaks, error);
}

double computePeakTflops(const Peaks& peaks, Dtype inputs) {
    switch (inputs) {
    case Dtype::F16:
        return peaks.tensorF16Tflops;
    case Dtype::BF16:
        return peaks.tensorBf16Tflops;
    case Dtype::F32:
        return peaks.fp32Tflops;
    default:
        return 0;
    }
}

Result compute(double flops, double minBytes, double peakTflops, double peakGbps) {
    if (!checkPositive(flops)) {
        throw std::invalid_argument("roofline: flops must be positive, got " +
                                    std::to_string(flops));
    }
    if (!checkPositive(minBytes)) {
        throw std::invalid_argument("roofline: min_bytes must be positive, got " +
                                    std::to_string(minBytes));
    }
    if (!checkPositive(peakTflops)) {
        throw std::invalid_argument("roofline: the compute peak must be positive, got " +
                                    std::to_string(peakTflops) + " TFLOP/s");
    }
    if (!checkPositive(peakGbps)) {
        throw std::invalid_argument("roofline: the DRAM peak must be positive, got " +
                                    std::to_string(peakGbps) + " GB/s");
    }
    Result r;
    r.flops = flops;
    r.minBytes = minBytes;
    r.peakTflops = peakTflops;
    r.peakGbps = peakGbps;
    r.computeMs = flops / (peakTflops * 1e12) * 1e3;
    r.memoryMs = minBytes / (peakGbps * 1e9) * 1e3;
    r.floorMs = std::max(r.computeMs, r.memoryMs);
    r.intensity = flops / minBytes;
    r.ridge = (peakTflops * 1e12) / (peakGbps * 1e9);
    r.bound = r.computeMs >= r.memoryMs ? "compute" : "memory";
    return r;
}

void addRow(Result& result, const std::string& who, double ms) {
    if (!(ms > 0) || !std::isfinite(ms)) {
        return;
    }
    Row row;
    row.who = who;
    row.ms = ms;
    row.percentOfFloor = 100.0 * result.floorMs / ms;
    row.achievedTflops = result.flops / (ms * 1e-3) / 1e12;
    row.achievedGbps = result.minBytes / (ms * 1e-3) / 1e9;
    result.rows.push_back(row);
}

bool ratioSuspicionStands(const Result& result) {
    if (result.rows.size() < 2 || result.rows[0].who != "candidate" ||
        result.rows[1].who != "reference")
        return true;
    return !(result.rows[1].percentOfFloor < 80.0) || result.rows[0].percentOfFloor > 110.0;
}

json::Value toJson(const Result& r) {
    json::Value v = json::Value::object();
    v["flops"] = r.flops;
    v["min_bytes"] = r.minBytes;
    v["peak_tflops"] = r.peakTflops;
    v["peak_gbps"] = r.peakGbps;
    v["compute_floor_ms"] = r.computeMs;
    v["memory_floor_ms"] = r.memoryMs;
    v["floor_ms"] = r.floorMs;
    v["arithmetic_intensity"] = r.intensity;
    v["ridge_intensity"] = r.ridge;
    v["bound"] = r.bound;
    json::Value rows = json::Value::array();
    for (const Row& row : r.rows) {
        if (row.who == "candidate") {
            v["percent_of_floor"] = row.percentOfFloor;
        }
        json::Value o = json::Value::object();
        o["who"] = row.who;
        o["ms"] = row.ms;
        o["percent_of_floor"] = row.percentOfFloor;
        o["tflops"] = row.achievedTflops;
        o["gbps"] = row.achievedGbps;
        o["bound"] = r.bound;
        rows.push(std::move(o));
    }
    v["rows"] = rows;
    return v;
}

} // namespace kev::roofline
