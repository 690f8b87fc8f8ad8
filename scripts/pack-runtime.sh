#!/usr/bin/env bash
# Packs the shared libraries that the given Qt-linked binaries need and that a bare GPU host lacks
# (Qt and its dependencies; not glibc, the C++ runtime or CUDA), so that kevolve-cli runs there:
#   scripts/pack-runtime.sh OUT.tar.xz BINARY...
# On the GPU host: mkdir -p /tmp/qt && tar -xJf OUT.tar.xz -C /tmp/qt && export LD_LIBRARY_PATH=/tmp/qt
#   QT_PLUGIN_PATH=/tmp/qt/plugins (Qt's SQLite driver for the knowledge store is a plugin, which
#   ldd does not list: it is packed under plugins/sqldrivers with the libraries it needs).
# The pack includes Kevolve's own shared libraries (libkevolve-core.so), so pack again after every
# build: a binary run against an older libkevolve-core.so crashes at start-up (seen on the H200).
set -euo pipefail
out=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
plugins=()
for bin in "$@"; do
    # Not `ldd | grep -q`: grep -q exits at the first match, ldd then dies of SIGPIPE, and with
    # pipefail the test fails now and then (the SQLite plugin left out of the pack).
    if [[ $(ldd "$bin") == *libkevolve-core* ]]; then
        sql=$(find /usr/lib -path '*qt6/plugins/sqldrivers/libqsqlite.so' 2>/dev/null | head -1)
        [[ -n $sql ]] && plugins+=("$sql")
    fi
done
if [[ ${#plugins[@]} -gt 0 ]]; then
    mkdir -p "$tmp/plugins/sqldrivers"
    cp -L "${plugins[@]}" "$tmp/plugins/sqldrivers/"
fi
for bin in "$@" "${plugins[@]}"; do
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
