#!/usr/bin/env bash
# Issue 18's done-when on a GPU host: fresh built-in sessions (beam 4) on the two held-out tasks
# of the issue (f16 GEMM 128x12288x4096 and layernorm f16 32768x1536), then a check that no
# session holds two identical kernel sources (the engine's rule: layout-normalised SHA-256).
# Usage: scripts/gpu-check-search.sh BUILD_DIR OUT_DIR   (e.g. build/ci "$OUT")
set -euo pipefail
build=${1:?build dir}
out=${2:?output dir}
cli="$build/app/kevolve-cli"
harness="$build/harness/kevolve-harness"
mkdir -p "$out/tasks"
cat > "$out/tasks/gemm_fp16_fp16_128x12288x4096.json" <<'JSON'
{"schema_version": 1, "name": "gemm_fp16_fp16_128x12288x4096",
 "description": "C = A*B, row-major, M=128 N=12288 K=4096, f16 in and out, f32 accumulate",
 "op": "gemm", "dtypes": {"A": "f16", "B": "f16", "C": "f16", "accumulate": "f32"},
 "layout": {"A": "row", "B": "row", "C": "row"}, "shape": {"M": 128, "N": 12288, "K": 4096},
 "validation_shapes": [{"M": 100, "N": 1064, "K": 904}, {"M": 129, "N": 136, "K": 4104}],
 "alignment": {"leading_dim_multiple": 8}, "reference": "cublas", "tolerance": {"multiple": 8.0}}
JSON
cat > "$out/tasks/layernorm_f16_32768x1536.json" <<'JSON'
{"schema_version": 1, "name": "layernorm_f16_32768x1536",
 "description": "Layer norm over rows of 1536 with weight and bias, M=32768, f16 in and out",
 "op": "layernorm", "dtypes": {"X": "f16", "W": "f16", "B": "f16", "Y": "f16", "accumulate": "f32"},
 "shape": {"M": 32768, "N": 1536},
 "validation_shapes": [{"M": 257, "N": 1000}, {"M": 1, "N": 1536}, {"M": 33, "N": 3080}, {"M": 2, "N": 1}],
 "params": {"epsilon": 1e-05}, "alignment": {"leading_dim_multiple": 8}, "tolerance": {"multiple": 8.0}}
JSON
for t in gemm_fp16_fp16_128x12288x4096 layernorm_f16_32768x1536; do
    for beam in 1 4; do
        s="$out/$t-beam$beam"
        start=$(date +%s)
        "$cli" run --task "$out/tasks/$t.json" --backend builtin --beam "$beam" --iterations 10 \
            --plateau 0 --knowledge off --harness "$harness serve" --session "$s" > "$s.log" 2>&1 \
            || true
        echo "$t beam $beam: $(( $(date +%s) - start )) s" | tee -a "$out/summary.txt"
        "$cli" show "$s" | tee -a "$out/summary.txt"
        # Identical kernels: the engine's hash (whitespace outside literals collapsed).
        python3 - "$s" <<'PY' | tee -a "$out/summary.txt"
import hashlib, pathlib, re, sys
seen = {}
for f in sorted(pathlib.Path(sys.argv[1]).rglob("*.cu")):
    text = f.read_text()
    h = hashlib.sha256(re.sub(r"\s+", " ", text).strip().encode()).hexdigest()
    seen.setdefault(h, []).append(f.name)
dups = [v for v in seen.values() if len(v) > 1]
print(f"{len(seen)} distinct kernels; repeats: {dups if dups else 'none'}")
PY
    done
done
