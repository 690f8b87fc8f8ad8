#!/usr/bin/env bash
# Row-wise sweep (issue 9): each task's built-in default and every strategy in strategies/
# (TASK.NAME.json), generated with kev-builtin-gen, then evaluated side by side with the reference
# in one `kevolve-harness serve` process (scripts/serve_batch.py --check --no-profile: every
# validation shape and edge case first, then interleaved timing with the L2 flushed).
#
#   tests/rowwise/sweep/run.sh generate DIR     # here: needs kev-builtin-gen (Qt), no GPU
#   tests/rowwise/sweep/run.sh evaluate DIR [CONTROL.cu ...]   # the GPU host: one line per kernel
#
# GEN (default build/tests/builtin/kev-builtin-gen) and HARNESS (build/harness/kevolve-harness)
# name the binaries. CONTROL kernels join the batch, e.g. an older commit's defaults written by that
# commit's kev-builtin-gen (`--task T --family rowwise --points default`), so old and new code are
# measured in the same process. The figures of docs/benchmarks.md, session 5, came from this set.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
here=$root/tests/rowwise/sweep
mode=${1:-}
dir=${2:-}
if [[ -z $mode || -z $dir ]]; then
    sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
case $mode in
generate)
    gen=${GEN:-$root/build/tests/builtin/kev-builtin-gen}
    [[ -x $gen ]] || { echo "run.sh: no kev-builtin-gen at $gen (set GEN)" >&2; exit 2; }
    mkdir -p "$dir"
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    one() { # out task [strategy]
        rm -rf "$tmp/o"
        if [[ $# -gt 2 ]]; then
            "$gen" --out "$tmp/o" --task "$2" --family rowwise --strategy "$3" > /dev/null
        else
            "$gen" --out "$tmp/o" --task "$2" --family rowwise --points default > /dev/null
        fi
        cp "$tmp/o/$2__rowwise__0.cu" "$1"
    }
    tasks=$(cd "$here/strategies" && ls ./*.json | sed 's|^\./||; s/\..*//' | sort -u)
    for t in $tasks; do
        one "$dir/$t.default.cu" "$t"
    done
    for j in "$here"/strategies/*.json; do
        b=$(basename "$j" .json)
        one "$dir/$b.cu" "${b%%.*}" "$j"
    done
    ls "$dir"
    ;;
evaluate)
    harness=${HARNESS:-$root/build/harness/kevolve-harness}
    shift 2
    export KEVOLVE_HARNESS_INCLUDE=${KEVOLVE_HARNESS_INCLUDE:-$root/harness/include}
    jsonl=$dir/results.jsonl
    rm -f "$jsonl"
    python3 "$root/scripts/serve_batch.py" --harness "$harness" --check --no-profile \
        --jsonl "$jsonl" "$@" "$dir"/*.cu
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
    echo "run.sh: unknown mode '$mode' (generate or evaluate)" >&2
    exit 2
    ;;
esac
