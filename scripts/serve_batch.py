#!/usr/bin/env python3
"""Evaluates many kernels through ONE `kevolve-harness serve` process (compiles in parallel, GPU
work serial) and prints a table. Each kernel's header comments may say `// expect: STATUS`,
`// task: FILE.json` (in resources/tasks), `// lint: off` and `// timeout: S`; with --check, a
status other than the expected one fails the run. At the end the server must still answer
`hello`, which is the point of the corpus: no candidate takes the referee down.

  scripts/serve_batch.py --harness BIN [--check] [--jsonl OUT] [--default-task T] KERNEL.cu...
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def headers(path):
    h = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"\s*//\s*(expect|task|lint|timeout):\s*(\S+)", line)
            if m:
                h[m.group(1)] = m.group(2)
            elif line.strip() and not line.lstrip().startswith("//"):
                break
    return h


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--harness", required=True)
    ap.add_argument("--check", action="store_true", help="fail unless every status is the expected one")
    ap.add_argument("--jsonl", help="write every report here, one per line")
    ap.add_argument("--default-task", default="gemm_fp16_fp32_4096.json")
    ap.add_argument("--task", help="task file for every kernel (overrides headers)")
    ap.add_argument("--no-profile", action="store_true", help="skip the hardware-counter child")
    ap.add_argument("kernels", nargs="+")
    args = ap.parse_args()

    server = subprocess.Popen([args.harness, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, bufsize=1)
    pending = {}
    for i, k in enumerate(args.kernels):
        h = headers(k)
        task = args.task or os.path.join(ROOT, "resources", "tasks", h.get("task", args.default_task))
        opts = {"lint": h.get("lint", "on") != "off"}
        if args.no_profile:
            opts["profile"] = "never"
        if "timeout" in h:
            opts["run_timeout_s"] = float(h["timeout"])
        rid = f"k{i}"
        with open(k) as f:
            source = f.read()
        req = {"v": 1, "id": rid, "op": "eval", "task_path": task,
               "kernel": {"language": "cuda", "source": source, "name": os.path.basename(k)},
               "options": opts}
        server.stdin.write(json.dumps(req) + "\n")
        pending[rid] = (k, h.get("expect"), time.monotonic())
    server.stdin.flush()

    out = open(args.jsonl, "w") if args.jsonl else None
    rows, failures = [], 0
    # The server must answer after EVERY kernel (a candidate that signals its parent included).
    asked, answered = set(), set()
    while pending:
        line = server.stdout.readline()
        if not line:
            print("serve exited before answering every request", file=sys.stderr)
            return 3
        ev = json.loads(line)
        rid = ev.get("id")
        if ev.get("event") == "hello" and rid in asked:
            answered.add(rid)
            continue
        if rid not in pending or ev.get("event") not in ("result", "error", "cancelled"):
            continue
        k, expect, t0 = pending.pop(rid)
        asked.add(f"alive-{rid}")
        server.stdin.write(json.dumps({"v": 1, "id": f"alive-{rid}", "op": "hello"}) + "\n")
        server.stdin.flush()
        rep = ev.get("report", {})
        status = rep.get("status", ev.get("event"))
        t = rep.get("timing", {})
        ok = expect is None or status == expect
        failures += 0 if ok else 1
        rows.append((os.path.basename(k), expect or "-", status, t.get("speedup_vs_reference"),
                     t.get("median_ms"), t.get("reference_median_ms"), rep.get("stages", {}).get("total_s"),
                     "" if ok else "  <-- MISMATCH", rep.get("message", ev.get("message", ""))))
        if out:
            out.write(json.dumps({"kernel": os.path.basename(k), "expect": expect, "event": ev}) + "\n")
    server.stdin.write(json.dumps({"v": 1, "id": "alive", "op": "hello"}) + "\n")
    server.stdin.flush()
    alive = False
    while True:
        line = server.stdout.readline()
        if not line:
            break
        ev = json.loads(line)
        if ev.get("event") == "hello" and ev.get("id") in asked:
            answered.add(ev.get("id"))
        if ev.get("id") == "alive" and ev.get("event") == "hello":
            alive = answered == asked
            break
    server.stdin.write(json.dumps({"v": 1, "id": "bye", "op": "shutdown"}) + "\n")
    server.stdin.flush()
    server.wait(timeout=60)

    rows.sort()
    print(f"| kernel | expected | status | speed-up vs cuBLAS | ms | cuBLAS ms | total s |")
    print("|---|---|---|---|---|---|---|")
    for name, exp, st, sp, ms, rms, tot, flag, msg in rows:
        f = lambda v, p: "-" if v is None else f"{v:.{p}f}"
        print(f"| {name} | {exp} | {st}{flag} | {f(sp, 3)} | {f(ms, 4)} | {f(rms, 4)} | {f(tot, 1)} |")
    for name, exp, st, sp, ms, rms, tot, flag, msg in rows:
        if flag or st not in ("ok",):
            print(f"  {name}: {msg[:300]}")
    print(f"server alive after the batch: {alive} (answered hello after {len(answered)} of "
          f"{len(asked)} kernels); {len(rows)} kernels, {failures} unexpected statuses")
    if args.check and (failures or not alive):
        return 1
    return 0 if alive else 1


if __name__ == "__main__":
    sys.exit(main())
