#!/usr/bin/env bash
# On a GPU host (issue 15, classes 5-9; harness/THREAT_MODEL.md): the sandbox must not cost a
# correct kernel anything and must be in force.
#   1. one `eval` of a correct kernel: status ok, and its report says that the seccomp filter is on
#      every thread, that Landlock is active (with its ABI), that the result channel was clean,
#      that the load-time code is the toolchain's, and that the reference's counters were taken
#      before the candidate was loaded (or came from the cache);
#   2. the hostile kernels of classes 5-9 through ONE `serve` (keys set in its environment), each
#      in its expected status, the server answering after every one.
# Uses $KEVOLVE_HARNESS or build/gpu-host/harness/kevolve-harness; results in $OUT
# (default out/sandbox-check). Exit 0 when both hold.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export PATH="/usr/local/cuda/bin:$PATH"
H=${KEVOLVE_HARNESS:-$root/build/gpu-host/harness/kevolve-harness}
out=${OUT:-$root/out/sandbox-check}
mkdir -p "$out"
status=0

"$H" eval --task resources/tasks/gemm_fp16_fp32_4096.json \
    --kernel tests/harness/kernels/ok_regblock.cu --out "$out/ok_regblock.json" \
    2>"$out/ok_regblock.err" || status=1
python3 - "$out/ok_regblock.json" <<'PY' || status=1
import json, sys
r = json.load(open(sys.argv[1]))
checks = {c["name"]: c for c in r.get("rules", {}).get("checks", [])}
for name in ("load_time_code", "sandbox", "result_channel"):
    c = checks.get(name, {})
    print(f"{name:16s} ok={c.get('ok')}: {c.get('evidence')}")
sandbox = checks.get("sandbox", {}).get("evidence", "")
problems = []
if r.get("status") != "ok":
    problems.append(f"status {r.get('status')}: {r.get('message')}")
if "on every thread" not in sandbox:
    problems.append("the seccomp filter is not on every thread")
if "Landlock ABI" not in sandbox or " active:" not in sandbox:
    problems.append("Landlock is not active (kernel without Landlock, or it failed: see the evidence)")
for name in ("load_time_code", "result_channel"):
    if not checks.get(name, {}).get("ok"):
        problems.append(f"{name} did not pass")
m = r.get("metrics", {})
print(f"metrics          available={m.get('available')}: {m.get('reason', '')}")
print(f"reference_source {m.get('reference_source')}")
if m.get("available") and str(m.get("reference_source", "")).startswith("profiled (not cached"):
    problems.append("the profiling child did not report the reference before loading the candidate")
if not m.get("available"):
    print("WARNING: no counters (CAP_SYS_ADMIN kept in the profiling child? see the reason)")
print("status:", r.get("status"), "-", r.get("message"))
for p in problems:
    print("PROBLEM:", p)
sys.exit(1 if problems else 0)
PY

OPENAI_API_KEY=${OPENAI_API_KEY:-kevolve-suite-not-a-key} \
    KEVOLVE_API_KEY=${KEVOLVE_API_KEY:-kevolve-suite-not-a-key} \
    python3 scripts/serve_batch.py --harness "$H" --check --jsonl "$out/hostile.jsonl" \
    tests/harness/kernels/bad_init_section.cu tests/harness/kernels/bad_ifunc.cu \
    tests/harness/kernels/bad_write_files_nolint.cu tests/harness/kernels/bad_kill_parent_nolint.cu \
    tests/harness/kernels/bad_setpgid_hang_nolint.cu \
    tests/harness/kernels/bad_channel_flood_nolint.cu tests/harness/kernels/bad_leak_key_nolint.cu \
    tests/harness/kernels/ok_regblock.cu | tee "$out/hostile.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
ls /tmp/kevolve-escaped-the-scratch-folder 2>/dev/null && { echo "PROBLEM: a file escaped"; status=1; }
echo "sandbox check: $([ $status -eq 0 ] && echo PASS || echo FAIL)"
exit $status
