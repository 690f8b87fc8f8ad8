#!/usr/bin/env bash
# Issue 21's done-when for the inference GEMMs: a fresh `kevolve-cli run --backend builtin` session
# of at most STEPS (default 10) steps on every small-M inference task, on the GPU host, one after
# another, each against its own `kevolve-harness serve`. Prints per task its best version and the
# session's table (kevolve-cli show); the output is kept in DIR/TASK.log and DIR/TASK.table.
#
#   HARNESS=build/gpu-host/harness/kevolve-harness CLI=path/to/kevolve-cli \
#       tests/inference/sessions.sh DIR [TASK...]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:?usage: sessions.sh DIR [TASK...]}
shift
harness=${HARNESS:-$root/build/gpu-host/harness/kevolve-harness}
cli=${CLI:-$root/build/ci/app/kevolve-cli/kevolve-cli}
steps=${STEPS:-10}
tasks=("$@")
if [[ ${#tasks[@]} -eq 0 ]]; then
    tasks=(gemm_f16_m1_n4096_k4096 gemm_f16_m16_n12288_k4096 gemm_f16_m64_n4096_k11008
           gemm_f16_m128_n12288_k4096 gemm_f16_m256_n14336_k4096 gemm_bf16_m1_n14336_k4096
           gemm_bf16_m16_n4096_k11008 gemm_bf16_m64_n4096_k4096 gemm_bf16_m128_n4096_k11008
           gemm_bf16_m256_n12288_k4096)
fi
[[ -x $harness ]] || { echo "sessions.sh: no kevolve-harness at $harness (set HARNESS)" >&2; exit 2; }
[[ -x $cli ]] || { echo "sessions.sh: no kevolve-cli at $cli (set CLI)" >&2; exit 2; }
mkdir -p "$dir"
export KEVOLVE_HARNESS_INCLUDE=${KEVOLVE_HARNESS_INCLUDE:-$root/harness/include}
status=0
for t in "${tasks[@]}"; do
    start=$(date +%s)
    # --knowledge off: fresh sessions, as the issue's done-when asks (an empty knowledge store).
    if "$cli" run --task "$t" --backend builtin --iterations "$steps" --knowledge off \
        --harness "$harness serve" > "$dir/$t.log" 2>&1; then
        :
    else
        status=1
    fi
    echo "== $t ($(( $(date +%s) - start )) s)"
    grep -E "^best:|^finished:" "$dir/$t.log" || tail -5 "$dir/$t.log"
    # The session's table: plan, status, speed-up against cuBLAS and % of the roofline floor of
    # every step.
    session=$(sed -n 's/^session: //p' "$dir/$t.log" | tail -1)
    [[ -n $session ]] && "$cli" show "$session" | tee "$dir/$t.table"
done
exit $status
