#!/usr/bin/env bash
# Installs what building and testing Kevolve needs on Debian 12 (the CUDA toolkit is a documented
# prerequisite: NVIDIA's packages, not Debian's). Safe to run again.
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
pkgs=(cmake ninja-build g++ git pkg-config
      qt6-base-dev qt6-charts-dev libqscintilla2-qt6-dev qtkeychain-qt6-dev libqt6svg6-dev
      libgl-dev xvfb xauth libgtest-dev clang-format libdtl-dev dpkg-dev)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    echo "install-deps: the CUDA toolkit (nvcc, cuBLAS) is required; see README.md" >&2
    exit 1
fi
