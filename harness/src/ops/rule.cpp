// The correctness rule of the ops (PROTOCOL.md, "Ops"). Each op has a componentwise magnitude
// scale s (what |A||B| is for GEMM: the size of the terms the output is computed from, so an error
// that cancellation makes large relative to the result but small relative to its terms is judged
// fairly) and floors from its output and accumulation precisions.
// Each op's scale and accumulation length are in its file (ops/<op>.cpp).
#include "ops/op.h"
#include "ops/parallel.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace kev::ops {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Elements per block of the parallel passes over a vector (fixed: results do not depend on the
// thread count).
constexpr int64_t kBlock = int64_t{1} << 16;

Dtype outputDtype(const Task& task) {
    for (const auto& t : task.tensors) {
        if (t.output)
            return t.dtype;
    }
    return Dtype::F32;
}

// The smallest magnitude below which an output dtype cannot carry relative accuracy, divided by
// its unit roundoff: f32 and bf16 results computed in fp32 may flush to zero below 2^-126, f16
// stores down to 2^-24. Added to every scale so results near zero are judged absolutely.
double tinyScale(Dtype out) {
    const double u = tolerance::unitRoundoff(static_cast<int>(out));
    return (out == Dtype::F16 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -126)) / u;
}

Scales scalesFor(const Task& task, const Shape& shape, const std::vector<HostTensor>& in,
                 const Truth& truth) {
    return opFor(task).scales(task, shape, in, truth, tinyScale(outputDtype(task)));
}

tolerance::Bounds floorsWith(const Task& task, const Shape& shape, double conditioning) {
    const Dtype out = outputDtype(task);
    const int64_t k = opFor(task).accumulationLength(task, shape);
    tolerance::Bounds b =
        tolerance::floors(static_cast<int>(out), static_cast<int>(task.accumulate), k);
    if (conditioning > 1.0) {
        b.relFro = 2.0 * tolerance::unitRoundoff(static_cast<int>(out)) +
                   4.0 * tolerance::unitRoundoff(static_cast<int>(task.accumulate)) *
                       std::sqrt(static_cast<double>(k)) * conditioning;
    }
    return b;
}

std::string elementName(const HostTensor& o, int64_t i) {
    char buf[96];
    if (o.layout.rank() == 1)
        std::snprintf(buf, sizeof buf, "%s[%lld]", o.layout.name.c_str(),
                      static_cast<long long>(i));
    else
        std::snprintf(buf, sizeof buf, "%s[%lld, %lld]", o.layout.name.c_str(),
                      static_cast<long long>(i / o.layout.cols),
                      static_cast<long long>(i % o.layout.cols));
    return buf;
}

std::string describeValue(double v) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
}

// Statistics of one side's outputs. Elements whose truth is NaN or Inf count only through
// `mismatches` (the output must match them exactly); the measures run over the rest.
struct SideStats {
    tolerance::ErrorStats stats;
    int64_t mismatches = 0;
    std::string firstMismatch;
    std::string worst; // the element with the largest componentwise error
};

bool specialsMatch(double y, double t) {
    if (std::isnan(t))
        return std::isnan(y);
    if (std::isinf(t))
        return y == t;
    return std::isfinite(y);
}

// One block's share of measure(): its sums, its first mismatch and its worst element (the first
// of equal ones), combined over the blocks in block order so that the result is the same for any
// thread count.
struct Partial {
    double errSq = 0.0;
    double denomSq = 0.0;
    double checksum = 0.0;
    int64_t nanCount = 0;
    int64_t infCount = 0;
    int64_t mismatches = 0;
    int64_t firstMismatch = -1;
    double maxScaled = -1.0; // below any scaled error: the block has no finite element yet
    int64_t worst = -1;
};

// The elements [i0, i0 + count) of output `out` (logical, row-major) into `values`.
void loadRange(const HostTensor& out, int64_t i0, int64_t count, double* values) {
    const int64_t cols = out.layout.cols;
    for (int64_t i = i0; i < i0 + count;) {
        const int64_t r = i / cols;
        const int64_t c = i % cols;
        const int64_t n = std::min(cols - c, i0 + count - i);
        out.load(r, c, n, values + (i - i0));
        i += n;
    }
}

