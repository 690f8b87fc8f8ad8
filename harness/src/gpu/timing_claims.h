#pragma once
// The runner's timing claims judged against what the verifier saw (THREAT_MODEL.md, "Timing
// claims"): every candidate sample's claimed event time against the wall-clock time the verifier
// waited for it, calibrated by the verifier's own samples, and the median claim against the
// roofline's floor.
#include "json.h"
#include "roofline.h"
#include "runner_link.h"
#include "task.h"
#include "timer.h"

#include <optional>
#include <string>

namespace kev::gpu {

struct ClaimsVerdict {
    std::optional<std::string> problem; // the evidence, nullopt when the claims are plausible
    link::TimingFigures figures;
    link::PlausibilityRule rule;
    double floorMs = 0; // 0 when the peaks are unknown
    int samples = 0;

    // A failure of the medians' comparison alone, which host contention can also cause: the
    // caller measures once more and judges the second measurement.
    bool worthRemeasuring() const { return problem && figures.statistical; }
    // The report's timing_check object; firstAttempt (an object or null) is the measurement
    // taken again.
    json::Value toJson(json::Value firstAttempt) const;
    // What a re-measured first attempt showed, for toJson of the second.
    json::Value attemptJson(double medianMs) const;
};

ClaimsVerdict judgeClaims(const TimingResult& tr, const Task& task,
                          const std::optional<roofline::Peaks>& peaks);

} // namespace kev::gpu
