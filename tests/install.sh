#!/bin/sh
# tests/install.sh - what `make install` leaves in a prefix, staged with
# DESTDIR: the program, the real GPU module where CUDA was found, the presets
# and the manual, and never the emulated GPU module (a stand-in for the CUDA
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
# the configured folders, as the Makefile has them
pkglibdir=$(make -s --no-print-directory -C "$builddir" -f Makefile -f - print-pkglibdir <<'MK' 2>/dev/null | tail -n 1
print-pkglibdir: ; @echo $(pkglibdir)
MK
)
bindir=$(make -s --no-print-directory -C "$builddir" -f Makefile -f - print-bindir <<'MK' 2>/dev/null | tail -n 1
print-bindir: ; @echo $(bindir)
MK
)
if [ -z "$pkglibdir" ] || [ -z "$bindir" ]; then
    echo "1..0 # SKIP the build folder's Makefile does not say its folders"
    exit 0
fi
stage=$tmp/root
mkdir -p "$stage$pkglibdir"
: >"$stage$pkglibdir/nnlab-cuda-emu.so"          # an earlier version's copy
: >"$stage$pkglibdir/nnlab-cuda-emu-fma.so"
check "make install DESTDIR=..." 0 make -s -C "$builddir" install DESTDIR="$stage"
if [ -x "$stage$bindir/nnlab" ]; then ok "the program installed"; else not_ok "the program installed"; fi
if ls "$stage$pkglibdir"/nnlab-cuda-emu* >/dev/null 2>&1; then
    ls "$stage$pkglibdir" >"$tmp/out"; not_ok "no emulated GPU module in the install folder"
else ok "no emulated GPU module in the install folder"; fi
if [ -f "$builddir/backends/cuda/.libs/nnlab-cuda.so" ]; then
    if [ -f "$stage$pkglibdir/nnlab-cuda.so" ]; then ok "the real GPU module installed"
    else not_ok "the real GPU module installed"; fi
fi
if find "$stage" -path '*/nnlab/presets/*.ini' | grep -q .; then ok "the presets installed"
else not_ok "the presets installed"; fi
echo "1..$n"
[ "$failed" -eq 0 ]
