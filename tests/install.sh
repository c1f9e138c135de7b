#!/bin/sh
# tests/install.sh - what `make install` leaves in a prefix, staged with
# DESTDIR: the program, the real GPU module where CUDA was found, the presets,
# the lessons and the manuals, and never the emulated GPU module (a stand-in for the CUDA
# libraries that only the tests load); a copy an earlier version installed is
# removed. So the README's two commands run in order on one machine
# (`./setup.sh run` installs, `./setup.sh check` then builds and tests with
# the same prefix) give the tests the same program as a fresh machine
# (tests/cli.sh: a copy outside the build tree never looks in it).
# Speaks TAP. Needs NNLAB (the program, in the build folder) and top_srcdir.
: "${NNLAB:=./nnlab}" "${top_srcdir:=.}"
builddir=$(cd "$(dirname "$NNLAB")" && pwd)
n=0 failed=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
. "$top_srcdir/tests/cli-lib.sh"
stage=$tmp/root
check "make install DESTDIR=..." 0 make -s -C "$builddir" install DESTDIR="$stage"
prog=$(find "$stage" -path '*/bin/nnlab' -type f | head -n 1)
pkglib=$(find "$stage" -type d -path '*/lib/nnlab' | head -n 1)
if [ -n "$prog" ] && [ -x "$prog" ]; then ok "the program installed"; else not_ok "the program installed"; fi
# without CUDA no module is installed: the folder an earlier version used,
# beside bin/ (the default libdir)
[ -n "$pkglib" ] || pkglib=$(dirname "$(dirname "${prog:-$tmp/x/bin/nnlab}")")/lib/nnlab
# an earlier version's copies of the emulated module, then the install again
mkdir -p "$pkglib"
: >"$pkglib/nnlab-cuda-emu.so"
: >"$pkglib/nnlab-cuda-emu-fma.so"
check "make install again, over an earlier version's files" 0 make -s -C "$builddir" install DESTDIR="$stage"
if ls "$pkglib"/nnlab-cuda-emu* >/dev/null 2>&1; then
    ls "$pkglib" >"$tmp/out"; not_ok "no emulated GPU module in the install folder"
else ok "no emulated GPU module in the install folder"; fi
if [ -f "$builddir/backends/cuda/.libs/nnlab-cuda.so" ]; then
    if [ -f "$pkglib/nnlab-cuda.so" ]; then ok "the real GPU module installed"
    else not_ok "the real GPU module installed"; fi
fi
if find "$stage" -path '*/nnlab/presets/*.ini' | grep -q .; then ok "the presets installed"
else not_ok "the presets installed"; fi
for l in why-gpu-slower wide-table jacobian why-two; do
    if find "$stage" -path "*/nnlab/lessons/$l.ini" | grep -q .; then ok "the lesson $l installed"
    else not_ok "the lesson $l installed"; fi
done
if find "$stage" -path '*/man5/nnlab-lesson.5' | grep -q .; then ok "the lesson format's manual installed"
else not_ok "the lesson format's manual installed"; fi
echo "1..$n"
[ "$failed" -eq 0 ]
