#!/usr/bin/env bash
# Re-records the shipped H200 GEMM example (resources/examples/h200_gemm_fp16_fp32_4096) on a GPU
# host, with the harness's hardware counters in every report (the first recording predates them,
# so the workbench's occupancy and bank-conflict columns showed "—"; issue 17, item 7).
#
#   scripts/record-example.sh [BUILD_DIR]        # default build/release (cmake --preset release)
#
# Runs the built-in backend for up to 30 iterations, checks that every timed report carries
# counters (metrics.available), and only then replaces the example. Commit the result.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/release}
cli="$build/app/kevolve-cli"
harness="$build/harness/kevolve-harness"
for exe in "$cli" "$harness"; do
    [[ -x $exe ]] || { echo "record-example: $exe is missing; build with cmake --preset release" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
session="$work/h200_gemm_fp16_fp32_4096"
"$cli" run --task gemm_fp16_fp32_4096 --backend builtin --iterations 30 \
    --session "$session" --harness "$harness serve"
python3 - "$session" <<'PY'
import glob, json, sys
session = sys.argv[1]
timed = missing = 0
for path in sorted(glob.glob(f"{session}/logs/run_v*.json")):
    report = json.load(open(path)).get("report", {})
    if report.get("status") != "ok":
        continue
    timed += 1
    metrics = report.get("metrics") or {}
    if not metrics.get("available") or not metrics.get("candidate"):
        missing += 1
        print(f"record-example: {path}: no hardware counters ({metrics.get('error', 'not profiled')})")
if timed == 0 or missing:
    sys.exit(f"record-example: {missing} of {timed} timed reports lack counters; example not replaced")
print(f"record-example: {timed} timed reports, all with counters")
PY
rm -rf "$root/resources/examples/h200_gemm_fp16_fp32_4096"
cp -r "$session" "$root/resources/examples/"
echo "record-example: replaced resources/examples/h200_gemm_fp16_fp32_4096; review and commit it"
