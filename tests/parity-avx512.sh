#!/bin/sh
# tests/parity-avx512.sh - the CPU backend's two instruction paths (AVX-512
# and AVX2). On a CPU that runs the AVX-512 kernels, the parity suite
# (tests/test_parity) and the gradient suites on cpu (tests/test_graph,
# tests/test_jacobian: finite differences through the CPU backend) run twice:
# on the AVX-512 path, and with NNLAB_NO_AVX512=1 on the AVX2 one. Elsewhere
# the plain `make check` runs of those programs are the AVX2 path, and the
# AVX-512 runs are skipped by name, as is the SIMDe emulation of the kernels
# (tests/test_avx512_emu) when configure found no SIMDe. Speaks TAP.
# Needs NNLAB (the program, beside tests/), which `make check` exports.
: "${NNLAB:=./nnlab}"
builddir=$(dirname "$NNLAB")
n=0 failed=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; grep -e '^not ok' -e 'ERROR' -e 'FAIL' "$tmp/out" | head -n 8 | sed 's/^/# /'; }
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
# run NAME PROGRAM [VAR=VALUE...]: one program of the suites in that environment
run() {
    name=$1 prog=$2; shift 2
    if env "$@" "$builddir/tests/$prog" >"$tmp/out" 2>&1; then ok "$name"; else not_ok "$name"; fi
}

if [ ! -x "$builddir/tests/test_avx512_emu" ]; then
    skip "the AVX-512 kernels through SIMDe: configure found no simde/x86/avx512.h (Debian: libsimde-dev)"
fi
kernels=$("$NNLAB" devices 2>/dev/null | sed -n 's/.*our kernels: \([a-z0-9]*\).*/\1/p' | head -n 1)
if [ -z "$kernels" ]; then
    n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - nnlab devices names no kernel path"
elif [ "$kernels" != avx512 ]; then
    for prog in test_parity test_graph test_jacobian; do
        skip "$prog on the AVX-512 path: this CPU runs the $kernels kernels (no AVX-512, or NNLAB_NO_AVX512 is set)"
    done
else
    for prog in test_parity test_graph test_jacobian; do
        run "$prog on the AVX-512 path" "$prog"
        run "$prog on the AVX2 path (NNLAB_NO_AVX512=1)" "$prog" NNLAB_NO_AVX512=1
    done
    # the twins compiled from the baseline's own C (GLU's rows, cpu_tab.c) claim
    # its very bits: TabNet trained on both paths ends with the same file
    sed -e 's/^rows = .*/rows = 2048/' -e 's/^val_rows = .*/val_rows = 128/' \
        "${top_srcdir:-.}/presets/tabnet-regression.ini" >"$tmp/tabnet.ini"
    for e in 0 1; do
        NNLAB_NO_AVX512=$e "$NNLAB" train --preset "$tmp/tabnet.ini" --batch 128 --steps 12 --threads 1 \
            --no-validation -q --save-params "$tmp/tabnet-$e.npy" >"$tmp/out" 2>&1
    done
    if [ -s "$tmp/tabnet-0.npy" ] && cmp -s "$tmp/tabnet-0.npy" "$tmp/tabnet-1.npy"; then
        ok "TabNet trained on both paths: the same parameters, bit for bit"
    else not_ok "TabNet trained on both paths: the same parameters, bit for bit"; fi
fi
echo "1..$n"
[ "$failed" -eq 0 ]
