#!/usr/bin/env bash
# Issue 18's done-when for memory across tasks, on a GPU host: with a fresh knowledge store, a
# built-in session on task A (up to 10 steps), then a session on a task B near A (another M, another
# row length) with the same store, 3 steps. B's best within those 3 steps must reach A's best
# (speed-up for GEMM, % of the DRAM floor for layernorm), and B's v1 must cite A.
# Usage: scripts/knowledge-gpu.sh BUILD_DIR OUT_DIR [gemm|layernorm]   (e.g. build/release "$OUT";
# the third argument runs one pair only)
set -euo pipefail
build=${1:?build dir}
out=${2:?output dir}
only=${3:-}
cli="$build/app/kevolve-cli"
harness="$build/harness/kevolve-harness"
mkdir -p "$out/tasks"

gemm() { # name M
    cat > "$out/tasks/$1.json" <<JSON
{"schema_version": 1, "name": "$1",
 "description": "C = A*B, row-major, M=$2 N=12288 K=4096, f16 in and out, f32 accumulate",
 "op": "gemm", "dtypes": {"A": "f16", "B": "f16", "C": "f16", "accumulate": "f32"},
 "layout": {"A": "row", "B": "row", "C": "row"}, "shape": {"M": $2, "N": 12288, "K": 4096},
 "validation_shapes": [{"M": 100, "N": 1064, "K": 904}, {"M": 129, "N": 136, "K": 4104}],
 "alignment": {"leading_dim_multiple": 8}, "reference": "cublas", "tolerance": {"multiple": 8.0}}
JSON
}
layernorm() { # name N
    cat > "$out/tasks/$1.json" <<JSON
{"schema_version": 1, "name": "$1",
 "description": "Layer norm over rows of $2 with weight and bias, M=32768, f16 in and out",
 "op": "layernorm", "dtypes": {"X": "f16", "W": "f16", "B": "f16", "Y": "f16", "accumulate": "f32"},
 "shape": {"M": 32768, "N": $2},
 "validation_shapes": [{"M": 257, "N": 1000}, {"M": 1, "N": $2}, {"M": 33, "N": 3080}, {"M": 2, "N": 1}],
 "params": {"epsilon": 1e-05}, "alignment": {"leading_dim_multiple": 8}, "tolerance": {"multiple": 8.0}}
JSON
}
gemm gemm_f16_m128_n12288_k4096 128
gemm gemm_f16_m256_n12288_k4096 256
layernorm layernorm_f16_32768x1536 1536
layernorm layernorm_f16_32768x2048 2048

best() { # session-dir field [max-version]
    python3 - "$1" "$2" "${3:-1000000}" <<'PY'
import json, sys
best = 0.0
for line in open(sys.argv[1] + "/index.jsonl"):
    s = json.loads(line)
    if s.get("version", 0) <= int(sys.argv[3]) and s.get("status") == "ok" and not s.get("suspicious"):
        best = max(best, s.get(sys.argv[2]) or 0.0)
print(f"{best:.3f}")
PY
}

status=0
for pair in "gemm_f16_m128_n12288_k4096 gemm_f16_m256_n12288_k4096 speedup" \
    "layernorm_f16_32768x1536 layernorm_f16_32768x2048 percent_of_floor"; do
    read -r a b field <<<"$pair"
    [[ -z $only || $a == "$only"_* ]] || continue
    store="$out/knowledge-$a.sqlite"
    rm -f "$store"
    "$cli" run --task "$out/tasks/$a.json" --backend builtin --iterations 10 --plateau 0 \
        --knowledge "$store" --harness "$harness serve" --session "$out/$a" > "$out/$a.log" 2>&1 || true
    "$cli" run --task "$out/tasks/$b.json" --backend builtin --iterations 3 --plateau 0 --target 0 \
        --knowledge "$store" --harness "$harness serve" --session "$out/$b" > "$out/$b.log" 2>&1 || true
    "$cli" show "$out/$a" | tee -a "$out/summary.txt"
    "$cli" show "$out/$b" | tee -a "$out/summary.txt"
    "$cli" knowledge stats --knowledge "$store" | tee -a "$out/summary.txt"
    first=$(best "$out/$a" "$field")
    second=$(best "$out/$b" "$field" 3)
    cites=$(grep -c "from $a on" "$out/$b/plans/plan_v1.json" 2>/dev/null || true)
    cites=${cites:-0}
    verdict=$(python3 -c "print('PASS' if $second >= $first and $cites > 0 else 'FAIL')")
    [ "$verdict" = PASS ] || status=1
    echo "$a -> $b ($field): first session best $first, second session best in 3 steps $second," \
        "v1 cites $a: $cites; $verdict" | tee -a "$out/summary.txt"
done
exit $status
