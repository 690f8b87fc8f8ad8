#!/usr/bin/env python3
"""Writes the far set's probe strategies (strategies/TASK.NAME.json) around the defaults that its
first sweep found weak (docs/benchmarks.md, session 15): row-wise rows that no block covers
exactly (1000, 3000) and rows of 10240-16384; GEMMs at M = 208 (K = 7168) and M = 256 with a
vocabulary-sized N. Names as in tests/sweeps/grid/make_strategies.py; `wp` a warp per row, `mM`
and `nN` clusters along M and N."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "grid"))
import make_strategies as grid  # noqa: E402


def rowwise(warps, width, vpt, ctas, stats, mapping="block"):
    name, s = grid.rowwise(warps, width, vpt, ctas, stats)
    s["params"]["mapping"] = mapping
    if mapping == "warp":
        name = "wp_" + name
        s["rationale"] = "far sweep " + name
    return name, s


def wgmma(bm, bn, stages, consumers, split, reduce="kernel", group=1, swapped=False,
          tma_store=False, cluster_m=1, cluster_n=1):
    name, s = grid.wgmma(bm, bn, stages, consumers, split, reduce, group, swapped, tma_store,
                         cluster_n)
    if cluster_m > 1:
        s["cluster_m"] = cluster_m
        name += f"m{cluster_m}"
    s["rationale"] = "far sweep " + name
    return name, s


def main():
    out = os.path.join(HERE, "strategies")
    os.makedirs(out, exist_ok=True)
    probes = []
    # Rows of 1000 (a warp a row covers 1024) and 3000 (4 warps x 6 vectors of 4 cover 3072).
    t = "layernorm_f16_33552x1000"
    probes.append((t, rowwise(4, 8, 4, 5, "shifted_one_pass", "warp")))
    probes.append((t, rowwise(2, 4, 4, 8, "shifted_one_pass")))
    for op, stats, most in (("softmax", "two_pass", 5), ("rmsnorm", "one_pass", 6)):
        t = f"{op}_f16_11184x3000"
        for w, v, x, c in ((4, 4, 6, 5), (4, 4, 6, most), (2, 4, 12, 6)):
            probes.append((t, rowwise(w, v, x, c, stats)))
    # Long rows (16 warps, one block per SM): 8 warps, two blocks (what the registers allow).
    probes.append(("layernorm_f16_2728x12288", rowwise(8, 4, 12, 2, "shifted_one_pass")))
    probes.append(("rmsnorm_f16_3272x10240", rowwise(8, 4, 10, 2, "one_pass")))
    # M = 208, N = K = 7168 (tensor-bound; default 208x64 swapped in one consumer warpgroup).
    t = "gemm_f16_m208_n7168_k7168"
    probes += [(t, wgmma(208, 128, 4, 2, 2, swapped=True)),
               (t, wgmma(208, 128, 4, 2, 2, "cluster", swapped=True)),
               (t, wgmma(112, 128, 6, 2, 1, group=2, swapped=True)),
               (t, wgmma(128, 128, 6, 2, 1, group=2, tma_store=True)),
               (t, wgmma(128, 128, 6, 2, 1, group=2, tma_store=True, cluster_m=2))]
    # M = 256, N = 128256 (1002 tiles of 128x256: 7.6 rounds).
    t = "gemm_f16_m256_n128256_k4096"
    probes += [(t, wgmma(128, 256, 4, 2, 1, group=2, tma_store=True, cluster_m=2)),
               (t, wgmma(128, 256, 4, 2, 1, group=2, tma_store=True, cluster_m=2, cluster_n=2)),
               (t, wgmma(256, 128, 4, 2, 1, tma_store=True)),
               (t, wgmma(128, 128, 6, 2, 1, group=2, tma_store=True, cluster_m=2))]
    # Call 3: layernorm rows of 1000 with W and B in registers at the 4 blocks they allow (the
    # default loads them every row to reach 5); vocabulary rows split over 2 or 4 blocks (a
    # cluster), so that 216-256 rows fill more of their rounds of 132 SMs.
    name, s = grid.rowwise(4, 4, 8, 4, "shifted_one_pass", weights="registers")
    s["params"]["mapping"] = "warp"
    probes.append(("layernorm_f16_33552x1000", ("wp_" + name, s)))
    for t, width, splits in (("softmax_f16_256x128256", 8, (2, 4)),
                             ("softmax_bf16_216x151936", 8, (2, 4))):
        for split in splits:
            name, s = grid.rowwise(16, width, 4, 0, "one_pass", pipeline="none")
            s["params"]["split"] = split
            probes.append((t, ("none" + name[2:] + f"_k{split}", s)))
    # Session 16: long and vocabulary-sized rows split over a cluster so that each block's slice
    # fits its registers (read once from DRAM, not streamed twice), whatever the row count; the
    # async shared-memory ring for layernorm rows of 1000 (more rows in flight than the registers
    # of the prefetching warps hold).
    for t, shapes in (
            ("softmax_f16_1048x32000", ((2, 16, 4), (4, 8, 4), (2, 8, 8), (4, 16, 2))),
            ("softmax_bf16_664x50257", ((4, 16, 4), (8, 8, 4), (4, 8, 8), (8, 16, 2))),
            ("softmax_f16_256x128256", ((8, 16, 4), (8, 8, 8))),
            ("softmax_bf16_216x151936", ((8, 16, 5), (8, 8, 8))),
            ("softmax_bf16_2728x12288", ((2, 8, 3), (2, 4, 6), (4, 4, 3))),
            ("layernorm_bf16_2048x16384", ((2, 8, 4), (4, 4, 4), (2, 16, 2))),
            ("layernorm_f16_2728x12288", ((2, 8, 3), (4, 4, 3))),
            ("rmsnorm_bf16_2048x16384", ((2, 8, 4), (4, 4, 4)))):
        for split, warps, vpt in shapes:
            name, s = grid.rowwise(warps, 8, vpt, 0, "one_pass", pipeline="none")
            s["params"]["split"] = split
            probes.append((t, ("none" + name[2:] + f"_k{split}", s)))
    for ctas, depth in ((4, 4), (3, 5), (2, 6)):
        name, s = grid.rowwise(4, 4, 8, ctas, "two_pass", pipeline="async", depth=depth)
        s["params"]["mapping"] = "warp"
        probes.append(("layernorm_f16_33552x1000", ("wp_" + name, s)))
    # pipeline=bulk: the block's slice of the row copied whole into shared memory (TMA bulk
    # copies), read once; splits of 1-8 blocks per row, 8 or 16 warps.
    for t, splits in (("softmax_f16_1048x32000", (1, 2)),
                      ("softmax_bf16_664x50257", (1, 2, 4)),
                      ("softmax_f16_256x128256", (2, 4, 8)),
                      ("softmax_bf16_216x151936", (2, 4, 8)),
                      ("softmax_bf16_2728x12288", (1, 2))):
        for split in splits:
            for warps in (8, 16):
                name, s = grid.rowwise(warps, 8, 4, 0, "one_pass", pipeline="none")
                s["params"]["pipeline"] = "bulk"
                s["params"]["split"] = split
                probes.append((t, (f"bk_w{warps}v8x4_k{split}", s)))
    # (A persistent grid of clusters with two slice buffers was measured in call 3 at 25-57% of
    # the floor, against 60-78% for the block or cluster per row, and removed.)
    for task, (name, strategy) in probes:
        with open(os.path.join(out, f"{task}.{name}.json"), "w") as f:
            json.dump(strategy, f, indent=1)
            f.write("\n")
    print(f"{len(probes)} strategies in {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
