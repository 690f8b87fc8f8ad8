#!/usr/bin/env bash
# Packs the shared libraries that the given Qt-linked binaries need and that a bare GPU host lacks
# (Qt and its dependencies; not glibc, the C++ runtime or CUDA), so that kevolve-cli runs there:
#   scripts/pack-runtime.sh OUT.tar.xz BINARY...
# On the GPU host: mkdir -p /tmp/qt && tar -xJf OUT.tar.xz -C /tmp/qt && export LD_LIBRARY_PATH=/tmp/qt
# The pack includes Kevolve's own shared libraries (libkevolve-core.so), so pack again after every
# build: a binary run against an older libkevolve-core.so crashes at start-up (seen on the H200).
set -euo pipefail
out=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for bin in "$@"; do
    ldd "$bin" | awk '/=> \// {print $3}'
done | sort -u | while read -r lib; do
    case "$(basename "$lib")" in
    libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | ld-linux* | libstdc++.so.* | \
        libgcc_s.so.* | libcuda* | libcublas* | libcudart* | libnvidia*) continue ;;
    esac
    cp -L "$lib" "$tmp/"
done
tar -cJf "$out" -C "$tmp" .
echo "$(ls "$tmp" | wc -l) libraries, $(du -h "$out" | cut -f1) in $out"