SideStats measure(const Truth& truth, const std::vector<HostTensor>& outputs, const Scales& sc) {
    SideStats side;
    double errSq = 0.0;
    double denomSq = 0.0;
    for (size_t o = 0; o < outputs.size(); ++o) {
        const HostTensor& out = outputs[o];
        const std::vector<double>& t = truth[o];
        const std::vector<double>& s = sc.componentwise[o];
        const std::vector<double>* nw = o < sc.normwise.size() ? &sc.normwise[o] : nullptr;
        const int64_t n = out.layout.elements();
        std::vector<Partial> parts(static_cast<size_t>((n + kBlock - 1) / kBlock));
        parallelFor(static_cast<int64_t>(parts.size()), [&](int64_t b) {
            Partial& p = parts[static_cast<size_t>(b)];
            const int64_t i0 = b * kBlock;
            const int64_t count = std::min(n, i0 + kBlock) - i0;
            std::vector<double> ys(static_cast<size_t>(count));
            loadRange(out, i0, count, ys.data());
            for (int64_t i = i0; i < i0 + count; ++i) {
                const size_t k = static_cast<size_t>(i);
                const double y = ys[static_cast<size_t>(i - i0)];
                if (!specialsMatch(y, t[k])) {
                    if (std::isnan(y))
                        ++p.nanCount;
                    else if (std::isinf(y) && std::isfinite(t[k]))
                        ++p.infCount;
                    if (p.mismatches++ == 0)
                        p.firstMismatch = i;
                    continue;
                }
                if (!std::isfinite(t[k]))
                    continue;
                const double e = y - t[k];
                p.errSq += e * e;
                const double d = nw ? (*nw)[k] : t[k];
                p.denomSq += d * d;
                p.checksum += y;
                const double scaled = s[k] > 0.0 ? std::fabs(e) / s[k] : (e == 0.0 ? 0.0 : kInf);
                if (scaled > p.maxScaled) {
                    p.maxScaled = scaled;
                    p.worst = i;
                }
            }
        });
        double worstScaled = -1.0;
        int64_t worst = -1;
        for (const Partial& p : parts) {
            errSq += p.errSq;
            denomSq += p.denomSq;
            side.stats.checksum += p.checksum;
            side.stats.nanCount += p.nanCount;
            side.stats.infCount += p.infCount;
            if (p.mismatches > 0 && side.mismatches == 0) {
                const size_t k = static_cast<size_t>(p.firstMismatch);
                side.firstMismatch = elementName(out, p.firstMismatch) + " = " +
                                     describeValue(out.at(p.firstMismatch)) +
                                     " where the truth is " + describeValue(t[k]);
            }
            side.mismatches += p.mismatches;
            if (p.worst >= 0 && p.maxScaled > worstScaled) {
                worstScaled = p.maxScaled;
                worst = p.worst;
            }
        }
        // Across outputs, as within one: the first element of the largest error wins.
        if (worst >= 0 && (worstScaled > side.stats.maxScaled || side.worst.empty())) {
            const size_t k = static_cast<size_t>(worst);
            side.stats.maxScaled = std::max(side.stats.maxScaled, worstScaled);
            side.worst = elementName(out, worst) + " = " + describeValue(out.at(worst)) +
                         ", truth " + describeValue(t[k]) + ", scale " + describeValue(s[k]);
        }
    }
    side.stats.relFro = denomSq > 0.0 ? std::sqrt(errSq / denomSq) : std::sqrt(errSq);
    return side;
}

Check compareCustom(const Task& task, const Truth& truth, const std::vector<HostTensor>& outputs) {
    const ElementTolerance tol = task.elementwiseTolerance.value_or(ElementTolerance{});
    Check check;
    SideStats side;
    double errSq = 0.0;
    double refSq = 0.0;
    for (size_t o = 0; o < outputs.size(); ++o) {
        const HostTensor& out = outputs[o];
        const std::vector<double>& r = truth[o];
        for (int64_t i = 0; i < out.layout.elements(); ++i) {
            const size_t k = static_cast<size_t>(i);
            const double y = out.at(i);
            if (!specialsMatch(y, r[k])) {
                if (std::isnan(y))
                    ++side.stats.nanCount;
                else if (std::isinf(y) && std::isfinite(r[k]))
                    ++side.stats.infCount;
                if (side.mismatches++ == 0)
                    side.firstMismatch = elementName(out, i) + " = " + describeValue(y) +
                                         " where the reference gives " + describeValue(r[k]);
                continue;
            }
            if (!std::isfinite(r[k]))
                continue;
            const double e = std::fabs(y - r[k]);
            errSq += e * e;
            refSq += r[k] * r[k];
            side.stats.checksum += y;
            const double allowed = tol.atol + tol.rtol * std::fabs(r[k]);
            const double ratio = allowed > 0.0 ? e / allowed : (e == 0.0 ? 0.0 : kInf);
            if (ratio > side.stats.maxScaled || side.worst.empty()) {
                side.stats.maxScaled = std::max(side.stats.maxScaled, ratio);
                side.worst = elementName(out, i) + " = " + describeValue(y) + ", reference " +
                             describeValue(r[k]);
            }
        }
    }
    side.stats.relFro = refSq > 0.0 ? std::sqrt(errSq / refSq) : std::sqrt(errSq);
    check.candidate = side.stats;
    check.specialMismatches = side.mismatches;
    // The elementwise rule is the whole rule: max |y - ref| / (atol + rtol |ref|) <= 1; the
    // normwise bound of 1 only rejects outputs unrelated to the reference's.
    check.floor = {1.0, 1.0};
    check.verdict.bound = check.floor;
    check.verdict.margin = side.stats.maxScaled;
    char buf[256];
    if (side.mismatches > 0) {
        std::snprintf(buf, sizeof buf,
                      "%lld output elements are NaN or Inf where the reference's are not (or the "
                      "reverse); first: ",
                      static_cast<long long>(side.mismatches));
        check.verdict.reason = buf + side.firstMismatch;
        check.verdict.margin = kInf;
        check.evidence = side.firstMismatch;
        return check;
    }
    check.evidence = side.worst;
    if (!(side.stats.maxScaled <= 1.0) || !(side.stats.relFro <= 1.0)) {
        std::snprintf(buf, sizeof buf,
                      "|y - ref| exceeds atol + rtol |ref| (%g + %g |ref|) by a factor %.3g at ",
                      tol.atol, tol.rtol, side.stats.maxScaled);
        check.verdict.reason = buf + side.worst;
        return check;
    }
    check.verdict.pass = true;
    return check;
}

} // namespace

