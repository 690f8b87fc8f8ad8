#!/usr/bin/env bash
# A quick look at the trusted verifier on a GPU host (issue 15, classes 1-4), before the whole
# suite: the A/A self-check, one correct kernel, and the hostile kernels of classes 1-4, each
# through `kevolve-harness eval`, printing per report its status, message, the timing cross-check
# (claims_check), the verifier's stages and the GPU seconds. Reports go to $OUT (or
# out/verifier-smoke). Exit status 1 when a status differs from the kernel's `// expect:` header
# (ok for the self-check).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export PATH="/usr/local/cuda/bin:$PATH"
out=${OUT:-$root/out/verifier-smoke}
mkdir -p "$out"
H=${KEVOLVE_HARNESS:-$root/build/gpu-host/harness/kevolve-harness}
if [ ! -x "$H" ]; then
    cmake --preset gpu-host -DBUILD_TESTING=OFF >"$out/build.log" 2>&1 &&
        cmake --build --preset gpu-host --target kevolve-harness >>"$out/build.log" 2>&1 ||
        { tail -30 "$out/build.log"; exit 1; }
fi
task=resources/tasks/gemm_fp16_fp32_4096.json
status=0

show() { # report expected
    python3 - "$1" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
t = r.get("timing") or {}
c = t.get("claims_check") or {}
s = r.get("stages") or {}
print(f"  status {r.get('status')} (expected {sys.argv[2]}): {r.get('message', '')[:160]}")
if c:
    print(f"  claims_check ok={c.get('ok')} samples={c.get('samples')} floor_ms={c.get('floor_ms')}"
          f" claimed_ms={c.get('claimed_ms')} hidden_ms={c.get('hidden_ms')}"
          f" allowed_ms={c.get('allowed_ms')} {c.get('evidence', '')[:200]}")
keys = ("gpu_setup_s", "peaks_s", "validate_s", "time_s", "audit_s", "recheck_s", "gpu_total_s",
        "gpu_s", "total_s")
print("  stages " + " ".join(f"{k}={s[k]:.2f}" for k in keys if isinstance(s.get(k), (int, float))))
for chk in (r.get("rules") or {}).get("checks", []):
    if chk.get("name") in ("sandbox", "inputs_unchanged", "timing_claims", "launch_audit"):
        print(f"  check {chk.get('name')}: {chk.get('ok')} {str(chk.get('evidence'))[:120]}")
if r.get("error"):
    print(f"  error {json.dumps(r['error'])[:400]}")
sys.exit(0 if r.get("status") == sys.argv[2] else 1)
PY
}

echo "== A/A self-check"
"$H" eval --task "$task" --kernel tests/harness/kernels/ok_naive.cu --self-check \
    --out "$out/aa.json" >/dev/null 2>"$out/aa.err"
show "$out/aa.json" ok || status=1
for k in ok_regblock hostile_zero_inputs hostile_input_scratch hostile_args_rewrite \
    hostile_job_seed hostile_peek_verifier hostile_forged_ok_line hostile_forged_replies; do
    f=tests/harness/kernels/$k.cu
    expect=$(sed -n 's|^// expect: *\([a-z_]*\).*|\1|p' "$f" | head -1)
    lint=()
    grep -q '^// lint: off' "$f" && lint=(--no-lint)
    echo "== $k"
    "$H" eval --task "$task" --kernel "$f" "${lint[@]}" --out "$out/$k.json" >/dev/null \
        2>"$out/$k.err"
    show "$out/$k.json" "$expect" || status=1
done
exit $status
