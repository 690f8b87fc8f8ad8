// The correctness rule of the ops (PROTOCOL.md, "Ops"). Each op has a componentwise magnitude
// scale s (what |A||B| is for GEMM: the size of the terms the output is computed from, so an error
// that cancellation makes large relative to the result but small relative to its terms is judged
// fairly) and floors from its output and accumulation precisions.
#include "ops/ops.h"
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

const HostTensor& input(const std::vector<HostTensor>& inputs, const char* name) {
    return namedInput(inputs, name, "compare");
}

// The componentwise scale of every output element, and the denominators of the normwise measure
// (empty: the truth itself).
struct Scales {
    std::vector<std::vector<double>> componentwise;
    std::vector<std::vector<double>> normwise;
    double conditioning = 1.0; // multiplies the accumulation term of the normwise floor
};

Scales gemmScales(const Shape& shape, const std::vector<HostTensor>& in, double tiny) {
    const HostTensor& a = input(in, "A");
    const HostTensor& b = input(in, "B");
    const int64_t m = shape.dim("M");
    const int64_t n = shape.dim("N");
    const int64_t k = shape.dim("K");
    std::vector<double> s(static_cast<size_t>(m * n), tiny);
    for (int64_t i = 0; i < m; ++i) {
        for (int64_t p = 0; p < k; ++p) {
            const double av = std::fabs(a.at(i, p));
            for (int64_t j = 0; j < n; ++j)
                s[static_cast<size_t>(i * n + j)] += av * std::fabs(b.at(p, j));
        }
    }
    Scales sc;
    sc.componentwise.push_back(std::move(s));
    return sc;
}

template <typename F> void forRowBlocks(int64_t rows, int64_t cols, F&& f) {
    const int64_t per = rowsPerBlock(cols);
    parallelFor((rows + per - 1) / per,
                [&](int64_t b) { f(b * per, std::min(rows, (b + 1) * per)); });
}

Scales gemvScales(const Task& task, const Shape& shape, const std::vector<HostTensor>& in,
                  double tiny) {
    const HostTensor& a = input(in, "A");
    const HostTensor& x = input(in, "x");
    const int64_t m = shape.dim("M");
    const int64_t n = shape.dim("N");
    const bool transpose = task.param("transpose").flag;
    std::vector<double> ax(static_cast<size_t>(transpose ? m : n));
    x.load(0, 0, static_cast<int64_t>(ax.size()), ax.data());
    for (double& v : ax)
        v = std::fabs(v);
    std::vector<double> s(static_cast<size_t>(transpose ? n : m), tiny);
    if (transpose) {
        constexpr int64_t kCols = 512;
        parallelFor((n + kCols - 1) / kCols, [&](int64_t b) {
            const int64_t j0 = b * kCols;
            const int64_t w = std::min(n, j0 + kCols) - j0;
            std::vector<double> row(static_cast<size_t>(w));
            double* sb = s.data() + j0;
            for (int64_t i = 0; i < m; ++i) {
                a.load(i, j0, w, row.data());
                const double xi = ax[static_cast<size_t>(i)];
                for (int64_t j = 0; j < w; ++j)
                    sb[j] += std::fabs(row[static_cast<size_t>(j)]) * xi;
            }
        });
    } else {
        forRowBlocks(m, n, [&](int64_t r0, int64_t r1) {
            std::vector<double> row(static_cast<size_t>(n));
            for (int64_t i = r0; i < r1; ++i) {
                a.load(i, 0, n, row.data());
                double acc = s[static_cast<size_t>(i)];
                for (int64_t j = 0; j < n; ++j)
                    acc += std::fabs(row[static_cast<size_t>(j)]) * ax[static_cast<size_t>(j)];
                s[static_cast<size_t>(i)] = acc;
            }
        });
    }
    Scales sc;
    sc.componentwise.push_back(std::move(s));
    return sc;
}

