#!/bin/sh
# tests/parity-blis.sh - the cpu vs cpu-ref parity suite with every matrix
# product on BLIS (NNLAB_BLAS=blis; backends/cpu/cpu_blis.c), our own kernels
# switched off as in tests/parity-im2col.sh so that the products are BLIS's
# on every shape the suite has. Skipped (77) where libblis.so.4 is not
# installed: nnlab then runs every product on OpenBLAS, which
# tests/test_parity checks.
line=$(./nnlab devices | grep '^  BLIS: ') || { echo "no BLIS line in nnlab devices"; exit 1; }
case "$line" in
    *"not used"*) echo "SKIP: ${line#*BLIS: }"; exit 77 ;;
esac
NNLAB_BLAS=blis NNLAB_NO_DIRECT_CONV=1 NNLAB_NO_NARROW_DX=1 NNLAB_NO_SMALL_DW=1 \
    NNLAB_NO_OWN_ADAM=1 exec ./tests/test_parity "$@"
