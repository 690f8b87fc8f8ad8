#!/usr/bin/env python3
"""Writes the grid of tasks in tests/sweeps/grid/tasks: the class of shapes that issue 18's and
issue 21's held-out suites are drawn from, spaced evenly rather than picked near the library's.

- GEMM, C = A*B row-major, f16 and bf16 in and out, fp32 accumulate: M in {1, 16, 64, 128, 256}
  (inference batches) times N x K from common model widths (4096x4096, 12288x4096, 4096x11008,
  14336x4096); and f16 at the M between them (32, 48, 80, 96, 112, 160, 192, 224), where a tile
  of 64 or 128 rows is cut.
- layernorm, rmsnorm and softmax, f16 and bf16: rows of 1024 to 8192 elements (model widths, and
  the 4608, 5632 and 6656 that 8 warps of 16-byte vectors do not divide), 32 Mi elements a task
  (128 MiB moved, a floor of about 32 us: above the size where the fixed cost of a launch
  decides, docs/benchmarks.md session 8).

Every task validates on shapes that cut the tiles and rows (odd M, N and K off every power of two).
Run it again after changing the grid; the files are committed so that a sweep is reproducible.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def gemm(dtype, m, n, k):
    name = f"gemm_{dtype}_m{m}_n{n}_k{k}"
    lo = max(1, m - 3)
    return name, {
        "schema_version": 1,
        "name": name,
        "description": f"grid {name}: C = A*B, row-major, {dtype} in and out, fp32 accumulate",
        "op": "gemm",
        "dtypes": {"A": dtype, "B": dtype, "C": dtype, "accumulate": "f32"},
        "layout": {"A": "row", "B": "row", "C": "row"},
        "shape": {"M": m, "N": n, "K": k},
        "validation_shapes": [
            {"M": lo, "N": 1000, "K": 1032},
            {"M": m + 3, "N": 2056, "K": 4104},
        ],
        "alignment": {"leading_dim_multiple": 8},
        "reference": "cublas",
        "tolerance": {"multiple": 8.0},
    }


def rowwise(op, dtype, rows, n):
    name = f"{op}_{dtype}_{rows}x{n}"
    dtypes = {"X": dtype}
    if op == "layernorm":
        dtypes.update({"W": dtype, "B": dtype})
    elif op == "rmsnorm":
        dtypes["W"] = dtype
    dtypes.update({"Y": dtype, "accumulate": "f32"})
    task = {
        "schema_version": 1,
        "name": name,
        "description": f"grid {name}: rows of {n}, {rows} rows, {dtype} in and out, fp32 statistics",
        "op": op,
        "dtypes": dtypes,
        "shape": {"M": rows, "N": n},
        "validation_shapes": [
            {"M": 257, "N": 1000},
            {"M": 1, "N": n},
            {"M": 33, "N": n + 8 if n % 16 else n + 24},
            {"M": 2, "N": 1},
            {"M": 3, "N": 2 * n + 40},
        ],
        "params": {} if op == "softmax" else {"epsilon": 1e-05},
        "alignment": {"leading_dim_multiple": 8},
        "tolerance": {"multiple": 8.0},
    }
    return name, task


def main():
    out = os.path.join(HERE, "tasks")
    os.makedirs(out, exist_ok=True)
    tasks = []
    for dtype in ("f16", "bf16"):
        for m in (1, 16, 64, 128, 256):
            for n, k in ((4096, 4096), (12288, 4096), (4096, 11008), (14336, 4096)):
                tasks.append(gemm(dtype, m, n, k))
    for m in (32, 48, 80, 96, 112, 160, 192, 224):
        for n, k in ((4096, 4096), (12288, 4096), (4096, 11008), (14336, 4096)):
            tasks.append(gemm("f16", m, n, k))
    elements = 32 * 1024 * 1024
    for op in ("layernorm", "rmsnorm", "softmax"):
        for dtype in ("f16", "bf16"):
            for n in (1024, 2048, 3072, 4096, 4608, 5120, 5632, 6144, 6656, 7168, 8192):
                rows = elements // n // 8 * 8
                tasks.append(rowwise(op, dtype, rows, n))
    write_tasks(tasks, out)


def write_tasks(tasks, out):
    """Writes each (name, task) as out/NAME.json."""
    os.makedirs(out, exist_ok=True)
    for name, task in tasks:
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(task, f, indent=1)
            f.write("\n")
    print(f"{len(tasks)} tasks in {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
