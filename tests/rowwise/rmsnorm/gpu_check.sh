#!/usr/bin/env bash
# The rmsnorm op on a GPU host (docs/adding-an-op.md, section 9): the rowwise family's default and
# first moves for both library rmsnorm tasks must be correct on every validation shape,
# distribution and edge case against the harness's reference, and the two kernels written to fail
# one edge case each (bad_rmsnorm_no_epsilon.cu: epsilon dropped; bad_rmsnorm_half_sum.cu: an
# fp16 sum of squares) must come back incorrect with that case named. Everything goes through one
# `kevolve-harness serve` (scripts/serve_batch.py --check: any status other than a kernel's
# `// expect:` line fails the run).
#
#   tests/rowwise/rmsnorm/gpu_check.sh generate DIR   # needs kev-builtin-gen (Qt), no GPU
#   tests/rowwise/rmsnorm/gpu_check.sh evaluate DIR   # the GPU host
#   tests/rowwise/rmsnorm/gpu_check.sh all DIR        # both, where one machine has both
#
# Without generated kernels for a task, evaluate takes its committed default kernel
# (tests/builtin/golden/default/<task>__rowwise__0.cu, byte-identical to what
# `kev-builtin-gen --points default` writes), so the defaults are checked even with DIR empty.
# GEN (default build/ci/tests/builtin/kev-builtin-gen) and HARNESS
# (build/ci/harness/kevolve-harness) name the binaries; the reports go to DIR/reports.jsonl.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
mode=${1:-}
dir=${2:-}
if [[ -z $mode || -z $dir ]]; then
    sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
gen=${GEN:-$root/build/ci/tests/builtin/kev-builtin-gen}
harness=${HARNESS:-$root/build/ci/harness/kevolve-harness}
tasks=(rmsnorm_bf16_16384x4096 rmsnorm_f16_4096x8192)

generate() {
    mkdir -p "$dir"
    for task in "${tasks[@]}"; do
        rm -rf "${dir:?}/$task"
        "$gen" --task "$task" --family rowwise --points sample --max-points 8 --out "$dir/$task"
    done
}

evaluate() {
    mkdir -p "$dir"
    local kernels=()
    for task in "${tasks[@]}"; do
        # The generated set starts with the default (point 0); without it, the committed default.
        if [[ -d $dir/$task ]]; then
            kernels+=("$dir/$task"/*.cu)
        else
            kernels+=("$root/tests/builtin/golden/default/${task}__rowwise__0.cu")
        fi
    done
    kernels+=("$root"/tests/rowwise/rmsnorm/bad_*.cu)
    echo "${#kernels[@]} kernels"
    python3 "$root/scripts/serve_batch.py" --harness "$harness" --check --no-profile \
        --jsonl "$dir/reports.jsonl" "${kernels[@]}"
}

case $mode in
generate) generate ;;
evaluate) evaluate ;;
all)
    generate
    evaluate
    ;;
*)
    echo "unknown mode $mode (generate, evaluate or all)" >&2
    exit 2
    ;;
esac
