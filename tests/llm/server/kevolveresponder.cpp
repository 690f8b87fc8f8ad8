#include "kevolveresponder.h"

#include <QJsonArray>
#include <QJsonDocument>

#include <memory>

using namespace Qt::Literals::StringLiterals;

namespace kev::test {

namespace {

const char* const strategyReply = R"({
  "family": "mma_sync", "block_m": 128, "block_n": 128, "block_k": 32, "warps": 8,
  "warp_m": 64, "warp_n": 32, "mma": "mma.sync", "vector_width": 8, "stages": 3,
  "smem_layout": "swizzled", "swizzle_bytes": 128, "split_k": 1, "raster": "grouped",
  "group_size": 8, "epilogue": "smem",
  "rationale": "Tensor cores through mma.sync with a 3-stage cp.async pipeline; the swizzle avoids the bank conflicts of a plain layout."
})";

const char* const reviewReply = R"({
  "compile_ok": true, "correct": true, "status": "ok", "time_ms": null, "reference_ms": null,
  "speedup": null, "percent_of_floor": null,
  "bottleneck": {"id": "latency_bound", "text": "the pipeline is too shallow to hide global loads"},
  "suggestions": ["Raise stages from 3 to 4"], "blame": "implementation",
  "evidence": {}
})";

QString kernel(int version, double speedup) {
    return uR"(// Version %1 written by the test server's model.
// fake: ok speedup=%2
#include <kevolve/abi.h>

__global__ void scale(float* c, long n) {
    const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
    if (i < n)
        c[i] = 0.0f;
}

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    const long n = KEVOLVE_GEMM_M(args) * KEVOLVE_GEMM_N(args);
    scale<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(
        static_cast<float*>(args->outputs[0].data), n);
    return 0;
}
)"_s.arg(version)
        .arg(speedup, 0, 'f', 2);
}

} // namespace

QString roleOf(const QJsonObject& request) {
    const QString system =
        request.value(u"messages"_s).toArray().first().toObject().value(u"content"_s).toString();
    if (system.startsWith(u"You are the Planning agent"_s))
        return u"planner"_s;
    if (system.startsWith(u"You are the Coding agent"_s))
        return u"coder"_s;
    if (system.startsWith(u"You are the Review agent"_s))
        return u"reviewer"_s;
    return {};
}

std::function<ScriptedReply(const QJsonObject& request)> kevolveResponder() {
    auto versions = std::make_shared<int>(0);
    return [versions](const QJsonObject& request) {
        const QString role = roleOf(request);
        if (role == u"planner"_s)
            return ScriptedReply::text(QString::fromUtf8(strategyReply));
        if (role == u"reviewer"_s)
            return ScriptedReply::text(QString::fromUtf8(reviewReply));
        if (role == u"coder"_s) {
            const int version = ++*versions;
            return ScriptedReply::text(
                u"Eight warps, 64x32 warp tiles, a 3-stage pipeline.\n\n```cuda\n%1```\n"_s.arg(
                    kernel(version, 0.4 + 0.1 * version)));
        }
        return ScriptedReply::error(400, u"the test server does not know this role"_s);
    };
}

} // namespace kev::test
