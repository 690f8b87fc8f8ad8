#!/usr/bin/env python3
"""SASS listings of candidate kernels, without a GPU.

  scripts/sass_listing.py [--arch sm_90a] [--out DIR] [--table] KERNEL.cu...

Compiles each kernel to a cubin (nvcc -cubin -Xptxas -v, the harness's include directory), and
disassembles it with nvdisasm. For each kernel it writes DIR/NAME.sass: the compiler versions, each
function's registers, spills, shared memory and instruction mix, and the listing of the hottest
loop (the backward branch whose body holds the most math instructions: FFMA, HMMA, HGMMA, ...),
with runs of more than 8 consecutive instructions of one opcode shown as their first 3, a count and
their last. --table prints one Markdown row per kernel (registers, spills, the loop's size and
its math share) for docs/benchmarks.md.

nvdisasm comes from $NVDISASM, PATH, nvcc's own directory, or PyPI's nvidia-cuda-nvdisasm
(`pip install nvidia-cuda-nvdisasm`, which installs it under site-packages/nvidia/cu13/bin): the
CUDA 13.0 toolkit of the development machines has no nvdisasm or cuobjdump.
"""
import argparse
import collections
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
TENSOR = {"HMMA", "HGMMA", "IMMA", "DMMA", "QGMMA", "IGMMA"}
MATH = TENSOR | {"FFMA", "FMUL", "FADD", "HFMA2", "DFMA", "FFMA2"}


def find_nvdisasm(nvcc):
    candidates = [os.environ.get("NVDISASM"), shutil.which("nvdisasm")]
    nvcc_path = shutil.which(nvcc)
    if nvcc_path:
        candidates.append(str(pathlib.Path(nvcc_path).resolve().parent / "nvdisasm"))
    try:
        import nvidia  # PyPI's namespace package of CUDA components

        for base in nvidia.__path__:
            candidates += sorted(str(p) for p in pathlib.Path(base).glob("cu*/bin/nvdisasm"))
    except ImportError:
        pass
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return c
    sys.exit("sass_listing.py: no nvdisasm (set NVDISASM, or pip install nvidia-cuda-nvdisasm)")


def version(tool):
    out = subprocess.run([tool, "--version"], capture_output=True, text=True).stdout
    return out.strip().splitlines()[-1] if out.strip() else "?"


def ptxas_resources(log):
    """Per function (mangled name): registers, spill store bytes, spill load bytes, shared bytes."""
    res = {}
    current = None
    for line in log.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'|Function properties for (\S+)", line)
        if m:
            current = m.group(1) or m.group(2)
            res.setdefault(current, {})
        if current is None:
            continue
        m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            res[current]["spill_stores"] = int(m.group(1))
            res[current]["spill_loads"] = int(m.group(2))
        m = re.search(r"Used (\d+) registers", line)
        if m:
            res[current]["registers"] = int(m.group(1))
            m2 = re.search(r"(\d+) bytes smem", line)
            res[current]["smem"] = int(m2.group(1)) if m2 else 0
    return res


