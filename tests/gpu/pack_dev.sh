#!/usr/bin/env bash
# pack_dev.sh BUILD DEV — fill DEV (a git-ignored folder, e.g. build-dev/) with
# what a device call needs to link xdnn and its GPU tests there with plain gcc
# (final_session.sh): libxdnn.a without debug info (gzipped), the CLI's
# objects, the generated parser headers and libcjson.  The unstripped static
# binaries (~40 MB each) would not fit the 64 MiB that a call may carry.
set -euo pipefail
build=${1:?BUILD}; dev=${2:?DEV}
rm -rf "$dev"; mkdir -p "$dev/cli" "$dev/gen" "$dev/lib"
strip --strip-debug -o "$dev/libxdnn.a" "$build/libxdnn.a"
# kernels for three targets make the archive itself ~180 MB: gzip it (the
# session scripts unpack it), so it travels with the tree under 64 MiB
# (-1 gave 59 MB at session 9's end, past the limit with the tree: -9, 50 MB)
gzip -9 -f "$dev/libxdnn.a"
for o in "$build"/obj/cli/*.o; do strip --strip-debug -o "$dev/cli/$(basename "$o")" "$o"; done
cp "$build"/gen/*.h "$dev/gen/"
cp -P /usr/lib/x86_64-linux-gnu/libcjson.so* "$dev/lib/"
# the commit built, for the reports made on the GPU machine (its copy of the
# tree may carry an older .git): run_peer_suite.sh reads it as XDNN_COMMIT
git -C "$(dirname "$0")" rev-parse --short HEAD > "$dev/COMMIT" 2>/dev/null || echo unknown > "$dev/COMMIT"
if ! git -C "$(dirname "$0")" diff --quiet HEAD 2>/dev/null; then sed -i 's/$/+dirty/' "$dev/COMMIT"; fi
du -sh "$dev"
