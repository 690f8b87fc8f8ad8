#!/usr/bin/env bash
# Installs what Kevolve needs (Debian 12 with the CUDA toolkit), builds the release preset, and
# starts the workbench — or, on a headless host, `kevolve-cli run` on the headline task with the
# built-in backend. Arguments are passed to the program started.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/cuda/bin:$PATH"
scripts/install-deps.sh
cmake --preset release
cmake --build --preset release
bin=build/release/app
export KEVOLVE_HARNESS="${KEVOLVE_HARNESS:-$PWD/build/release/harness/kevolve-harness}"
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ -x "$bin/kevolve/kevolve" ]; then
    exec "$bin/kevolve/kevolve" "$@"
fi
if [ "$#" -eq 0 ]; then
    set -- run --task gemm_fp16_fp32_4096 --backend builtin
fi
exec "$bin/kevolve-cli" "$@"
