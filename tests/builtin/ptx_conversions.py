#!/usr/bin/env python3
"""The row-wise kernels that hold rows packed convert bf16 a 32-bit word at a time, with integer
ops (a shift, a mask), not with scalar cvt.f32.bf16: nvcc lowers each scalar conversion of a
word's upper element to a byte permute and a shift, about 10% more instructions in a layernorm
row's loop than its f16 twin (session 20). Compiles the golden defaults of bf16 layernorm,
rmsnorm and softmax to PTX and counts the scalar conversions in each prefetching kernel: at most
one (layernorm's shift, the row's first element).

  ptx_conversions.py --nvcc NVCC --include HARNESS_INCLUDE --golden tests/builtin/golden/default
"""
import argparse
import pathlib
import re
import subprocess
import sys
import tempfile


def entries(ptx):
    """(name, body) of each .entry of a PTX file."""
    starts = [m for m in re.finditer(r"^(?:\.visible\s+)?\.entry\s+(\S+?)\(", ptx, re.M)]
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(ptx)
        yield m.group(1), ptx[m.end():end]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvcc", required=True)
    ap.add_argument("--include", required=True)
    ap.add_argument("--golden", required=True)
    args = ap.parse_args()
    kernels = sorted(pathlib.Path(args.golden).glob("*_bf16_*__rowwise__*.cu"))
    kernels = [k for k in kernels if re.match(r"(layernorm|rmsnorm|softmax)_", k.name)]
    fails, checked = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for k in kernels:
            ptx = pathlib.Path(tmp) / (k.stem + ".ptx")
            r = subprocess.run([args.nvcc, "-ptx", "-arch", "sm_90a", "-std=c++17", "-I",
                                args.include, "-o", str(ptx), str(k)],
                               capture_output=True, text=True)
            if r.returncode != 0:
                fails.append(f"{k.name}: nvcc failed:\n{r.stderr[-2000:]}")
                continue
            for name, body in entries(ptx.read_text()):
                if "Prefetch" not in name:
                    continue
                checked += 1
                scalar = body.count("cvt.f32.bf16")
                print(f"{k.name} {name}: {scalar} scalar cvt.f32.bf16")
                if scalar > 1:
                    fails.append(f"{k.name} {name}: {scalar} scalar cvt.f32.bf16 (at most 1)")
    if checked == 0:
        fails.append(f"no prefetching bf16 row-wise kernel among {len(kernels)} golden files")
    for f in fails:
        print("FAIL:", f)
    print(f"{checked} kernels checked, {len(fails)} failures")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
