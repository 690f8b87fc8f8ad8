#include "builtin/family_wmma.h"

#include "builtin/cudatemplates.h"
#include "builtin/gemmcodegen.h"

#include <QJsonArray>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace kev {

namespace {

constexpr int kBlockK = 32;

int warpsN(int warps, int blockM, int blockN) {
    return warps == 8 && blockN >= blockM ? 4 : 2;
}

int fragsM(const Strategy& s) {
    return s.warpM > 0 ? s.warpM / 16 : 0;
}

int fragsN(const Strategy& s) {
    return s.warpN > 0 ? s.warpN / 16 : 0;
}

// Accumulators (8 floats per fragment and lane), the warp's A fragments and one B fragment (8
// registers each), and about 40 for addresses, loop counters and the epilogue.
int registerEstimate(const Strategy& s) {
    return fragsM(s) * fragsN(s) * 8 + fragsM(s) * 8 + 8 + 40;
}

qint64 smemBytes(const Strategy& s) {
    const qint64 pipe = qint64(s.stages) *
                        (qint64(s.blockM) * (s.blockK + 8) + qint64(s.blockK) * (s.blockN + 8)) * 2;
    const qint64 scratch = qint64(s.warps) * 16 * 20 * 4;
    return std::max(pipe, scratch);
}

QJsonArray ints(std::initializer_list<int> values) {
    QJsonArray out;
    for (int v : values)
        out.append(v);
    return out;
}

} // namespace

QString WmmaFamily::id() const {
    return u"wmma"_s;
}

QString WmmaFamily::description() const {
    return u"Tensor cores through nvcuda::wmma 16x16x16 fragments (f16 or bf16 in, fp32 "
           "accumulate), A and B row-major: block tiles of 64 or 128 rows and columns with BK 32, "
           "staged by cp.async into shared memory with rows padded by 16 bytes (zero-filled "
           "outside M, N and K), single or double buffered; 4 or 8 warps, each holding a warp "
           "tile of accumulator fragments; an epilogue through a per-warp shared scratch that "
           "writes only inside M x N, converting to C's type. Not for f32 inputs."_s;
}

bool WmmaFamily::supports(const Task& task, const DeviceInfo& device) const {
    const bool dtypes = (task.a == u"f16" || task.a == u"bf16") && task.b == task.a &&
                        (task.c == u"f32" || task.c == u"f16" || task.c == u"bf16") &&
                        task.accumulate == u"f32";
    return task.op == u"gemm" && dtypes && task.layoutA == u"row" && task.layoutB == u"row" &&
           task.layoutC == u"row" && device.ccMajor >= 8 && task.leadingDimMultiple % 8 == 0;
}

QVector<ParameterSpec> WmmaFamily::parameters() const {
    return {
        fieldParameter(u"blockM"_s, u"Rows of C per thread block"_s, ints({64, 128}),
                       &Strategy::blockM),
        fieldParameter(u"blockN"_s, u"Columns of C per thread block"_s, ints({64, 128}),
                       &Strategy::blockN),
        fieldParameter(u"warps"_s, u"Warps per block (the warp tile follows)"_s, ints({4, 8}),
                       &Strategy::warps),
        fieldParameter(u"stages"_s, u"Shared-memory buffers: 1 or 2 (double buffering)"_s,
                       ints({1, 2}), &Strategy::stages),
    };
}

void WmmaFamily::normalize(Strategy& s) const {
    s.family = id();
    s.mma = u"wmma"_s;
    s.blockK = kBlockK;
    s.vectorWidth = 8;
    s.smemLayout = u"padded"_s;
    s.smemPaddingBytes = 16;
    s.swizzleBytes = 0;
    s.splitK = 1;
    s.raster = u"row"_s;
    s.groupSize = 1;
    s.epilogue = u"smem"_s;
    if (s.warps == 4 || s.warps == 8) {
        const int wn = warpsN(s.warps, s.blockM, s.blockN);
        s.warpM = s.blockM / (s.warps / wn);
        s.warpN = s.blockN / wn;
    }
}

