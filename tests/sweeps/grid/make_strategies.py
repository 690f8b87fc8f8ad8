#!/usr/bin/env python3
"""Writes the grid's probe strategies (strategies/TASK.NAME.json) around the defaults that the
first sweep of the grid found weak (docs/benchmarks.md, session 13): rows of 6144 (12 KB rows at
two blocks per SM), and M = 256 GEMMs with K = 11008 (tensor-bound split-K). Names: rowwise
`{pf|as}_{stats}_w{warps}v{width}x{vectors}_c{blocks per SM}[_d{depth}][_wreg]`; wgmma
`wg{BM}x{BN}s{stages}c{consumers}x{split}[c][g{group}][t][n{clusterN}][m{clusterM}][b{slabs}]`."""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def rowwise(warps, width, vpt, ctas, stats, pipeline="prefetch", weights="load", depth=None):
    params = {"mapping": "block", "vectors_per_thread": vpt, "stats": stats, "ctas_per_sm": ctas,
              "pipeline": pipeline, "weights": weights}
    if depth:
        params["depth"] = depth
    name = (f"{'pf' if pipeline == 'prefetch' else 'as'}_{stats}_w{warps}v{width}x{vpt}_c{ctas}"
            + (f"_d{depth}" if depth else "") + ("_wreg" if weights == "registers" else ""))
    return name, {"family": "rowwise", "block_m": 1, "block_n": 512,
                  "block_k": 16, "warps": warps, "warp_m": 0, "warp_n": 0, "mma": "fma",
                  "vector_width": width, "stages": 1, "smem_layout": "plain",
                  "smem_padding_bytes": 0, "swizzle_bytes": 0, "split_k": 1, "raster": "row",
                  "group_size": 1, "epilogue": "direct", "params": params,
                  "rationale": "grid sweep " + name}


def wgmma(bm, bn, stages, consumers, split, reduce="kernel", group=1, swapped=False,
          tma_store=False, cluster_n=1, cluster_m=1, b_slabs=1):
    name = (("sw" if swapped else "wg") + f"{bm}x{bn}s{stages}c{consumers}x{split}" +
            ("c" if reduce == "cluster" else "") + (f"g{group}" if group > 1 else "") +
            ("t" if tma_store else "") + (f"n{cluster_n}" if cluster_n > 1 else "") +
            (f"m{cluster_m}" if cluster_m > 1 else "") + (f"b{b_slabs}" if b_slabs > 1 else ""))
    params = {"schedule": "cooperative"}
    if split > 1:
        params["split_reduce"] = reduce
    if swapped:
        params["swap_rows"] = bm
    if b_slabs > 1:
        params["b_slabs"] = b_slabs
    return name, {"family": "wgmma_tma", "block_m": bm, "block_n": bn, "block_k": 64,
                  "warps": 4 * (consumers + 1), "warp_m": 0, "warp_n": 0, "mma": "wgmma",
                  "vector_width": 8, "stages": stages, "smem_layout": "swizzled",
                  "smem_padding_bytes": 0, "swizzle_bytes": 128, "split_k": split,
                  "consumer_warpgroups": consumers, "cluster_m": cluster_m, "cluster_n": cluster_n,
                  "raster": "grouped", "group_size": group,
                  "epilogue": "tma_store" if tma_store else "direct",
                  "params": params, "rationale": "grid sweep " + name}


