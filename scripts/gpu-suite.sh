#!/usr/bin/env bash
# The GPU suite, in one command on a host with an NVIDIA GPU and the CUDA toolkit (no Qt needed):
# builds kevolve-harness (unless KEVOLVE_HARNESS names one), then
#   1. the GPU tests: every kernel of tests/harness/kernels through ONE `serve` process, each
#      ending in the status its header expects, the server alive at the end;
#      (kernels for the ops beyond GEMM name their task in resources/tasks in their headers);
#   2. the referee benchmarks: A/A self-check and three correct kernels, 5 evaluations each;
#   3. the ops beyond GEMM: the A/A self-check of every softmax, layernorm, reduce, gemv and
#      elementwise task (the reference validated like a candidate, edge cases included) must be ok;
#   4. with KEVOLVE_EXTRA_KERNELS=DIR, every .cu there (e.g. from kev-builtin-gen) evaluated.
# Results go to $OUT (or out/gpu-suite); their tables are what docs/benchmarks.md records.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export PATH="/usr/local/cuda/bin:$PATH"
out=${OUT:-$root/out/gpu-suite}
mkdir -p "$out"
H=${KEVOLVE_HARNESS:-}
if [ -z "$H" ]; then
    if [ ! -x build/gpu-host/harness/kevolve-harness ]; then
        cmake --preset gpu-host -DBUILD_TESTING=OFF >"$out/build.log" 2>&1 &&
            cmake --build --preset gpu-host --target kevolve-harness >>"$out/build.log" 2>&1 ||
            { tail -30 "$out/build.log"; exit 1; }
    fi
    H=$root/build/gpu-host/harness/kevolve-harness
fi
status=0
section() { printf '\n=== %s (%s)\n' "$1" "$(date -u +%H:%M:%S)"; }

section environment
{
    date -u +%Y-%m-%dT%H:%M:%SZ
    echo "commit $(git rev-parse --short HEAD 2>/dev/null || cat .carry/COMMIT 2>/dev/null || echo unknown)"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu \
        --format=csv,noheader
    nvcc --version | tail -1
    "$H" --version
} | tee "$out/environment.txt"
"$H" probe >"$out/probe.json" || status=1

if [ -z "${KEVOLVE_SKIP_CORPUS:-}" ]; then
    section "GPU tests: the corpus through one serve process"
    # Keys in the server's environment must not reach a candidate (bad_leak_key_nolint.cu).
    OPENAI_API_KEY=${OPENAI_API_KEY:-kevolve-suite-not-a-key} \
        KEVOLVE_API_KEY=${KEVOLVE_API_KEY:-kevolve-suite-not-a-key} \
        python3 scripts/serve_batch.py --harness "$H" --check --jsonl "$out/corpus.jsonl" \
        tests/harness/kernels/*.cu | tee "$out/corpus.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

if [ -z "${KEVOLVE_SKIP_BENCH:-}" ]; then
    section "referee benchmarks: A/A and three correct kernels, 5 evaluations each"
    python3 scripts/bench_referee.py --harness "$H" --repeats 5 --out-dir "$out/bench" \
        --task resources/tasks/gemm_fp16_fp32_4096.json \
        tests/harness/kernels/ok_regblock.cu ${KEVOLVE_BENCH_KERNELS:-} \
        tests/harness/kernels/ok_wgmma_tma_fp16_f32.cu | tee "$out/bench.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    tar -czf "$out/bench-reports.tgz" -C "$out" bench && rm -rf "$out/bench"
fi

if [ -z "${KEVOLVE_SKIP_OPS:-}" ]; then
    section "ops beyond GEMM: A/A self-check of every task (the reference on every edge case)"
    mkdir -p "$out/ops"
    for task in resources/tasks/{softmax,layernorm,reduce,gemv,elementwise}_*.json; do
        name=$(basename "$task" .json)
        "$H" eval --task "$task" --kernel tests/harness/kernels/ok_naive.cu --self-check --run-timeout 900 \
            --out "$out/ops/aa_$name.json" >/dev/null 2>"$out/ops/aa_$name.err"
        python3 - "$out/ops/aa_$name.json" "$name" <<'PY' | tee -a "$out/ops.txt"
import json, sys
r = json.load(open(sys.argv[1]))
trials = r.get("correctness", {}).get("trials", [])
print(f"{sys.argv[2]:36s} {r.get('status'):14s} {len(trials)} trials, "
      f"{r.get('stages', {}).get('gpu_s', 0):.1f} s GPU child: {r.get('message', '')}")
sys.exit(0 if r.get("status") == "ok" else 1)
PY
        [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    done
    tar -czf "$out/ops-reports.tgz" -C "$out" ops && rm -rf "$out/ops"
fi

if [ -n "${KEVOLVE_EXTRA_KERNELS:-}" ]; then
    section "extra kernels in $KEVOLVE_EXTRA_KERNELS"
    python3 scripts/serve_batch.py --harness "$H" --jsonl "$out/extra.jsonl" \
        "$KEVOLVE_EXTRA_KERNELS"/*.cu | tee "$out/extra.txt"
fi
exit $status
