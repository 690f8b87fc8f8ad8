#!/usr/bin/env bash
# GPU host: builds the self-test once and every variant of the sweep in parallel, then runs the
# self-test on each in turn (correctness on the default shapes, ABBA timing against cuBLAS) and
# prints one summary line per variant. Logs go to $OUT (or /tmp/kev-sweep).
#
#   tests/hopper/sweep/run_sweep.sh NAME=FILE.cu[:NVCC_FLAGS][@SELFTEST_ARGS] ...
# e.g. c2t1="tests/hopper/sweep/wgmma_sweep.cu:-DKEV_CLUSTER=2 -DKEV_TMA_STORE=1"
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
nvcc=$(command -v nvcc || echo "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc")
cuobjdump=$(dirname "$nvcc")/cuobjdump
out=${OUT:-/tmp/kev-sweep}
work=/tmp/kev-sweep-build
mkdir -p "$out" "$work"

"$nvcc" -std=c++17 -O2 -gencode=arch=compute_90,code=sm_90 -I "$root/harness/include" \
    -o "$work/hopper-selftest" "$root/tests/hopper/hopper_selftest.cu" -lcublas -ldl &
names=()
for spec in "$@"; do
    name=${spec%%=*}
    rest=${spec#*=}
    file=${rest%%@*}
    flags=""
    if [[ $file == *:* ]]; then
        flags=${file#*:}
        file=${file%%:*}
    fi
    names+=("$name")
    # shellcheck disable=SC2086
    ("$nvcc" -shared -cudart shared -Xcompiler -fPIC -Xcompiler -fvisibility=hidden -O3 \
        -std=c++17 -Xptxas -v -gencode=arch=compute_90a,code=sm_90a -I "$root/harness/include" \
        $flags -o "$work/$name.so" "$file" >"$out/$name.build.log" 2>&1) &
done
wait
summary=()
for spec in "$@"; do
    name=${spec%%=*}
    args=""
    [[ $spec == *@* ]] && args=${spec#*@}
    log="$out/$name.log"
    if [[ ! -f $work/$name.so ]]; then
        summary+=("$name: BUILD FAILED ($(grep -m1 error "$out/$name.build.log"))")
        continue
    fi
    regs=$(grep -o "Used [0-9]* registers" "$out/$name.build.log" | head -1)
    spills=$(grep -o "[0-9]* bytes spill stores" "$out/$name.build.log" | head -1)
    hgmma=$("$cuobjdump" --dump-sass "$work/$name.so" 2>/dev/null | grep -c HGMMA)
    # shellcheck disable=SC2086
    timeout 100 "$work/hopper-selftest" --kernel "$work/$name.so" --samples 50 $args >"$log" 2>&1
    rc=$?
    fails=$(grep -c "FAIL" "$log")
    speed=$(grep -o "candidate .*" "$log" | tail -1)
    summary+=("$name: rc=$rc fails=$fails [$regs, $spills, $hgmma HGMMA] $speed")
done
echo "==== summary ($(date -u +%FT%TZ), $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv,noheader 2>/dev/null))"
printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
