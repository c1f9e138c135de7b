#!/bin/sh
# tests/parity-im2col.sh - the cpu vs cpu-ref parity test again with the
# direct convolution kernels switched off, so that the im2col + sgemm path is
# checked on the geometries the direct kernels would otherwise take (LeNet's
# first convolution among them).
NNLAB_NO_DIRECT_CONV=1 exec ./tests/test_parity "$@"
