#!/usr/bin/env bash
# Installs what building, testing and packaging Kevolve needs on Debian 12, and nothing else (the
# CUDA toolkit is a prerequisite from NVIDIA, not Debian: /usr/local/cuda). Each package is named
# for what the build finds, so none is left to a Recommends (apt runs with --no-install-recommends;
# scripts/clean-room.sh proves the list in a minimal Debian 12 root). Safe to run again.
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
pkgs=(
    cmake ninja-build g++         # CMakePresets.json: Ninja, C and C++ (ctest and cpack come with cmake)
    qt6-base-dev                  # find_package(Qt6): Core Network Test Widgets (and Gui: libgl-dev)
    libqt6sql6-sqlite             # Qt SQL's SQLite driver (loaded at run time): the knowledge store
    qt6-charts-dev                # Qt6 Charts, whose CMake package needs Qt6OpenGL ...
    libqt6opengl6-dev             # ... from here (only a Recommends of qt6-base-dev)
    qt6-svg-dev                   # Qt6 Svg
    libqscintilla2-qt6-dev        # find_library(qscintilla2_qt6), Qsci/qsciscintilla.h
    qtkeychain-qt6-dev            # find_package(Qt6Keychain)
    libdtl-dev                    # find_path(dtl/dtl.hpp)
    libgtest-dev                  # find_package(GTest): the harness tests
    dpkg-dev file                 # cpack -G DEB: dpkg-shlibdeps, and `file` to find the binaries
)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    echo "install-deps: installing ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    echo "install-deps: the CUDA toolkit 12.4 or newer (nvcc, cuBLAS, CUPTI) is required in" \
        "/usr/local/cuda or on PATH: NVIDIA's installer, https://developer.nvidia.com/cuda-downloads" >&2
    exit 1
fi