// Perturbing the inputs by a relative u moves exp(x_j - max) by u (|x_j| + sum_k y_k |x_k|)
// relatively; that is the error a correct fp32 kernel has on +-1e4 rows.
Scales softmaxScales(const Shape& shape, const std::vector<HostTensor>& in, const Truth& truth,
                     double tiny) {
    const HostTensor& x = input(in, "X");
    const int64_t m = shape.dim("M");
    const int64_t n = shape.dim("N");
    const std::vector<double>& t = truth[0];
    std::vector<double> s(static_cast<size_t>(m * n), tiny);
    forRowBlocks(m, n, [&](int64_t r0, int64_t r1) {
        std::vector<double> row(static_cast<size_t>(n));
        for (int64_t i = r0; i < r1; ++i) {
            x.load(i, 0, n, row.data());
            const double* ti = t.data() + i * n;
            double* si = s.data() + i * n;
            double weighted = 0.0;
            for (int64_t j = 0; j < n; ++j) {
                if (ti[j] > 0.0 && std::isfinite(ti[j]))
                    weighted += ti[j] * std::fabs(row[static_cast<size_t>(j)]);
            }
            for (int64_t j = 0; j < n; ++j) {
                if (ti[j] > 0.0 && std::isfinite(ti[j]))
                    si[j] += ti[j] * (1.0 + std::fabs(row[static_cast<size_t>(j)]) + weighted);
            }
        }
    });
    Scales sc;
    sc.componentwise.push_back(std::move(s));
    return sc;
}

// y = (x - mean) rstd w + b: the terms are |x| rstd |w| and |b|. A row's mean costs fp32 about u
// |x| per element, so the normwise floor grows with rms(x) rstd, the row's conditioning (1 for
// N(0,1) rows, 1e4 for 1e4 + N(0,1), rms / sqrt(epsilon) for constant rows).
Scales layernormScales(const Task& task, const Shape& shape, const std::vector<HostTensor>& in,
                       double tiny) {
    const HostTensor& x = input(in, "X");
    const double epsilon = task.param("epsilon").number;
    const int64_t m = shape.dim("M");
    const int64_t n = shape.dim("N");
    std::vector<double> w(static_cast<size_t>(n)), b(static_cast<size_t>(n));
    input(in, "W").load(0, 0, n, w.data());
    input(in, "B").load(0, 0, n, b.data());
    std::vector<double> s(static_cast<size_t>(m * n), tiny);
    std::vector<double> kappa(static_cast<size_t>(m), 1.0);
    forRowBlocks(m, n, [&](int64_t r0, int64_t r1) {
        std::vector<double> row(static_cast<size_t>(n));
        for (int64_t i = r0; i < r1; ++i) {
            x.load(i, 0, n, row.data());
            double sum = 0.0;
            double sumSq = 0.0;
            for (const double v : row) {
                sum += v;
                sumSq += v * v;
            }
            const double mean = sum / static_cast<double>(n);
            double var = 0.0;
            for (const double v : row)
                var += (v - mean) * (v - mean);
            const double rstd = 1.0 / std::sqrt(var / static_cast<double>(n) + epsilon);
            const double k = std::sqrt(sumSq / static_cast<double>(n)) * rstd;
            if (std::isfinite(k))
                kappa[static_cast<size_t>(i)] = k;
            double* si = s.data() + i * n;
            for (int64_t j = 0; j < n; ++j) {
                const size_t c = static_cast<size_t>(j);
                si[j] += (std::fabs(row[c]) * rstd + 1.0) * std::fabs(w[c]) + std::fabs(b[c]);
            }
        }
    });
    Scales sc;
    sc.componentwise.push_back(std::move(s));
    sc.conditioning = std::max(1.0, *std::max_element(kappa.begin(), kappa.end()));
    return sc;
}

// A sum is judged against the magnitudes summed (sum |x|), normwise too: on rows that cancel, the
// result is tiny and any fp32 order's error is large relative to it, but not to its terms.
Scales reduceScales(const Task& task, const Shape& shape, const std::vector<HostTensor>& in,
                    const Truth& truth, double tiny) {
    const HostTensor& x = input(in, "X");
    const int64_t m = shape.dim("M");
    const int64_t n = shape.dim("N");
    std::vector<double> s(static_cast<size_t>(m), tiny);
    Scales sc;
    if (task.param("reduction").choice == "max") {
        for (int64_t i = 0; i < m; ++i) {
            const double t = truth[0][static_cast<size_t>(i)];
            if (std::isfinite(t))
                s[static_cast<size_t>(i)] += std::fabs(t);
        }
        sc.componentwise.push_back(std::move(s));
        return sc;
    }
    forRowBlocks(m, n, [&](int64_t r0, int64_t r1) {
        std::vector<double> row(static_cast<size_t>(n));
        for (int64_t i = r0; i < r1; ++i) {
            x.load(i, 0, n, row.data());
            double acc = s[static_cast<size_t>(i)];
            for (const double v : row) {
                if (std::isfinite(v))
                    acc += std::fabs(v);
            }
            s[static_cast<size_t>(i)] = acc;
        }
    });
    sc.componentwise.push_back(s);
    sc.normwise.push_back(std::move(s));
    return sc;
}

