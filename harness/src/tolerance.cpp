#include "tolerance.h"

#include <kevolve/abi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kev::tolerance {

double unitRoundoff(int kevolveDtype) {
    switch (kevolveDtype) {
    case KEVOLVE_F16:
        return std::ldexp(1.0, -11);
    case KEVOLVE_BF16:
        return std::ldexp(1.0, -8);
    case KEVOLVE_F64:
        return std::ldexp(1.0, -53);
    case KEVOLVE_F32:
    default:
        return std::ldexp(1.0, -24);
    }
}

int gemmCheckVectors(int64_t m) {
    if (m <= 0)
        return 1;
    return static_cast<int>(std::min<int64_t>(kMaxCheckVectors, (kCheckTerms + m - 1) / m));
}

Bounds floors(int outDtype, int accumulateDtype, int64_t k) {
    const double uOut = unitRoundoff(outDtype);
    const double uAcc = unitRoundoff(accumulateDtype);
    const double sqrtK = std::sqrt(static_cast<double>(std::max<int64_t>(k, 1)));
    // Rounding the output costs up to uOut per element; a blocked fp32 sum of k products grows
    // like sqrt(k) uAcc in the normwise measure. The factors leave room for any summation order
    // (split-K, sequential FMA chains) while staying far below fp16 accumulation (uAcc = 2^-11).
    Bounds b;
    b.relFro = 2.0 * uOut + 4.0 * uAcc * sqrtK;
    b.maxScaled = 2.0 * uOut + 16.0 * uAcc * sqrtK;
    return b;
}

Verdict judge(const ErrorStats& candidate, const ErrorStats& reference, double multiple,
              const Bounds& floor) {
    Verdict v;
    v.bound.relFro = std::max(multiple * reference.relFro, floor.relFro);
    v.bound.maxScaled = std::max(multiple * reference.maxScaled, floor.maxScaled);
    const double mFro = candidate.relFro / v.bound.relFro;
    const double mMax = candidate.maxScaled / v.bound.maxScaled;
    v.margin = std::max(mFro, mMax);
    char buf[256];
    if (candidate.nanCount > 0) {
        std::snprintf(buf, sizeof buf, "%lld output elements are NaN (unwritten or invalid)",
                      static_cast<long long>(candidate.nanCount));
        v.reason = buf;
        v.margin = INFINITY;
        return v;
    }
    if (candidate.infCount > 0) {
        std::snprintf(buf, sizeof buf,
                      "%lld output elements are infinite where the truth is finite",
                      static_cast<long long>(candidate.infCount));
        v.reason = buf;
        v.margin = INFINITY;
        return v;
    }
    if (!std::isfinite(v.margin)) {
        v.reason = "error measure is not finite";
        return v;
    }
    if (mFro > 1.0) {
        std::snprintf(buf, sizeof buf, "normwise error %.3g exceeds bound %.3g (reference %.3g)",
                      candidate.relFro, v.bound.relFro, reference.relFro);
        v.reason = buf;
        return v;
    }
    if (mMax > 1.0) {
        std::snprintf(buf, sizeof buf,
                      "componentwise error %.3g exceeds bound %.3g (reference %.3g)",
                      candidate.maxScaled, v.bound.maxScaled, reference.maxScaled);
        v.reason = buf;
        return v;
    }
    v.pass = true;
    return v;
}

std::string describeRule(double multiple, const Bounds& floor) {
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "pass iff no NaN/Inf and, against an fp64 truth, rel_fro <= max(%g x reference "
                  "rel_fro, %.3g) and max_scaled <= max(%g x reference max_scaled, %.3g), where "
                  "rel_fro = ||C-T||_F/||T||_F and max_scaled = max |C-T|/(|A||B|)",
                  multiple, floor.relFro, multiple, floor.maxScaled);
    return buf;
}

ErrorStats compare(const double* truth, const double* absScale, const double* out, int64_t n) {
    ErrorStats s;
    double errSq = 0.0;
    double truthSq = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        const double c = out[i];
        const double t = truth[i];
        if (std::isnan(c)) {
            ++s.nanCount;
            continue;
        }
        if (std::isinf(c) && std::isfinite(t)) {
            ++s.infCount;
            continue;
        }
        const double e = c - t;
        errSq += e * e;
        truthSq += t * t;
        s.checksum += c;
        const double scale = absScale[i];
        const double scaled = scale > 0.0 ? std::fabs(e) / scale : (e == 0.0 ? 0.0 : INFINITY);
        s.maxScaled = std::max(s.maxScaled, scaled);
    }
    s.relFro = truthSq > 0.0 ? std::sqrt(errSq / truthSq) : std::sqrt(errSq);
    return s;
}

} // namespace kev::tolerance
