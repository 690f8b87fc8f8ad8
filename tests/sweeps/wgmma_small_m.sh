#!/usr/bin/env bash
# The wgmma_tma kernels of docs/benchmarks.md, sessions 9 and 10: GEMMs with M = 64 to 256, each
# task's wgmma default and every wgmma strategy written for it (normal tiles wgBMxBN..., swapped
# ones swROWSxBN..., ...m2 in 2-CTA clusters). The library's tasks come from
# tests/inference/sweep, the tasks near them (M = 80, 96, 160, 192, 224) from tests/sweeps/nearby.
# Everything is evaluated in ONE `kevolve-harness serve`, with every validation shape checked
# first and the timing interleaved with cuBLAS's (tests/rowwise/sweep/run.sh evaluate).
#
#   tests/sweeps/wgmma_small_m.sh generate DIR   # here: needs kev-builtin-gen (Qt), no GPU
#   tests/sweeps/wgmma_small_m.sh evaluate DIR   # the GPU host: one line per kernel
#
# GEN (default build/release/tests/builtin/kev-builtin-gen) and HARNESS (see
# tests/rowwise/sweep/run.sh) name the binaries. The sessions of the same section are
# `kevolve-cli run --task TASK --backend builtin --knowledge off`, where TASK is a library name or
# tests/sweeps/nearby/tasks/NAME.json.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
mode=${1:-}
dir=${2:-}
if [[ -z $mode || -z $dir ]]; then
    sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
case $mode in
generate)
    export GEN=${GEN:-$root/build/release/tests/builtin/kev-builtin-gen}
    mkdir -p "$dir"
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    "$root/tests/inference/sweep/run.sh" generate "$tmp/library" > /dev/null
    for t in gemm_f16_m64_n4096_k11008 gemm_bf16_m64_n4096_k4096 gemm_f16_m128_n12288_k4096 \
        gemm_bf16_m128_n4096_k11008 gemm_f16_m256_n14336_k4096 gemm_bf16_m256_n12288_k4096; do
        for f in "$tmp/library/$t".wgmma_default.cu "$tmp/library/$t".wg*.cu \
            "$tmp/library/$t".sw*.cu; do
            [[ -e $f ]] && cp "$f" "$dir/"
        done
    done
    "$root/tests/sweeps/nearby/run.sh" generate "$tmp/nearby" gemm_f16_m80_n14336_k4096 \
        gemm_bf16_m96_n11008_k4096 gemm_f16_m160_n8192_k4096 gemm_f16_m192_n6144_k4096 \
        gemm_bf16_m224_n5120_k5120 > /dev/null
    for f in "$tmp/nearby"/*.default_wgmma_tma.cu "$tmp/nearby"/*.wg*.cu "$tmp/nearby"/*.sw*.cu; do
        [[ -e $f ]] && cp "$f" "$dir/"
    done
    ls "$dir" | wc -l
    ;;
evaluate)
    exec "$root/tests/rowwise/sweep/run.sh" evaluate "$dir"
    ;;
*)
    echo "wgmma_small_m.sh: unknown mode '$mode' (generate or evaluate)" >&2
    exit 2
    ;;
esac
