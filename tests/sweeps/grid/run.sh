#!/usr/bin/env bash
# The grid (make_tasks.py): GEMMs at M = 1..256 and model widths, layernorm, rmsnorm and softmax
# over rows of 1024..8192, each task's built-in defaults (and any strategies/TASK.NAME.json),
# generated here and evaluated in ONE `kevolve-harness serve` on the GPU host. Same modes as
# tests/sweeps/nearby/run.sh:
#
#   tests/sweeps/grid/run.sh generate DIR [TASK...]   # here: needs kev-builtin-gen (Qt), no GPU
#   tests/sweeps/grid/run.sh evaluate DIR             # the GPU host: one line per kernel
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
SWEEP_DIR=$here exec "$here/../nearby/run.sh" "$@"
