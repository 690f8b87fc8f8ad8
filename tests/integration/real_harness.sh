#!/usr/bin/env bash
# kevolve-cli with the real kevolve-harness and the builtin agents.
#   real_harness.sh no-device CLI HARNESS   (CI) without a GPU: exit code 4, the "no CUDA device"
#                                           message and a valid session; skipped (77) on a GPU host
#   real_harness.sh gpu CLI HARNESS         (GPU host) three iterations end with exit 0, a best
#                                           kernel, and an export; skipped (77) without a GPU
set -u
mode=$1 cli=$2 harness=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if "$harness" probe --json | grep -q '"devices": *\[\]'; then has_gpu=0; else has_gpu=1; fi
if [ "$mode" = no-device ] && [ "$has_gpu" = 1 ]; then echo "skipped: this host has a GPU"; exit 77; fi
if [ "$mode" = gpu ] && [ "$has_gpu" = 0 ]; then echo "skipped: no CUDA device"; exit 77; fi

iterations=1
[ "$mode" = gpu ] && iterations=3
"$cli" run --task gemm_fp16_fp32_4096 --backend builtin --iterations "$iterations" --harness "$harness serve" \
    --session "$work/session" >"$work/out" 2>"$work/err"
code=$?
cat "$work/out" "$work/err"
if grep -q 'agent backend "builtin" is not available' "$work/err"; then echo "skipped: no builtin backend"; exit 77; fi
fail() { echo "FAILED: $*"; exit 1; }
if [ "$mode" = no-device ]; then
    [ "$code" = 4 ] || fail "exit code $code, expected 4"
    grep -q 'no CUDA device' "$work/err" || fail "no \"no CUDA device\" message"
    "$cli" show "$work/session" | grep -q 'no_device' || fail "the session does not hold the no_device step"
    exit 0
fi
[ "$code" = 0 ] || fail "exit code $code, expected 0"
"$cli" show "$work/session" || fail "show"
"$cli" show "$work/session" | grep -q '^ *\* v' || fail "no correct kernel in $iterations iterations"
"$cli" export "$work/session" --out "$work/export" || fail "export"
for f in kernel.cu task.json report.md report.html samples.csv environment.json reverify.sh; do
    [ -s "$work/export/$f" ] || fail "export lacks $f"
done
(cd "$work/export" && PATH="$(dirname "$harness"):$PATH" ./reverify.sh >"$work/reverify.json") || fail "reverify.sh"
grep -q '"status": *"ok"' "$work/reverify.json" || fail "re-verification did not say ok"
echo "ok"
