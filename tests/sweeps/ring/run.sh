#!/usr/bin/env bash
# The ring's depth, measured: each GEMM task's wgmma_tma default and the same kernel at other ring
# depths (only kStages differs), for one `kevolve-harness serve` on the GPU host. Session 15 made
# its new-against-old and depth tables (docs/benchmarks.md) this way.
#
#   tests/sweeps/ring/run.sh generate DIR "S1 S2 ..." TASK.json...   # here: kev-builtin-gen, no GPU
#   tests/sweeps/ring/run.sh evaluate DIR                            # the GPU host
#
# DIR gets TASK.default_sN.cu (the default, N its depth) and TASK.sM.cu for every other depth M
# that fits (the kernel checks its shared memory at launch; a depth that does not fit fails there,
# so give depths the family's constraints allow). GEN names kev-builtin-gen.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
mode=${1:-}
dir=${2:-}
if [[ -z $mode || -z $dir ]]; then
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
# evaluate (and a wrong mode) as every sweep: tests/sweeps/nearby/run.sh.
[[ $mode == generate ]] || exec "$root/tests/sweeps/nearby/run.sh" "$@"
gen=${GEN:-$root/build/release/tests/builtin/kev-builtin-gen}
[[ -x $gen ]] || { echo "run.sh: no kev-builtin-gen at $gen (set GEN)" >&2; exit 2; }
depths=${3:?depths, e.g. "5 6 7"}
shift 3
mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for task in "$@"; do
    name=$(basename "$task" .json)
    rel=$(realpath --relative-to="$root/resources/tasks" "$(realpath "$task")")
    rm -rf "$tmp/o"
    "$gen" --out "$tmp/o" --task "$task" --points default --family wgmma_tma > /dev/null
    src=$(ls "$tmp"/o/*.cu)
    own=$(sed -n 's/^constexpr int kStages = \([0-9]*\);$/\1/p' "$src")
    [[ -n $own ]] || { echo "run.sh: no kStages in the default of $task" >&2; exit 1; }
    sed "s|^// task: .*|// task: $rel|" "$src" > "$dir/$name.default_s$own.cu"
    for s in $depths; do
        [[ $s == "$own" ]] && continue
        sed -e "s|^// task: .*|// task: $rel|" \
            -e "s/^constexpr int kStages = $own;$/constexpr int kStages = $s;/" \
            "$src" > "$dir/$name.s$s.cu"
    done
done
ls "$dir" | wc -l
