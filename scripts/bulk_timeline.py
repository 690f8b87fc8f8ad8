#!/usr/bin/env python3
"""Where a bulk softmax kernel's time goes, block by block (GPU host; nvcc on the PATH).

  bulk_timeline.py KERNEL.cu M N [--reps 6] [--no-exp] [--keep DIR]
  bulk_timeline.py --gen kev-builtin-gen --task TASK.json [...]   (the task's default kernel)

KERNEL.cu is a generated row-wise softmax kernel with pipeline=bulk (`kev-builtin-gen`, or a
session's kernel_vN.cu). A copy of it has thread 0 of every block record %globaltimer at its start,
after its copies are issued, after its statistics pass, after its cluster's exchange and at its
end (and %smid); a driver includes that copy, fills an M x N input (rows padded to 64 elements,
values in [-4, 4)), and for each repetition flushes L2 (a 256 MiB memset, read back), times one
kevolve_launch with CUDA events and reads the stamps. It prints, per repetition, the event time,
the span from the first block's start to the last one's end and the DRAM floor at 4.25 TB/s;
then, for the last repetition, each phase's distribution over the blocks and how many blocks
started and ended in each microsecond (stamps of the first 65536 blocks only). --no-exp drops the
exponentials (wrong output: a probe of what they cost). docs/benchmarks.md, session 26, has the figures it gave on the H200."""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

DRIVER = r'''
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
namespace {
__global__ void timelineFill(ElemX* p, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        unsigned h = unsigned(i) * 2654435761u;
        h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
        fromFloat((h & 0xffff) / 65536.0f * 8.0f - 4.0f, p[i]);
    }
}
__global__ void timelineRead(const int4* p, long long n, int* sink) {
    int acc = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        acc ^= p[i].x;
    if (acc == 0x12345) *sink = 1;
}
int refuseTensorMap(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                    const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                    CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill) {
    return 1;
}
} // namespace
int main(int argc, char** argv) {
    const long long M = atoll(argv[1]), N = atoll(argv[2]);
    const int reps = atoi(argv[3]);
    const long long ld = (N + 63) / 64 * 64;
    void *x, *y, *flush;
    int* sink;
    const size_t flushBytes = 256ull << 20;
    if (cudaMalloc(&x, M * ld * sizeof(ElemX)) || cudaMalloc(&y, M * ld * sizeof(ElemY)) ||
        cudaMalloc(&flush, flushBytes) || cudaMalloc(&sink, 4)) {
        std::printf("cudaMalloc failed\n");
        return 2;
    }
    timelineFill<<<1024, 256>>>(static_cast<ElemX*>(x), M * ld);
    const KevolveServices services{refuseTensorMap};
    KevolveArgs a{};
    a.abi_version = KEVOLVE_ABI_VERSION;
    a.op = KEVOLVE_OP_SOFTMAX;
    a.num_inputs = 1;
    a.num_outputs = 1;
    const int dx = sizeof(ElemX) == 4 ? KEVOLVE_F32 : TIMELINE_X16;
    const int dy = sizeof(ElemY) == 4 ? KEVOLVE_F32 : TIMELINE_Y16;
    a.inputs[0] = KevolveTensor{x, dx, 2, {M, N}, {ld, 1}};
    a.outputs[0] = KevolveTensor{y, dy, 2, {M, N}, {ld, 1}};
    a.dims[0] = M;
    a.dims[1] = N;
    a.services = &services;
    cudaDeviceProp pr;
    cudaGetDeviceProperties(&pr, 0);
    a.device = KevolveDevice{0, pr.major, pr.minor, pr.multiProcessorCount,
                             int(pr.sharedMemPerBlockOptin), int(pr.sharedMemPerMultiprocessor),
                             pr.regsPerMultiprocessor, pr.l2CacheSize};
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    const double floorUs = double(M * N) * (sizeof(ElemX) + sizeof(ElemY)) / 4.25e6;
    const long long blocks = std::min(M * SPLIT, kTimelineBlocks);
    std::vector<unsigned long long> tl(size_t(kTimelineBlocks) * 6);
    for (int r = 0; r < reps; ++r) {
        cudaMemsetAsync(flush, r, flushBytes);
        timelineRead<<<1056, 512>>>(static_cast<const int4*>(flush), flushBytes / 16, sink);
        cudaEventRecord(e0);
        const int rc = kevolve_launch(&a, nullptr);
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        if (rc != 0 || cudaGetLastError() != cudaSuccess) {
            std::printf("kevolve_launch returned %d (%s)\n", rc,
                        cudaGetErrorString(cudaGetLastError()));
            return 3;
        }
        cudaMemcpyFromSymbol(tl.data(), kTimeline, tl.size() * 8);
        unsigned long long first = ~0ull, last = 0;
        for (long long b = 0; b < blocks; ++b) {
            first = std::min(first, tl[b * 6]);
            last = std::max(last, tl[b * 6 + 4]);
        }
        std::printf("rep %d: event %.2f us, first start to last end %.2f us, floor %.2f us "
                    "(%.1f%% by event)\n",
                    r, ms * 1e3, (last - first) / 1e3, floorUs, 100 * floorUs / (ms * 1e3));
        if (r + 1 < reps)
            continue;
        const char* names[4] = {"issue", "statistics", "exchange", "output"};
        for (int k = 0; k < 4; ++k) {
            std::vector<double> v;
            for (long long b = 0; b < blocks; ++b)
                v.push_back((tl[b * 6 + k + 1] - tl[b * 6 + k]) / 1e3);
            std::sort(v.begin(), v.end());
            std::printf("  %-10s us: min %.2f p10 %.2f median %.2f p90 %.2f max %.2f\n", names[k],
                        v[0], v[v.size() / 10], v[v.size() / 2], v[v.size() * 9 / 10], v.back());
        }
        std::vector<int> started((last - first) / 1000 + 2), ended((last - first) / 1000 + 2);
        for (long long b = 0; b < blocks; ++b) {
            started[(tl[b * 6] - first) / 1000]++;
            ended[(tl[b * 6 + 4] - first) / 1000]++;
        }
        std::printf("  us from the first start: blocks started, ended\n");
        for (size_t i = 0; i < started.size(); ++i)
            std::printf("  %4zu %6d %6d\n", i, started[i], ended[i]);
    }
    return 0;
}
'''