def main():
    out = os.path.join(HERE, "strategies")
    os.makedirs(out, exist_ok=True)
    probes = []
    stats = {"layernorm": "shifted_one_pass", "rmsnorm": "one_pass", "softmax": "two_pass"}
    for op in ("layernorm", "rmsnorm", "softmax"):
        for dtype in ("f16", "bf16"):
            task = f"{op}_{dtype}_5456x6144"
            for shape in ((4, 4, 12, 4), (4, 4, 12, 3), (8, 4, 6, 3), (16, 4, 3, 2), (2, 4, 24, 8)):
                w, v, x, c = shape
                if x <= 16:
                    probes.append((task, rowwise(w, v, x, c, stats[op])))
            for n in (5120, 7168):
                probes.append((f"{op}_{dtype}_{(32 << 20) // n // 8 * 8}x{n}",
                               rowwise(8, 4, n // 1024, 3, stats[op])))
            ring = "two_pass" if op == "layernorm" else stats[op]
            probes.append((task, rowwise(8, 4, 6, 2, ring, "async", depth=3)))
            probes.append((task, rowwise(8, 4, 6, 3, ring, "async", depth=2)))
    # Second probe (call 3): 4-warp blocks with twice the vectors for rows of 10 to 16 KB, at the
    # blocks per SM that keep about 36-48 KB of rows in flight.
    for op in ("layernorm", "rmsnorm", "softmax"):
        for dtype in ("f16", "bf16"):
            for n, ctas in ((5120, 4), (5120, 3), (7168, 3), (8192, 3)):
                if ctas == 3 and n == 5120 and op != "layernorm":
                    continue
                task = f"{op}_{dtype}_{(32 << 20) // n // 8 * 8}x{n}"
                probes.append((task, rowwise(4, 4, n // 512, ctas, stats[op])))
    for dtype in ("f16", "bf16"):
        task = f"gemm_{dtype}_m256_n4096_k11008"
        for p in ((128, 256, 4, 2, 4), (256, 128, 4, 2, 4), (128, 128, 6, 2, 2), (128, 192, 5, 2, 2),
                  (128, 128, 6, 2, 3)):
            probes.append((task, wgmma(*p, group=2)))
        probes.append((task, wgmma(128, 128, 6, 2, 2, "cluster", group=2)))
    # Session 14, the M between the grid's (f16): unswapped 128-row tiles, the shapes that won at
    # M = 256, against the swapped tiles that hold all of M (split 4 at K = 11008).
    for m in (160, 192, 224):
        probes.append((f"gemm_f16_m{m}_n4096_k11008", wgmma(128, 128, 7, 2, 2, group=2)))
    for m in (192, 224):
        probes.append((f"gemm_f16_m{m}_n4096_k4096", wgmma(128, 128, 7, 2, 2, group=2)))
        probes.append((f"gemm_f16_m{m}_n14336_k4096", wgmma(128, 256, 4, 2, 1, group=2)))
    # Call 2: around the holes call 1 found (M = 160 with K = 11008, N = 14336 at M = 160 to 224,
    # N = 12288 at M = 96 and 112).
    t = "gemm_f16_m160_n4096_k11008"
    probes += [(t, wgmma(160, 128, 5, 2, 4, swapped=True)),
               (t, wgmma(160, 128, 5, 2, 3, swapped=True)),
               (t, wgmma(160, 64, 7, 1, 2, "cluster", swapped=True)),
               (t, wgmma(80, 128, 7, 2, 2, group=2, swapped=True))]
    t = "gemm_f16_m160_n14336_k4096"
    probes += [(t, wgmma(192, 128, 4, 3, 1, tma_store=True)),
               (t, wgmma(80, 256, 5, 2, 1, group=2, swapped=True))]
    for m in (192, 224):
        t = f"gemm_f16_m{m}_n14336_k4096"
        probes += [(t, wgmma(128, 256, 4, 2, 1, group=2, tma_store=True)),
                   (t, wgmma(m // 2, 256, 4, 2, 1, group=2, swapped=True))]
    for m in (96, 112):
        probes.append((f"gemm_f16_m{m}_n12288_k4096",
                       wgmma(m, 128, 7, 2, 1, swapped=True, cluster_n=4)))
    # Call 4: the ring's depth of the weakest defaults, in one serve (each default's own depth is
    # its default kernel).
    t = "gemm_f16_m160_n14336_k4096"
    probes += [(t, wgmma(160, 128, st, 2, 1, swapped=True)) for st in (4, 5)]
    t = "gemm_f16_m224_n14336_k4096"
    probes += [(t, wgmma(224, 128, st, 2, 1, swapped=True)) for st in (3, 4)]
    probes.append(("gemm_f16_m192_n14336_k4096", wgmma(192, 128, 3, 3, 1, tma_store=True)))
    t = "gemm_f16_m160_n4096_k11008"
    probes.append((t, wgmma(80, 128, 6, 2, 2, group=2, swapped=True)))
    t = "gemm_f16_m128_n12288_k4096"
    probes += [(t, wgmma(128, 128, st, 2, 1, tma_store=True)) for st in (4, 5)]
    t = "gemm_bf16_m64_n4096_k4096"
    probes += [(t, wgmma(64, 64, st, 1, 2, "cluster")) for st in (6, 10)]
    # Session 20: cuBLAS's M = 64 shape (nvjet_sm90_tst_64x32_64x16_1x2, read under ncu): 32-row
    # swapped tiles of one 64-column B chunk in 2-CTA clusters along M, each CTA loading half the
    # chunk's k-rows (params.b_slabs 2), no split-K; 12 and 16 stages.
    for dtype in ("f16", "bf16"):
        for nk in ("n4096_k4096", "n12288_k4096", "n4096_k11008", "n14336_k4096"):
            probes += [(f"gemm_{dtype}_m64_{nk}",
                        wgmma(32, 64, st, 1, 1, group=2, swapped=True, cluster_m=2, b_slabs=2))
                       for st in (12, 16)]
    for task, (name, strategy) in probes:
        with open(os.path.join(out, f"{task}.{name}.json"), "w") as f:
            json.dump(strategy, f, indent=1)
            f.write("\n")
    print(len(probes), "strategies in", out)


if __name__ == "__main__":
    main()
