#!/usr/bin/env bash
# The far set (make_tasks.py): GEMMs and row-wise tasks outside the grid's spacing (LM heads, long
# K, vocabulary-sized softmax rows, odd and fp32 rows). Same modes as tests/sweeps/nearby/run.sh:
#
#   tests/sweeps/far/run.sh generate DIR [TASK...]   # here: needs kev-builtin-gen (Qt), no GPU
#   tests/sweeps/far/run.sh evaluate DIR             # the GPU host: one line per kernel
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
SWEEP_DIR=$here exec "$here/../nearby/run.sh" "$@"
