#!/usr/bin/env bash
# Long rows (issue 18): the built-in defaults of vocabulary-sized softmax rows, long layernorm and
# reduce rows and the layernorm rows of 1536 (resources/tasks), and the control strategies of
# tests/rowwise/long_rows/ (TASK.NAME.json: the same tasks without the cluster split, ...),
# generated with kev-builtin-gen, then evaluated in one `kevolve-harness serve` process
# (scripts/serve_batch.py --check --no-profile: every validation shape and edge case first, then
# interleaved timing with the L2 flushed). One line per kernel: status, time, % of the DRAM floor.
#
#   tests/rowwise/long_rows.sh generate DIR     # here: needs kev-builtin-gen (Qt), no GPU
#   tests/rowwise/long_rows.sh evaluate DIR     # the GPU host
#
# GEN (default build/ci/tests/builtin/kev-builtin-gen, else build/tests/builtin/...) and HARNESS
# (default build/ci/harness/kevolve-harness, else build/harness/...) name the binaries.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/tests/rowwise/long_rows
mode=${1:-}
dir=${2:-}
if [[ -z $mode || -z $dir ]]; then
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
# The tasks: every default is generated and must pass --check.
tasks=(
    softmax_f16_1x128256
    softmax_bf16_32x128256
    softmax_f16_256x32000
    softmax_bf16_64x151936
    softmax_f16_8x50257
    layernorm_bf16_4x65536
    reduce_max_f16_64x128256
    reduce_sum_f32_1x262144
    layernorm_f16_32768x1536
)
first() { # the first executable of the arguments
    for b in "$@"; do [[ -x $b ]] && { echo "$b"; return; }; done
    echo "$1"
}
case $mode in
generate)
    gen=${GEN:-$(first "$root/build/ci/tests/builtin/kev-builtin-gen" "$root/build/tests/builtin/kev-builtin-gen")}
    [[ -x $gen ]] || { echo "long_rows.sh: no kev-builtin-gen at $gen (set GEN)" >&2; exit 2; }
    mkdir -p "$dir"
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    one() { # out task [strategy]
        rm -rf "$tmp/o"
        if [[ $# -gt 2 ]]; then
            "$gen" --out "$tmp/o" --task "$root/resources/tasks/$2.json" --family rowwise \
                --strategy "$3" > /dev/null
        else
            "$gen" --out "$tmp/o" --task "$root/resources/tasks/$2.json" --family rowwise \
                --points default > /dev/null
        fi
        cp "$tmp/o/$2__rowwise__0.cu" "$1"
    }
    for t in "${tasks[@]}"; do
        one "$dir/$t.default.cu" "$t"
    done
    for j in "$here"/*.json; do
        b=$(basename "$j" .json)
        one "$dir/$b.cu" "${b%%.*}" "$j"
    done
    ls "$dir"
    ;;
evaluate)
    harness=${HARNESS:-$(first "$root/build/ci/harness/kevolve-harness" "$root/build/harness/kevolve-harness")}
    export KEVOLVE_HARNESS_INCLUDE=${KEVOLVE_HARNESS_INCLUDE:-$root/harness/include}
    jsonl=$dir/results.jsonl
    rm -f "$jsonl"
    python3 "$root/scripts/serve_batch.py" --harness "$harness" --check --no-profile \
        --jsonl "$jsonl" "$dir"/*.cu
    python3 - "$jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    rep = r["event"].get("report", {})
    t = rep.get("timing", {})
    floor = rep.get("roofline", {}).get("percent_of_floor")
    print(f'{r["kernel"].split("/")[-1]:60s} {rep.get("status", "?"):10s} '
          f'{t.get("median_ms") or 0:.4f} ms  {floor or 0:5.1f}% of floor  '
          f'{t.get("speedup_vs_reference") or 0:.3f}x')
PY
    ;;
*)
    echo "long_rows.sh: unknown mode '$mode' (generate or evaluate)" >&2
    exit 2
    ;;
esac
