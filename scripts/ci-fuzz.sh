#!/usr/bin/env bash
# CI's fuzzing step (issue 24): installs clang and libFuzzer (Debian's clang, libfuzzer-14-dev),
# builds the fuzz preset (tests/fuzz, ASan + UBSan, in build/fuzz) and runs every target for a
# bounded time on a seed corpus from the repository's fixtures. Any finding (crash, leak, UB,
# time-out, out-of-memory) fails the step; its reproducer is kept under build/fuzz/artifacts and
# must become a regression test in the normal suite.
#
#   KEVOLVE_FUZZ_SECONDS   seconds per target (default 60)
#   KEVOLVE_FUZZ_RUNS      instead: exactly this many inputs per target, from KEVOLVE_FUZZ_SEED (1)
#   KEVOLVE_FUZZ_TARGETS   space-separated subset of targets (default: all that were built)
#   KEVOLVE_FUZZ_BUILD_DIR build folder (default build/fuzz)
#   KEVOLVE_FUZZ_JOBS      targets fuzzed at once (default 2, one core each)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
seconds=${KEVOLVE_FUZZ_SECONDS:-60}
build=${KEVOLVE_FUZZ_BUILD_DIR:-build/fuzz}
t0=$(date +%s)
stamp() { echo "ci-fuzz: $1 took $(( $(date +%s) - $2 )) s"; }

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
missing=()
for p in clang libfuzzer-14-dev; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
stamp "installing clang and libFuzzer" "$t0"

t1=$(date +%s)
if [ "$build" = build/fuzz ]; then
    cmake --preset fuzz >/dev/null
else
    cmake --preset fuzz -B "$build" >/dev/null
fi
cmake --build "$build" --target fuzz_all
stamp "building the fuzz targets" "$t1"

# Seeds: the repository's fixtures, per target.
seeds="$build/seeds"
rm -rf "$seeds"
mkdir -p "$seeds"
seed() { # seed TARGET FILE...
    local target=$1
    shift
    mkdir -p "$seeds/$target"
    for f in "$@"; do
        if [ -f "$f" ]; then cp "$f" "$seeds/$target/$(echo "$f" | tr '/' '_')"; fi
    done
}
tasks=(resources/tasks/*.json tests/builtin/tasks/*.json resources/examples/*/task.json)
seed fuzz_json "${tasks[@]}" tests/fuzz/corpus/request/* tests/data/reports/*.json \
    resources/examples/*/session.json
seed fuzz_request tests/fuzz/corpus/request/*
seed fuzz_task_harness "${tasks[@]}"
seed fuzz_task_core "${tasks[@]}"
seed fuzz_session_index resources/examples/*/index.jsonl
seed fuzz_settings resources/examples/*/session.json
seed fuzz_llm_reply tests/fuzz/corpus/llm_reply/* tests/llm/golden/* tests/llm/data/kernel_v7.cu
seed fuzz_elf_lint "$build"/tests/fuzz/libkev_fuzz_elf_seed.so

targets=${KEVOLVE_FUZZ_TARGETS:-fuzz_json fuzz_request fuzz_task_harness fuzz_elf_lint fuzz_task_core fuzz_session_index fuzz_settings fuzz_llm_reply}
artifacts="$build/artifacts"
mkdir -p "$artifacts"
jobs=${KEVOLVE_FUZZ_JOBS:-2}

# The budget of each target: $seconds of exploration, or, with KEVOLVE_FUZZ_RUNS=N, exactly N inputs
# from a fixed seed, so that a run that passed here passes again on the same sources (CI's gate;
# open-ended exploration is the time budget's job).
if [ -n "${KEVOLVE_FUZZ_RUNS:-}" ]; then
    budget=(-runs="$KEVOLVE_FUZZ_RUNS" -seed="${KEVOLVE_FUZZ_SEED:-1}")
else
    budget=(-max_total_time="$seconds")
fi

# run TARGET: one target for its budget; its verdict in $build/TARGET.verdict.
run() {
    local target=$1 exe="$build/tests/fuzz/$1" corpus="$build/corpus/$1" t=$(date +%s)
    if [ ! -x "$exe" ]; then
        echo "ci-fuzz: $target was not built (its library is not configured)" >&2
        echo "not built" >"$build/$target.verdict"
        return
    fi
    mkdir -p "$corpus" "$seeds/$target"
    # -timeout: one input taking longer is a finding (a hang); -rss_limit_mb: so is a blow-up.
    if ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        "$exe" "${budget[@]}" -timeout=10 -rss_limit_mb=2560 -max_len=65536 \
        -print_final_stats=1 -artifact_prefix="$artifacts/$target-" "$corpus" "$seeds/$target" \
        >"$build/$target.log" 2>&1; then
        echo ok >"$build/$target.verdict"
    else
        echo finding >"$build/$target.verdict"
    fi
    grep -E "^stat::number_of_executed_units|^stat::new_units_added" "$build/$target.log" |
        sed "s/^/ci-fuzz: $target /" || true
    stamp "$target" "$t"
}

# Each libFuzzer process uses one core: $jobs of them at a time.
running=0
for target in $targets; do
    run "$target" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
        wait -n || true
        running=$((running - 1))
    fi
done
wait || true
failed=()
for target in $targets; do
    verdict=$(cat "$build/$target.verdict" 2>/dev/null || echo "no verdict")
    if [ "$verdict" != ok ]; then
        failed+=("$target ($verdict)")
        [ -f "$build/$target.log" ] && tail -n 60 "$build/$target.log" >&2
    fi
done
stamp "the whole fuzz step" "$t0"
if [ "${#failed[@]}" -gt 0 ]; then
    echo "ci-fuzz: FINDINGS in: ${failed[*]} (reproducers in $root/$artifacts)" >&2
    exit 1
fi
echo "ci-fuzz: no finding in $targets"