// An activation computed from a rounded x is off by about u |x f'(x)| <= u |x| (saturated tails
// included), so the scale is |y| + |x|.
Scales elementwiseScales(const Shape& shape, const std::vector<HostTensor>& in, const Truth& truth,
                         double tiny) {
    const HostTensor& x = input(in, "X");
    const int64_t n = shape.dim("N");
    std::vector<double> s(static_cast<size_t>(n), tiny);
    parallelFor((n + kBlock - 1) / kBlock, [&](int64_t b) {
        const int64_t i0 = b * kBlock;
        const int64_t count = std::min(n, i0 + kBlock) - i0;
        std::vector<double> xv(static_cast<size_t>(count));
        x.load(0, i0, count, xv.data());
        for (int64_t k = 0; k < count; ++k) {
            const size_t i = static_cast<size_t>(i0 + k);
            const double v = xv[static_cast<size_t>(k)];
            if (std::isfinite(truth[0][i]) && std::isfinite(v))
                s[i] += std::fabs(truth[0][i]) + std::fabs(v);
        }
    });
    Scales sc;
    sc.componentwise.push_back(std::move(s));
    return sc;
}

Scales scalesFor(const Task& task, const Shape& shape, const std::vector<HostTensor>& in,
                 const Truth& truth) {
    const double tiny = tinyScale(outputDtype(task));
    if (task.op == "gemm")
        return gemmScales(shape, in, tiny);
    if (task.op == "gemv")
        return gemvScales(task, shape, in, tiny);
    if (task.op == "softmax")
        return softmaxScales(shape, in, truth, tiny);
    if (task.op == "layernorm")
        return layernormScales(task, shape, in, tiny);
    if (task.op == "reduce")
        return reduceScales(task, shape, in, truth, tiny);
    if (task.op == "elementwise")
        return elementwiseScales(shape, in, truth, tiny);
    throw std::logic_error("no correctness scales for op " + task.op);
}

// The length of the fp32 accumulation behind one output element.
int64_t accumulationLength(const Task& task, const Shape& shape) {
    if (task.op == "gemm")
        return shape.dim("K");
    if (task.op == "gemv")
        return task.param("transpose").flag ? shape.dim("M") : shape.dim("N");
    if (task.op == "softmax" || task.op == "layernorm")
        return shape.dim("N");
    if (task.op == "reduce")
        return task.param("reduction").choice == "max" ? 1 : shape.dim("N");
    return 1;
}

tolerance::Bounds floorsWith(const Task& task, const Shape& shape, double conditioning) {
    const Dtype out = outputDtype(task);
    const int64_t k = accumulationLength(task, shape);
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

tolerance::Bounds floors(const Task& task, const Shape& shape) {
    if (task.isCustom())
        return {1.0, 1.0};
    return floorsWith(task, shape, 1.0);
}

std::string describeRule(const Task& task, const Shape& shape) {
    char buf[768];
    if (task.isCustom()) {
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
                  task.op == "reduce" && task.param("reduction").choice == "sum" ? "sum|x|" : "t",
                  task.op.c_str());
    return buf;
}

Check compare(const Task& task, const Shape& shape, const std::vector<HostTensor>& inputs,
              const Truth& truth, const std::vector<HostTensor>& candidateOutputs,
              const std::vector<HostTensor>& referenceOutputs) {
    if (truth.size() != candidateOutputs.size())
        throw std::invalid_argument("compare: " + std::to_string(truth.size()) + " truths for " +
                                    std::to_string(candidateOutputs.size()) + " outputs");
    if (task.isCustom())
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