STAMPS = r'''
constexpr long long kTimelineBlocks = 1 << 16;
__device__ unsigned long long kTimeline[kTimelineBlocks][6];
__device__ __forceinline__ unsigned long long timelineNow() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
    return t;
}
__device__ __forceinline__ unsigned timelineSm() {
    unsigned r;
    asm volatile("mov.u32 %0, %smid;" : "=r"(r));
    return r;
}
'''


def instrument(src, no_exp):
    """The kernel's copy with the stamps (each anchor must be found once in the kernel)."""
    start = src.find('softmaxRowsBulk(const')
    if start < 0:
        sys.exit('no softmaxRowsBulk in the kernel: not a pipeline=bulk softmax')
    kernel = src.rfind('__global__', 0, start)
    head, body = src[:kernel], src[kernel:]
    anchors = (
        ('const int t = threadIdx.x;', 'tlA'),
        ('__syncthreads(); // the barriers are initialised before anyone waits on them', 'tlB'),
        ('MaxSum part{m, acc};', 'tlC'),
        ('const float shiftL = fmaf(shift, LOG2E, logSum);', 'tlD'),
    )
    for anchor, name in anchors:
        if body.count(anchor) != 1:
            sys.exit(f'the kernel has {body.count(anchor)} of "{anchor}" (one expected): '
                     'a template this script does not know')
        body = body.replace(anchor, f'{anchor}\n    const unsigned long long {name} = '
                                    'timelineNow();')
    end = body.index('\n}\n')
    body = body[:end] + '''
    if (t == 0 && blockIdx.x < kTimelineBlocks) {
        const unsigned long long tlE = timelineNow();
        kTimeline[blockIdx.x][0] = tlA;
        kTimeline[blockIdx.x][1] = tlB;
        kTimeline[blockIdx.x][2] = tlC;
        kTimeline[blockIdx.x][3] = tlD;
        kTimeline[blockIdx.x][4] = tlE;
        kTimeline[blockIdx.x][5] = timelineSm();
    }''' + body[end:]
    if no_exp:
        body = re.sub(r'exp2Fast\(fmaf\(', '(fmaf(', body)
    return head + STAMPS + body


def dtype16(src, alias):
    m = re.search(r'using ' + alias + r' = ([\w:]+);', src)
    if not m:
        sys.exit(f'no "using {alias} = ...;" in the kernel')
    return 'KEVOLVE_BF16' if 'bfloat16' in m.group(1) else 'KEVOLVE_F16'


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('kernel', nargs='?')
    ap.add_argument('M', type=int, nargs='?')
    ap.add_argument('N', type=int, nargs='?')
    ap.add_argument('--gen', help='kev-builtin-gen: time the default kernel of --task')
    ap.add_argument('--task', help='a softmax task file (with --gen; M and N from it)')
    ap.add_argument('--nvcc', default='nvcc')
    ap.add_argument('--reps', type=int, default=6)
    ap.add_argument('--no-exp', action='store_true')
    ap.add_argument('--keep', help='write the instrumented source and binary here')
    ap.add_argument('--compile-only', action='store_true', help='build, do not run')
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    work = args.keep or tempfile.mkdtemp(prefix='kev-timeline-')
    os.makedirs(work, exist_ok=True)
    if args.gen and args.task:
        env = dict(os.environ, QT_QPA_PLATFORM='offscreen', KEVOLVE_KNOWLEDGE='off')
        out = os.path.join(work, 'generated')
        r = subprocess.run([args.gen, '--family', 'rowwise', '--points', 'default', '--task',
                            args.task, '--out', out], env=env, capture_output=True, text=True)
        kernels = sorted(f for f in os.listdir(out) if f.endswith('.cu')) if not r.returncode \
            else []
        if not kernels:
            sys.exit('kev-builtin-gen wrote no kernel:\n' + r.stdout + r.stderr)
        args.kernel = os.path.join(out, kernels[0])
        with open(args.task) as f:
            shape = json.load(f)['shape']
        args.M, args.N = args.M or shape['M'], args.N or shape['N']
    if args.kernel is None or args.M is None or args.N is None:
        ap.error('KERNEL.cu M N, or --gen and --task')
    src = open(args.kernel).read()
    cu = os.path.join(work, 'timeline.cu')
    instrumented = instrument(src, args.no_exp)
    with open(cu, 'w') as f:
        f.write(f'#define TIMELINE_X16 {dtype16(src, "ElemX")}\n'
                f'#define TIMELINE_Y16 {dtype16(src, "ElemY")}\n')
        f.write(instrumented)
        f.write(DRIVER)
    binary = os.path.join(work, 'timeline')
    include = os.path.join(root, 'harness', 'include')
    cmd = [args.nvcc, '-O3', '-std=c++17', '-arch', 'sm_90a', '-I', include,
           '-diag-suppress', '177,550', cu, '-o', binary]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        sys.exit('nvcc failed:\n' + r.stdout + r.stderr)
    if args.compile_only:
        print(binary)
        return
    sys.exit(subprocess.run([binary, str(args.M), str(args.N), str(args.reps)]).returncode)


if __name__ == '__main__':
    main()