INSTR = re.compile(r"^\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
LABEL = re.compile(r"^(\.L_x_\d+):")
FUNC_TEXT = re.compile(r"^\s*\.text\.(\S+):")
FUNC_LABEL = re.compile(r"^([A-Za-z_]\w*):\s*$")


def parse_functions(sass):
    """{function: [(labels, address, text, opcode)]} from nvdisasm -c output (labels: those
    placed just before the instruction)."""
    funcs = collections.OrderedDict()
    current = None
    pending = []
    for line in sass.splitlines():
        m = FUNC_TEXT.match(line) or FUNC_LABEL.match(line)
        if m and not line.startswith(".L"):
            current = m.group(1)
            funcs[current] = []
            continue
        if current is None:
            continue
        m = LABEL.match(line)
        if m:
            pending.append(m.group(1))
            continue
        m = INSTR.match(line)
        if m:
            text = m.group(2)
            body = re.sub(r"^@!?U?P\w+\s+", "", text)
            opcode = body.split()[0] if body.split() else "?"
            funcs[current].append((pending, m.group(1), text, opcode))
            pending = []
    return funcs


def hottest_loop(ins):
    """(math, start, end) of the loop with the most math instructions; a loop nested in it with
    at least 95% of its math (the steady state without the outer loop's bookkeeping) wins."""
    labels = {}
    for i, (lab, _, _, _) in enumerate(ins):
        for name in lab:
            labels[name] = i
    loops = []
    for i, (_, _, text, opcode) in enumerate(ins):
        if not opcode.startswith("BRA"):
            continue
        m = re.search(r"(\.L_x_\d+)", text)
        if not m or labels.get(m.group(1), i + 1) > i:
            continue
        start = labels[m.group(1)]
        ops = [x[3].split(".")[0] for x in ins[start : i + 1]]
        tensor = sum(1 for o in ops if o in TENSOR)
        math = sum(1 for o in ops if o in MATH)
        if math:
            loops.append((tensor, math, start, i))
    if not loops:
        return None
    # Tensor-core loops first (one HGMMA does the work of thousands of FFMAs), then math.
    best = max(loops, key=lambda l: (l[0], l[1], -(l[3] - l[2])))
    inner = [l for l in loops
             if best[2] <= l[2] and l[3] <= best[3] and l[0] >= 0.95 * best[0]
             and (best[0] > 0 or l[1] >= 0.95 * best[1])]
    tensor, math, start, end = min(inner, key=lambda l: l[3] - l[2])
    return math, start, end


def mix(ins):
    c = collections.Counter(x[3].split(".")[0] for x in ins)
    return ", ".join(f"{k} {v}" for k, v in c.most_common(16))


def collapsed(ins):
    out = []
    i = 0
    while i < len(ins):
        j = i
        while j + 1 < len(ins) and ins[j + 1][3] == ins[i][3] and not ins[j + 1][0]:
            j += 1
        run = ins[i : j + 1]
        if len(run) > 8:
            shown = run[:3] + [None] + run[-1:]
        else:
            shown = run
        for x in shown:
            if x is None:
                out.append(f"        ... {len(run) - 4} more {ins[i][3]} ...")
                continue
            for name in x[0]:
                out.append(f"{name}:")
            out.append(f"  /*{x[1]}*/  {x[2]} ;")
        i = j + 1
    return out


def short_name(mangled):
    """The function's own name: gemmFmaWarpTile of (anonymous namespace)::gemmFmaWarpTile(...)."""
    full = demangle(mangled).replace("(anonymous namespace)::", "")
    return full.split("(")[0].split("::")[-1].split("<")[0].strip() or mangled


def demangle(name):
    cxxfilt = shutil.which("c++filt")
    if not cxxfilt:
        return name
    return subprocess.run([cxxfilt, name], capture_output=True, text=True).stdout.strip() or name


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kernels", nargs="+")
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--out", default=None, help="directory for NAME.sass (default: none)")
    ap.add_argument("--table", action="store_true", help="print a Markdown row per kernel")
    ap.add_argument("--nvcc", default=os.environ.get("NVCC", "nvcc"))
    args = ap.parse_args()
    nvdisasm = find_nvdisasm(args.nvcc)
    compute = args.arch.replace("sm_", "compute_")
    tools = f"{version(args.nvcc)}; nvdisasm {version(nvdisasm)}"
    if args.out:
        os.makedirs(args.out, exist_ok=True)
    status = 0
    if args.table:
        print("| kernel `function` | registers | spills (B) | hottest loop: instructions, math share | its mix |")
        print("|---|---|---|---|---|")
    for kernel in args.kernels:
        name = pathlib.Path(kernel).stem
        with tempfile.TemporaryDirectory() as tmp:
            cubin = os.path.join(tmp, "k.cubin")
            cmd = [args.nvcc, "-std=c++17", "-O3", f"-gencode=arch={compute},code={args.arch}",
                   "-Xptxas", "-v", "-I", str(ROOT / "harness" / "include"), "-cubin", "-o", cubin,
                   kernel]
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                print(f"{kernel}: nvcc failed\n{p.stderr}", file=sys.stderr)
                status = 1
                continue
            res = ptxas_resources(p.stderr)
            sass = subprocess.run([nvdisasm, "-c", cubin], capture_output=True, text=True,
                                  check=True).stdout
        funcs = parse_functions(sass)
        lines = [f"// SASS of {pathlib.Path(kernel).name} for {args.arch}", f"// {tools}", ""]
        rows = []
        for func, ins in funcs.items():
            r = res.get(func, {})
            spills = r.get("spill_stores", 0) + r.get("spill_loads", 0)
            lines.append(f"// function {demangle(func)}")
            lines.append(f"//   registers {r.get('registers', '?')}, spill stores "
                         f"{r.get('spill_stores', 0)} B, spill loads {r.get('spill_loads', 0)} B, "
                         f"static shared {r.get('smem', 0)} B, {len(ins)} instructions")
            lines.append(f"//   mix: {mix(ins)}")
            loop = hottest_loop(ins)
            if loop is None:
                lines.append("//   no loop with math instructions")
                lines.append("")
                continue
            math, start, end = loop
            body = ins[start : end + 1]
            share = 100.0 * math / len(body)
            lines.append(f"//   hottest loop: {len(body)} instructions, {math} math ({share:.1f}%)")
            lines.append(f"//   its mix: {mix(body)}")
            lines.append("")
            lines += collapsed(body)
            lines.append("")
            rows.append((short_name(func), r.get("registers", "?"), spills, len(body), share,
                         mix(body)))
        if args.out:
            pathlib.Path(args.out, name + ".sass").write_text("\n".join(lines) + "\n")
        for func, regs, spills, size, share, body_mix in rows:
            if args.table:
                print(f"| {name} `{func}` | {regs} | {spills} | {size}, {share:.1f}% | "
                      f"{', '.join(body_mix.split(', ')[:6])} |")
            else:
                print(f"{name} {func}: registers {regs}, spills {spills} B, hottest loop {size} "
                      f"instructions, {share:.1f}% math")
    return status


if __name__ == "__main__":
    sys.exit(main())
