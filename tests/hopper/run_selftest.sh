#!/usr/bin/env bash
# GPU host: builds a GEMM candidate (default: the Hopper corpus kernel) and the self-test with nvcc
# alone (no CMake, no Qt), shows ptxas figures and the HGMMA count in the SASS, then runs the
# self-test. Extra arguments go to the self-test, e.g. --dtypes bf16,bf16,bf16 --time 8192x8192x8192.
#
#   tests/hopper/run_selftest.sh [KERNEL.cu] [self-test options]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
nvcc=$(command -v nvcc || echo "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc")
out=${KEV_SELFTEST_DIR:-/tmp/kev-hopper-selftest}
mkdir -p "$out"
rm -f "$out/kernel.so"
kernel="$root/tests/harness/kernels/ok_wgmma_tma_fp16_f32.cu"
if [[ $# -gt 0 && $1 == *.cu ]]; then
    kernel=$1
    shift
fi

"$nvcc" -shared -cudart shared -Xcompiler -fPIC -Xcompiler -fvisibility=hidden -O3 -std=c++17 \
    -Xptxas -v -gencode=arch=compute_90a,code=sm_90a -I "$root/harness/include" \
    -o "$out/kernel.so" "$kernel" 2>&1 | grep -E "registers|spill|warning|error" || true
test -f "$out/kernel.so"
"$nvcc" -std=c++17 -O2 -gencode=arch=compute_90,code=sm_90 -I "$root/harness/include" \
    -o "$out/hopper-selftest" "$root/tests/hopper/hopper_selftest.cu" -lcublas -ldl
cuobjdump=$(dirname "$nvcc")/cuobjdump
if [[ -x $cuobjdump ]]; then
    echo "SASS: $("$cuobjdump" --dump-sass "$out/kernel.so" | grep -c HGMMA) HGMMA instructions"
fi
exec "$out/hopper-selftest" --kernel "$out/kernel.so" "$@"
