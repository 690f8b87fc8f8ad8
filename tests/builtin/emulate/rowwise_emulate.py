#!/usr/bin/env python3
"""Runs generated row-wise kernels (layernorm, rmsnorm, softmax) on the CPU through their own
kevolve_launch and checks Y against a double-precision reference: the launch's choice among the
kernels (rows of exactly the chunk, rows only the last vector can pass, other rows up to the
chunk, longer or part-vector rows streamed), bounds tests, fills, the block and warp reductions,
the cp.async ring's waits, pipeline=bulk's softmax (its pieces, their mbarriers and bulk copies,
the part-vector tail read directly, a split row's statistics exchanged by st.async), and rows split
over a cluster (its blocks run together, each with its own shared memory; cluster.sync and
map_shared_rank emulated). No GPU.

  rowwise_emulate.py --gen build/ci/tests/builtin/kev-builtin-gen --cuda-include DIR --out DIR
                     [--cxx g++] [--only NAME]

Kernels: the default plan of each task below (chosen to reach every prefetching instantiation,
warp and block mappings, W and B in registers or loaded, 16- and 32-bit rows) and the strategy
files of tests/builtin/strategies whose pipeline is prefetch, none or async. Each runs as C++
(rowwise_shim.h: a thread per CUDA thread, blocks in turn) on the task's validation shapes and on
rows of the task's own length, twice for cp.async and bulk copies (landing at issue and at the
wait; kernels launched as clusters on at most 9 rows of each shape, since every thread of a
cluster starts at once); bulk softmax kernels again on wide rows (references that jump, threads
far under the row's maximum; emuWide), judged element by element, with ex2.approx's flush of
results under 2^-126. A wrong element, a NaN, a write past a row's end, a bulk copy the
hardware would refuse, a barrier whose bytes do not match, statistics that never reach a block or a
launch error fails the kernel."""
import argparse
import json
import pathlib
import re
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[2]

# Task files (relative to the repository): the far set's rows no block covers exactly (the
# tail-tested instantiation, in 8- and 16-byte vectors), exact covers, a warp per row, 32-bit
# rows, W in registers, vocabulary rows copied whole into shared memory (pipeline=bulk unsplit,
# and split over clusters of 2, 3, 6 and 8, rows of 50257 and 100277 at every lead before their
# first 128-byte line; the library's tasks have part-vector rows and rows too long for shared
# memory; f32 rows of 24000 in 3), and rows streamed in a cluster's split (softmax, layernorm).
TASKS = (
    'tests/sweeps/far/tasks/layernorm_f16_3728x9000.json',
    'tests/sweeps/far/tasks/layernorm_bf16_12904x2600.json',
    'tests/sweeps/far/tasks/layernorm_bf16_4792x7000.json',
    'tests/sweeps/far/tasks/layernorm_f16_18640x1800.json',
    'tests/sweeps/far/tasks/rmsnorm_bf16_18640x1800.json',
    'tests/sweeps/far/tasks/softmax_f16_33552x1000.json',
    'tests/sweeps/far/tasks/softmax_f16_3728x9000.json',
    'resources/tasks/layernorm_f16_32768x1536.json',
    'resources/tasks/layernorm_bf16_16384x4096.json',
    'resources/tasks/rmsnorm_f16_4096x8192.json',
    'resources/tasks/softmax_f32_8192.json',
    'resources/tasks/layernorm_f32_16384x4096.json',
    'tests/sweeps/far/tasks/softmax_f16_1048x32000.json',
    'resources/tasks/softmax_f16_256x32000.json',
    'tests/sweeps/far/tasks/softmax_bf16_664x50257.json',
    'tests/sweeps/far/tasks/softmax_bf16_328x100277.json',
    'tests/sweeps/far/tasks/softmax_f32_1392x24000.json',
    'resources/tasks/softmax_bf16_32x128256.json',
    'resources/tasks/softmax_f16_1x128256.json',
    'resources/tasks/layernorm_bf16_4x65536.json',
)
# Strategy files of tests/builtin/strategies and the test task of their op and dtype.
STRATEGIES = {
    'layernorm_async_vec4': 'tests/builtin/tasks/layernorm_bf16_test.json',
    'layernorm_async_weights_registers': 'tests/builtin/tasks/layernorm_bf16_test.json',
    'layernorm_prefetch_shifted': 'tests/builtin/tasks/layernorm_bf16_test.json',
    'softmax_prefetch_one_pass': 'tests/builtin/tasks/softmax_f16_test.json',
    'softmax_prefetch_two_pass': 'tests/builtin/tasks/softmax_f16_test.json',
    'layernorm_split3_streamed': 'tests/builtin/tasks/layernorm_bf16_test.json',
    'softmax_bulk_split5': 'tests/builtin/tasks/softmax_f16_test.json',
}

