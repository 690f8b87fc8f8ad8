#!/bin/bash
# Issue 23 on a host with two GPUs: a fresh builtin session on the headline with one referee
# worker, then with two (serve --device 0 and --device 1), the same iteration count; prints the
# distinct candidates evaluated per minute of each, their ratio, the best speed-up with its
# confidence interval, and which GPU measured each step (every step's ratio comes from one GPU).
#
# usage: scripts/two-gpu-throughput.sh CLI HARNESS [ITERATIONS] [OUT_DIR]
#   e.g. scripts/two-gpu-throughput.sh build/release/app/kevolve-cli \
#            build/release/harness/kevolve-harness 12 runs/two-gpu
# Exit status: 0 when both runs finished (whatever the ratio), 1 otherwise.
set -uo pipefail

cli=${1:?usage: two-gpu-throughput.sh CLI HARNESS [ITERATIONS] [OUT_DIR]}
harness=${2:?usage: two-gpu-throughput.sh CLI HARNESS [ITERATIONS] [OUT_DIR]}
iterations=${3:-12}
out=${4:-runs/two-gpu-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$out"

gpus=$("$harness" probe --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["devices"]))')
if [ "$gpus" -lt 2 ]; then
    echo "two-gpu-throughput: this host has $gpus GPU(s); two are needed" >&2
    exit 1
fi

run() {
    local name=$1
    shift
    local start end
    start=$(date +%s.%N)
    "$cli" run --task gemm_fp16_fp32_4096 --backend builtin --beam 4 --iterations "$iterations" \
        --plateau 0 --target 0 --session "$out/$name" "$@" >"$out/$name.out" 2>"$out/$name.err"
    local code=$?
    end=$(date +%s.%N)
    echo "$start $end" >"$out/$name.wall"
    [ $code = 0 ] || { echo "two-gpu-throughput: $name ended with exit code $code (see $out/$name.err)" >&2; return 1; }
}

run one --harness "$harness serve --device 0" || exit 1
run two --harness "$harness serve --device 0" --harness "$harness serve --device 1" || exit 1

python3 - "$out" <<'EOF'
import hashlib, json, os, sys
out = sys.argv[1]

def summary(name):
    session = os.path.join(out, name)
    start, end = (float(x) for x in open(os.path.join(out, name + ".wall")).read().split())
    steps = [json.loads(l) for l in open(os.path.join(session, "index.jsonl")) if l.strip()]
    sources = set()
    for s in steps:
        path = os.path.join(session, "generated", "kernel_v%d.cu" % s["version"])
        if os.path.exists(path):
            sources.add(hashlib.sha256(open(path, "rb").read()).hexdigest())
    timed = [s for s in steps if s.get("speedup") is not None]
    best = max((s for s in timed if s["status"] == "ok" and not s["suspicious"]),
               key=lambda s: s["speedup"], default=None)
    gpus = {}
    for s in timed:
        by = s.get("measured_by", {})
        gpus.setdefault(by.get("gpu_uuid", "unknown"), 0)
        gpus[by.get("gpu_uuid", "unknown")] += 1
    minutes = (end - start) / 60
    return {"steps": len(steps), "distinct": len(sources), "minutes": minutes,
            "per_minute": len(sources) / minutes, "best": best, "gpus": gpus,
            "unattributed": sum(1 for s in timed if not s.get("measured_by", {}).get("gpu_uuid"))}

one, two = summary("one"), summary("two")
for name, s in (("one worker", one), ("two workers", two)):
    b = s["best"]
    print("%-12s %3d steps, %3d distinct candidates in %.2f min = %.1f/min; best %s; timed steps per GPU %s%s"
          % (name, s["steps"], s["distinct"], s["minutes"], s["per_minute"],
             "v%d %.4fx [%.4f, %.4f]" % (b["version"], b["speedup"], b["ci_low"], b["ci_high"]) if b else "none",
             s["gpus"], "; %d timed steps without a GPU" % s["unattributed"] if s["unattributed"] else ""))
print("throughput ratio (two / one): %.2fx (issue 23 asks >= 1.8x)" % (two["per_minute"] / one["per_minute"]))
if one["best"] and two["best"]:
    overlap = not (one["best"]["ci_high"] < two["best"]["ci_low"] or two["best"]["ci_high"] < one["best"]["ci_low"])
    print("best speed-ups' confidence intervals %s" % ("overlap" if overlap else "do NOT overlap"))
EOF
