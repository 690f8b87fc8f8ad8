// expect: rule_violation
// task: reduce_sum_f32_16384x8192.json
// timeout: 600
// lint: off
// Issue 15, timing claims: a correct row sum whose entry point spends 3 ms of host time after its
// launch, in every call. The runner's events exclude it, the verifier's wall clock includes it:
// about 3 ms unaccounted for against 1 ms + 10% allowed. The medians alone fail the rule, so the
// verifier times the candidate again (THREAT_MODEL.md, "Timing claims"); the time is hidden in
// the second measurement too, which is judged: rule_violation, with the first attempt's figures in
// timing.claims_check.first_attempt.
#include <kevolve/abi.h>

#include <chrono>

constexpr int kWarpsPerBlock = 8;

__device__ float combine(float a, float b, bool max) {
    if (!max) {
        return a + b;
    }
    return isnan(a) || isnan(b) ? a + b : fmaxf(a, b);
}

__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    reduceRows(const float* x, float* y, int64_t rows, int64_t cols, int64_t ldx, bool max) {
    const int64_t row = blockIdx.x * static_cast<int64_t>(kWarpsPerBlock) + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows) {
        return;
    }
    const float* xr = x + row * ldx;
    float acc = max ? -INFINITY : 0.0f;
    for (int64_t c = lane; c < cols; c += 32) {
        acc = combine(acc, xr[c], max);
    }
    for (int o = 16; o > 0; o >>= 1) {
        acc = combine(acc, __shfl_xor_sync(0xffffffffu, acc, o), max);
    }
    if (lane == 0) {
        y[row] = acc;
    }
}

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    const int64_t rows = KEVOLVE_ROWS(args);
    const unsigned blocks = static_cast<unsigned>((rows + kWarpsPerBlock - 1) / kWarpsPerBlock);
    reduceRows<<<blocks, kWarpsPerBlock * 32, 0, stream>>>(
        static_cast<const float*>(args->inputs[0].data), static_cast<float*>(args->outputs[0].data),
        rows, KEVOLVE_COLS(args), KEVOLVE_LDX(args), args->scalars[0] != 0.0);
    // 3 ms of host time after the launch: the runner's events (started after the call returns,
    // behind the blocking kernel) do not see it, the verifier's wall clock does.
    const auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - t0 < std::chrono::microseconds(3000)) {
    }
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
