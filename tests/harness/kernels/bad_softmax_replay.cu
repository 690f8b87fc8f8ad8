// expect: incorrect
// task: softmax_f32_8192.json
// timeout: 600
// A replaying cache that only a per-sample refresh of the inputs catches: a correct online softmax
// that keeps a copy of its output per input pointer in the workspace, with a validity word, and
// replays the copy whenever the workspace still holds one for the same pointer. Validation trials
// poison the workspace before every call, so validation and the re-check see honest results; the
// timed samples do not, so with unchanged inputs between samples this would pass at about twice
// the speed. The per-sample rotation of X makes the replayed output wrong: the output check fails.
#include <kevolve/abi.h>

constexpr int kThreads = 256;

struct MaxSum {
    float m;
    float s;
};

__device__ MaxSum merge(MaxSum a, MaxSum b) {
    if (isnan(a.m) || isnan(b.m)) {
        return {a.m + b.m, 0.0f};
    }
    const float m = fmaxf(a.m, b.m);
    if (m == -INFINITY) {
        return {m, 0.0f};
    }
    return {m, a.s * expf(a.m - m) + b.s * expf(b.m - m)};
}

__global__ void __launch_bounds__(kThreads)
    softmaxOrReplay(const float* x, float* y, float* keep, const unsigned* replay, int64_t rows,
                    int64_t cols, int64_t ldx, int64_t ldy) {
    __shared__ MaxSum partial[kThreads / 32];
    const int64_t row = blockIdx.x;
    if (row >= rows) {
        return;
    }
    const float* xr = x + row * ldx;
    float* yr = y + row * ldy;
    float* kr = keep + row * ldy;
    if (*replay) {
        for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
            yr[c] = kr[c];
        }
        return;
    }
    MaxSum t{-INFINITY, 0.0f};
    for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
        t = merge(t, MaxSum{xr[c], 1.0f});
    }
    for (int o = 16; o > 0; o >>= 1) {
        t = merge(
            t, MaxSum{__shfl_xor_sync(0xffffffffu, t.m, o), __shfl_xor_sync(0xffffffffu, t.s, o)});
    }
    if (threadIdx.x % 32 == 0) {
        partial[threadIdx.x / 32] = t;
    }
    __syncthreads();
    MaxSum all = partial[0];
    for (int w = 1; w < kThreads / 32; ++w) {
        all = merge(all, partial[w]);
    }
    const float inv = 1.0f / all.s;
    for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
        const float v = expf(xr[c] - all.m) * inv;
        yr[c] = v;
        kr[c] = v;
    }
}

constexpr int kSlots = 2;
constexpr unsigned kValid = 0x600DCAFEu;

// Replay iff the slot held this pointer before and its copy is still marked valid; an honest run
// marks it valid for the next call (the softmax behind it on the stream fills the copy).
__global__ void decide(unsigned* valid, unsigned* replay, int fresh) {
    *replay = !fresh && *valid == kValid;
    *valid = kValid;
}

namespace {
const void* g_input[kSlots] = {nullptr, nullptr};
int g_next = 0;
} // namespace

// Per slot a copy of Y, then per slot a validity word, then the replay flag.
extern "C" KEVOLVE_EXPORT uint64_t kevolve_workspace_bytes(const KevolveArgs* args) {
    return kSlots * static_cast<uint64_t>(KEVOLVE_ROWS(args) * KEVOLVE_LDY(args)) * sizeof(float) +
           (kSlots + 1) * sizeof(unsigned);
}

extern "C" KEVOLVE_EXPORT int kevolve_launch(const KevolveArgs* args, cudaStream_t stream) {
    const int64_t rows = KEVOLVE_ROWS(args);
    const int64_t slotFloats = rows * KEVOLVE_LDY(args);
    int slot = -1;
    for (int s = 0; s < kSlots; ++s) {
        if (g_input[s] == args->inputs[0].data) {
            slot = s;
        }
    }
    const bool fresh = slot < 0;
    if (fresh) {
        slot = g_next;
        g_next = (g_next + 1) % kSlots;
        g_input[slot] = args->inputs[0].data;
    }
    float* keep = static_cast<float*>(args->workspace);
    unsigned* words = reinterpret_cast<unsigned*>(keep + kSlots * slotFloats);
    decide<<<1, 1, 0, stream>>>(words + slot, words + kSlots, fresh ? 1 : 0);
    softmaxOrReplay<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
        static_cast<const float*>(args->inputs[0].data), static_cast<float*>(args->outputs[0].data),
        keep + slot * slotFloats, words + kSlots, rows, KEVOLVE_COLS(args), KEVOLVE_LDX(args),
        KEVOLVE_LDY(args));
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
