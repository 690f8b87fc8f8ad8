#!/usr/bin/env bash
# CI's AddressSanitizer + UBSan step (issue 24): builds, under the asan preset (build/asan, out of
# the source tree's way), only what covers the parsers and the session store (the harness's host
# library and its parser tests, core and its task and store tests, the LLM reply parser's test)
# and runs those tests. Any sanitizer report fails its test.
#
#   KEVOLVE_ASAN_BUILD_DIR build folder (default build/asan)
#   KEVOLVE_ASAN_SERVE=0   leave out the tests that run the real kevolve-harness serve (they build
#                          its GPU child, which takes longest)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${KEVOLVE_ASAN_BUILD_DIR:-build/asan}
t0=$(date +%s)
stamp() { echo "ci-asan: $1 took $(( $(date +%s) - $2 )) s"; }

# The GUI is not a parser: leave it out of this build.
if [ "$build" = build/asan ]; then
    cmake --preset asan -DKEVOLVE_WITH_GUI=OFF >/dev/null
else
    cmake --preset asan -B "$build" -DKEVOLVE_WITH_GUI=OFF >/dev/null
fi
stamp "configuring" "$t0"

harness=(harness_json_test harness_task_test)
core=(tst_task tst_taskhostile tst_sessionstore tst_sessiondamage tst_schemas tst_valuetypes
      tst_replyparser)
tests='harness\.(Json|Task|HostileRequest)|core\.(tst_task|tst_taskhostile|tst_sessionstore|tst_sessiondamage|tst_schemas|tst_valuetypes)|llm\.tst_replyparser'
if [ "${KEVOLVE_ASAN_SERVE:-1}" != 0 ]; then
    harness+=(harness_hostile_serve_test harness_protocol_test)
    tests="${tests}|harness\.(HostileServe|Protocol)"
fi

t1=$(date +%s)
cmake --build "$build" --target "${harness[@]}" "${core[@]}"
stamp "building" "$t1"

t2=$(date +%s)
# CUDA's runtime maps memory where ASan's shadow would go; nothing here initialises CUDA, but the
# harness links the runtime. Leaks inside Qt's and glibc's one-time initialisation are not ours.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:protect_shadow_gap=0:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export QT_QPA_PLATFORM=offscreen
ctest --test-dir "$build" -R "^(${tests})" --output-on-failure -j2 --timeout 900
stamp "testing" "$t2"
stamp "the whole asan step" "$t0"