QStringList WmmaFamily::constraints(const Strategy& s, const Task& task,
                                    const DeviceInfo& device) const {
    QStringList problems;
    if (!supports(task, device))
        problems
            << u"family wmma needs a row-major GEMM with f16 or bf16 A and B of the same type, "
               "f32 accumulation, leading dimensions a multiple of 8 and an sm_80 or newer "
               "GPU (task %1, device %2 sm_%3%4)"_s.arg(task.summary(), device.name)
                   .arg(device.ccMajor)
                   .arg(device.ccMinor);
    if (s.family != id())
        problems << u"family: \"%1\" is not %2"_s.arg(s.family, id());
    if ((s.blockM != 64 && s.blockM != 128) || (s.blockN != 64 && s.blockN != 128))
        problems << u"block tile %1x%2: blockM and blockN must each be 64 or 128"_s.arg(s.blockM)
                        .arg(s.blockN);
    if (s.blockK != kBlockK)
        problems << u"blockK=%1: this family stages k-tiles of 32"_s.arg(s.blockK);
    if (s.warps != 4 && s.warps != 8)
        problems << u"warps=%1: must be 4 or 8"_s.arg(s.warps);
    if (s.stages != 1 && s.stages != 2)
        problems << u"stages=%1: 1 (single buffer) or 2 (double buffering)"_s.arg(s.stages);
    if (s.warpM <= 0 || s.warpN <= 0 || s.warpM % 16 != 0 || s.warpN % 16 != 0) {
        problems << u"warpM=%1, warpN=%2: each must be a positive multiple of the 16x16 "
                    "fragment"_s.arg(s.warpM)
                        .arg(s.warpN);
        return problems;
    }
    if (s.blockM % s.warpM != 0 || s.blockN % s.warpN != 0)
        problems << u"warp tile %1x%2 does not divide block tile %3x%4"_s.arg(s.warpM)
                        .arg(s.warpN)
                        .arg(s.blockM)
                        .arg(s.blockN);
    else if (s.warps != (s.blockM / s.warpM) * (s.blockN / s.warpN))
        problems << u"warps=%1 but block tile %2x%3 over warp tile %4x%5 makes %6 warps"_s
                        .arg(s.warps)
                        .arg(s.blockM)
                        .arg(s.blockN)
                        .arg(s.warpM)
                        .arg(s.warpN)
                        .arg((s.blockM / s.warpM) * (s.blockN / s.warpN));
    const int threads = s.warps * 32;
    if (threads > 0 && threads <= 1024) {
        const qint64 aChunks = qint64(s.blockM) * s.blockK / 8;
        const qint64 bChunks = qint64(s.blockK) * s.blockN / 8;
        if (aChunks % threads != 0 || bChunks % threads != 0)
            problems << u"tile loads: %1 A chunks and %2 B chunks of 16 bytes do not split evenly "
                        "over %3 threads"_s.arg(aChunks)
                            .arg(bChunks)
                            .arg(threads);
    }
    const qint64 smem = smemBytes(s);
    if (smem > 48 * 1024)
        problems << u"static shared memory %1 B exceeds 49152 B (blockM=%2, blockN=%3, stages=%4)"_s
                        .arg(smem)
                        .arg(s.blockM)
                        .arg(s.blockN)
                        .arg(s.stages);
    else if (smem > device.smemPerBlockOptin)
        problems << u"shared memory %1 B per block exceeds the device's limit %2 B"_s.arg(smem).arg(
            device.smemPerBlockOptin);
    const int regs = registerEstimate(s);
    if (regs > 255)
        problems << u"about %1 registers per thread for warp tile %2x%3: more than 255, it would "
                    "spill"_s.arg(regs)
                        .arg(s.warpM)
                        .arg(s.warpN);
    else if (qint64(regs) * threads > device.regsPerSm)
        problems << u"about %1 registers x %2 threads exceeds the %3 registers of an SM"_s.arg(regs)
                        .arg(threads)
                        .arg(device.regsPerSm);
    return problems;
}

ResourceEstimate WmmaFamily::resources(const Strategy& s, const Task&,
                                       const DeviceInfo& device) const {
    ResourceEstimate r = estimateResources(s.warps * 32, smemBytes(s), registerEstimate(s), device);
    return r;
}

Strategy WmmaFamily::defaultStrategy(const Task& task, const DeviceInfo& device) const {
    Strategy s;
    s.family = id();
    s.stages = 2;
    const int sms = std::max(device.smCount, 1);
    const qint64 tiles128 = ((task.m + 127) / 128) * ((task.n + 127) / 128);
    if (tiles128 >= sms) {
        s.blockM = 128;
        s.blockN = 128;
        s.warps = 8;
        s.rationale = u"Large output (%1 tiles of 128x128 for %2 SMs): 8 warps of 64x32 wmma "
                      "16x16x16 fragments, BK 32 double-buffered with cp.async into padded "
                      "shared memory."_s.arg(tiles128)
                          .arg(sms);
    } else {
        s.blockM = 64;
        s.blockN = 64;
        s.warps = 4;
        s.rationale = u"Small output (%1 tiles of 128x128 for %2 SMs): 64x64 tiles with 4 warps "
                      "of 32x32 so more blocks run; BK 32 double-buffered."_s.arg(tiles128)
                          .arg(sms);
    }
    normalize(s);
    return s;
}

QString WmmaFamily::generate(const Strategy& s, const Task& task) const {
    using namespace gemmcodegen;
    const int wm = s.blockM / s.warpM;
    const int wn = s.blockN / s.warpN;
    QStringList header{
        u"Kevolve built-in kernel, family wmma (generated; edit freely)."_s,
        u"Task: %1 (%2)."_s.arg(task.name, task.summary()),
        u"Strategy: block %1x%2x%3, %4 warps (%5x%6) of %7x%8, wmma 16x16x16 %9 -> f32,"_s
            .arg(s.blockM)
            .arg(s.blockN)
            .arg(s.blockK)
            .arg(s.warps)
            .arg(wm)
            .arg(wn)
            .arg(s.warpM)
            .arg(s.warpN)
            .arg(task.a),
        u"  %1, rows padded by 16 bytes, epilogue through shared memory, C written as %2."_s.arg(
            s.stages == 2 ? u"double-buffered cp.async"_s : u"single-buffered cp.async"_s, task.c),
    };
    if (!s.rationale.isEmpty()) {
        header << u"Rationale:"_s;
        for (const QString& line : wrapText(s.rationale))
            header << u"  "_s + line;
    }
    TemplateValues values;
    values.set(u"HEADER"_s, headerComment(header))
        .set(u"INCLUDES"_s, dtypeIncludes(task))
        .set(u"IN_T"_s, cudaType(task.a))
        .set(u"OUT_T"_s, cudaType(task.c))
        .set(u"BLOCK_M"_s, s.blockM)
        .set(u"BLOCK_N"_s, s.blockN)
        .set(u"BLOCK_K"_s, s.blockK)
        .set(u"WARPS_M"_s, wm)
        .set(u"WARPS_N"_s, wn)
        .set(u"STAGES"_s, s.stages)
        .set(u"OUTPUT_HELPERS"_s, outputHelpers(task.c))
        .flag(u"DOUBLE_BUFFER"_s, s.stages == 2)
        .set(u"CHECKS"_s, launchChecks(task));
    return cudatemplates::render(u"wmma/wmma.cu"_s, values);
}

} // namespace kev
