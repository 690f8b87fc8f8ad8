#!/usr/bin/env python3
"""scripts/sass_listing.py's reading of nvdisasm output, on a recorded listing (fixture.sass, of
fixture.cu; no nvcc or nvdisasm needed): the function, the hottest loop (a tensor-core loop before
a longer FFMA loop, the inner loop before the one around it), runs collapsed, ptxas's figures."""
import pathlib
import shutil
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2] / "scripts"))
import sass_listing as sl  # noqa: E402

FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)


def main():
    funcs = sl.parse_functions((HERE / "fixture.sass").read_text())
    check(list(funcs) == ["_Z7fixturePKjS0_Pfii"], f"functions: {list(funcs)}")
    ins = funcs.get("_Z7fixturePKjS0_Pfii", [])
    check(len(ins) > 100, f"{len(ins)} instructions")
    ops = [x[3].split(".")[0] for x in ins]
    check(ops.count("HMMA") == 1 and ops.count("FFMA") >= 16, f"mix: {sl.mix(ins)}")

    # The tensor loop (1 HMMA) beats the FFMA loop (16 FFMAs), and it is the inner loop, not the
    # outer one around it (which holds the same HMMA).
    loop = sl.hottest_loop(ins)
    check(loop is not None, "no loop found")
    if loop:
        math, start, end = loop
        body = [x[3].split(".")[0] for x in ins[start : end + 1]]
        check(body.count("HMMA") == 1 and "FFMA" not in body, f"hottest loop: {body}")
        check(body[-1] == "BRA" and len(body) < 40, f"not the inner loop: {len(body)} instructions")

    # Without tensor instructions, the FFMA loop is the hottest.
    no_tensor = [(lab, addr, text, "NOP" if op.startswith("HMMA") else op)
                 for lab, addr, text, op in ins]
    loop = sl.hottest_loop(no_tensor)
    if loop:
        body = [x[3].split(".")[0] for x in no_tensor[loop[1] : loop[2] + 1]]
        check(body.count("FFMA") == 16, f"FFMA loop: {body}")
    else:
        check(False, "no FFMA loop")

    # Runs of more than 8 of one opcode: the first 3, a count, the last.
    run = [([], f"{i:04x}", "FFMA R1, R2, R3, R1", "FFMA") for i in range(12)]
    lines = sl.collapsed(run)
    check(len(lines) == 5 and "... 8 more FFMA ..." in lines[3], f"collapsed: {lines}")
    check(len(sl.collapsed(run[:8])) == 8, "a run of 8 is shown whole")

    log = """ptxas info    : Compiling entry function '_Z1kPf' for 'sm_90a'
ptxas info    : Function properties for _Z1kPf
    16 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 1024 bytes smem, 380 bytes cmem[0]"""
    res = sl.ptxas_resources(log).get("_Z1kPf", {})
    check(res == {"spill_stores": 8, "spill_loads": 12, "registers": 255, "smem": 1024},
          f"ptxas: {res}")
    if shutil.which("c++filt"):
        check(sl.short_name("_ZN12_GLOBAL__N_14gemmEPKf") == "gemm",
              sl.short_name("_ZN12_GLOBAL__N_14gemmEPKf"))

    for f in FAILS:
        print("FAIL:", f)
    print("sass_listing: %d checks failed" % len(FAILS) if FAILS else "sass_listing: all passed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
