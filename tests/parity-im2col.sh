#!/bin/sh
# tests/parity-im2col.sh - the cpu vs cpu-ref parity test again with the
# direct convolution kernels switched off, so that the im2col + sgemm path is
# checked on the geometries the direct kernels would otherwise take (LeNet's
# first convolution among them), and with linear_backward's narrow-input
# kernel, the small-batch weight-gradient kernel, the AVX2 Adam and the AVX2
# 2x2 pooling gradient and the AVX2 dropout mask switched off, so that
# sgemm, cpu-ref's Adam loop and the scalar pooling and dropout loops are
# checked on those shapes too.
NNLAB_NO_POOL_SIMD=1 NNLAB_NO_DIRECT_CONV=1 NNLAB_NO_NARROW_DX=1 NNLAB_NO_SMALL_DW=1 NNLAB_NO_OWN_ADAM=1 NNLAB_NO_DROPOUT_SIMD=1 exec ./tests/test_parity "$@"
