#!/usr/bin/env python3
"""Writes tests/sweeps/far/tasks: tasks of the supported ops that lie outside the grid's spacing
(tests/sweeps/grid), as a held-out suite may draw them. The grid spaces GEMMs at model widths of
4096-14336 and rows of 1024-8192 at 32 Mi elements; this set takes what it leaves out:

- GEMM: LM heads (N = 128256, vocabulary-sized), a K of 28672 (an MLP down projection), N = 57344,
  and M off the grid's steps (56, 72, 100, 136, 144, 208, 240), f16 and bf16.
- layernorm, rmsnorm, softmax: rows longer than the grid's (10240-16384), odd lengths (1000, 3000,
  5000; session 17: 1000-20000 for each op, ODD_ROWS; session 18: 2600-12000, ODD_ROWS_2), short
  rows (768), fp32, and vocabulary-sized softmax rows (32000-151936) at batches that move 64-300 MB (the row does not
  fit in one block's registers: streamed).

The task files are written by the grid's own gemm() and rowwise() (the same validation shapes).
Run it again after changing the set; the files are committed so that a sweep is reproducible.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "grid"))
import make_tasks as grid  # noqa: E402

GEMMS = [
    ("f16", 16, 128256, 4096), ("bf16", 1, 128256, 4096), ("f16", 256, 128256, 4096),
    ("bf16", 128, 8192, 28672), ("f16", 56, 28672, 4096), ("bf16", 8, 57344, 8192),
    ("f16", 72, 6144, 4096), ("bf16", 100, 10240, 2560), ("f16", 136, 5120, 13824),
    ("f16", 144, 4096, 4096), ("f16", 208, 7168, 7168), ("bf16", 240, 3072, 8192),
]
ROWWISE = [
    ("layernorm", "f16", 1000), ("layernorm", "bf16", 2560), ("layernorm", "f16", 12288),
    ("layernorm", "bf16", 16384), ("layernorm", "f32", 4096),
    ("rmsnorm", "bf16", 768), ("rmsnorm", "f16", 3000), ("rmsnorm", "f16", 10240),
    ("rmsnorm", "bf16", 16384), ("rmsnorm", "f32", 5000),
    ("softmax", "f16", 3000), ("softmax", "f32", 3000), ("softmax", "bf16", 12288),
    ("softmax", "f16", 32000), ("softmax", "bf16", 50257), ("softmax", "f16", 128256),
    ("softmax", "bf16", 151936),
]
# Session 17: row lengths that no block covers exactly, from just past a warp's registers to
# past a block's, for each op (layernorm f16, rmsnorm bf16, softmax f16).
ODD_ROWS = [1000, 1200, 1800, 2200, 4000, 6000, 9000, 20000]
ROWWISE += [(op, dtype, n) for op, dtype in (("layernorm", "f16"), ("rmsnorm", "bf16"),
                                              ("softmax", "f16"))
            for n in ODD_ROWS if (op, dtype, n) not in ROWWISE]
# Session 18: more odd lengths (between the grid's and past them), and bf16 layernorm; measured in
# session 19 (docs/benchmarks.md).
ODD_ROWS_2 = [2600, 5000, 7000, 12000]
ROWWISE += [(op, dtype, n) for op, dtype in (("layernorm", "f16"), ("layernorm", "bf16"),
                                              ("rmsnorm", "bf16"), ("softmax", "f16"))
            for n in ODD_ROWS_2 if (op, dtype, n) not in ROWWISE]

# Session 25: vocabulary rows between and past the four above (Mistral's 32768, 65536, cl100k's
# 100277, Qwen2's 152064, Gemma's 256000, 40000), where the bulk default's split was swept; session
# 26: f32 rows of 24000 (the bulk kernel's exponentials stored in f32).
VOCAB = [("softmax", "bf16", 32768), ("softmax", "f16", 40000), ("softmax", "f16", 65536),
         ("softmax", "bf16", 100277), ("softmax", "f16", 152064), ("softmax", "bf16", 256000),
         ("softmax", "f32", 24000)]
ROWWISE += [v for v in VOCAB if v not in ROWWISE]


def main():
    tasks = [grid.gemm(*g) for g in GEMMS]
    elements = 32 * 1024 * 1024
    for op, dtype, n in ROWWISE:
        rows = max(8, elements // n // 8 * 8)
        tasks.append(grid.rowwise(op, dtype, rows, n))
    grid.write_tasks(tasks, os.path.join(HERE, "tasks"))


if __name__ == "__main__":
    main()