DRIVER = r'''
namespace {
// Inputs: normal values around an offset (the shifted statistics' case), W and B near 1 and 0.
double emuValue(long long i, int which) {
    unsigned long long s = (unsigned long long)(i) * 6364136223846793005ULL +
                           1442695040888963407ULL * (which + 1);
    s ^= s >> 29; s *= 0xbf58476d1ce4e5b9ULL; s ^= s >> 32;
    const double u = double(s % 1000003) / 1000003.0 - 0.5;
    if (which == 0) return 3.0 + 4.0 * u;
    if (which == 1) return 1.0 + 0.5 * u;
    return 0.25 * u;
}
// Softmax's wide rows (the bulk kernel's stored exponentials): a spread of 48 with every 1499th
// element 90 higher (a thread's reference jumps past its stored exponentials), and every third
// row -100, a tenth of it -82, and 0 at its middle: threads whose reference is -100 store e^18 and
// reach the output through a factor under 2^-126, e^-100 (a zero where 2.4e-36 is due fails).
double emuWide(long long i, long long ld, long long N) {
    const long long r = i / ld, c = i % ld;
    const double u = emuValue(i, 0) - 3.0; // -2..2
    if (r % 3 == 2)
        return c == N / 2 ? 0.0 : u > 1.6 ? -82.0 : -100.0;
    return 12.0 * u + (c % 1499 == 700 ? 90.0 : 0.0);
}
template <typename T>
std::vector<T> emuFill(long long n, int which, long long ld = 0, long long N = 0) {
    std::vector<T> v(n);
    for (long long i = 0; i < n; ++i) {
        float f = float(which == 3 ? emuWide(i, ld, N) : emuValue(i, which));
        if (ld && i % ld >= N) f = NAN; // the padding past a row: never read
        fromFloat(f, v[i]);
    }
    return v;
}
template <typename T> double emuRead(const T& v) { return toFloat(v); }
double emuTolerance() {
    if (sizeof(ElemY) == 2) return std::is_same_v<ElemY, __half> ? 4e-3 : 2e-2;
    return 2e-5;
}
}

int main(int argc, char** argv)
{
    emu::defer = std::atoi(argv[1]);
    int fails = 0;
    for (int a = 2; a + 1 < argc; a += 2) {
        const long long M = std::atoll(argv[a]), N = std::atoll(argv[a + 1]);
        const long long ld = (N + 7) / 8 * 8;
#ifdef EMU_WIDE
        for (int wide = 0; wide < 2; ++wide) {
#else
        for (int wide = 0; wide < 1; ++wide) {
#endif
        const char* data = wide ? " wide" : "";
        std::vector<ElemX> X = emuFill<ElemX>(M * ld, wide ? 3 : 0, ld, N);
        std::vector<ElemY> Y(M * ld);
        std::memset(Y.data(), 0xff, Y.size() * sizeof(ElemY));
        KevolveArgs args{};
        args.abi_version = KEVOLVE_ABI_VERSION;
        args.num_outputs = 1;
        args.dims[0] = M;
        args.dims[1] = N;
        auto tensor = [](void* p, int dtype, long long rows, long long cols, long long stride) {
            KevolveTensor t{};
            t.data = p; t.dtype = dtype; t.rank = rows ? 2 : 1;
            if (rows) {
                t.shape[0] = rows; t.shape[1] = cols;
                t.stride[0] = stride; t.stride[1] = 1;
            }
            else { t.shape[0] = cols; t.stride[0] = 1; }
            return t;
        };
        auto dtypeOf = [](auto* p) {
            using T = std::remove_pointer_t<decltype(p)>;
            return std::is_same_v<T, __half>          ? KEVOLVE_F16
                   : std::is_same_v<T, __nv_bfloat16> ? KEVOLVE_BF16
                                                      : KEVOLVE_F32;
        };
        args.inputs[0] = tensor(X.data(), dtypeOf(X.data()), M, N, ld);
        args.outputs[0] = tensor(Y.data(), dtypeOf(Y.data()), M, N, ld);
        args.device.cc_major = 9; args.device.sm_count = 132;
        args.device.max_smem_per_block_optin = 232448; args.device.smem_per_sm = 233472;
        args.device.regs_per_sm = 65536; args.device.l2_bytes = 60 << 20;
#if defined(EMU_LAYERNORM) || defined(EMU_RMSNORM)
        std::vector<ElemW> W = emuFill<ElemW>(N, 1);
        args.inputs[1] = tensor(W.data(), dtypeOf(W.data()), 0, N, 1);
        args.scalars[0] = 1e-5;
#endif
#ifdef EMU_LAYERNORM
        std::vector<ElemB> B = emuFill<ElemB>(N, 2);
        args.inputs[2] = tensor(B.data(), dtypeOf(B.data()), 0, N, 1);
        args.op = KEVOLVE_OP_LAYERNORM; args.num_inputs = 3;
#elif defined(EMU_RMSNORM)
        args.op = KEVOLVE_OP_RMSNORM; args.num_inputs = 2;
#else
        args.op = KEVOLVE_OP_SOFTMAX; args.num_inputs = 1;
#endif
        const int rc = kevolve_launch(&args, nullptr);
        if (rc != 0) {
            std::printf("M=%lld N=%lld%s: kevolve_launch returned %d\n", M, N, data, rc);
            ++fails;
            continue;
        }
        int bad = 0;
        for (long long r = 0; r < M; ++r) {
            const auto* x = X.data() + r * ld;
            std::vector<double> ref(N);
            double mean = 0, var = 0, mx = -INFINITY, sum = 0;
            for (long long c = 0; c < N; ++c) {
                mean += emuRead(x[c]);
                mx = std::max(mx, emuRead(x[c]));
            }
            mean /= N;
            for (long long c = 0; c < N; ++c) {
#if defined(EMU_LAYERNORM)
                var += (emuRead(x[c]) - mean) * (emuRead(x[c]) - mean);
#elif defined(EMU_RMSNORM)
                var += emuRead(x[c]) * emuRead(x[c]);
#else
                sum += std::exp(emuRead(x[c]) - mx);
#endif
            }
            var /= N;
            double scale = 0;
            for (long long c = 0; c < N; ++c) {
#if defined(EMU_LAYERNORM)
                ref[c] = (emuRead(x[c]) - mean) / std::sqrt(var + 1e-5) * emuRead(W[c]) +
                         emuRead(B[c]);
#elif defined(EMU_RMSNORM)
                ref[c] = emuRead(x[c]) / std::sqrt(var + 1e-5) * emuRead(W[c]);
#else
                ref[c] = std::exp(emuRead(x[c]) - mx) / sum;
#endif
                scale = std::max(scale, std::fabs(ref[c]));
            }
            for (long long c = 0; c < ld; ++c) {
                const ElemY& e = Y[r * ld + c];
                if (c >= N) {
                    unsigned char bytes[sizeof(ElemY)];
                    std::memcpy(bytes, &e, sizeof(ElemY));
                    for (unsigned char b : bytes)
                        if (b != 0xff) {
                            if (bad++ < 3)
                                std::printf("M=%lld N=%lld: Y[%lld, %lld] written past the row\n",
                                            M, N, r, c);
                            break;
                        }
                    continue;
                }
                const double y = emuRead(e);
                const double err = std::fabs(y - ref[c]);
#if defined(EMU_LAYERNORM)
                // The harness's componentwise scale: the terms' magnitudes, |n w| + |b| (packed
                // HFMA2 rounds n before the product, an error relative to the terms).
                const double terms = std::fabs(ref[c] - emuRead(B[c])) + std::fabs(emuRead(B[c]));
#else
                const double terms = std::fabs(ref[c]);
#endif
                // f16's subnormals (under 6.1e-5, softmax of long rows) are 2^-24 apart. Wide
                // rows are judged element by element (a zero where 1e-35 is due fails).
                const double spacing = std::is_same_v<ElemY, __half> ? 0x1p-24
                                       : wide                        ? 0x1p-120
                                                                     : 1e-30;
                const double bound = emuTolerance() * (terms + (wide ? 0.0 : 0.02 * scale));
                if (!(err <= bound + spacing)) {
                    if (bad++ < 3)
                        std::printf("M=%lld N=%lld%s: Y[%lld, %lld] = %.6g, expected %.6g\n", M,
                                    N, data, r, c, y, ref[c]);
                }
            }
        }
        if (bad) {
            std::printf("M=%lld N=%lld%s: %d wrong elements\n", M, N, data, bad);
            ++fails;
        }
        }
    }
    return fails ? 1 : 0;
}
'''