Scales Op::scales(const Task& task, const Shape&, const std::vector<HostTensor>&, const Truth&,
                  double) const {
    throw std::logic_error("no correctness scales for op " + task.op);
}

tolerance::Bounds floors(const Task& task, const Shape& shape) {
    if (!opFor(task).hasHostTruth())
        return {1.0, 1.0};
    return floorsWith(task, shape, 1.0);
}

std::string describeRule(const Task& task, const Shape& shape) {
    char buf[768];
    const Op& op = opFor(task);
    if (!op.hasHostTruth()) {
        const ElementTolerance tol = task.elementwiseTolerance.value_or(ElementTolerance{});
        std::snprintf(buf, sizeof buf,
                      "pass iff NaN/Inf positions match the reference's output and, elsewhere, "
                      "|y - ref| <= %g + %g |ref| for every element",
                      tol.atol, tol.rtol);
        return buf;
    }
    const tolerance::Bounds f = floors(task, shape);
    std::snprintf(buf, sizeof buf,
                  "pass iff NaN/Inf positions match the fp64 truth exactly and, over the other "
                  "elements, rel_fro <= max(%g x reference rel_fro, %.3g) and max_scaled <= max(%g "
                  "x reference max_scaled, %.3g), where rel_fro = ||y-t||_2/||%s||_2 and "
                  "max_scaled = max |y-t|/s, s the %s magnitude scale (PROTOCOL.md, \"Ops\")",
                  task.toleranceMultiple, f.relFro, task.toleranceMultiple, f.maxScaled,
                  op.normwiseDenominator(task), task.op.c_str());
    return buf;
}

Check compare(const Task& task, const Shape& shape, const std::vector<HostTensor>& inputs,
              const Truth& truth, const std::vector<HostTensor>& candidateOutputs,
              const std::vector<HostTensor>& referenceOutputs) {
    if (truth.size() != candidateOutputs.size())
        throw std::invalid_argument("compare: " + std::to_string(truth.size()) + " truths for " +
                                    std::to_string(candidateOutputs.size()) + " outputs");
    if (!opFor(task).hasHostTruth())
        return compareCustom(task, truth, candidateOutputs);

    const Scales sc = scalesFor(task, shape, inputs, truth);
    const SideStats cand = measure(truth, candidateOutputs, sc);
    Check check;
    check.candidate = cand.stats;
    check.specialMismatches = cand.mismatches;
    if (!referenceOutputs.empty())
        check.reference = measure(truth, referenceOutputs, sc).stats;
    check.floor = floorsWith(task, shape, sc.conditioning);
    check.verdict =
        tolerance::judge(cand.stats, check.reference, task.toleranceMultiple, check.floor);
    if (cand.mismatches > 0) {
        char buf[160];
        std::snprintf(buf, sizeof buf,
                      "%lld output elements differ from the truth in NaN/Inf (positions must "
                      "match exactly); first: ",
                      static_cast<long long>(cand.mismatches));
        check.verdict.pass = false;
        check.verdict.margin = kInf;
        check.verdict.reason = buf + cand.firstMismatch;
        check.evidence = cand.firstMismatch;
        return check;
    }
    check.evidence = "worst element " + cand.worst;
    if (!check.verdict.pass && !cand.worst.empty())
        check.verdict.reason += "; worst element " + cand.worst;
    return check;
}

} // namespace kev::ops
