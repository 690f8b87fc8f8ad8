#include "timing_claims.h"

#include <stdexcept>
#include <utility>
#include <vector>

namespace kev::gpu {

ClaimsVerdict judgeClaims(const TimingResult& tr, const Task& task,
                          const std::optional<roofline::Peaks>& peaks) {
    std::vector<link::TimingClaim> candidate, reference;
    for (const QuadRecord& q : tr.quads) {
        if (q.warmup) {
            continue;
        }
        for (int i = 0; i < 2; ++i) {
            candidate.push_back({q.c[i], q.cWall[i]});
            reference.push_back({q.r[i], q.rWall[i]});
        }
    }
    ClaimsVerdict v;
    v.samples = static_cast<int>(candidate.size());
    if (peaks) {
        try {
            v.floorMs =
                roofline::compute(task.flops(task.shape), task.minBytes(task.shape),
                                  roofline::computePeakTflops(*peaks, task.tensors.at(0).dtype),
                                  peaks->dramGbps)
                    .floorMs;
        } catch (const std::invalid_argument&) {
            v.floorMs = 0;
        }
    }
    v.problem = link::implausibleTiming(candidate, reference, v.floorMs, v.rule, &v.figures);
    return v;
}

json::Value ClaimsVerdict::toJson(json::Value firstAttempt) const {
    json::Value c = json::Value::object();
    c["samples"] = static_cast<int64_t>(samples);
    c["floor_ms"] = floorMs;
    c["absolute_slack_ms"] = rule.absoluteSlackMs;
    c["relative_slack"] = rule.relativeSlack;
    c["claimed_ms"] = figures.claimMs;
    c["excess_ms"] = figures.excessMs;
    c["calibration_ms"] = figures.calibrationMs;
    c["hidden_ms"] = figures.hiddenMs;
    c["allowed_ms"] = figures.allowedMs;
    c["ok"] = !problem;
    if (!firstAttempt.isNull()) {
        c["first_attempt"] = std::move(firstAttempt);
    }
    if (problem) {
        c["evidence"] = *problem;
    }
    return c;
}

json::Value ClaimsVerdict::attemptJson(double medianMs) const {
    json::Value a = json::Value::object();
    a["evidence"] = problem.value_or(std::string());
    a["hidden_ms"] = figures.hiddenMs;
    a["allowed_ms"] = figures.allowedMs;
    a["median_ms"] = medianMs;
    return a;
}

} // namespace kev::gpu