def launch_calls(src, clusters):
    """kernel<<<grid, threads, smem, stream>>>(args); -> emu::launch(grid, threads, smem, [&] {
    kernel(args); }[, cluster size]);"""
    out = []
    pos = 0
    for m in re.finditer(r'([A-Za-z_]\w*(?:<[^<>;]*>)?)<<<([^;]*?)>>>\(', src):
        if m.start() < pos:
            continue
        depth, i = 1, m.end()
        while depth:
            depth += {'(': 1, ')': -1}.get(src[i], 0)
            i += 1
        config = [c.strip() for c in m.group(2).split(',')] + ['0']
        out.append(src[pos:m.start()])
        name = m.group(1).split('<')[0]
        size = f', {clusters[name]}' if name in clusters else ''
        out.append(f'emu::launch({config[0]}, {config[1]}, {config[2]}, [&] {{ '
                   f'{m.group(1)}({src[m.end():i - 1]}); }}{size})')
        pos = i
    out.append(src[pos:])
    return ''.join(out)


def replace_body(src, name, text):
    i = src.find(' ' + name + '(')
    if i < 0:
        return src
    j = src.index('{', i)
    k = src.index('\n}\n', j)
    return src[:j] + '{\n' + text + '\n' + src[k + 1:]


def bulk_to_cpp(src):
    """pipeline=bulk (a cluster per row, of one block when unsplit): its mbarriers, bulk copies
    and the split blocks' st.async exchange routed to rowwise_shim.h's emulation, the PTX
    statements replaced one by one (a statement not listed stays, and fails the translation)."""
    if 'softmaxRowsBulk' not in src:
        return src
    src = replace_body(src, 'sharedAddress',
                       '    return uint32_t(reinterpret_cast<uintptr_t>(p));')
    src = replace_body(src, 'bulkCopy', '    emu::bulkCopy(dst, src, bytes, bar);')
    src = replace_body(src, 'waitPhase', '    emu::bulkWait(bar, parity);')
    # A split row's blocks exchange statistics by st.async into each other's slots (the statement
    # translated: each store lands at once and completes the receiver's barrier), waited for on
    # their own barrier; the cluster barrier's arrive and wait become one barrier of the cluster's
    # threads at the wait.
    src = replace_body(src, 'peerAddress', '    (void)p;\n    (void)rank;\n    std::abort();')
    src = replace_body(src, 'waitPeers', '    emu::peerWait(bar, parity);')
    src = replace_body(src, 'clusterArrive', '')
    src = replace_body(src, 'clusterWait', '    emu::cluster->barrier.arrive_and_wait();')
    statements = (
        (r'"mbarrier\.arrive\.expect_tx[^"]*"\s*::"r"\((\w+)\),\s*"r"\((\w+)\)',
         r'emu::bulkExpect(\1, \2)'),
        (r'"mbarrier\.init[^"]*"\s*::"r"\((sharedAddress\(&\w+\[\w+\]\)|\w+)\)',
         r'emu::bulkInit(\1)'),
        (r'"fence\.mbarrier_init[^"]*"\s*:::', ''),
        (r'"st\.async[^"]*"\s*::"r"\(peerAddress\(([^,]+), (\w+)\)\),\s*"f"\(([\w.]+)\),\s*'
         r'"f"\(([\w.]+)\),\s*"r"\(peerAddress\((\w+), (\w+)\)\)',
         r'emu::storeToPeer(emu::mapSharedRank(\1, int(\2)), \3, \4, '
         r'emu::keyOf(emu::mapSharedRank(\5, int(\6))))'),
    )
    for ptx, call in statements:
        src = re.sub(r'asm volatile\(' + ptx + r'[^;]*?\);', call + ';', src)
    return src


