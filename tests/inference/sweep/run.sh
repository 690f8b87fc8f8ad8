#!/usr/bin/env bash
# Inference-GEMM and SGEMM sweep (issue 21): the mma_smallm and wgmma_tma (small-M: split-K, deep
# ring) defaults of every small-M inference task,
# the fma_warptile default of both SGEMM tasks, the older families' defaults as controls
# (mma_sync_splitk on the M=128 task, fma_regblock on SGEMM 4096), and every strategy in
# strategies/ (TASK.NAME.json), generated with kev-builtin-gen and evaluated in ONE
# `kevolve-harness serve` (scripts/serve_batch.py --check --no-profile: every validation shape
# first, then interleaved timing against cuBLAS with the L2 flushed). 70 kernels.
#
#   tests/inference/sweep/run.sh generate DIR   # here: needs kev-builtin-gen (Qt), no GPU
#   tests/inference/sweep/run.sh compile DIR    # nvcc for sm_90a, ptxas -v: registers, spills
#   tests/inference/sweep/run.sh sass DIR [OUT] # SASS: a table, and OUT/NAME.sass listings
#                                               # (scripts/sass_listing.py; needs nvdisasm)
#   tests/inference/sweep/run.sh evaluate DIR   # the GPU host: one line per kernel
#
# GEN (default build/ci/tests/builtin/kev-builtin-gen), HARNESS (build/ci/harness/kevolve-harness)
# and NVCC (nvcc) name the binaries. The evaluate table gives, per kernel, the status (every
# validation shape checked), the median time, the share of the roofline floor (the DRAM floor for
# the memory-bound inference tasks) and the speed-up against cuBLAS; the summary line gives the
# median speed-up of each task's best kernel.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
here=$root/tests/inference/sweep
mode=${1:-}
dir=${2:-}
if [[ -z $mode || -z $dir ]]; then
    sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
inference_tasks="gemm_f16_m1_n4096_k4096 gemm_f16_m16_n12288_k4096 gemm_f16_m64_n4096_k11008
gemm_f16_m128_n12288_k4096 gemm_f16_m256_n14336_k4096 gemm_bf16_m1_n14336_k4096
gemm_bf16_m16_n4096_k11008 gemm_bf16_m64_n4096_k4096 gemm_bf16_m128_n4096_k11008
gemm_bf16_m256_n12288_k4096"
case $mode in
generate)
    gen=${GEN:-$root/build/ci/tests/builtin/kev-builtin-gen}
    [[ -x $gen ]] || { echo "run.sh: no kev-builtin-gen at $gen (set GEN)" >&2; exit 2; }
    mkdir -p "$dir"
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    # out task family [strategy]: the kernel, headed by the task it is for and the status every
    # kernel here must reach (serve_batch.py reads both).
    one() {
        rm -rf "$tmp/o"
        if [[ $# -gt 3 ]]; then
            "$gen" --out "$tmp/o" --task "$2" --family "$3" --strategy "$4" > /dev/null
        else
            "$gen" --out "$tmp/o" --task "$2" --family "$3" --points default > /dev/null
        fi
        { printf '// task: %s.json\n// expect: ok\n' "$2"; cat "$tmp/o/$2__$3__0.cu"; } > "$1"
    }
    for t in $inference_tasks; do
        one "$dir/$t.default.cu" "$t" mma_smallm
        one "$dir/$t.wgmma_default.cu" "$t" wgmma_tma
    done
    one "$dir/gemm_f16_m128_n12288_k4096.control_splitk.cu" gemm_f16_m128_n12288_k4096 \
        mma_sync_splitk
    for t in gemm_fp32_fp32_4096 gemm_fp32_fp32_2048_k8192; do
        one "$dir/$t.default.cu" "$t" fma_warptile
    done
    one "$dir/gemm_fp32_fp32_4096.control_regblock.cu" gemm_fp32_fp32_4096 fma_regblock
    for j in "$here"/strategies/*.json; do
        b=$(basename "$j" .json)
        family=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["family"])' "$j")
        one "$dir/$b.cu" "${b%%.*}" "$family" "$j"
    done
    ls "$dir" | wc -l
    ;;
compile)
    nvcc=${NVCC:-nvcc}
    status=0
    for k in "$dir"/*.cu; do
        log=$("$nvcc" -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v \
              -I"$root/harness/include" -c "$k" -o /dev/null 2>&1) || { echo "FAIL $(basename "$k")"; echo "$log"; status=1; continue; }
        regs=$(grep -o 'Used [0-9]* registers' <<<"$log" | awk '{print $2}' | paste -sd/)
        spills=$(grep -o '[0-9]* bytes spill stores' <<<"$log" | awk '{s+=$1} END {print s+0}')
        stack=$(grep -o '[0-9]* bytes stack frame' <<<"$log" | awk '{s+=$1} END {print s+0}')
        printf '%-70s regs %-8s spill stores %s B, stack %s B\n' "$(basename "$k")" "$regs" \
            "$spills" "$stack"
        [[ $spills == 0 ]] || status=1
    done
    exit $status
    ;;
sass)
    # One Markdown row per kernel (registers, spills, the hottest loop's size and math share);
    # with OUT, each kernel's listing there.
    python3 "$root/scripts/sass_listing.py" --table ${3:+--out "$3"} "$dir"/*.cu
    ;;
evaluate)
    harness=${HARNESS:-$root/build/ci/harness/kevolve-harness}
    export KEVOLVE_HARNESS_INCLUDE=${KEVOLVE_HARNESS_INCLUDE:-$root/harness/include}
    jsonl=$dir/results.jsonl
    rm -f "$jsonl"
    rc=0
    python3 "$root/scripts/serve_batch.py" --harness "$harness" --check --no-profile \
        --jsonl "$jsonl" "$dir"/*.cu || rc=$?
    python3 - "$jsonl" <<'PY'
import json, statistics, sys
best = {}
print(f'{"kernel":72s} {"status":8s} {"ms":>8s} {"floor%":>7s} {"vs cuBLAS":>9s}')
for line in open(sys.argv[1]):
    r = json.loads(line)
    rep = r["event"].get("report", {})
    t = rep.get("timing", {})
    floor = rep.get("roofline", {}).get("percent_of_floor")
    sp = t.get("speedup_vs_reference")
    name = r["kernel"]
    print(f'{name:72s} {rep.get("status", "?"):8s} {t.get("median_ms") or 0:8.4f} '
          f'{floor or 0:7.1f} {sp or 0:9.3f}')
    task = name.split(".")[0]
    if rep.get("status") == "ok" and sp and ("control" not in name):
        if task not in best or sp > best[task][0]:
            best[task] = (sp, floor or 0, name)
print()
for task, (sp, floor, name) in sorted(best.items()):
    print(f'best {task:40s} {sp:.3f}x cuBLAS  {floor:5.1f}% of floor  ({name})')
inference = [v[0] for k, v in best.items() if "_m" in k and "fp32" not in k]
if inference:
    print(f'median best speed-up over the {len(inference)} inference tasks: '
          f'{statistics.median(inference):.3f}x')
PY
    exit $rc
    ;;
*)
    echo "run.sh: unknown mode '$mode' (generate, compile, sass or evaluate)" >&2
    exit 2
    ;;
esac
