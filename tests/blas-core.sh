#!/bin/sh
# tests/blas-core.sh - OpenBLAS's kernels raised to the CPU's level
# (backends/cpu/cpu_blas_core.c). This machine's OpenBLAS may know its CPU, so
# NNLAB_TEST_OPENBLAS_START=Prescott first makes OpenBLAS take its SSE
# kernels, as Debian's 0.3.21 did on a Xeon it did not know; nnlab must then
# raise them, say so (`nnlab devices`, `calibrate --json`), keep them with
# NNLAB_OPENBLAS_KEEP_CORE=1 or a user's OPENBLAS_CORETYPE (and warn), and
# its products must still match cpu-ref after the switch (tests/test_parity),
# and the unit tests that read the machine pass on each kind of CPU simulated.
# Speaks TAP. Needs NNLAB (the program, beside tests/) and top_srcdir, which
# `make check` exports.
: "${NNLAB:=./nnlab}" "${top_srcdir:=.}"
builddir=$(dirname "$NNLAB")
n=0 failed=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
. "$top_srcdir/tests/cli-lib.sh"
# has NAME TEXT [VAR=VALUE...]: `nnlab devices`' cpu line in that environment contains TEXT
has() {
    name=$1 text=$2; shift 2
    env "$@" "$NNLAB" devices 2>&1 | grep '^cpu ' >"$tmp/out"
    if grep -qF -- "$text" "$tmp/out"; then ok "$name"; else not_ok "$name"; fi
}
lacks() {
    name=$1 text=$2; shift 2
    env "$@" "$NNLAB" devices 2>&1 | grep '^cpu ' >"$tmp/out"
    if grep -qF -- "$text" "$tmp/out"; then not_ok "$name"; else ok "$name"; fi
}

unset OPENBLAS_CORETYPE NNLAB_OPENBLAS_KEEP_CORE
export XDG_CACHE_HOME="$tmp/cache"     # calibrate keeps its figures there
if ! "$NNLAB" devices 2>/dev/null | grep '^cpu ' | grep -q 'AVX'; then
    echo "1..0 # SKIP this CPU has no AVX: no OpenBLAS core above Prescott to raise to"
    exit 0
fi
start=NNLAB_TEST_OPENBLAS_START=Prescott
has "raised from Prescott, and said" "(chosen by nnlab: OpenBLAS took Prescott for this CPU)" $start
lacks "raised: no longer the Prescott kernels" "Prescott kernels" $start
lacks "raised: no warning" "warning: OpenBLAS" $start
env $start "$NNLAB" calibrate --json >"$tmp/cal.json" 2>/dev/null
if grep -q '"openblas_core_from": "Prescott"' "$tmp/cal.json"; then ok "calibrate --json says where from"
else cp "$tmp/cal.json" "$tmp/out"; not_ok "calibrate --json says where from"; fi
has "NNLAB_OPENBLAS_KEEP_CORE=1 keeps them" "Prescott kernels;" $start NNLAB_OPENBLAS_KEEP_CORE=1
has "... and warns, naming the switch" "NNLAB_OPENBLAS_KEEP_CORE=1" $start NNLAB_OPENBLAS_KEEP_CORE=1
has "a user's OPENBLAS_CORETYPE stands" "Prescott kernels (OPENBLAS_CORETYPE=Prescott)" $start OPENBLAS_CORETYPE=Prescott
lacks "... and nnlab says it chose nothing" "chosen by nnlab" $start OPENBLAS_CORETYPE=Prescott
# the products after OpenBLAS chose twice, and on the Prescott kernels, against cpu-ref
for keep in 0 1; do
    what="the parity suite on the raised kernels"
    [ $keep = 1 ] && what="the parity suite on the Prescott kernels"
    if env $start NNLAB_OPENBLAS_KEEP_CORE=$keep NNLAB_BLAS=openblas "$builddir/tests/test_parity" \
        >"$tmp/out" 2>&1; then ok "$what"; else not_ok "$what"; fi
done
# The unit tests that read the machine (cpuid, OpenBLAS's core, the kernels'
# path, thread counts, which library runs each product), on each kind of
# machine nnlab meets, simulated here: OpenBLAS raised as on an Intel Xeon its
# release does not know; its own choice kept (and warned about); an AVX2 CPU
# (our AVX2 kernels, OpenBLAS's Haswell ones) as on an AMD EPYC without
# AVX-512. Each must pass on every kind, whatever this machine is.
for kind in "raised:$start" "kept:$start NNLAB_OPENBLAS_KEEP_CORE=1" \
    "avx2:NNLAB_NO_AVX512=1 OPENBLAS_CORETYPE=Haswell"; do
    name=${kind%%:*} vars=${kind#*:}
    for t in test_cpu_info test_threads test_blis test_products; do
        if env $vars "$builddir/tests/$t" >"$tmp/out" 2>&1; then ok "$t on a CPU with OpenBLAS $name"
        else not_ok "$t on a CPU with OpenBLAS $name"; fi
    done
done
has "an AVX2 CPU: our AVX2 kernels said" "our kernels: avx2" NNLAB_NO_AVX512=1 OPENBLAS_CORETYPE=Haswell
echo "1..$n"
[ "$failed" -eq 0 ]
