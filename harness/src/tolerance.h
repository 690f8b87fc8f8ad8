#pragma once
// The correctness rule: a candidate passes when its error against an fp64 truth is within a small
// multiple of the reference library's own error against the same truth, with an absolute floor
// derived from the output and accumulation precisions. Two measures are judged:
//   rel_fro    = ||C - T||_F / ||T||_F                      (normwise)
//   max_scaled = max_ij |C - T|_ij / (|A| |B|)_ij            (componentwise, immune to
//   cancellation)
// A kernel that accumulates in fp16 on an fp32-accumulate task misses both by orders of magnitude.
#include <cstdint>
#include <string>

namespace kev::tolerance {

struct ErrorStats {
    double relFro = 0;
    double maxScaled = 0;
    int64_t nanCount = 0; // NaN in the output (poisoned elements never written count here too)
    int64_t infCount = 0; // Inf in the output where the truth is finite
    double checksum = 0;  // fp64 sum of the output's finite elements
};

struct Bounds {
    double relFro = 0;
    double maxScaled = 0;
};

// Unit roundoff of a KevolveDtype (abi.h): 2^-24 for f32, 2^-11 for f16, 2^-8 for bf16.
double unitRoundoff(int kevolveDtype);

// The absolute floor for an output dtype and an fp32-accumulated reduction of length k.
Bounds floors(int outDtype, int accumulateDtype, int64_t k);

struct Verdict {
    bool pass = false;
    Bounds bound;
    double margin = 0; // worst of candidate error / bound over both measures; < 1 passes
    std::string reason;
};

Verdict judge(const ErrorStats& candidate, const ErrorStats& reference, double multiple,
              const Bounds& floor);

// The number of random sign vectors the GEMM per-sample check projects an output of m rows onto
// (PROTOCOL.md, "output_check"): the check ||C V - A (B V)||_F / ||A (B V)||_F is a ratio of two
// sums of m x vectors squares. With one vector and m = 1 it is the ratio of two Gaussians, a
// Cauchy variable that exceeded 4 x the bound on about 2% of a correct kernel's samples, so every
// M = 1 GEMM was judged incorrect within a few hundred samples; at least kCheckTerms terms make a
// false alarm vanishingly rare (an F(32, 32) ratio beyond 16^2).
inline constexpr int kCheckTerms = 32;
inline constexpr int kMaxCheckVectors = 32;
int gemmCheckVectors(int64_t m);

// The rule as one sentence, for the report.
std::string describeRule(double multiple, const Bounds& floor);

// Error statistics of `out` against `truth` with componentwise scale `absScale` (= |A||B|), all
// host arrays of n elements. The GPU child computes the same quantities with a reduction kernel;
// this version serves tests and small shapes.
ErrorStats compare(const double* truth, const double* absScale, const double* out, int64_t n);

} // namespace kev::tolerance
