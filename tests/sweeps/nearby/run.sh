#!/usr/bin/env bash
# Tasks near the library's (issue 18's "hidden set of tasks like them", issue 21's held-out small-M
# shapes): rows of 768 to 5120 for layernorm, rmsnorm and softmax, read-only row sums of 33 and
# 100 MB (the harness's fixed overhead), and GEMMs with M = 4, 8, 32, 80, 96, 160, 192, 224 at
# model widths. Each task's built-in defaults and every strategy in strategies/ (TASK.NAME.json),
# generated with kev-builtin-gen, then evaluated in ONE `kevolve-harness serve`
# (scripts/serve_batch.py --check --no-profile: every validation shape first, then interleaved
# timing with the L2 flushed).
# The figures of docs/benchmarks.md, sessions 8 and 9, came from this set.
#
#   tests/sweeps/nearby/run.sh generate DIR [TASK...]   # here: needs kev-builtin-gen (Qt), no GPU
#   tests/sweeps/nearby/run.sh evaluate DIR             # the GPU host: one line per kernel
#
# GEN (default build/release/tests/builtin/kev-builtin-gen) and HARNESS (see
# tests/rowwise/sweep/run.sh) name the binaries; SWEEP_DIR another sweep's folder (its tasks/ and
# strategies/), as tests/sweeps/grid/run.sh does.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
here=${SWEEP_DIR:-$root/tests/sweeps/nearby}
rel=${here#"$root"/}
mode=${1:-}
dir=${2:-}
if [[ -z $mode || -z $dir ]]; then
    sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
case $mode in
generate)
    gen=${GEN:-$root/build/release/tests/builtin/kev-builtin-gen}
    [[ -x $gen ]] || { echo "run.sh: no kev-builtin-gen at $gen (set GEN)" >&2; exit 2; }
    shift 2
    mkdir -p "$dir"
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    tasks=("$@")
    [[ ${#tasks[@]} -gt 0 ]] || tasks=($(cd "$here/tasks" && ls ./*.json | sed 's|^\./||; s/\.json$//'))
    # The kernel's task header, relative to resources/tasks (where serve_batch.py looks).
    retask() { sed -i "s|^// task: .*|// task: ../../$rel/tasks/$2.json|" "$1"; }
    for t in "${tasks[@]}"; do
        rm -rf "$tmp/o"
        "$gen" --out "$tmp/o" --task "$here/tasks/$t.json" --points default > /dev/null
        for f in "$tmp"/o/*.cu; do
            [[ -e $f ]] || continue
            fam=$(basename "$f" .cu | awk -F__ '{print $2}')
            case $fam in rowwise | mma_smallm | wgmma_tma) ;; *) continue ;; esac
            cp "$f" "$dir/$t.default_$fam.cu"
            retask "$dir/$t.default_$fam.cu" "$t"
        done
        for j in "$here"/strategies/"$t".*.json; do
            [[ -e $j ]] || continue
            b=$(basename "$j" .json)
            rm -rf "$tmp/o"
            "$gen" --out "$tmp/o" --task "$here/tasks/$t.json" --strategy "$j" > /dev/null
            cp "$tmp"/o/*.cu "$dir/$b.cu"
            retask "$dir/$b.cu" "$t"
        done
    done
    ls "$dir" | wc -l
    ;;
evaluate)
    # The same evaluation and table as the row-wise sweep's (one serve, --check, no profile).
    exec "$root/tests/rowwise/sweep/run.sh" evaluate "$dir"
    ;;
*)
    echo "run.sh: unknown mode '$mode' (generate or evaluate)" >&2
    exit 2
    ;;
esac