def cluster_sizes(src):
    """The kernels launched as clusters (__cluster_dims__(X, 1, 1)): name -> X, the attribute
    removed (the emulated launch runs the X blocks of a cluster together)."""
    sizes = {}
    pattern = r'__cluster_dims__\(([^,()]+), 1, 1\)\s*(__launch_bounds__\(\w+\)\s*)(\w+)\('
    for m in re.finditer(pattern, src):
        sizes[m.group(3)] = m.group(1).strip()
    src = re.sub(r'__cluster_dims__\([^()]*\)\s*', '', src)
    return src.replace('#include <cooperative_groups.h>\n', ''), sizes


def to_cpp(cuda, op):
    """The kernel's translation unit for the CPU: CUDA routed to rowwise_shim.h, the driver
    appended."""
    src = '#include "rowwise_shim.h"\n' + cuda
    for word, to in (('__global__', ''), ('__device__', ''), ('__forceinline__', 'inline'),
                     ('__noinline__', '')):
        src = src.replace(word, to)
    src = re.sub(r'__align__\(\d+\)\s*', '', src.replace('__restrict__', ''))
    src = re.sub(r'extern __shared__\s+unsigned char (\w+)\[\];',
                 r'unsigned char* \1 = emu::dynamicShared();', src)
    # Each __shared__ variable one instance per block (the blocks of a cluster run together).
    declarations = iter(range(1, 1 << 30))
    src = re.sub(r'__shared__\s+([\w:]+(?: [\w:]+)*?)\s+(\w+)((?:\[[^\]]+\])*);',
                 lambda m: f'auto& {m.group(2)} = emu::sharedVar<{m.group(1)}{m.group(3)}>'
                           f'({next(declarations)});', src)
    if '__shared__' in src:
        raise ValueError('a __shared__ declaration the emulator does not read')
    src = re.sub(r'asm volatile\(""\s*:\s*"\+[rh]"\([^)]*\)\);', '', src)
    # ex2.approx.ftz: a result under 2^-126 is 0 (the host's exp2 keeps subnormals).
    src = replace_body(src, 'exp2Fast',
                       '    const float r = std::exp2(y);\n'
                       '    return std::fabs(r) < 0x1p-126f ? 0.0f * r : r;')
    src = replace_body(src, 'copyVecAsync', '''\
    const auto* from = reinterpret_cast<const unsigned char*>(src);
    emu::Copy c{reinterpret_cast<unsigned char*>(dst), from, int(sizeof(RawX)), bytes};
    if (emu::defer)
        emu::openCopies.push_back(c);
    else
        emu::land(c);''')
    src = re.sub(r'(void commitCopies\(\)\s*)\{[^\n]*\}',
                 r'\1{ emu::copyGroups.push_back(emu::openCopies); emu::openCopies.clear(); }', src)
    src = re.sub(r'(template <int Pending>\s+inline\s+void waitCopies\(\)\s*)\{[^}]*\}',
                 r'''\1{
    while (int(emu::copyGroups.size()) > Pending) {
        for (auto& c : emu::copyGroups.front())
            emu::land(c);
        emu::copyGroups.erase(emu::copyGroups.begin());
    }
}''', src)
    src = bulk_to_cpp(src)
    src, clusters = cluster_sizes(src)
    src = launch_calls(src, clusters)
    if re.search(r'\basm\s*(volatile\s*)?\(', src):
        raise ValueError('inline PTX left that the shim does not emulate')
    wide = '#define EMU_WIDE 1\n' if 'softmaxRowsBulk' in src else ''
    return f'#define EMU_{op.upper()} 1\n' + wide + src + DRIVER


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--gen', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--cuda-include', required=True, action='append',
                    help='CUDA include directory (repeatable)')
    ap.add_argument('--cxx', default='g++')
    ap.add_argument('--only', default='', help='run only the kernels whose name contains this')
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    jobs = [(ROOT / t, None, pathlib.Path(t).stem + '.default') for t in TASKS]
    jobs += [(ROOT / t, ROOT / 'tests/builtin/strategies' / f'{s}.json', s)
             for s, t in STRATEGIES.items()]
    jobs = [j for j in jobs if args.only in j[2]]
    failed = []
    for task_file, strategy, name in jobs:
        task = json.loads(task_file.read_text())
        gen_dir = out / 'gen'
        subprocess.run(['rm', '-rf', str(gen_dir)], check=True)
        cmd = [args.gen, '--out', str(gen_dir), '--task', str(task_file), '--family', 'rowwise']
        cmd += ['--strategy', str(strategy)] if strategy else ['--points', 'default']
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        cuda = (gen_dir / f'{task["name"]}__rowwise__0.cu').read_text()
        try:
            cpp = to_cpp(cuda, task['op'])
        except ValueError as e:
            print(f'FAIL {name}: {e}')
            failed.append(name)
            continue
        (out / f'{name}.cpp').write_text(cpp)
        exe = out / name
        includes = [f'-I{HERE}', f'-I{ROOT / "harness/include"}']
        includes += [f'-I{d}' for d in args.cuda_include]
        cc = subprocess.run([args.cxx, '-std=c++20', '-O1', '-pthread', '-w'] + includes +
                            [str(out / f'{name}.cpp'), '-o', str(exe)], capture_output=True,
                            text=True)
        if cc.returncode != 0:
            print(f'FAIL {name}: does not compile on the host\n{cc.stderr[-3000:]}')
            failed.append(name)
            continue
        # The validation shapes, and rows of the task's own length (the timed instantiation).
        shapes = [(s['M'], s['N']) for s in task.get('validation_shapes', [])]
        # Bulk copies: 9 rows, so that rows whose ldx is an odd multiple of 8 16-bit elements
        # (50257's, 100277's) start at every 16-byte offset in a 128-byte line (each a different
        # lead before the slices' line boundaries).
        shapes.append((9 if 'bulkWait' in cpp else 3, task['shape']['N']))
        if '__cluster_dims__' in cuda:
            # A cluster launch starts every thread of its cluster at once (up to 8 x 1024):
            # 9 rows exercise it as well as 257 and take seconds, not minutes.
            shapes = [(min(m, 9), n) for m, n in shapes]
        argv = [str(x) for s in shapes for x in s]
        modes = (0, 1) if 'waitCopies' in cpp or 'bulkWait' in cpp else (0,)
        for mode in modes:
            run = subprocess.run([str(exe), str(mode)] + argv, capture_output=True, text=True,
                                 timeout=600)
            if run.returncode != 0:
                label = 'copies at the wait' if mode else 'copies at issue'
                print(f'FAIL {name} ({label}):\n{run.stdout[-3000:]}{run.stderr[-1000:]}')
                failed.append(name)
                break
        else:
            print(f'ok   {name}: {" ".join(f"{m}x{n}" for m, n in shapes)}')
    print(f'{len(jobs) - len(failed)} of {len(jobs)} kernels correct on the CPU')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
