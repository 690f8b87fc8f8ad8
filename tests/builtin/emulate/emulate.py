#!/usr/bin/env python3
"""Runs generated fma_warptile SGEMM kernels on the CPU and checks C against a double-precision
reference: index maps, tails in M, N and K, the pipeline's barriers and cp.async waits. No GPU.

  emulate.py --gen build/ci/tests/builtin/kev-builtin-gen --out DIR [--cxx g++]

Kernels: the default plan of both SGEMM tasks, every fma_warptile strategy under
tests/inference/sweep/strategies and the split-K strategies here (TASK.NAME.json). Each runs as C++ (shim.h: a thread per CUDA thread, blocks in
turn) on shapes that cut every tile, twice: cp.async copies landing at issue and at the wait that
needs them (a missing wait or barrier then reads stale or NaN-poisoned shared memory)."""
import argparse
import json
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[2]
TASKS = ('gemm_fp32_fp32_4096', 'gemm_fp32_fp32_2048_k8192')

DRIVER = r'''
int EMU_DEFER = 0;

int main(int argc, char** argv)
{
    EMU_DEFER = argc > 1 ? std::atoi(argv[1]) : 0;
    int fails = 0;
    // Partial tiles in M, N and K, K shorter than a k-tile, M = 1, beta zero and not.
    const int shapes[][3] = {{257, 392, 520}, {64, 64, 8}, {1, 8, 24}, {130, 264, 40},
                             {300, 136, 16}};
    for (const auto& sh : shapes) {
        const int M = sh[0], N = sh[1], K = sh[2];
        std::mt19937 rng(M * 7 + N * 13 + K);
        std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
        std::vector<float> A(size_t(M) * K), B(size_t(K) * N), C(size_t(M) * N, 0.5f);
        for (auto& x : A) x = dist(rng);
        for (auto& x : B) x = dist(rng);
        const std::vector<float> C0 = C;
        const float alpha = 1.25f, beta = (M % 2) ? 0.5f : 0.0f;
        const int blocks = ((M + BLOCK_M - 1) / BLOCK_M) * ((N + BLOCK_N - 1) / BLOCK_N);
        std::vector<float4> smemBuf(SMEM_BYTES / 16 + 1);
        std::vector<float> partials(SPLIT_K > 1 ? size_t(SPLIT_K) * M * N : 0, NAN);
        for (int blk = 0; blk < blocks * SPLIT_K; ++blk) {
            std::fill(smemBuf.begin(), smemBuf.end(), float4{NAN, NAN, NAN, NAN});
            g_smem = smemBuf.data();
            std::barrier<> bar(THREADS);
            g_barrier = &bar;
            std::vector<std::thread> threads;
            for (int t = 0; t < THREADS; ++t)
                threads.emplace_back([&, t] {
                    threadIdx.x = t;
                    blockIdx.x = blk % blocks;
                    blockIdx.y = blk / blocks;
                    emuGroups.clear();
                    emuOpen.clear();
                    gemmFmaWarpTile(A.data(), B.data(), C.data(), partials.data(), M, N, K, K,
                                    N, N, alpha, beta);
                });
            for (auto& t : threads) t.join();
        }
#ifdef EMU_REDUCE
        blockDim.x = 256;
        for (long long q = 0; q < (static_cast<long long>(M) * N / 4 + 255) / 256 * 256; ++q) {
            blockIdx.x = unsigned(q / 256);
            threadIdx.x = unsigned(q % 256);
            reduceSplits(partials.data(), C.data(), M, N, N, alpha, beta);
        }
#endif
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) {
                double r = 0;
                for (int k = 0; k < K; ++k) r += double(A[size_t(i) * K + k]) * B[size_t(k) * N + j];
                r = alpha * r + beta * C0[size_t(i) * N + j];
                const double e = std::fabs(r - C[size_t(i) * N + j]);
                if (!(e <= 1e-4 * (1 + K))) {
                    if (fails < 5)
                        std::printf("M=%d N=%d K=%d: C[%d][%d] = %g, expected %g\n", M, N, K, i, j,
                                    C[size_t(i) * N + j], r);
                    ++fails;
                }
            }
    }
    if (fails)
        std::printf("%d wrong elements\n", fails);
    return fails ? 1 : 0;
}
'''


def to_cpp(cuda):
    """The kernel's translation unit for the CPU: the ABI entry point dropped, shared memory and
    the cp.async helpers routed to shim.h, the driver appended."""
    src = cuda.replace('#include <kevolve/abi.h>', '#include "shim.h"')
    src = src.replace('extern __shared__ float4 smem[];', 'float4* smem = g_smem;')
    if '__shared__' in src:
        raise ValueError('static __shared__ memory is not emulated')
    src = src[:src.index('extern "C" KEVOLVE_EXPORT')]

    def body(name, text):
        nonlocal src
        i = src.find('void ' + name + '(')
        if i < 0:
            return
        j = src.index('{', i)
        k = src.index('\n}\n', j)
        src = src[:j] + '{\n' + text + '\n' + src[k + 1:]

    body('copy4', '    emuCopy(dst, src, 4, inside ? 4 : 0);')
    body('copy16', '    emuCopy(dst, src, 16, inside ? 16 : 0);')
    body('commitCopies', '    emuCommit();')
    body('waitCopies', '    emuWait(PENDING);')
    if 'asm' in src:
        raise ValueError('inline PTX left that the shim does not emulate')
    if 'reduceSplits(' in src:
        src += '#define EMU_REDUCE 1\n'
    return src + DRIVER


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--gen', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--cxx', default='g++')
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    jobs = [(t, None, f'{t}.default') for t in TASKS]
    # The sweep's strategies, and here the code paths no sweep strategy reaches (split-K).
    for j in sorted((ROOT / 'tests/inference/sweep/strategies').glob('gemm_fp32_*.json')) + \
            sorted(HERE.glob('gemm_fp32_*.json')):
        if json.loads(j.read_text()).get('family') == 'fma_warptile':
            jobs.append((j.name.split('.')[0], j, j.stem))
    failed = []
    for task, strategy, name in jobs:
        gen_dir = out / 'gen'
        subprocess.run(['rm', '-rf', str(gen_dir)], check=True)
        cmd = [args.gen, '--out', str(gen_dir), '--task', task, '--family', 'fma_warptile']
        cmd += ['--strategy', str(strategy)] if strategy else ['--points', 'default']
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        cpp = out / f'{name}.cpp'
        try:
            cpp.write_text(to_cpp((gen_dir / f'{task}__fma_warptile__0.cu').read_text()))
        except ValueError as e:
            print(f'FAIL {name}: {e}')
            failed.append(name)
            continue
        exe = out / name
        cc = subprocess.run([args.cxx, '-std=c++20', '-O1', '-pthread', '-w', f'-I{HERE}',
                             str(cpp), '-o', str(exe)], capture_output=True, text=True)
        if cc.returncode != 0:
            print(f'FAIL {name}: does not compile on the host\n{cc.stderr[-2000:]}')
            failed.append(name)
            continue
        for mode, label in ((0, 'copies at issue'), (1, 'copies at the wait')):
            run = subprocess.run([str(exe), str(mode)], capture_output=True, text=True)
            if run.returncode != 0:
                print(f'FAIL {name} ({label}):\n{run.stdout}{run.stderr}')
                failed.append(name)
                break
        else:
            print(f'ok   {name}')
    print(f'{len(jobs) - len(failed)} of {len(jobs)} kernels correct on the CPU')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
