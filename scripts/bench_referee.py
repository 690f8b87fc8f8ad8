#!/usr/bin/env python3
"""Referee benchmarks on a GPU host (issue 2, "Done when" 3 and 4).

Runs `kevolve-harness eval` repeatedly: the A/A self-check (cuBLAS against itself) and a set of
correct kernels, each several times, then prints a Markdown table for docs/benchmarks.md with the
spread of the speed-ups and the stage breakdown of one full evaluation. Every number comes from
the harness's reports, which are also written to --out-dir.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def evaluate(harness, task, kernel, self_check, out_path):
    cmd = [harness, "eval", "--task", task, "--kernel", kernel, "--out", out_path]
    if self_check:
        cmd.append("--self-check")
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()}")
    with open(out_path) as f:
        report = json.load(f)
    return report, wall


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--harness", required=True)
    ap.add_argument("--task", required=True)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("kernels", nargs="+", help="correct candidate .cu files")
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)

    rows = []
    entries = [("A/A self-check (cuBLAS vs cuBLAS)", args.kernels[0], True)]
    entries += [(os.path.basename(k), k, False) for k in args.kernels]
    first_full = None
    for label, kernel, self_check in entries:
        speedups, statuses, cand_ms, ref_ms, walls = [], [], [], [], []
        for r in range(args.repeats):
            name = f"{'aa' if self_check else os.path.splitext(os.path.basename(kernel))[0]}_{r}.json"
            report, wall = evaluate(args.harness, args.task, kernel, self_check,
                                    os.path.join(args.out_dir, name))
            statuses.append(report.get("status"))
            t = report.get("timing", {})
            if "speedup_vs_reference" in t:
                speedups.append(t["speedup_vs_reference"])
                cand_ms.append(t["median_ms"])
                ref_ms.append(t["reference_median_ms"])
            walls.append(wall)
            if first_full is None and not self_check and report.get("status") == "ok":
                first_full = (label, report, wall)
            print(f"{label} #{r}: {report.get('status')} {report.get('message', '')}", flush=True)
        spread = (max(speedups) - min(speedups)) / min(speedups) if speedups else float("nan")
        rows.append((label, statuses, speedups, spread, cand_ms, ref_ms, walls))

    env = None
    for f in sorted(os.listdir(args.out_dir)):
        with open(os.path.join(args.out_dir, f)) as fh:
            env = json.load(fh).get("environment")
        if env:
            break
    print()
    if env:
        gpu = env.get("gpu", {})
        clocks = gpu.get("clocks_mhz", {})
        print(f"GPU {gpu.get('name')} ({gpu.get('cc')}, {gpu.get('sm_count')} SMs), driver "
              f"{env.get('driver_version')}, CUDA runtime {env.get('cuda_runtime_version')}, cuBLAS "
              f"{env.get('cublas_version')}, clocks SM {clocks.get('sm')}/{clocks.get('sm_max')} MHz, "
              f"memory {clocks.get('mem')} MHz, power limit {gpu.get('power_limit_w')} W")
    print(f"task {os.path.basename(args.task)}, {args.repeats} evaluations each\n")
    print("| candidate | statuses | speed-ups vs cuBLAS | spread | candidate ms (median) | cuBLAS ms (median) | wall s (median) |")
    print("|---|---|---|---|---|---|---|")
    for label, statuses, speedups, spread, cand, ref, walls in rows:
        st = ",".join(sorted(set(statuses)))
        sp = " ".join(f"{s:.4f}" for s in speedups)
        cm = f"{statistics.median(cand):.4f}" if cand else "-"
        rm = f"{statistics.median(ref):.4f}" if ref else "-"
        print(f"| {label} | {st} | {sp} | {100 * spread:.2f}% | {cm} | {rm} | {statistics.median(walls):.2f} |")
    if first_full:
        label, report, wall = first_full
        stages = report.get("stages", {})
        print(f"\nStage breakdown of one full evaluation ({label}, wall {wall:.2f} s): " +
              ", ".join(f"{k} {v:.2f}" for k, v in stages.items() if isinstance(v, (int, float))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
