#pragma once
// The harness's own device work: input generation, poisoning, fp64 truth helpers, error
// reductions, the per-sample output check and the blocking kernel. Host-callable wrappers; every
// one enqueues on the given stream and returns the launch's error code.
#include <cuda_runtime.h>
#include <cstdint>

namespace kev::gpu {

enum class Distribution { Normal, Shifted, Large };
const char* toString(Distribution d);

struct FillSpec {
    Distribution distribution = Distribution::Normal;
    double mean = 0.0;
    double stddev = 1.0;
    uint64_t seed = 0;
};

// A rows x cols matrix of KevolveDtype `dtype` with leading dimension ld (elements).
struct MatrixView {
    void* data = nullptr;
    int dtype = 0;
    int64_t rows = 0;
    int64_t cols = 0;
    int64_t ld = 0;
};

cudaError_t fillRandom(const MatrixView& m, const FillSpec& spec, cudaStream_t stream);
// dst (rows x cols, dense) = double(src), or |double(src)| when `absolute`.
cudaError_t upcast(const MatrixView& src, double* dst, bool absolute, cudaStream_t stream);

struct ErrorAccumulator {
    double errSq;
    double truthSq;
    double checksum;
    unsigned long long maxScaledBits; // a non-negative double's bits order like the double
    unsigned long long nanCount;
    unsigned long long infCount;
};
// Accumulates the statistics of `out` against `truth` (dense fp64) scaled by `scale` (= |A||B|).
cudaError_t errorStats(const MatrixView& out, const double* truth, const double* scale,
                       ErrorAccumulator* acc, cudaStream_t stream);

// y = X v in fp64 (one warp per row).
cudaError_t matVec(const MatrixView& x, const double* v, double* y, cudaStream_t stream);
// Y = X V in fp64 for `vectors` (1..32) columns in one pass over X: V is cols x vectors and Y
// rows x vectors, both row-major (element (c, j) at c * vectors + j).
cudaError_t matVecs(const MatrixView& x, const double* v, int vectors, double* y,
                    cudaStream_t stream);
cudaError_t matVecDense(const double* x, int64_t rows, int64_t cols, const double* v, double* y,
                        cudaStream_t stream);
cudaError_t randomSigns(double* v, int64_t n, uint64_t seed, cudaStream_t stream);
// out[0] += sum (a - b)^2, out[1] += sum b^2, out[2] += count of non-finite a.
cudaError_t diffNorms(const double* a, const double* b, int64_t n, double* out,
                      cudaStream_t stream);
// The per-sample check against a dense fp64 truth: out[0] += sum (y - t)^2 and out[1] += sum t^2
// over the elements whose truth is finite, out[2] += count of elements whose NaN or Inf does not
// match the truth's. y(r, c) is compared with t((r + rowShift) mod rows, (c + colShift) mod cols)
// (shifts in [0, rows) and [0, cols)): the truth of inputs rotated on the device.
cudaError_t truthDiff(const MatrixView& y, const double* truth, int64_t rowShift, int64_t colShift,
                      double* out, cudaStream_t stream);

// *differ += the number of 8-byte words (a trailing partial word counts as one) where a and b
// differ bitwise: the verifier's check that the candidate left its inputs as they were.
cudaError_t compareBytes(const void* a, const void* b, size_t bytes, unsigned long long* differ,
                         cudaStream_t stream);

// Reads one word every 64 KiB of [data, data + bytes) into *sink: the pages a timed call will
// touch are in this context's TLBs, as the verifier's refresh leaves them for its own samples.
cudaError_t touchPages(const void* data, size_t bytes, unsigned* sink, cudaStream_t stream);

// Spins until *flag != 0 or timeoutNs elapse (then sets *expired = 1), so that everything
// enqueued behind it starts back to back once the host releases it.
cudaError_t blockStream(const volatile int* flag, unsigned long long timeoutNs, int* expired,
                        cudaStream_t stream);

} // namespace kev::gpu
